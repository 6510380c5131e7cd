import BeaconConfiguration
import Cluster
import Daemon
import Foundation
import Logging
import Persistence
import Syscalls
import TestSupport
import Testing

/// The election (docs/behaviour.md §21, docs/failover.md) between two links through a real mosquitto; one
/// link's network goes through a proxy the test cuts, as a machine whose cable is pulled.
@Suite struct ClusterLinkTests {
    static func settings(port: Int32, client: String) throws -> MQTTSettings {
        let ini = """
            LocationBaseBeacon.1 = E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,1,1
            MQTT.host = 127.0.0.1
            MQTT.port = \(port)
            MQTT.clientId = \(client)
            MQTT.topic = bw-cluster-test
            """
        return try #require(try Configuration.load(Array(ini.utf8), path: "cluster.ini").get().mqtt)
    }

    static let patience = Duration.seconds(Eventually.patience)

    /// A link for `member` on `port`, its events handled until it stops.
    static func link(_ member: String, port: Int32, changes: Awaitable? = nil) throws -> ClusterLink {
        let link = try ClusterLink(
            settings: try settings(port: port, client: member), name: "hall", keepalive: 2, member: member,
            changes: changes, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        Task.detached { await link.run() }
        try link.start()
        return link
    }

    /// An active `a` whose network goes through a proxy, and its standby `b`.
    static func pair() async throws -> (broker: Broker, proxy: TCPProxy, a: ClusterLink, b: ClusterLink) {
        let broker = try Broker()
        let proxy = try TCPProxy(to: broker.port)
        let a = try Self.link("a", port: proxy.port)
        #expect(await a.wait(within: Self.patience) { $0.isActive })
        let b = try Self.link("b", port: broker.port)
        #expect(await b.wait(within: Self.patience) { $0.connected && $0.leader?.member == "a" })
        return (broker, proxy, a, b)
    }

    @Test func theStandbyTakesOverWhenTheActivesNetworkIsCutAndTheOldActiveStepsDown() async throws {
        let (broker, proxy, a, b) = try await Self.pair()
        defer {
            withExtendedLifetime(broker) {
                a.stop(); b.stop()
            }
        }
        #expect(b.role == .standby)
        // The active's cable pulled: the broker fires its will, the standby claims the next epoch.
        proxy.cut()
        #expect(await b.wait(within: Self.patience) { $0.isActive && $0.leader == LeaderRecord(epoch: 2, member: "b") })
        // The old active heard its connection end (on libmosquitto's thread, before the standby's
        // claim could be echoed); the goal's bound is one keepalive of both active (docs/behaviour.md §21).
        #expect(await a.wait(within: .seconds(2)) { !$0.isActive })
        // Back: the old active hears the new leader and steps down; one active throughout.
        proxy.restore()
        #expect(await a.wait(within: Self.patience) { $0.connected && $0.role == .standby })
        #expect(b.isActive && !a.isActive)
    }

    /// The active's network goes silent (no FIN, no RST): the broker would notice only after
    /// 1.5 × libmosquitto's shortest keepalive (7.5 s); the standby, hearing no beat for
    /// 1.5 × Cluster.keepalive (3 s), takes over first.
    @Test func aSilentActiveIsGivenUpBeforeTheBrokerNotices() async throws {
        let (broker, proxy, a, b) = try await Self.pair()
        defer {
            withExtendedLifetime(broker) {
                a.stop(); b.stop()
            }
        }
        // A step the broker acknowledges lets its outputs go out.
        a.ship(ShippedStep(base: .start, position: StepPosition(epoch: 1, step: 1), changeset: []))
        #expect(await Self.onAThread { a.awaitVerdict(through: 1, within: Self.patience) } == .acknowledged)
        proxy.silence()
        // One made in the silence is never acknowledged: its outputs wait, and are withheld once
        // the active has stepped down.
        a.ship(
            ShippedStep(base: StepPosition(epoch: 1, step: 1), position: StepPosition(epoch: 1, step: 2), changeset: [])
        )
        #expect(a.verdict(through: 2) == .waiting)
        let withheld = Task { await Self.onAThread { (a.awaitVerdict(through: 2, within: .seconds(30)), a.isActive) } }
        // Within 6.5 s: the beats' 3 s and a settle, well before the broker's 7.5 s.
        #expect(await b.wait(within: .seconds(6.5)) { $0.isActive && $0.leader == LeaderRecord(epoch: 2, member: "b") })
        // The old active heard nothing of itself as long: it stepped down too, and reconnects.
        #expect(await a.wait(within: .seconds(6.5)) { $0.role == .standby })
        let (verdict, activeThen) = await withheld.value
        #expect(verdict == .withheld && !activeThen)
        proxy.restore()
        #expect(await a.wait(within: Self.patience) { $0.connected && $0.leader?.member == "b" })
        #expect(b.isActive && !a.isActive)
    }

    /// A standby that joins while the active has nothing to commit gets no step: the active's
    /// beats say where its state stands, and the standby, not reaching it, asks for a snapshot.
    @Test func aStandbyJoiningAnIdleActiveCatchesUpFromItsBeats() async throws {
        let broker = try Broker()
        let a = try Self.link("a", port: broker.port)
        defer { a.stop() }
        #expect(await a.wait(within: Self.patience) { $0.isActive })
        let active = try StateStore()
        try active.startShipping(epoch: try #require(a.epoch), ship: { a.ship($0) }, acknowledger: a)
        a.serve(active)
        // Committed before any standby's session existed: shipped to no one.
        for n in 0..<3 {
            try active.record(
                devices: [], outbox: [OutboxMessage(topic: "bw/u/event", payload: "{\"n\":\(n)}", qos: 1)])
        }
        let committed = try active.position()
        #expect(committed.step == 3)
        let b = try Self.link("b", port: broker.port)
        defer { b.stop() }
        let standby = try StateStore()
        b.follow(standby)
        #expect(await b.wait(within: Self.patience) { $0.connected && $0.leader?.member == "a" })
        #expect(await b.wait(within: Self.patience) { _ in (try? standby.position()) == committed })
        #expect(try standby.pendingOutbox().map(\.message) == active.pendingOutbox().map(\.message))
        #expect(b.following?.restored == 1)
    }

    /// Runs `body`, which blocks, on a thread of its own.
    static func onAThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { done in Thread { done.resume(returning: body()) }.start() }
    }

    @Test func twoStartingAtOnceEndWithExactlyOneActive() async throws {
        let broker = try Broker()
        // One waiter told of both links' changes: the wait watches the pair.
        let changes = Awaitable()
        let a = try Self.link("a", port: broker.port, changes: changes)
        defer { a.stop() }
        let b = try Self.link("b", port: broker.port, changes: changes)
        defer { b.stop() }
        // Settled: both hear the same leader, and it is the one of them that is active.
        #expect(await changes.wait(within: Self.patience) { Self.settled(a.election, b.election) })
    }

    /// Both hear the same leader, and exactly one of them, the leader, is active.
    static func settled(_ a: ClusterElection, _ b: ClusterElection) -> Bool {
        guard let leader = a.leader, a.leader == b.leader, a.isActive != b.isActive else { return false }
        return (a.isActive ? a.member : b.member) == leader.member
    }

    @Test func aCleanStopHandsOverAtOnceAndABrokerRestartHandsNothingOver() async throws {
        let broker = try Broker()
        let a = try Self.link("a", port: broker.port)
        #expect(await a.wait(within: Self.patience) { $0.isActive })
        let b = try Self.link("b", port: broker.port)
        defer { b.stop() }
        let c = try Self.link("c", port: broker.port)
        defer { c.stop() }
        #expect(await b.wait(within: Self.patience) { $0.leader?.member == "a" })
        #expect(await c.wait(within: Self.patience) { $0.leader?.member == "a" })
        // A clean stop clears the record (no will): one of the standbys claims the next epoch.
        a.stop()
        #expect(await b.wait(within: Self.patience) { $0.leader?.epoch == 2 && ($0.isActive || $0.role == .standby) })
        let active = b.isActive ? b : c
        #expect(await active.wait(within: Self.patience) { $0.isActive })
        // The broker restarts (its retained record kept on disk): the same active goes on.
        try await broker.stop()
        try broker.start()
        let standby = active === b ? c : b
        #expect(await standby.wait(within: Self.patience) { $0.connected && $0.leader?.epoch == 2 })
        #expect(await active.wait(within: Self.patience) { $0.isActive })
        #expect(!standby.isActive)
    }
}
