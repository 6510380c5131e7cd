import BeaconCore
import Daemon
import Foundation
import Testing
import TestSupport

/// The 27 real captures of `Tests/real-captures` (a verbatim copy of `../shared/real-captures`):
/// each decodes to what its SOURCES.md row lists (reports, iBeacons, malformed), the pcapng file is
/// refused in one line, and the copies cut mid-record decode up to the cut with a warning.
@Suite struct RealCaptureTests {
    static let folder = Conformance.directory.deletingLastPathComponent().appendingPathComponent("real-captures")

    struct Row: Sendable, CustomStringConvertible {
        var file: String
        var events: Int
        var reports: Int
        var iBeacons: Int
        var malformed: Int
        var description: String { file }
    }

    /// The table of SOURCES.md: `| \`file\` | datalink | … | E ev / R reports (…) / **B iBeacons** / M malformed | …`.
    static let rows: [Row] = {
        guard let text = try? String(contentsOf: folder.appendingPathComponent("SOURCES.md"), encoding: .utf8) else {
            return []
        }
        let pattern =
            /^\| `([^`]+)` \| (?:1001|1002|2001) \|.*?\| (\d+) ev \/ (\d+) reports[^\/]*\/ \*\*(\d+) iBeacons\*\* \/ (\d+) malformed/
        return text.split(separator: "\n").compactMap { line -> Row? in
            guard let match = try? pattern.firstMatch(in: String(line)), let events = Int(match.2),
                let reports = Int(match.3), let beacons = Int(match.4), let malformed = Int(match.5)
            else { return nil }
            return Row(file: String(match.1), events: events, reports: reports, iBeacons: beacons, malformed: malformed)
        }
    }()

    @Test func theTableListsEveryCapture() throws {
        let manager = FileManager.default
        let files =
            try manager.contentsOfDirectory(atPath: Self.folder.path)
            + manager.contentsOfDirectory(atPath: Self.folder.appendingPathComponent("derived").path).map {
                "derived/" + $0
            }
        let captures = Set(files.filter { $0 != "SOURCES.md" && $0 != "derived" && !$0.hasSuffix(".pcapng") })
        #expect(captures.count >= 30)
        #expect(Set(Self.rows.map(\.file)) == captures)
    }

    @Test(arguments: rows)
    func eachCaptureDecodesAsItsRowSays(row: Row) throws {
        let warnings = LogCapture()
        var iBeacons = 0
        let path = Self.folder.appendingPathComponent(row.file).path
        let report = try FileSource(spec: .btsnoop(path: path), logger: warnings.logger).read { event in
            if case .advertisement(_, let advertisement) = event, advertisement.format == .ibeacon { iBeacons += 1 }
        }
        #expect(iBeacons == row.iBeacons)
        #expect(report.decode.malformed == row.malformed)
        #expect(report.decode.reports == row.reports)
        // Every record is taken, those of phones whose clock said 1970 (two captures) too: the
        // events are those tshark counts.
        #expect(report.decode.events == row.events)
        #expect(report.skippedRecords == 0)
        let cut = row.file.contains("cut-mid-record")
        #expect(warnings.messages.count == (cut ? 1 : 0), "\(warnings.messages)")
        if cut { #expect(warnings.messages.contains { $0.contains("cut short") }) }
    }

    /// The captures of phones whose clock was never set (December 1969, January 1970) replay like
    /// any other: their times are taken as they are.
    @Test(arguments: [("bluetooth_sample.btsnoop_hci.log", 526), ("juicessh-performancemonitor.btsnoop_hci.log", 91)])
    func aCaptureDatedAround1970Replays(file: String, events: Int) async throws {
        let capture = Self.folder.appendingPathComponent(file).path
        let ini = Self.folder.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(
            "etc/hsyco.ini")
        let decode = try await DecodeCommandTests.beaconwatch(["decode", "btsnoop:" + capture])
        #expect(decode.status == 0)
        #expect(decode.stderr.contains(": \(events) events, 0 reports"), "\(decode.stderr)")
        #expect(!decode.stderr.contains("skipped"), "\(decode.stderr)")
        let state = try scratchFolder("captures").appendingPathComponent("state.sqlite").path
        let replay = try await DecodeCommandTests.beaconwatch([
            "replay", "--state", state, ini.path, "btsnoop:" + capture,
        ])
        #expect(replay.status == 0 && replay.stderr.isEmpty, "\(replay.stderr)")
    }

    @Test func aPcapngFileIsRefusedInOneLine() async throws {
        let path = Self.folder.appendingPathComponent("airbily_smartwatch_reverse.bluethoot_logs.pcapng").path
        let run = try await DecodeCommandTests.beaconwatch(["decode", "btsnoop:" + path])
        #expect(run.status == 2)
        #expect(run.stderr.split(separator: "\n").count == 1)
        #expect(run.stderr.contains("not a btsnoop capture"))
    }
}
