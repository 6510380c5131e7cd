import ArgumentParser
import BeaconConfiguration
import BeaconCore
import Daemon
import Foundation
import Logging
import Synchronization
import TestSupport

/// What server-sent event clients cost the daemon (docs/behaviour.md §16, issue 18): the e2e figures with no
/// client, then with `--clients` connected to `/api/v1/events`, in one run.
struct WebBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "web",
        abstract: "The e2e figures with and without server-sent event clients; that every client gets every event.",
        discussion: """
            Runs the e2e bench (a real mosquitto on loopback, the state database and outbox on \
            disk, QoS 1; the pacer sleeps between sightings rather than spinning a core) twice in one process: with the MQTT sink alone, then with the web view's \
            sink too and --clients clients reading /api/v1/events from a Hummingbird server on \
            loopback, each on a thread of its own. Reports latency at --rate and the flat-out rate \
            of each, their ratio, and checks that every client received every event. The \
            clients run on the same two cores: their reading is part of the cost.
            """
    )

    @Option(help: "Event-stream clients.")
    var clients = 100

    @Option(help: "Sightings per second for the latency runs (each makes one output).")
    var rate = 1000

    @Option(help: "Seconds of each latency run.")
    var seconds = 5

    @Option(help: "Latency rounds of each kind, alternating; medians are reported.")
    var rounds = 5

    @Option(help: "Sightings in each flat-out run.")
    var events = 100_000

    @Option(help: "Milliseconds each event client's writer waits after a write (what comes meanwhile goes out in one).")
    var pause =
        Int(WebResponder.defaultEventPause.components.seconds * 1000)
        + Int(WebResponder.defaultEventPause.components.attoseconds / 1_000_000_000_000_000)

    func run() async throws {
        let broker = try Broker(persistent: false)
        defer { broker.kill(signal: SIGKILL, wait: false) }
        let e2e = E2EBench()

        func summary(_ latencies: [Double]) -> (p50: Double, p99: Double) {
            let sorted = latencies.sorted()
            return (sorted[sorted.count / 2], sorted[min(sorted.count - 1, Int(Double(sorted.count) * 0.99))])
        }
        func flatOut(alongside sinks: [any OutputSink]) async throws -> Double {
            let start = ContinuousClock.now
            let delivered = try await e2e.measure(broker: broker, count: events, paced: nil, alongside: sinks)
            return Double(delivered.count) / (ContinuousClock.now - start).inSeconds
        }

        // The web view's sink, its server and the clients.
        let configuration = try Configuration.load(
            Array("LocationBaseBeacon.1 = \(E2EBench.uuid),1,1\n".utf8), path: "web.ini"
        ).get()
        let state = WebState(configuration: configuration, ownID: "bench", control: EngineControl())
        let bound = Mutex<Int?>(nil)
        let server = WebService(
            settings: WebSettings(host: "127.0.0.1", port: 0, explicit: true),
            responder: WebResponder(state: state, token: nil, eventPause: .milliseconds(pause)),
            logger: Logger(label: "bench-web"),
            bound: { port in bound.withLock { $0 = port } })
        // Cancelled and awaited when this scope ends.
        async let _ = server.run()
        guard try await E2EBench.until(within: .seconds(10), { bound.withLock { $0 } != nil }),
            let port = bound.withLock({ $0 })
        else { throw RuntimeFailure("the web server did not start") }
        let readers = try (0..<clients).map { _ in try EventReader(port: port) }
        guard try await E2EBench.until(within: .seconds(30), { state.hub.clientCount == clients }) else {
            throw RuntimeFailure("only \(state.hub.clientCount) of \(clients) clients connected")
        }

        // Alternating rounds, so that the machine's own drift (a single e2e run's p99 swings
        // between 1 and 6 ms here) falls on both sides: without the web view's sink (the
        // clients connected, hearing nothing), then with it (every output to every client).
        var quietRounds: [(p50: Double, p99: Double)] = []
        var loadedRounds: [(p50: Double, p99: Double)] = []
        for _ in 0..<rounds {
            quietRounds.append(
                summary(try await e2e.measure(broker: broker, count: rate * seconds, paced: rate, sleeping: true)))
            let latencies = try await e2e.measure(
                broker: broker, count: rate * seconds, paced: rate, alongside: [state], sleeping: true)
            loadedRounds.append(summary(latencies))
            if ProcessInfo.processInfo.environment["WEB_BENCH_TRACE"] != nil {
                // When the slow events were sent (ms from the start): periodic causes show as periods.
                let slow = latencies.enumerated().filter { $0.element > 2e-3 }.map { "\($0.offset * 1000 / rate)" }
                print("web: events over 2 ms, sent at (ms): \(slow.prefix(80).joined(separator: " "))")
            }
        }
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        let quiet = (p50: median(quietRounds.map(\.p50)), p99: median(quietRounds.map(\.p99)))
        let loaded = (p50: median(loadedRounds.map(\.p50)), p99: median(loadedRounds.map(\.p99)))
        let quietRate = try await flatOut(alongside: [])
        let loadedRate = try await flatOut(alongside: [state])
        let expected = state.hub.published
        let complete = try await E2EBench.until(within: .seconds(60)) { readers.allSatisfy { $0.events >= expected } }
        let received = readers.map(\.events)
        state.hub.close()

        print(
            "web: e2e at \(rate)/s, medians of \(rounds) alternating rounds of \(seconds) s; no client: p50 \(format(quiet.p50 * 1e3, 3)) ms, p99 \(format(quiet.p99 * 1e3, 3)) ms; "
                + "\(clients) clients: p50 \(format(loaded.p50 * 1e3, 3)) ms, p99 \(format(loaded.p99 * 1e3, 3)) ms "
                + "(p99 ratio \(format(loaded.p99 / quiet.p99, 2)))")
        print(
            "web: e2e flat out, no client: \(format(quietRate / 1e3, 1))k events/s; \(clients) clients: "
                + "\(format(loadedRate / 1e3, 1))k events/s (ratio \(format(loadedRate / quietRate, 2)))")
        print(
            "web: \(expected) events published; every client received all of them: \(complete ? "yes" : "NO") "
                + "(fewest \(received.min() ?? 0), most \(received.max() ?? 0)); "
                + "clients dropped for falling behind: \(state.hub.slowClientsDisconnected)")
        if !complete { throw RuntimeFailure("a client missed events") }
    }

    /// One `/api/v1/events` client on a thread of its own, counting the events it reads.
    final class EventReader: Sendable {
        private let count = Atomic<Int>(0)
        var events: Int { count.load(ordering: .relaxed) }

        init(port: Int) throws {
            let socket = try HTTPProbe.connect(port: port)
            let request = Array("GET /api/v1/events HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".utf8)
            _ = request.withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            Thread.detachNewThread { [self] in
                var buffer = [UInt8](repeating: 0, count: 1 << 16)
                // "\nid: " starts every event (the first one follows the headers' blank line).
                let marker = Array("id: ".utf8)
                var matched = 0
                var previous: UInt8 = 10
                while true {
                    let read = buffer.withUnsafeMutableBytes { Glibc.recv(socket, $0.baseAddress, $0.count, 0) }
                    guard read > 0 else { break }
                    var found = 0
                    for byte in buffer[..<read] {
                        if matched == 0 {
                            if byte == marker[0], previous == 10 { matched = 1 }
                        } else if byte == marker[matched] {
                            matched += 1
                            if matched == marker.count {
                                found += 1
                                matched = 0
                            }
                        } else {
                            matched = 0
                        }
                        previous = byte
                    }
                    if found > 0 { count.add(found, ordering: .relaxed) }
                }
                close(socket)
            }
        }
    }
}
