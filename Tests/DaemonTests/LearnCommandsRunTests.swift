import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// "Learn this room" (docs/behaviour.md §22) through a real mosquitto and the command line: the
/// flat of etc/rooms (three ESPresense nodes, two tags), a session started on `B/cmd/learn` that
/// ends in a `learned` message on the tag's topic, and `beaconwatch learn` talking to the running
/// daemon's HTTP API.
@Suite(.serialized) struct LearnCommandsRunTests {
    typealias Subscriber = MQTTRunTests.Subscriber
    static let token = "learn-0123456789abcdef0123456789"
    static let kitchen = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1"

    /// etc/rooms on the test's broker, its web view on `web` with a token.
    static func folder(broker: Int32, web: Int32) throws -> URL {
        let folder = try scratchFolder("learn")
        let ini =
            try RoomRunTests.ini(port: broker) + "Web.listen = 127.0.0.1:\(web)\nWeb.token = \(token)\n"
        try ini.write(to: folder.appendingPathComponent("hsyco.ini"), atomically: true, encoding: .utf8)
        return folder
    }

    static func daemon(in folder: URL) throws -> Process {
        let process = Process()
        process.currentDirectoryURL = folder
        process.executableURL = DecodeCommandTests.productsDirectory.appendingPathComponent("beaconwatch")
        process.arguments = ["run", "--config", "hsyco.ini", "--events", "events.jsonl"]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        try Eventually.start(process, loggingTo: folder.appendingPathComponent("daemon.log"))
        return process
    }

    /// `beaconwatch learn ARGUMENTS --config hsyco.ini` in `folder`.
    static func learn(_ arguments: [String], in folder: URL) async throws -> DecodeCommandTests.Run {
        try await DecodeCommandTests.beaconwatch(["learn"] + arguments + ["--config", "hsyco.ini"], in: folder)
    }

    /// `count` reports of `tag` by each of `scanners`, as ESPresense nodes publish them.
    static func report(_ watcher: Subscriber, tag: String, _ scanners: [(String, Double)], count: Int) throws {
        for _ in 0..<count {
            for (scanner, rssi) in scanners {
                let report = RoomRunTests.Report(scanner: scanner, tag: tag, rssi: rssi)
                _ = try watcher.client.publish(
                    topic: "espresense/devices/\(tag)/\(scanner)", payload: Array(RoomRunTests.payload(report).utf8),
                    qos: 1, retain: false)
            }
        }
    }

    @Test func aSessionStartedOnCmdLearnEndsInALearnedMessageAndTheCommandLineSeesIt() async throws {
        let broker = try Broker()
        let folder = try Self.folder(broker: broker.port, web: try Broker.freePort())
        let watcher = try await Subscriber(port: broker.port, filter: "beaconwatch/#")
        let daemon = try Self.daemon(in: folder)
        defer { daemon.terminate() }
        try await Subscriber.until("the daemon online") { watcher.payloads("flat/status").last == "online" }
        let log = { (try? String(contentsOf: folder.appendingPathComponent("daemon.log"), encoding: .utf8)) ?? "" }
        let anna = "iBeacon:fda50693-a4e2-4fb1-afcf-c6eb07647825-7-1"
        func command(_ payload: String, retain: Bool = false) throws {
            _ = try watcher.client.publish(
                topic: "beaconwatch/flat/cmd/learn", payload: Array(payload.utf8), qos: 1, retain: retain)
        }
        // Refused: said in one log line each, nothing started.
        try command(#"{"device": "anna", "room": "Attic", "seconds": 5}"#)
        try command(#"{"device": "anna", "room": "Kitchen", "seconds": 4}"#)
        try await Subscriber.until("the refusals said") {
            log().contains(#"learn: no room "Attic"; name a Zone"#) && log().contains("give 5 to 600")
        }
        // The session, once anna is heard: her reports from the kitchen's and the hall's nodes
        // are its samples.
        try Self.report(watcher, tag: anna, [("hall", -60)], count: 1)
        try await Subscriber.until("anna heard") { !watcher.payloads("/anna/transition").isEmpty }
        try command(#"{"device": "anna", "room": "Kitchen", "seconds": 5}"#)
        try Self.report(watcher, tag: anna, [("kitchen", -50), ("hall", -72)], count: 8)
        try await Subscriber.until("anna's learned message") { !watcher.payloads("/anna/learned").isEmpty }
        let learned = try #require(
            JSONSerialization.jsonObject(with: Data((watcher.payloads("/anna/learned").first ?? "").utf8))
                as? [String: Any])
        #expect(learned["type"] as? String == "learned" && learned["device"] as? String == "anna", "\(learned)")
        #expect(learned["room"] as? String == Self.kitchen && learned["name"] as? String == "Kitchen")
        #expect(learned["samples"] as? Int == 16 && learned["scanners"] as? Int == 2, "\(learned)")

        // The command line: what is learned, check-like.
        let status = try await Self.learn(["--status"], in: folder)
        #expect(status.status == 0, "\(status.stderr)")
        #expect(
            status.stdout.contains("rooms learned: 1\n  Kitchen (\(Self.kitchen)): 16 samples, 2 scanners, trained "),
            "\(status.stdout)")
        #expect(status.stdout.contains(" by anna; too few samples: train it for 30 s or more"), "\(status.stdout)")
        // Anna quiet: a session that takes no sample says so and keeps the kitchen's training.
        let quiet = try await Self.learn(["--device", "anna", "--room", "Kitchen", "--seconds", "5"], in: folder)
        #expect(quiet.status == 1 && quiet.stderr.contains("learned nothing"), "\(quiet.stderr)")
        #expect(try await Self.learn(["--status"], in: folder).stdout == status.stdout)
        // Bad input: exit 2 with the daemon's one line; nothing changed.
        let attic = try await Self.learn(["--device", "anna", "--room", "Attic"], in: folder)
        #expect(attic.status == 2 && attic.stderr.contains(#"beaconwatch: learn: no room "Attic""#), "\(attic.stderr)")
        #expect(attic.stderr.split(separator: "\n").count == 1)
        let nothing = try await Self.learn(["--stop", "--device", "anna"], in: folder)
        #expect(nothing.status == 2 && nothing.stderr.contains("has no session running"), "\(nothing.stderr)")
        let short = try await Self.learn(["--device", "anna", "--room", "Hall", "--seconds", "4"], in: folder)
        #expect(short.status == 2 && short.stderr.contains("give 5 to 600"), "\(short.stderr)")
        // Ben is declared but was never heard: refused, one line naming the cause and the fix.
        let unheard = try await Self.learn(["--device", "ben", "--room", "Hall", "--no-wait"], in: folder)
        #expect(unheard.status == 2 && unheard.stderr.split(separator: "\n").count == 1, "\(unheard.stderr)")
        #expect(unheard.stderr.contains(#"learn: "ben" has not been heard by any scanner yet"#), "\(unheard.stderr)")
        // Heard, a session started and stopped from the command line.
        let ben = "iBeacon:fda50693-a4e2-4fb1-afcf-c6eb07647825-7-2"
        try Self.report(watcher, tag: ben, [("hall", -50), ("kitchen", -72)], count: 3)
        try await Subscriber.until("ben heard") { !watcher.payloads("/ben/transition").isEmpty }
        let started = try await Self.learn(["--device", "ben", "--room", "Hall", "--no-wait"], in: folder)
        #expect(started.status == 0 && started.stdout.contains("training Hall with ben for 60 s"), "\(started.stderr)")
        let running = try await Self.learn(["--status"], in: folder)
        #expect(running.stdout.contains("sessions running: 1\n  ben in Hall: "), "\(running.stdout)")
        // A second session: the room by its name, and the command that ends the first.
        let second = try await Self.learn(["--device", "ben", "--room", "Office"], in: folder)
        #expect(second.status == 2 && second.stderr.split(separator: "\n").count == 1, "\(second.stderr)")
        #expect(second.stderr.contains("ben is training Hall already ("), "\(second.stderr)")
        #expect(
            second.stderr.contains("end it with beaconwatch learn --stop --device ben --config hsyco.ini")
                && !second.stderr.contains("{"), "\(second.stderr)")
        let stopped = try await Self.learn(["--stop", "--device", "ben"], in: folder)
        #expect(stopped.status == 0, "\(stopped.stderr)")
        try await Subscriber.until("ben's learned message") { !watcher.payloads("/ben/learned").isEmpty }
        #expect(watcher.payloads("/ben/learned").first?.contains(#""stopped":true"#) == true)
        // Ben's session took nothing: the hall has nothing to forget.
        let hall = try await Self.learn(["--forget", "--room", "Hall"], in: folder)
        #expect(
            hall.status == 2 && hall.stderr.contains("learn: Hall is not trained; nothing to forget"), "\(hall.stderr)")
        // Forgotten, as a user types it: the status says so.
        let forgot = try await Self.learn(["--forget", "Kitchen"], in: folder)
        #expect(forgot.status == 0 && forgot.stdout == "forgot Kitchen\n", "\(forgot.stderr)")
        #expect(try await Self.learn(["--status"], in: folder).stdout == "rooms learned: none yet\n")
        let every = try await Self.learn(["--forget", "*"], in: folder)
        #expect(every.status == 2 && every.stderr.contains("no room is trained; nothing to forget"), "\(every.stderr)")
        daemon.terminate()
        daemon.waitUntilExit()
        #expect(daemon.terminationStatus == 0, "\(log())")
    }

    /// A daemon that cannot be reached is a runtime failure (1); a configuration without a web
    /// view, or without a token for a command, is bad input (2).
    @Test func theCommandLineSaysWhatIsWrongWithoutADaemon() async throws {
        let folder = try Self.folder(broker: try Broker.freePort(), web: try Broker.freePort())
        let unreachable = try await Self.learn(["--status"], in: folder)
        #expect(unreachable.status == 1, "\(unreachable.stderr)")
        #expect(unreachable.stderr.contains("cannot reach the daemon at http://127.0.0.1:"), "\(unreachable.stderr)")
        // The room to forget as a user types it (docs/rooms.md): taken, so only the daemon is missing.
        let forget = try await Self.learn(["--forget", "Bathroom"], in: folder)
        #expect(forget.status == 1 && forget.stderr.contains("cannot reach the daemon"), "\(forget.stderr)")
        let twice = try await Self.learn(["--forget", "Bathroom", "--room", "Hall"], in: folder)
        #expect(twice.status == 2 && twice.stderr.contains("give the room to forget once"), "\(twice.stderr)")
        // etc/learn as shipped has what training needs (Web.token): only the daemon is missing.
        let shipped = try await DecodeCommandTests.beaconwatch(
            ["learn", "--device", "anna", "--room", "Kitchen", "--config", LearnRestartTests.etc.path + "/hsyco.ini"],
            in: folder)
        #expect(shipped.status == 1 && shipped.stderr.contains("cannot reach the daemon"), "\(shipped.stderr)")
        let ini = try String(contentsOf: folder.appendingPathComponent("hsyco.ini"), encoding: .utf8)
        try ini.replacingOccurrences(of: "Web.token = \(Self.token)\n", with: "").write(
            to: folder.appendingPathComponent("hsyco.ini"), atomically: true, encoding: .utf8)
        let tokenless = try await Self.learn(["--device", "anna", "--room", "Kitchen"], in: folder)
        #expect(tokenless.status == 2 && tokenless.stderr.contains("learn needs Web.token"), "\(tokenless.stderr)")
        let both = try await Self.learn(["--stop", "--status"], in: folder)
        #expect(both.status == 2, "\(both.stderr)")
    }
}
