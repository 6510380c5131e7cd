import Foundation
import TestSupport
import Testing

@Suite struct ReplayCommandTests {
    static func folder() throws -> URL {
        let folder = try scratchFolder("replay")
        try "LocationBaseBeacon.101 = E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,1,1\nMonitor.mode = foreground\n".write(
            to: folder.appendingPathComponent("hsyco.ini"), atomically: true, encoding: .utf8)
        return folder
    }

    static let line =
        #"{"t": 1700000000, "uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "major": 1, "minor": 1, "rssi": -59}"#

    @Test func replayOfAScenarioPrintsItsOutputsAndExits0() async throws {
        let scenario = try Conformance.Scenario("areas-then-zones")
        let run = try await DecodeCommandTests.beaconwatch([
            "replay", scenario.ini.path, "trace:\(scenario.trace.path)",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try scenario.mismatches(Conformance.Scenario.objects(run.stdout)).isEmpty)
    }

    /// The outputs with their random session (Monitor.session unset) taken out.
    static func withoutSession(_ text: String) -> String {
        text.replacing(/"session":"[^"]*"/, with: "\"session\":\"S\"")
    }

    /// `replay --config FILE SOURCE`, as every other command takes the configuration, and the first
    /// form `replay FILE SOURCE` print the same; the configuration given twice or no source is status 2.
    @Test func replayTakesTheConfigurationAsEveryCommandDoes() async throws {
        let scenario = try Conformance.Scenario("areas-then-zones")
        let first = try await DecodeCommandTests.beaconwatch([
            "replay", scenario.ini.path, "trace:\(scenario.trace.path)",
        ])
        let second = try await DecodeCommandTests.beaconwatch(
            ["replay", "--config", scenario.ini.path, "trace:\(scenario.trace.path)"])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(Self.withoutSession(second.stdout) == Self.withoutSession(first.stdout) && !first.stdout.isEmpty)
        let twice = try await DecodeCommandTests.beaconwatch(
            ["replay", "--config", scenario.ini.path, scenario.ini.path, "trace:\(scenario.trace.path)"])
        #expect(twice.status == 2 && twice.stderr.contains("given twice"), "\(twice.stderr)")
        let none = try await DecodeCommandTests.beaconwatch(["replay", "--config", scenario.ini.path])
        #expect(none.status == 2 && none.stderr.contains("give the source"), "\(none.stderr)")
    }

    /// Recorded ESPresense traffic replays with no `MQTT.*` (issue 47: "scanners report over MQTT: set
    /// MQTT.host"), its lines marked `"via": "espresense"`, and prints what the same building with a
    /// broker prints; `run` still stops on the missing broker, naming the line.
    @Test func anESPresenseBuildingReplaysWithoutABroker() async throws {
        let rooms = Conformance.directory.deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("etc/rooms")
        let ini = try String(contentsOf: rooms.appendingPathComponent("hsyco.ini"), encoding: .utf8)
        #expect(ini.contains("MQTT.host"))
        let folder = try scratchFolder("replay-espresense")
        let offline = ini.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.hasPrefix("MQTT.") }.joined(separator: "\n")
        try ini.write(to: folder.appendingPathComponent("broker.ini"), atomically: true, encoding: .utf8)
        try offline.write(to: folder.appendingPathComponent("hsyco.ini"), atomically: true, encoding: .utf8)
        let walk = try String(contentsOf: rooms.appendingPathComponent("walk.jsonl"), encoding: .utf8)
        let marked =
            walk.split(separator: "\n").map { line in
                line.contains("\"scanner\"") ? line.dropLast() + ", \"via\": \"espresense\"}" : line
            }.joined(separator: "\n") + "\n"
        #expect(marked.contains("\"via\": \"espresense\""))
        try marked.write(to: folder.appendingPathComponent("walk.jsonl"), atomically: true, encoding: .utf8)
        let replayed = try await DecodeCommandTests.beaconwatch(
            ["replay", "--config", "hsyco.ini", "trace:walk.jsonl"], in: folder)
        #expect(replayed.status == 0, "\(replayed.stderr)")
        let withBroker = try await DecodeCommandTests.beaconwatch(
            ["replay", "--config", "broker.ini", "trace:walk.jsonl"], in: folder)
        #expect(Self.withoutSession(replayed.stdout) == Self.withoutSession(withBroker.stdout))
        #expect(replayed.stdout.contains("\"kind\":\"zone\""))
        let run = try await DecodeCommandTests.beaconwatch(
            ["run", "--web-listen", "", "--config", "hsyco.ini", "--source", "trace:walk.jsonl"], in: folder)
        #expect(run.status == 2, "\(run.stderr)")
        #expect(run.stderr.contains("hsyco.ini:") && run.stderr.contains("set MQTT.host"), "\(run.stderr)")
        // A source the trace format does not know is a bad line.
        let bad = try await DecodeCommandTests.beaconwatch(
            ["replay", "--config", "hsyco.ini", "trace:-"],
            stdin: #"{"t": 1700000000, "scanner": "kitchen", "tag": "anna", "rssi": -60, "via": "bermuda"}"# + "\n",
            in: folder)
        #expect(bad.status == 2 && bad.stderr.contains("\"via\" must be"), "\(bad.stderr)")
    }

    @Test func aBadTraceLineStopsTheReplayWithItsLineAndStatus2() async throws {
        let run = try await DecodeCommandTests.beaconwatch(
            ["replay", "hsyco.ini", "trace:-"], stdin: Self.line + "\n" + Self.line + "\n{\"t\": 1700000003, oops\n",
            in: Self.folder())
        #expect(run.status == 2)
        #expect(run.stderr.hasPrefix("beaconwatch: stdin:3: "))
    }

    @Test func anOutOfOrderLineIsBadInput() async throws {
        let earlier = Self.line.replacingOccurrences(of: "1700000000", with: "1699999999")
        let run = try await DecodeCommandTests.beaconwatch(
            ["replay", "hsyco.ini", "trace:-"], stdin: Self.line + "\n" + earlier + "\n", in: Self.folder())
        #expect(run.status == 2)
        #expect(run.stderr.contains("stdin:2:"))
    }

    /// docs/behaviour.md §3.3: `t` in year 1 is a malformed line (status 2, its line number), with rules and
    /// their calendar arithmetic in play; it never reaches them.
    @Test func aLineInYearOneIsBadInputWithItsLineNumber() async throws {
        let folder = try Self.folder()
        let rules = Conformance.directory.appendingPathComponent("ubudu/u_beacons-example.json").path
        try "LocationBaseBeacon.101 = E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,1,1\nRules.source = \(rules)\n".write(
            to: folder.appendingPathComponent("rules.ini"), atomically: true, encoding: .utf8)
        let yearOne = Self.line.replacingOccurrences(of: "1700000000", with: "-62135596800")
        let run = try await DecodeCommandTests.beaconwatch(
            ["replay", "rules.ini", "trace:-"], stdin: Self.line + "\n" + yearOne + "\n", in: folder)
        #expect(run.status == 2, "\(run.stderr)")
        // The rules document's own warnings come first; the error is the one line after them.
        let errors = run.stderr.split(separator: "\n").filter { !$0.hasPrefix("beaconwatch: warning:") }
        #expect(errors.count == 1)
        #expect(errors.first?.hasPrefix("beaconwatch: stdin:2: t -62135596800") == true, "\(run.stderr)")
    }

    @Test func replayOfAnAdapterIsBadInput() async throws {
        let run = try await DecodeCommandTests.beaconwatch(["replay", "hsyco.ini", "hci0"], in: Self.folder())
        #expect(run.status == 2)
        #expect(run.stderr.contains("btsnoop:PATH or trace:PATH"))
    }

    @Test func replayWithStateKeepsTheLastReportedClass() async throws {
        let folder = try Self.folder()
        let first = try await DecodeCommandTests.beaconwatch(
            ["replay", "hsyco.ini", "trace:-", "--state", "kept.sqlite"], stdin: Self.line + "\n", in: folder)
        #expect(first.status == 0)
        // The replay ran its clock on to the end: 101 was reported off, and that is what was kept.
        #expect(first.stdout.components(separatedBy: #""type":"location""#).count == 3)
        let dump = try await Child.run(
            URL(fileURLWithPath: "/usr/bin/python3"),
            [
                "-c",
                "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT locationID, proximity FROM beaconReport').fetchall())",
                folder.appendingPathComponent("kept.sqlite").path,
            ])
        #expect(dump.stdout == "[('101', 'off')]\n", "\(dump.stderr)")
    }

    @Test func aStateFileThatIsNotADatabaseFailsWithStatus1() async throws {
        let folder = try Self.folder()
        try Data(repeating: 0x42, count: 2048).write(to: folder.appendingPathComponent("bad.sqlite"))
        let run = try await DecodeCommandTests.beaconwatch(
            ["replay", "hsyco.ini", "trace:-", "--state", "bad.sqlite"], stdin: Self.line + "\n", in: folder)
        #expect(run.status == 1)
        #expect(run.stderr.hasPrefix("beaconwatch: state database bad.sqlite: "))
        #expect(run.stderr.split(separator: "\n").count == 1)
    }
}
