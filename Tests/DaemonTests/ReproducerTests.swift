import Foundation
import Testing
import TestSupport

/// The inputs that once crashed or hung the binary (issue 16), run as a user runs them: each ends
/// with status 0 or 2 and one line on standard error. The small ones are files under
/// `Tests/reproducers`; the huge ones are made here (a sparse file costs no disk).
@Suite struct ReproducerTests {
    static let folder = CheckCommandTests.repository.appendingPathComponent("Tests/reproducers")

    static func files(_ suffix: String) throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            .filter { $0.lastPathComponent.hasSuffix(suffix) }
            .sorted { $0.path < $1.path }
    }

    /// The ubudu-example-rules scenario's configuration: its beacon is the reproducers' beacon,
    /// so replay runs rules, schedules and dwell days, the calendar arithmetic far-off times once
    /// crashed.
    static let config = Conformance.url("scenarios/ubudu-example-rules/hsyco.ini").path

    /// Standard error without the warnings the example rules document always gives.
    static func errorLines(_ run: DecodeCommandTests.Run) -> [Substring] {
        run.stderr.split(separator: "\n").filter { !$0.hasPrefix("beaconwatch: warning: Rules.source") }
    }

    @Test func capturesWithTimesFarFromTodaySkipAndCountThoseRecords() async throws {
        let captures = try Self.files(".btsnoop")
        #expect(captures.count == 6)
        let folder = try scratchFolder("reproducers")
        for capture in captures {
            // A record dated 1970 is taken as it is (docs/behaviour.md §3.2: phones whose clock was never set);
            // the others lie outside 1900-2100 and are skipped.
            let taken = capture.lastPathComponent.contains("year-1970")
            let decode = try await DecodeCommandTests.beaconwatch(["decode", "--quiet", "btsnoop:" + capture.path])
            #expect(decode.status == 0, "\(capture.lastPathComponent): \(decode.stderr)")
            #expect(decode.stderr.split(separator: "\n").count == (taken ? 0 : 1), "\(decode.stderr)")
            #expect(taken || decode.stderr.contains("record 2 (byte 85)"), "\(decode.stderr)")
            // Records 1 and 3 are good: two of the capture's three sightings remain (three when
            // the second is taken).
            #expect(decode.stdout.split(separator: "\n").count == (taken ? 3 : 2))
            let replay = try await DecodeCommandTests.beaconwatch([
                "replay", "--state", folder.appendingPathComponent("\(capture.lastPathComponent).db").path,
                Self.config, "btsnoop:" + capture.path,
            ])
            #expect(replay.status == 0, "\(capture.lastPathComponent): \(replay.stderr)")
            #expect(Self.errorLines(replay).count == (taken ? 0 : 1), "\(replay.stderr)")
            // The two good sightings enter, fire the rules' first counts and exit.
            #expect(replay.stdout.contains(#""type":"rule""#))
            #expect(replay.stdout.contains(#""dwellToday":7.0"#), "\(replay.stdout)")
        }
    }

    @Test func traceTimesOutsideTheCenturyStopAtTheirLine() async throws {
        let traces = try Self.files(".jsonl")
        #expect(traces.count == 4)
        for trace in traces {
            for arguments in [["decode", "--quiet"], ["replay", Self.config]] {
                let run = try await DecodeCommandTests.beaconwatch(arguments + ["trace:" + trace.path])
                #expect(run.status == 2, "\(trace.lastPathComponent): \(run.stderr)")
                #expect(Self.errorLines(run).count == 1, "\(run.stderr)")
                #expect(run.stderr.contains("\(trace.lastPathComponent):1: t "), "\(run.stderr)")
            }
        }
    }

    @Test func aScheduleAtTheEndOfTimeIsAnInputError() async throws {
        let rules = Conformance.url("ubudu/u_beacons-example.json").path
        for at in ["9999-12-31T23:59:59Z", "1969-12-31T23:59:59Z", "2100-01-01T00:00:01Z"] {
            let run = try await DecodeCommandTests.beaconwatch([
                "schedule", "--rules", rules, "--region", "1", "--at", at,
            ])
            #expect(run.status == 2, "\(at): \(run.stdout) \(run.stderr)")
            #expect(run.stderr.split(separator: "\n").count == 1)
            #expect(run.stderr.contains("from 1970 to 2100"))
        }
        let open = try await DecodeCommandTests.beaconwatch([
            "schedule", "--rules", rules, "--region", "1", "--at", "2013-10-28T13:30:00+01:00",
        ])
        #expect(open.status == 0)
    }

    @Test func aTwentyMegabyteTraceLineWithoutANewlineIsOneBadLine() async throws {
        let folder = try scratchFolder("reproducers")
        let trace = folder.appendingPathComponent("long.jsonl")
        var bytes = Data(#"{"t": 1700000000, "x": ""#.utf8)
        bytes.append(Data(repeating: UInt8(ascii: "a"), count: 20_000_000))
        try bytes.write(to: trace)
        for arguments in [["decode", "--quiet"], ["replay", Self.config]] {
            let run = try await DecodeCommandTests.beaconwatch(arguments + ["trace:" + trace.path])
            #expect(run.status == 2)
            #expect(Self.errorLines(run).count == 1, "\(run.stderr)")
            #expect(run.stderr.contains("long.jsonl:1: the line is longer than 64 KiB"), "\(run.stderr)")
        }
    }

    /// A file of `size` bytes that takes no disk: its size is all the refusal looks at.
    static func sparseFile(_ url: URL, size: UInt64) throws {
        #expect(FileManager.default.createFile(atPath: url.path, contents: nil))
        let handle = try FileHandle(forWritingTo: url)
        try handle.truncate(atOffset: size)
        try handle.close()
    }

    @Test func documentsOverSixteenMebibytesAreRefusedWithTheLimit() async throws {
        let folder = try scratchFolder("reproducers")
        let rules = folder.appendingPathComponent("u_beacons.json")
        try Self.sparseFile(rules, size: 196_000_000)
        let schedule = try await DecodeCommandTests.beaconwatch([
            "schedule", "--rules", rules.path, "--region", "1", "--at", "2013-10-28T13:30:00+01:00",
        ])
        #expect(schedule.status == 2)
        #expect(schedule.stderr.split(separator: "\n").count == 1)
        #expect(schedule.stderr.contains("u_beacons.json: is larger than 16 MiB"), "\(schedule.stderr)")

        let ini = folder.appendingPathComponent("huge.ini")
        try Self.sparseFile(ini, size: 17 << 20)
        let check = try await DecodeCommandTests.beaconwatch(["check", "--config", ini.path])
        #expect(check.status == 2)
        #expect(check.stderr.split(separator: "\n").count == 1)
        #expect(check.stderr.contains("huge.ini: is larger than 16 MiB"), "\(check.stderr)")

        let withHugeRules = folder.appendingPathComponent("rules.ini")
        try String(contentsOfFile: Self.config, encoding: .utf8)
            .replacingOccurrences(of: "../../ubudu/u_beacons-example.json", with: rules.path)
            .write(to: withHugeRules, atomically: true, encoding: .utf8)
        let checkRules = try await DecodeCommandTests.beaconwatch(["check", "--config", withHugeRules.path])
        #expect(checkRules.status == 2)
        #expect(checkRules.stderr.contains("u_beacons.json: is larger than 16 MiB"), "\(checkRules.stderr)")
    }
}
