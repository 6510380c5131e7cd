import Foundation
import MQTT
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// docs/behaviour.md §17 with the real things: a drive into and out of the two geofences of the Ubudu example
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
    static let gpspipe = "/usr/bin/gpspipe"

    /// The distinct times of the fixes gpsd has reported, read from `gpspipe -w`'s JSON lines.
    final class Reports: Sendable {
        private let state = Mutex((pending: Data(), watching: false, times: Set<String>()))

        func take(_ data: Data) {
            state.withLock { state in
                state.pending.append(data)
                while let newline = state.pending.firstIndex(of: 0x0A) {
                    let line = String(decoding: state.pending[..<newline], as: UTF8.self)
                    state.pending.removeSubrange(...newline)
                    if line.contains(#""class":"WATCH""#) { state.watching = true }
                    if line.contains(#""class":"TPV""#),
                        let range = line.range(of: #""time":"[^"]+""#, options: .regularExpression)
                    {
                        state.times.insert(String(line[range]))
                    }
                }
            }
        }

        var watching: Bool { state.withLock { $0.watching } }
        var fixes: Int { state.withLock { $0.times.count } }
    }

    /// The outputs of a replay of `trace` under the drive's configuration.
    static func replay(_ trace: String) async throws -> [String] {
        let run = try await DecodeCommandTests.beaconwatch([
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

    @Test func theTraceDriveEntersAndLeavesBothGeofencesAndReplaysTheSameEveryTime() async throws {
        let trace = Self.folder.appendingPathComponent("drive.trace").path
        let first = try await Self.replay(trace)
        #expect(try await Self.replay(trace) == first, "replay is not deterministic")
        #expect(
            Self.types(first) == [
                "monitoring", "enter 52", "rule 52 after_end", "exit 52", "rule 52 after_end", "enter 35",
                "rule 35 after_end", "exit 35", "rule 35 after_end",
            ])
        #expect(first[1].contains(#""kind":"geofence","name":"DEMO PRESENTATION 2","how":"monitored","distance":90"#))
        #expect(first[3].contains(#""dwell":15.0,"dwellToday":15.0"#), "\(first[3])")
    }

    @Test func inTheirValidityTheRulesFireWithTheirNotifications() async throws {
        // The same drive on Tuesday 2013-08-13 from 10:00 in Paris.
        let folder = try scratchFolder("drive2013")
        let make = try await Child.run(
            URL(fileURLWithPath: "/usr/bin/python3"),
            [Self.folder.appendingPathComponent("make-drive.py").path, folder.path, "--start", "1376380800"])
        #expect(make.status == 0, "\(make.stderr)")
        let lines = try await Self.replay(folder.appendingPathComponent("drive.trace").path)
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
            if: FileManager.default.isExecutableFile(atPath: gpsfake)
                && FileManager.default.isExecutableFile(atPath: gpspipe),
            "gpsfake and gpspipe are not installed (scripts/setup --gps)")
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

        // A watcher of the test's own sees each fix gpsd reports, and a fix is fed only once the
        // one before it was reported: nothing piles up in gpsfake's pseudo-terminal, whose 4 KiB
        // a loaded machine can fill while gpsd waits for the CPU, and gpsd then loses sentences.
        let watcher = Process()
        watcher.executableURL = URL(fileURLWithPath: Self.gpspipe)
        watcher.arguments = ["-w", "127.0.0.1:\(gpsdPort)"]
        let reports = Reports()
        let pipe = Pipe()
        watcher.standardOutput = pipe
        try Eventually.start(watcher, loggingTo: folder.appendingPathComponent("gpspipe.log"))
        readUntilEnd(pipe.fileHandleForReading, name: "gpspipe") { data in
            reports.take(data)
            Eventually.changed()
        }
        defer {
            if watcher.isRunning { kill(watcher.processIdentifier, SIGKILL) }
        }
        try await MQTTRunTests.Subscriber.until("gpspipe to watch") { reports.watching || !watcher.isRunning }
        // Two sentences a fix (GGA, RMC); lines end in CR LF, one Character to Swift: count bytes.
        let sentences = try Data(contentsOf: Self.folder.appendingPathComponent("drive.nmea")).count { $0 == 0x0A }
        for fix in 0..<(sentences / 2) {
            // gpsd reports a fix when the next one begins: wait for the one before the last fed.
            try await MQTTRunTests.Subscriber.until("gpsd to report fix \(fix - 1)") {
                reports.fixes >= fix - 1 || !fake.isRunning
            }
            prompts.fileHandleForWriting.write(Data("\n\n".utf8))
        }
        prompts.fileHandleForWriting.write(Data(String(repeating: "\n", count: sentences % 2 + 1).utf8))

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
        #expect(daemon.terminationStatus == 0, "\(logText())")

        let live = try String(contentsOf: folder.appendingPathComponent("events.jsonl"), encoding: .utf8)
            .split(separator: "\n").map(String.init)
        let traced = try await Self.replay(Self.folder.appendingPathComponent("drive.trace").path)
        #expect(live.map(Self.timeless) == traced.map(Self.timeless), "live:\n\(live.joined(separator: "\n"))")
        // The transitions on B/transition are the events' own.
        let transitions = subscriber.payloads("/transition").map(Self.timeless)
        #expect(
            transitions
                == live.filter { $0.contains(#""kind":"geofence""#) && !$0.contains(#""type":"rule""#) }.map(
                    Self.timeless))
    }
}
