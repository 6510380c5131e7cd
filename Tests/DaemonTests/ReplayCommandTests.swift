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

    @Test func replayOfAScenarioPrintsItsOutputsAndExits0() throws {
        let scenario = try Conformance.Scenario("areas-then-zones")
        let run = try DecodeCommandTests.beaconwatch(["replay", scenario.ini.path, "trace:\(scenario.trace.path)"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try scenario.mismatches(Conformance.Scenario.objects(run.stdout)).isEmpty)
    }

    @Test func aBadTraceLineStopsTheReplayWithItsLineAndStatus2() throws {
        let run = try DecodeCommandTests.beaconwatch(
            ["replay", "hsyco.ini", "trace:-"], stdin: Self.line + "\n" + Self.line + "\n{\"t\": 1700000003, oops\n",
            in: Self.folder())
        #expect(run.status == 2)
        #expect(run.stderr.hasPrefix("beaconwatch: stdin:3: "))
    }

    @Test func anOutOfOrderLineIsBadInput() throws {
        let earlier = Self.line.replacingOccurrences(of: "1700000000", with: "1699999999")
        let run = try DecodeCommandTests.beaconwatch(
            ["replay", "hsyco.ini", "trace:-"], stdin: Self.line + "\n" + earlier + "\n", in: Self.folder())
        #expect(run.status == 2)
        #expect(run.stderr.contains("stdin:2:"))
    }

    /// docs/behaviour.md §3.3: `t` in year 1 is a malformed line (status 2, its line number), with rules and
    /// their calendar arithmetic in play; it never reaches them.
    @Test func aLineInYearOneIsBadInputWithItsLineNumber() throws {
        let folder = try Self.folder()
        let rules = Conformance.directory.appendingPathComponent("ubudu/u_beacons-example.json").path
        try "LocationBaseBeacon.101 = E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,1,1\nRules.source = \(rules)\n".write(
            to: folder.appendingPathComponent("rules.ini"), atomically: true, encoding: .utf8)
        let yearOne = Self.line.replacingOccurrences(of: "1700000000", with: "-62135596800")
        let run = try DecodeCommandTests.beaconwatch(
            ["replay", "rules.ini", "trace:-"], stdin: Self.line + "\n" + yearOne + "\n", in: folder)
        #expect(run.status == 2, "\(run.stderr)")
        // The rules document's own warnings come first; the error is the one line after them.
        let errors = run.stderr.split(separator: "\n").filter { !$0.hasPrefix("beaconwatch: warning:") }
        #expect(errors.count == 1)
        #expect(errors.first?.hasPrefix("beaconwatch: stdin:2: t -62135596800") == true, "\(run.stderr)")
    }

    @Test func replayOfAnAdapterIsBadInput() throws {
        let run = try DecodeCommandTests.beaconwatch(["replay", "hsyco.ini", "hci0"], in: Self.folder())
        #expect(run.status == 2)
        #expect(run.stderr.contains("btsnoop:PATH or trace:PATH"))
    }

    @Test func replayWithStateKeepsTheLastReportedClass() throws {
        let folder = try Self.folder()
        let first = try DecodeCommandTests.beaconwatch(
            ["replay", "hsyco.ini", "trace:-", "--state", "kept.sqlite"], stdin: Self.line + "\n", in: folder)
        #expect(first.status == 0)
        // The replay ran its clock on to the end: 101 was reported off, and that is what was kept.
        #expect(first.stdout.components(separatedBy: #""type":"location""#).count == 3)
        let dump = Process()
        dump.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        dump.arguments = [
            "python3", "-c",
            "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT locationID, proximity FROM beaconReport').fetchall())",
            folder.appendingPathComponent("kept.sqlite").path,
        ]
        let pipe = Pipe()
        dump.standardOutput = pipe
        try dump.run()
        dump.waitUntilExit()
        #expect(
            String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) == "[('101', 'off')]\n")
    }

    @Test func aStateFileThatIsNotADatabaseFailsWithStatus1() throws {
        let folder = try Self.folder()
        try Data(repeating: 0x42, count: 2048).write(to: folder.appendingPathComponent("bad.sqlite"))
        let run = try DecodeCommandTests.beaconwatch(
            ["replay", "hsyco.ini", "trace:-", "--state", "bad.sqlite"], stdin: Self.line + "\n", in: folder)
        #expect(run.status == 1)
        #expect(run.stderr.hasPrefix("beaconwatch: state database bad.sqlite: "))
        #expect(run.stderr.split(separator: "\n").count == 1)
    }
}
