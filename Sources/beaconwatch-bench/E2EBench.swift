import ArgumentParser
import BeaconCore
import BeaconConfiguration
import Daemon
import Engine
import Foundation
import Logging
import MQTT
import Persistence
import RegionMonitor
import Synchronization
import Syscalls
import TestSupport

/// From a sighting entering the engine to a subscriber receiving its LocationBeaconEvent through a
/// real mosquitto on loopback, with the state database and outbox on disk.
struct E2EBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "e2e",
        abstract: "End-to-end latency at a steady rate, and the highest sustained rate with no loss.",
        discussion: """
            Four beacons in one Zone, no RSSI filter and no hysteresis; each sighting flips its \
            beacon between immediate and far, so every sighting makes exactly one LocationBeaconEvent \
            (QoS 1). Latency is measured per event from just before the engine handles the sighting to \
            the subscriber's task receiving the message; it includes the SQLite commit (WAL, \
            synchronous NORMAL) of the state and the outbox entry. The rate run feeds sightings as \
            fast as the engine takes them and counts until the subscriber has every event; as in \
            the daemon, steps share a transaction (up to 64) while input is waiting. The \
            subscriber stamps each message on its network thread, as a C client would. The broker \
            runs without persistence and with max_inflight_messages 0. With --cluster the daemon is \
            a cluster's active (docs/failover.md): its store ships each step over its cluster \
            connection (QoS 1) and each commit's outputs wait until the broker acknowledges it.
            """
    )

    @Option(help: "Sightings per second for the latency run.")
    var rate = 1000

    @Option(help: "Seconds of the latency run.")
    var seconds = 10

    @Option(help: "Sightings in the rate run.")
    var events = 100_000

    @Flag(
        help:
            "As a cluster's active (docs/behaviour.md §21): each step shipped, each output waiting for the broker to hold it."
    )
    var cluster = false

    static let uuid = UUID(uuidString: "5A4BCFCE-174E-4BAC-A814-092E77F6B7E5")!

    func run() async throws {
        // A broker as a deployment would run one for this: nothing to keep across its restarts.
        let broker = try Broker(persistent: false)
        defer { broker.kill(signal: SIGKILL, wait: false) }
        let latencies = try await measure(broker: broker, count: rate * seconds, paced: rate)
        let mode = cluster ? " (a cluster's active: outputs wait for the broker)" : ""
        let sorted = latencies.sorted()
        let slowest = latencies.firstIndex(of: sorted.last!)!
        func percentile(_ p: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] }
        print(
            "e2e\(mode): \(sorted.count) events at \(rate)/s: latency p50 \(format(percentile(0.5) * 1e3, 3)) ms, "
                + "p99 \(format(percentile(0.99) * 1e3, 3)) ms, max \(format(sorted.last! * 1e3, 3)) ms (event \(slowest + 1))"
        )

        let start = ContinuousClock.now
        let flat = try await measure(broker: broker, count: events, paced: nil)
        let elapsed = ContinuousClock.now - start
        let total = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        let rate = Double(flat.count) / total
        print(
            "e2e\(mode): \(flat.count) of \(events) events delivered, none lost, in \(format(total, 2)) s: "
                + "\(format(rate / 1e3, 1))k events/s sustained "
                + "(p50 \(format(flat.sorted()[flat.count / 2] * 1e3, 1)) ms behind)")

        let ceiling = try await Self.ceiling(broker: broker, count: events, payload: Self.lastPayload.withLock { $0 })
        print(
            "e2e: mosquitto's ceiling for the same \(events) messages (a bare libmosquitto publisher, QoS 1, "
                + "\(MQTTSink.window) in flight, no engine and no disk): \(format(ceiling / 1e3, 1))k messages/s; "
                + "beaconwatch reaches \(format(rate / ceiling * 100, 0))% of it")
    }

    /// The last event's payload the subscriber received: the ceiling run sends the same bytes.
    static let lastPayload = Mutex<[UInt8]>([])

    static let topic = "beaconwatch/bench/event"

    /// The rate at which the broker carries `count` messages of `payload` on the bench's topic from
    /// a publisher that does nothing else (the next message is published from the acknowledgement
    /// of one before, as the daemon's sink does, with as many in flight as it allows) to the same
    /// subscriber: what mosquitto and libmosquitto allow on this machine, in messages per second.
    static func ceiling(broker: Broker, count: Int, payload: [UInt8]) async throws -> Double {
        let received = Atomic<Int>(0)
        let subscriber = try MQTTClient(
            MQTTConnection(host: "127.0.0.1", port: broker.port, clientID: "bench-ceiling-sub"),
            received: { _, _, _ in received.add(1, ordering: .relaxed) })
        try await connectBenchClient(subscriber, subscribing: topic, qos: 1)
        let sent = Atomic<Int>(0)
        let publisher = Mutex<MQTTClient?>(nil)
        let next: @Sendable () -> Void = {
            guard sent.add(1, ordering: .relaxed).newValue <= count else { return }
            _ = try? publisher.withLock { $0 }?.publish(topic: topic, payload: payload, qos: 1, retain: false)
        }
        var connection = MQTTConnection(host: "127.0.0.1", port: broker.port, clientID: "bench-ceiling-pub")
        connection.maximumInflight = MQTTSink.window
        let client = try MQTTClient(connection, published: { _, _ in next() })
        publisher.withLock { $0 = client }
        try await connectBenchClient(client, subscribing: nil, qos: 1)
        let start = ContinuousClock.now
        for _ in 0..<MQTTSink.window { next() }
        let complete = try await until(within: .seconds(120)) { received.load(ordering: .relaxed) >= count }
        let elapsed = (ContinuousClock.now - start).inSeconds
        client.shutdown()
        subscriber.shutdown()
        guard complete else { throw RuntimeFailure("the ceiling run lost messages") }
        return Double(count) / elapsed
    }

    /// Runs `count` sightings (at `paced` per second, or flat out) and returns each event's
    /// latency in seconds, in order; throws if one is missing.
    ///
    /// `sleeping`: the pacer sleeps until each sighting is due instead of spinning on the clock
    /// (a spinning pacer takes a whole core, which a bench with other threads to run cannot spare).
    func measure(
        broker: Broker, count: Int, paced: Int?, alongside extra: [any OutputSink] = [], sleeping: Bool = false
    ) async throws -> [Double] {
        let folder = try scratchFolder("bench-e2e")
        let ini = """
            LocationBaseBeacon.1 = \(Self.uuid),1,1
            LocationBaseBeacon.2 = \(Self.uuid),1,2
            LocationBaseBeacon.3 = \(Self.uuid),1,3
            LocationBaseBeacon.4 = \(Self.uuid),1,4
            Monitor.userid = bench
            Monitor.mode = foreground
            Monitor.rssiFilter = none
            Monitor.hysteresis = 0
            Monitor.exitTimeout = 3600
            MQTT.host = 127.0.0.1
            MQTT.port = \(broker.port)
            MQTT.homeassistant = false

            """
        let configuration = try Configuration.load(Array(ini.utf8), path: folder.path + "/bench.ini").get()
        let store = try StateStore(path: folder.appendingPathComponent("state.sqlite").path)
        let link: ClusterLink? = if cluster { try await Self.active(configuration.mqtt!, store: store) } else { nil }
        defer { link?.stop() }
        let sink = try MQTTSink(
            settings: configuration.mqtt!, userid: "bench", hierarchy: configuration.hierarchy, store: store)

        // The subscriber stamps each event on its network thread, as it arrives (as a C client
        // such as mosquitto_sub or paho would see it).
        let arrivals = Arrivals(capacity: count)
        let subscriber = try MQTTClient(
            MQTTConnection(host: "127.0.0.1", port: broker.port, clientID: "bench-sub"),
            received: { _, payload, _ in
                arrivals.stamp()
                if arrivals.count == count { Self.lastPayload.withLock { $0 = payload } }
            })
        let subscribed = Mutex(false)
        try subscriber.start()
        // Child tasks (async let): they end when their clients shut down below.
        async let receiving: Void = {
            for await event in subscriber.events {
                switch event {
                case .connected(0): _ = try? subscriber.subscribe(Self.topic, qos: 1)
                case .subscribed: subscribed.withLock { $0 = true }
                default: break
                }
            }
        }()
        try sink.start()
        async let running: Void = sink.run(logger: Logger(label: "e2e"))
        guard try await Self.until(within: .seconds(10), { subscribed.withLock { $0 } }),
            await sink.waitConnected(within: .seconds(10))
        else { throw RuntimeFailure("the bench's broker did not answer") }

        // The engine on its own thread, as in the daemon.
        let sent = try await runOnThreadOfItsOwn(named: "bench publisher") { () -> [ContinuousClock.Instant] in
            var driver = EngineDriver(
                engine: Engine(configuration: configuration, identity: .resolve(configuration.monitor)),
                store: store, sinks: [sink] + extra,
                requests: .inline(ServerHook(configuration: configuration, logger: .silent)))
            let origin = Timestamp(secondsSinceEpoch: 1_700_000_000)!
            try driver.start(at: origin)
            try driver.commit()
            var sent: [ContinuousClock.Instant] = []
            sent.reserveCapacity(count)
            let wall = ContinuousClock.now
            for n in 0..<count {
                if let paced {
                    let due = wall.advanced(by: .microseconds(Int64(n) * 1_000_000 / Int64(paced)))
                    if sleeping, ContinuousClock.now < due { Syscall.sleep(due - ContinuousClock.now) }
                    // A cluster's outputs go as soon as the broker holds their steps (the daemon's
                    // loop is woken for it).
                    while ContinuousClock.now < due { if driver.isHolding { try driver.release() } }
                }
                let advertisement = Advertisement(
                    format: .ibeacon, beacon: BeaconID(uuid: Self.uuid, major: 1, minor: UInt16(n % 4 + 1)),
                    power: -59, rssi: (n / 4) % 2 == 0 ? -50 : -75, address: nil)
                sent.append(.now)
                try driver.handle(
                    .daemon(.advertisement(advertisement)),
                    at: Timestamp(microseconds: origin.microseconds + Int64(n) * 100))
                // As the daemon does: steps share a transaction while input is waiting.
                let waiting = paced == nil && n + 1 < count
                if !waiting { try driver.commit() }
            }
            // A cluster's last outputs, once the broker holds their steps.
            while driver.isHolding {
                try driver.release()
                Syscall.sleep(.milliseconds(1))
            }
            return sent
        }
        let complete = try await Self.until(within: .seconds(120)) { arrivals.count >= count }
        let received = arrivals.instants
        _ = await sink.finish(within: .seconds(5))
        subscriber.shutdown()
        _ = await (receiving, running)
        guard complete, received.count == count else {
            throw RuntimeFailure("only \(received.count) of \(count) events arrived")
        }
        return zip(sent, received).map { sent, received in
            let d = received - sent
            return Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
        }
    }

    /// A cluster link, the active of its cluster, that `store` ships through.
    static func active(_ settings: MQTTSettings, store: StateStore) async throws -> ClusterLink {
        let link = try ClusterLink(
            settings: settings, name: "bench", keepalive: 2, member: "bench", logger: Logger(label: "e2e"))
        Task.detached { await link.run() }
        try link.start()
        guard await link.wait(within: .seconds(10), until: { $0.isActive }), let epoch = link.epoch else {
            throw RuntimeFailure("the bench's cluster link did not become the active")
        }
        try store.startShipping(epoch: epoch, ship: { link.ship($0) }, acknowledger: link)
        return link
    }

    /// When each event arrived, in order.
    final class Arrivals: Sendable {
        private let stamps: Mutex<[ContinuousClock.Instant]>

        init(capacity: Int) {
            var stamps: [ContinuousClock.Instant] = []
            stamps.reserveCapacity(capacity)
            self.stamps = Mutex(stamps)
        }

        func stamp() {
            let now = ContinuousClock.now
            stamps.withLock { $0.append(now) }
        }

        var count: Int { stamps.withLock { $0.count } }
        var instants: [ContinuousClock.Instant] { stamps.withLock { $0 } }
    }

    static func until(within timeout: Duration, _ condition: () -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while !condition() {
            guard ContinuousClock.now < deadline else { return false }
            try await Task.sleep(for: .milliseconds(1))
        }
        return true
    }
}
