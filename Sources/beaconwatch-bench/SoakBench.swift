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
import Rules
import Syscalls
import TestSupport

/// Days of virtual time through the whole engine with the state database and the MQTT outbox on
/// disk and a real mosquitto, reporting memory and database size at each simulated midnight:
/// what a week of a daemon costs, in a minute or two (issue 16).
struct SoakBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "soak",
        abstract: "Days of virtual time through the full engine: resident memory and database size per day.",
        discussion: """
            The building of the pipeline bench (1,000 beacons: 10 to a Zone, 20 Zones to an Area), \
            rules on every Zone (an on_entry rule with a latch, counts and a notification, an on_exit \
            one), alerts on the first 50 beacons, dwell per Area and Zone in Europe/Paris days. A \
            walker spends 30 s in a random Zone hearing its beacons: 100 sightings a second, every \
            Zone change an exit, a monitoring switch and an enter. Steps are committed every \
            simulated second to a state database on disk; every output goes through the MQTT sink's \
            outbox to a real mosquitto on loopback. At each simulated day's end: resident memory \
            (MiB), database size (the file and its WAL, MiB) and outbox depth. At the end, the outbox \
            must drain to empty.
            """
    )

    @Option(help: "Simulated days.")
    var days = 7

    @Option(help: "Configured beacons.")
    var beacons = 1000

    @Option(help: "State.keepDays: days of dwell history kept in the database.")
    var keepDays = 400

    func run() async throws {
        let broker = try Broker(persistent: false)
        defer { broker.kill(signal: SIGKILL, wait: false) }
        let folder = try scratchFolder("bench-soak")
        defer { try? FileManager.default.removeItem(at: folder) }
        let hierarchy = PipelineBench.building(beacons: beacons)
        var ini = hierarchy.beacons.map {
            "LocationBaseBeacon.\($0.locationID) = \($0.id.uuid.uuidString),\($0.id.major),\($0.id.minor)"
        }
        ini += hierarchy.beacons.prefix(50).map { "LocationAlert.\($0.locationID) = near,<=,Check in" }
        ini += [
            "Monitor.userid = soak", "Monitor.session = soak", "Monitor.address = 127.0.0.1",
            "Monitor.timezone = Europe/Paris", "MQTT.host = 127.0.0.1", "MQTT.port = \(broker.port)",
            "MQTT.homeassistant = false", "State.keepDays = \(keepDays)",
        ]
        let configuration = try Configuration.load(
            Array((ini.joined(separator: "\n") + "\n").utf8), path: folder.path + "/soak.ini"
        ).get()
        let database = folder.appendingPathComponent("state.sqlite").path
        let store = try StateStore(path: database, keepDays: configuration.keepDays)
        guard let mqtt = configuration.mqtt else { throw RuntimeFailure("the soak's configuration has no MQTT") }
        let sink = try MQTTSink(settings: mqtt, userid: "soak", hierarchy: configuration.hierarchy, store: store)
        try sink.start()
        async let running: Void = sink.run(logger: Logger(label: "soak"))
        guard await sink.waitConnected(within: .seconds(10)) else {
            throw RuntimeFailure("the soak's broker did not answer")
        }

        print("soak: \(days) days of virtual time, \(beacons) beacons, 100 sightings/s, State.keepDays \(keepDays)")
        print("soak: day | sightings | outputs | RSS MiB | database MiB | outbox")
        let days = days
        let wall = ContinuousClock.now
        let totals = try await runOnThreadOfItsOwn(named: "bench engine") { () -> (sightings: Int, outputs: Int) in
            var settings = RuleSettings(configuration, machineID: nil)
            settings.autoServerNotify = false
            var driver = EngineDriver(
                engine: Engine(
                    configuration: configuration, identity: .resolve(configuration.monitor),
                    rules: PipelineBench.rules(for: hierarchy), ruleSettings: settings),
                store: store, sinks: [sink],
                requests: .inline(ServerHook(configuration: configuration, logger: .silent))
            )
            var walk = Walk(hierarchy: hierarchy, seed: 7)
            try driver.start(at: walk.time)
            try driver.commit()
            var sightings = 0
            for day in 1...days {
                // 86,400 simulated seconds of 100 sightings, a commit after each second.
                for _ in 0..<86_400 {
                    for _ in 0..<100 { try driver.handle(walk.next()) }
                    sightings += 100
                    try driver.commit()
                }
                let size = ["", "-wal"].compactMap {
                    try? FileManager.default.attributesOfItem(atPath: database + $0)[.size] as? Int
                }.reduce(0, +)
                print(
                    "soak: \(day) | \(sightings) | \(driver.delivered) | \(format(Double(heapInUse()) / 1_048_576, 1)) | "
                        + "\(format(Double(size) / 1_048_576, 2)) | \((try? store.pendingOutbox().count) ?? -1)")
            }
            try driver.drain(notAfter: nil)
            try driver.commit()
            return (sightings, driver.delivered)
        }
        let unsent = await sink.finish(within: .seconds(60))
        let left = try store.pendingOutbox().count
        _ = await running
        let elapsed = ContinuousClock.now - wall
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        print(
            "soak: \(totals.sightings) sightings, \(totals.outputs) outputs in \(format(seconds, 1)) s "
                + "(\(format(Double(totals.sightings) / seconds / 1e6, 2)) million sightings/s); "
                + "outbox at the end: \(left) \(unsent == 0 && left == 0 ? "(drained)" : "(NOT drained)")")
        if left != 0 { throw RuntimeFailure("the outbox kept \(left) messages after the broker had a minute") }
    }
}
