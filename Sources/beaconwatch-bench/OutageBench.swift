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

/// A long broker outage: memory while a million events wait in the outbox, then the drain when
/// the broker comes back, checked complete and in order.
struct OutageBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "outage",
        abstract: "Memory with a million events queued during a broker outage, and the drain after it.",
        discussion: """
            A thousand beacons in one Zone, no RSSI filter and no hysteresis: each sighting flips \
            its beacon between immediate and far, so every sighting makes one LocationBeaconEvent \
            (QoS 1). With the broker stopped, the events are committed to the outbox as the daemon \
            does (steps share a transaction while input waits); the resident memory is then read \
            from /proc/self/status. With --no-mqtt the same sightings run without MQTT: the \
            reference. Then the broker is started again and the time until a subscriber (a \
            persistent session, subscribed before the outage) has every event is measured, and \
            the events are checked to arrive in outbox order.
            """
    )

    @Option(help: "Sightings (one event each) during the outage.")
    var events = 1_000_000

    @Flag(name: .customLong("no-mqtt"), help: "The reference run: the same sightings without MQTT.")
    var noMQTT = false

    static let uuid = UUID(uuidString: "5A4BCFCE-174E-4BAC-A814-092E77F6B7E5")!
    static let beacons = 1000

    func run() async throws {
        let folder = try scratchFolder("bench-outage")
        defer { try? FileManager.default.removeItem(at: folder) }
        let broker = try Broker()
        defer { broker.kill(signal: SIGKILL, wait: false) }
        var ini = (1...Self.beacons).map { "LocationBaseBeacon.\($0) = \(Self.uuid),1,\($0)" }.joined(separator: "\n")
        ini += """

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
        let label = noMQTT ? "without MQTT" : "with the broker down"
        guard !noMQTT else {
            try await feed(configuration: configuration, store: store, sinks: [])
            print("outage: \(events) events \(label): RSS \(Self.resident()) MiB (peak \(peakResidentMiB()) MiB)")
            return
        }

        // A persistent subscriber session, kept by the broker across its restart.
        let received = Mutex<[String]>([])
        var connection = MQTTConnection(host: "127.0.0.1", port: broker.port, clientID: "bench-outage-sub")
        connection.cleanSession = false
        let subscriber = try MQTTClient(
            connection,
            received: { _, payload, _ in
                let text = String(decoding: payload, as: UTF8.self)
                received.withLock { $0.append(text) }
            })
        try await connectBenchClient(subscriber, subscribing: "beaconwatch/bench/event", qos: 1)
        try broker.saved()
        try await broker.stop()

        let sink = try MQTTSink(
            settings: configuration.mqtt!, userid: "bench", hierarchy: configuration.hierarchy, store: store)
        try sink.start()
        async let running: Void = sink.run(logger: Logger(label: "outage"))
        let clock = ContinuousClock.now
        try await feed(configuration: configuration, store: store, sinks: [sink])
        let fed = (ContinuousClock.now - clock).inSeconds
        let queued = sink.waiting
        print(
            "outage: \(events) events \(label): RSS \(Self.resident()) MiB (peak \(peakResidentMiB()) MiB), "
                + "\(queued) queued, fed in \(format(fed, 1)) s")

        // What must arrive, in order: the outbox as the database holds it.
        let expected = try store.pendingOutbox().filter { $0.message.topic.hasSuffix("/event") }.map(\.message.payload)
        let back = ContinuousClock.now
        try broker.start()
        let complete = try await E2EBench.until(within: .seconds(600)) {
            received.withLock { $0.count } >= expected.count
        }
        let drained = (ContinuousClock.now - back).inSeconds
        let arrived = received.withLock { $0 }
        _ = await sink.finish(within: .seconds(5))
        subscriber.shutdown()
        _ = await running
        // At-least-once: a resend after a reconnect may repeat an event; each first arrival must
        // follow the outbox order.
        var seen = 0
        var firsts: [String] = []
        firsts.reserveCapacity(expected.count)
        var index = 0
        for payload in arrived {
            if index < expected.count, payload == expected[index] {
                firsts.append(payload)
                index += 1
            } else {
                seen += 1
            }
        }
        guard complete, firsts.count == expected.count else {
            throw RuntimeFailure(
                "\(arrived.count) arrived, \(firsts.count) of \(expected.count) in order; the rest out of order or missing"
            )
        }
        print(
            "outage: broker back: all \(expected.count) events delivered in order in \(format(drained, 1)) s "
                + "(\(format(Double(expected.count) / drained / 1e3, 1))k events/s), \(seen) repeated")
    }

    /// Feeds the sightings through the engine on its own thread, as the daemon does.
    func feed(configuration: Configuration, store: StateStore, sinks: [any OutputSink]) async throws {
        let count = events
        try await runOnThreadOfItsOwn(named: "bench engine") {
            var driver = EngineDriver(
                engine: Engine(configuration: configuration, identity: .resolve(configuration.monitor)),
                store: store, sinks: sinks,
                requests: .inline(ServerHook(configuration: configuration, logger: .silent)))
            let origin = Timestamp(secondsSinceEpoch: 1_700_000_000)!
            try driver.start(at: origin)
            try driver.commit()
            for n in 0..<count {
                let minor = n % Self.beacons + 1
                let advertisement = Advertisement(
                    format: .ibeacon, beacon: BeaconID(uuid: Self.uuid, major: 1, minor: UInt16(minor)),
                    power: -59, rssi: (n / Self.beacons) % 2 == 0 ? -50 : -75, address: nil)
                try driver.handle(
                    .daemon(.advertisement(advertisement)),
                    at: Timestamp(microseconds: origin.microseconds + Int64(n) * 100))
                if n + 1 == count { try driver.commit() }
            }
        }
    }

    /// The resident memory now, MiB.
    static func resident() -> String { format(Double(heapInUse()) / 1_048_576, 1) }
}
