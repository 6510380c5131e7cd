import Foundation
import MQTT
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// SPEC 17 with the real things: a drive into and out of the two geofences of the Ubudu example
/// export (radii in km), as NMEA sentences fed by gpsfake to a real gpsd that the daemon reads,
/// and as a trace that `replay` reads; both must give the same outputs.
///
/// The drive (`Tests/geofence/make-drive.py`) starts 300 m south of geofence 52 (100 m), passes
/// through its centre and through the centre of geofence 35 (20 m), and ends 300 m beyond, a fix
/// every 15 m. Its trace is dated 2026, after both geofences' `end`: the rules say `after_end`.
/// Dated 2013 on a Tuesday morning, every rule fires with its notification.
@Suite(.serialized) struct GeofenceDriveTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("geofence")
    static let example = Conformance.url("ubudu/u_geofences-example.json").path
    static let gpsfake = "/usr/bin/gpsfake"

    /// The outputs of a replay of `trace` under the drive's configuration.
    static func replay(_ trace: String) throws -> [String] {
        let run = try DecodeCommandTests.beaconwatch([
            "replay", folder.appendingPathComponent("drive.ini").path, "trace:\(trace)",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        return run.stdout.split(separator: "\n").map(String.init)
    }

    /// An output without what depends on when it ran: `t`, and the `dwell` seconds.
    static func timeless(_ line: String) -> String {
        guard var object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            return line
        }
        for key in ["t", "dwell", "dwellToday"] { object[key] = nil }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    static func types(_ lines: [String]) -> [String] {
        lines.compactMap { line -> String? in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let type = object["type"] as? String
            else { return nil }
            let what = (object["region"] as? String).map { " \($0)" } ?? ""
            let reason = (object["reason"] as? String).map { " \($0)" } ?? ""
            return type + what + reason
        }
    }

    @Test func theTraceDriveEntersAndLeavesBothGeofencesAndReplaysTheSameEveryTime() throws {
        let trace = Self.folder.appendingPathComponent("drive.trace").path
        let first = try Self.replay(trace)
        #expect(try Self.replay(trace) == first, "replay is not deterministic")
        #expect(
            Self.types(first) == [
                "monitoring", "enter 52", "rule 52 after_end", "exit 52", "rule 52 after_end", "enter 35",
                "rule 35 after_end", "exit 35", "rule 35 after_end",
            ])
        #expect(first[1].contains(#""kind":"geofence","name":"DEMO PRESENTATION 2","how":"monitored","distance":90"#))
        #expect(first[3].contains(#""dwell":15.0,"dwellToday":15.0"#), "\(first[3])")
    }

    @Test func inTheirValidityTheRulesFireWithTheirNotifications() throws {
        // The same drive on Tuesday 2013-08-13 from 10:00 in Paris.
        let folder = try scratchFolder("drive2013")
        let make = Process()
        make.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        make.arguments = [
            Self.folder.appendingPathComponent("make-drive.py").path, folder.path, "--start", "1376380800",
        ]
        try make.run()
        make.waitUntilExit()
        #expect(make.terminationStatus == 0)
        let lines = try Self.replay(folder.appendingPathComponent("drive.trace").path)
        #expect(
            Self.types(lines) == [
                "monitoring", "enter 52", "rule 52", "notification 52", "exit 52", "rule 52", "notification 52",
                "enter 35", "rule 35", "notification 35", "exit 35", "rule 35", "notification 35",
            ])
        let notifications = lines.filter { $0.contains(#""type":"notification""#) }
        #expect(notifications[0].contains("Offres exclusives en magasin, à moins de 100 m, ne les ratez pas !"))
        #expect(notifications[0].contains(#""url":"http://mobile.ubudu.com/webcoupon/117-demo-73987512-html"#))
        #expect(notifications[3].contains("Reposez vous bien!"))
        #expect(lines.allSatisfy { !$0.contains(#""fired":false"#) })
    }

    @Test(
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: gpsfake), "gpsfake is not installed (scripts/setup --gps)")
    )
    func gpsfakeThroughARealGpsdGivesTheOutputsOfTheTrace() async throws {
        let broker = try Broker()
        let folder = try scratchFolder("gpsdrive")
        let gpsdPort = try Broker.freePort()
        let ini = """
            Monitor.userid = van
            Monitor.source = none
            Monitor.position = gpsd:127.0.0.1:\(gpsdPort)
            Monitor.timezone = Europe/Paris
            Rules.geofences = \(Self.example)
            Rules.geofenceRadiusUnit = km
            MQTT.host = 127.0.0.1
            MQTT.port = \(broker.port)
            State.database = state.sqlite

            """
        try ini.write(to: folder.appendingPathComponent("hsyco.ini"), atomically: true, encoding: .utf8)
        let subscriber = try await MQTTRunTests.Subscriber(port: broker.port, filter: "beaconwatch/van/#")

        // gpsfake starts gpsd on the port and waits for a line on its standard input before each
        // sentence (-i): nothing is fed before the daemon watches.
        let fake = Process()
        fake.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        // Its own signal mask cleared, as the broker's (a test process blocks SIGTERM).
        fake.arguments = [
            "-c",
            "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); os.execv(sys.argv[1], sys.argv[1:])",
            Self.gpsfake, "-1", "-i", "-c", "0.01", "-P", "\(gpsdPort)",
            Self.folder.appendingPathComponent("drive.nmea").path,
        ]
        fake.currentDirectoryURL = folder
        let prompts = Pipe()
        fake.standardInput = prompts
        fake.standardOutput = FileHandle.nullDevice
        try Eventually.start(fake, loggingTo: folder.appendingPathComponent("gpsfake.log"))
        defer {
            if fake.isRunning { kill(fake.processIdentifier, SIGKILL) }
        }

        let daemon = Process()
        daemon.currentDirectoryURL = folder
        daemon.executableURL = DecodeCommandTests.productsDirectory.appendingPathComponent("beaconwatch")
        daemon.arguments = ["run", "--web-listen", "", "--config", "hsyco.ini", "--events", "events.jsonl"]
        daemon.standardOutput = FileHandle.nullDevice
        let log = folder.appendingPathComponent("daemon.log")
        try Eventually.start(daemon, loggingTo: log)
        defer {
            if daemon.isRunning { kill(daemon.processIdentifier, SIGKILL) }
        }
        let logText = { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }
        let fakeFile = folder.appendingPathComponent("gpsfake.log")
        let fakeLog = { (try? String(contentsOf: fakeFile, encoding: .utf8)) ?? "" }
        try await MQTTRunTests.Subscriber.until("the daemon to watch gpsd") {
            logText().contains("gpsd watching") || !daemon.isRunning || !fake.isRunning
        }
        #expect(daemon.isRunning && fake.isRunning, "daemon: \(logText())\ngpsfake: \(fakeLog())")
        // Lines end in CR LF, one Character to Swift: count the bytes.
        let sentences = try Data(contentsOf: Self.folder.appendingPathComponent("drive.nmea")).count { $0 == 0x0A }
        prompts.fileHandleForWriting.write(Data(String(repeating: "\n", count: sentences + 1).utf8))

        // Everything the trace gives: four transitions, and B/geofence back to none.
        do {
            try await MQTTRunTests.Subscriber.until("the drive's four transitions") {
                subscriber.payloads("/transition").count >= 4 && subscriber.payloads("/rule").count >= 4
                    || !daemon.isRunning
            }
        } catch {
            Issue.record(
                "\(error); topics \(subscriber.messages.map(\.topic))\ndaemon: \(logText())\ngpsfake: \(fakeLog())")
            return
        }
        try await MQTTRunTests.Subscriber.until("B/geofence to be none again") {
            subscriber.payloads("/geofence").last == "none" && subscriber.payloads("/geofence").count >= 5
                || !daemon.isRunning
        }
        #expect(
            subscriber.payloads("/geofence") == [
                "none", "DEMO PRESENTATION 2", "none", "demo-shop-2--10--rue-d-amsterdam", "none",
            ], "\(logText())")
        kill(daemon.processIdentifier, SIGTERM)
        try await MQTTRunTests.Subscriber.until("the daemon to exit") { !daemon.isRunning }
        daemon.waitUntilExit()
        #expect(daemon.terminationStatus == 0, "\(logText())")

        let live = try String(contentsOf: folder.appendingPathComponent("events.jsonl"), encoding: .utf8)
            .split(separator: "\n").map(String.init)
        let traced = try Self.replay(Self.folder.appendingPathComponent("drive.trace").path)
        #expect(live.map(Self.timeless) == traced.map(Self.timeless), "live:\n\(live.joined(separator: "\n"))")
        // The transitions on B/transition are the events' own.
        let transitions = subscriber.payloads("/transition").map(Self.timeless)
        #expect(
            transitions
                == live.filter { $0.contains(#""kind":"geofence""#) && !$0.contains(#""type":"rule""#) }.map(
                    Self.timeless))
    }
}
