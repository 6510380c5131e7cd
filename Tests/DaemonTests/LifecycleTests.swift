import Foundation
import MQTT
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon's lifecycle against a real mosquitto (docs/behaviour.md §13): commands on `B/cmd/...`, SIGTERM,
/// SIGHUP.
@Suite(.serialized) struct LifecycleTests {
    typealias Subscriber = MQTTRunTests.Subscriber
    static let area = "112EBB9D-B8C9-4ABD-9EB3-43578BF86A41"

    /// A running daemon on `trace:-`: lines go to its standard input, its log to a file.
    struct Daemon {
        let process: Process
        let input: Pipe
        let log: URL

        init(in folder: URL, extra: [String] = [], environment: [String: String] = [:]) throws {
            process = Process()
            process.currentDirectoryURL = folder
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            process.executableURL = DecodeCommandTests.productsDirectory.appendingPathComponent("beaconwatch")
            process.arguments =
                ["run", "--web-listen", "", "--config", "hsyco.ini", "--source", "trace:-", "--events", "events.jsonl"]
                + extra
            input = Pipe()
            process.standardInput = input
            process.standardOutput = FileHandle.nullDevice
            log = folder.appendingPathComponent("daemon.log")
            try Eventually.start(process, loggingTo: log)
        }

        /// A sighting of zone `major`'s beacon at `t`.
        func sight(major: Int, at t: Double, rssi: Int = -59) {
            let line =
                #"{"t": \#(t), "uuid": "\#(LifecycleTests.area)", "major": \#(major), "minor": 1, "rssi": \#(rssi)}"#
            input.fileHandleForWriting.write(Data((line + "\n").utf8))
        }

        var logText: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

        func exit(within seconds: Double) async throws -> Int32 {
            try await Subscriber.until("the daemon to exit", within: seconds) { !process.isRunning }
            return process.terminationStatus
        }
    }

    func publish(_ client: MQTTClient, _ topic: String, _ payload: String, retain: Bool = false) throws {
        _ = try client.publish(topic: topic, payload: Array(payload.utf8), qos: 1, retain: retain)
    }

    @Test func commandsChangeTheModeAndGarbageIsLoggedAndIgnored() async throws {
        let broker = try Broker()
        let folder = try MQTTRunTests.folder(port: broker.port, userid: "cmd")
        let watcher = try await Subscriber(port: broker.port, filter: "beaconwatch/cmd/#")
        let daemon = try Daemon(in: folder)
        daemon.sight(major: 3, at: 1_700_000_000)
        try await Subscriber.until("the first event") { watcher.payloads("/event").count == 1 }
        #expect(watcher.payloads("/event")[0].contains(#""background":true"#))

        try publish(watcher.client, "beaconwatch/cmd/cmd/alert", #"{"action": "explode"}"#)
        try publish(watcher.client, "beaconwatch/cmd/cmd/mode", "sideways")
        try publish(watcher.client, "beaconwatch/cmd/cmd/launch", "now")
        try publish(watcher.client, "beaconwatch/cmd/cmd/mode", "foreground")
        try await Subscriber.until("the garbage to be logged") {
            daemon.logText.contains("cmd/launch") && daemon.logText.contains("command=mode foreground")
        }
        // The mode is taken between events, at the input's time: the next sighting ranges in the foreground.
        daemon.sight(major: 4, at: 1_700_000_001)
        try await Subscriber.until("an event ranged in the foreground") {
            watcher.payloads("/event").contains {
                $0.contains(#""zone":"1004""#) && $0.contains(#""background":false"#)
            }
        }
        let log = daemon.logText
        #expect(
            log.contains(
                #"ignored a message on beaconwatch/cmd/cmd/alert: alert: "action" must be "done" or "decline""#),
            "\(log)")
        #expect(
            log.contains(#"ignored a message on beaconwatch/cmd/cmd/mode: mode: "sideways" is not a mode"#), "\(log)")
        #expect(log.contains(#"ignored a message on beaconwatch/cmd/cmd/launch: no command "launch""#), "\(log)")

        kill(daemon.process.processIdentifier, SIGTERM)
        #expect(try await daemon.exit(within: 10) == 0)
        watcher.client.shutdown()
    }

    @Test func sigtermFlushesTheOutboxPublishesOfflineAndExitsZero() async throws {
        let broker = try Broker()
        let folder = try MQTTRunTests.folder(port: broker.port, userid: "term")
        let watcher = try await Subscriber(port: broker.port, filter: "beaconwatch/term/#")
        let daemon = try Daemon(in: folder)
        for n in 0..<200 { daemon.sight(major: n % 2 + 3, at: 1_700_000_000 + Double(n) * 20) }
        try await Subscriber.until("the events") { watcher.payloads("/event").count >= 200 }
        let stopping = ContinuousClock.now
        kill(daemon.process.processIdentifier, SIGTERM)
        #expect(try await daemon.exit(within: 10) == 0)
        #expect(ContinuousClock.now - stopping < .seconds(5))
        try await Subscriber.until("offline") { watcher.payloads("/status").last == "offline" }
        // Every event the daemon wrote to --events reached the broker.
        let written = try OutboxTests.locations(in: folder.appendingPathComponent("events.jsonl"))
        #expect(written.count == watcher.payloads("/event").count)
        #expect(daemon.logText.contains("stopped"))
        #expect(!daemon.logText.contains("not acknowledged"))
        watcher.client.shutdown()
    }

    @Test func sighupAndCmdReloadTakeAGoodFileAndKeepTheOldOneWhenTheNewIsBad() async throws {
        let broker = try Broker()
        let folder = try MQTTRunTests.folder(port: broker.port, userid: "hup")
        let ini = folder.appendingPathComponent("hsyco.ini")
        let good = try String(contentsOf: ini, encoding: .utf8)
        let watcher = try await Subscriber(port: broker.port, filter: "beaconwatch/hup/#")
        let daemon = try Daemon(in: folder)
        daemon.sight(major: 3, at: 1_700_000_000)
        try await Subscriber.until("the first event") { watcher.payloads("/event").count == 1 }

        // A bad file: reported with its line, and the old configuration stays.
        try (good + "Monitor.exitTimeout = soon\n").write(to: ini, atomically: true, encoding: .utf8)
        kill(daemon.process.processIdentifier, SIGHUP)
        try await Subscriber.until("the bad file to be reported") {
            daemon.logText.contains("stays until the file is fixed")
        }
        #expect(daemon.logText.contains("hsyco.ini:"), "\(daemon.logText)")
        #expect(daemon.process.isRunning)
        daemon.sight(major: 3, at: 1_700_000_001)
        daemon.sight(major: 4, at: 1_700_000_002)
        try await Subscriber.until("events under the old configuration") {
            watcher.payloads("/event").contains { $0.contains(#""zone":"1004""#) }
        }

        // An empty file (a truncated save): refused too, and events go on under the old one.
        try "".write(to: ini, atomically: true, encoding: .utf8)
        kill(daemon.process.processIdentifier, SIGHUP)
        try await Subscriber.until("the empty file to be reported") {
            daemon.logText.contains("has no settings (an empty file?)")
        }
        #expect(daemon.logText.components(separatedBy: "stays until the file is fixed").count == 3)
        daemon.sight(major: 6, at: 1_700_000_002.5)
        try await Subscriber.until("an event after the empty file") {
            watcher.payloads("/event").contains { $0.contains(#""zone":"1006""#) }
        }

        // A good file with a new Zone name: taken on SIGHUP, and again on cmd/reload.
        try (good + "LocationZoneName.\(Self.area):5 = Boardroom\n").write(to: ini, atomically: true, encoding: .utf8)
        kill(daemon.process.processIdentifier, SIGHUP)
        try await Subscriber.until("the reload") { daemon.logText.contains("reason=SIGHUP") }
        try publish(watcher.client, "beaconwatch/hup/cmd/reload", "")
        try await Subscriber.until("the second reload") { daemon.logText.contains("reason=cmd/reload") }
        daemon.sight(major: 5, at: 1_700_000_003)
        try await Subscriber.until("the new name") { watcher.payloads("/zone").last == "Boardroom" }
        // Still inside through both reloads: the Area never read `none` once entered (docs/behaviour.md §13).
        let areas = watcher.payloads("/area").drop { $0 == "none" }
        #expect(!areas.isEmpty && !areas.contains("none"), "\(watcher.payloads("/area"))")
        // The reloaded engine keeps the identity and reports what it had reported before.
        #expect(watcher.payloads("/event").allSatisfy { $0.contains(#""userid":"hup""#) })

        kill(daemon.process.processIdentifier, SIGINT)
        #expect(try await daemon.exit(within: 10) == 0)
        try await Subscriber.until("offline") { watcher.payloads("/status").last == "offline" }
        watcher.client.shutdown()
    }
}
