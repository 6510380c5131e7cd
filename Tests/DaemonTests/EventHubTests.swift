import BeaconConfiguration
import Daemon
import Foundation
import Syscalls
import Testing

/// Server-sent events fan-out: filters, order, and a client that falls behind.
@Suite struct EventHubTests {
    @Test func eachClientGetsWhatItAskedForInOrder() async throws {
        let hub = EventHub()
        let all = try #require(hub.subscribe(device: nil))
        let bob = try #require(hub.subscribe(device: "bob"))
        hub.publish(json: #"{"n":1}"#, device: "alice")
        hub.publish(json: #"{"n":2}"#, device: "bob")
        let everything = String(decoding: await hub.next(all) ?? [], as: UTF8.self)
        #expect(everything == "id: 1\ndata: {\"n\":1}\n\nid: 2\ndata: {\"n\":2}\n\n")
        let bobs = String(decoding: await hub.next(bob) ?? [], as: UTF8.self)
        #expect(bobs == "id: 2\ndata: {\"n\":2}\n\n")
        #expect(hub.published == 2)
        hub.close()
        #expect(await hub.next(all) == nil)
        #expect(hub.subscribe(device: nil) == nil)
    }

    @Test func aClientThatFallsBehindIsDisconnectedAndCountedWithoutHoldingThePublisher() async throws {
        let hub = EventHub()
        let slow = try #require(hub.subscribe(device: nil))
        let fast = try #require(hub.subscribe(device: nil))
        let payload = "{\"pad\":\"" + String(repeating: "x", count: 1000) + "\"}"
        var taken = 0
        for _ in 0..<(EventHub.bufferLimit / 1000 + 10) {
            hub.publish(json: payload, device: "alice")
            taken += (await hub.next(fast))?.count ?? 0
        }
        #expect(await hub.next(slow) == nil)
        #expect(hub.slowClientsDisconnected == 1)
        #expect(taken > EventHub.bufferLimit)
        hub.unsubscribe(slow)
        #expect(hub.clientCount == 1)
    }
}

/// `/healthz`'s verdict: the engine's loop answers, or why not.
@Suite struct HealthTests {
    static let configuration = try! Configuration.load(
        Array("LocationBaseBeacon.1 = 74278BDA-B644-4520-8F0C-720EAF059935,1,1\n".utf8), path: "health.ini"
    ).get()

    @Test func anEngineThatHasStoppedOrDoesNotAnswerIsUnhealthyAndSaysWhy() async {
        let silent = EngineControl()
        let waiting = WebState(configuration: Self.configuration, ownID: "alice", control: silent)
        #expect(await waiting.health(within: .milliseconds(50))?.contains("did not answer") == true)
        silent.endQueries()
        #expect(await waiting.health(within: .milliseconds(50))?.contains("stopped") == true)
    }

    /// A page asked of a stuck engine shows the model as it is once the engine's limit has
    /// passed, instead of asking again and again.
    @Test(.timeLimit(.minutes(1))) func aStuckEngineDoesNotHoldARequestForever() async {
        let stuck = WebState(configuration: Self.configuration, ownID: "alice", control: EngineControl())
        let model = await stuck.current(maxAge: .zero)
        #expect(model.devices["alice"]?.reading == nil)
    }
}

/// A wait whose deadline has just passed returns at once: poll(2) takes a negative timeout as
/// "forever", and a deadline missed by a fraction of a second is such a timeout (a `--realtime`
/// run under load hung in it).
@Suite struct WaitTests {
    @Test(.timeLimit(.minutes(1)), arguments: [-2_500, -999, -1, 0])
    func aWaitPastItsDeadlineReturnsAtOnce(microseconds: Int64) throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer {
            close(ends[0])
            close(ends[1])
        }
        let revents = try Syscall.waitReadable([ends[0]], timeout: .microseconds(microseconds))
        #expect(revents == [0])
    }
}
