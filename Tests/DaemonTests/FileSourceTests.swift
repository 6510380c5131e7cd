import BeaconCore
import Daemon
import Foundation
import Testing
import TestSupport

@Suite struct FileSourceTests {
    @Test(arguments: [1001, 1002, 2001])
    func conformanceCapturesDecodeExactlyAsListed(datalink: Int) throws {
        let expected = try Conformance.load(Conformance.Captures.self, from: "captures.json").sightings
        let source = FileSource(spec: .btsnoop(path: Conformance.url("capture-\(datalink).btsnoop").path))
        var got: [(Timestamp, Advertisement)] = []
        let report = try source.read { event in
            if case .advertisement(let time, let advertisement) = event { got.append((time, advertisement)) }
        }
        #expect(got.count == expected.count)
        for (want, (time, advertisement)) in zip(expected, got) {
            #expect(want.mismatches(advertisement, at: time) == [])
        }
        #expect(report.records == 4)
        #expect(report.decode.notBeacons == 1)
    }

    @Test func theDemoCaptureHoldsTheFourOfficeBeaconsAndNothingMalformed() throws {
        let demo = Conformance.directory.deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("etc/demo/office-walk.btsnoop")
        var minors: Set<UInt16> = []
        let report = try FileSource(spec: .btsnoop(path: demo.path)).read { event in
            if case .advertisement(_, let advertisement) = event { minors.insert(advertisement.beacon.minor) }
        }
        #expect(minors == [17081, 17082, 17091, 17101])
        #expect(report.decode.malformed == 0)
        #expect(report.decode.rssiUnavailable == 1)
        #expect(report.decode.beacons == 231)
    }

    @Test func aCaptureCutShortWarnsAndKeepsWhatCameBefore() throws {
        let whole = try Data(contentsOf: Conformance.url("capture-2001.btsnoop"))
        let file = try TemporaryFile(contents: whole.prefix(whole.count - 5))
        let warnings = LogCapture()
        let source = FileSource(spec: .btsnoop(path: file.path), logger: warnings.logger)
        var count = 0
        _ = try source.read { _ in count += 1 }
        #expect(count == 3)
        #expect(warnings.messages.count == 1)
        #expect(warnings.messages.first?.contains("cut short") == true)
    }

    @Test func aTraceThatIsNotACaptureIsRejectedAsOne() throws {
        let file = try TemporaryFile(contents: Data("{\"t\": 1700000000, \"mode\": \"foreground\"}\n".utf8))
        #expect {
            _ = try FileSource(spec: .btsnoop(path: file.path)).read { _ in }
        } throws: { ($0 as? InputError)?.message.contains("not a btsnoop capture") == true }
    }

    static let sighting =
        #"{"t": 1700000001, "uuid": "ACFD165E-C0C0-11E3-9BBE-1A514932AC01", "major": 1, "minor": 17081, "rssi": -62}"#

    /// 20 MB with no newline, then a good line: one malformed line, and reading goes on.
    static func hugeLineThenASighting() throws -> TemporaryFile {
        var bytes = Data(#"{"t": 1700000000, "mode": "foreground", "pad": ""#.utf8)
        bytes.append(Data(repeating: UInt8(ascii: "a"), count: 20_000_000))
        bytes.append(Data(("\"}\n" + sighting + "\n").utf8))
        return try TemporaryFile(contents: bytes)
    }

    @Test func aTwentyMegabyteLineIsOneSkippedLineAndTheNextIsRead() throws {
        let file = try Self.hugeLineThenASighting()
        let warnings = LogCapture()
        var minors: [UInt16] = []
        let report = try FileSource(spec: .trace(path: file.path), skipBadLines: true, logger: warnings.logger)
            .read { event in
                if case .advertisement(_, let advertisement) = event { minors.append(advertisement.beacon.minor) }
            }
        #expect(minors == [17081])
        #expect(report.lines == 2)
        #expect(report.skippedLines == 1)
        #expect(warnings.messages.count == 1)
        #expect(warnings.messages.first?.contains(":1: the line is longer than 64 KiB") == true, "\(warnings.messages)")
    }

    @Test func aTwentyMegabyteLineStopsAReadWithItsLineNumber() throws {
        let file = try Self.hugeLineThenASighting()
        #expect {
            _ = try FileSource(spec: .trace(path: file.path)).read { _ in }
        } throws: { error in
            guard let error = error as? InputError else { return false }
            return error.line == 1 && error.message.contains("longer than 64 KiB")
        }
    }

    @Test func anOverlongLastLineWithoutANewlineIsMalformedToo() throws {
        let file = try TemporaryFile(
            contents: Data((Self.sighting + "\n" + String(repeating: "b", count: 200_000)).utf8))
        var count = 0
        let report = try FileSource(spec: .trace(path: file.path), skipBadLines: true).read { _ in count += 1 }
        #expect(count == 1)
        #expect(report.lines == 2)
        #expect(report.skippedLines == 1)
    }

    @Test func aMissingFileIsAnInputError() {
        #expect(throws: InputError.self) {
            _ = try FileSource(spec: .trace(path: "/nonexistent/walk.jsonl")).read { _ in }
        }
    }

    @Test func badTraceLineStopsWithItsLineNumber() throws {
        let file = try TemporaryFile(contents: Data(Self.traceWithBadLine3.utf8))
        var events = 0
        #expect {
            _ = try FileSource(spec: .trace(path: file.path)).read { _ in events += 1 }
        } throws: { error in
            guard let error = error as? InputError else { return false }
            return error.line == 3 && error.file == file.path && "\(error)".hasPrefix("\(file.path):3: ")
        }
        #expect(events == 2)
    }

    @Test func skipBadLinesCountsAndGoesOn() throws {
        let file = try TemporaryFile(contents: Data(Self.traceWithBadLine3.utf8))
        let warnings = LogCapture()
        var kinds: [String] = []
        let report = try FileSource(spec: .trace(path: file.path), skipBadLines: true, logger: warnings.logger)
            .read { event in
                switch event {
                case .advertisement: kinds.append("ad")
                case .mode: kinds.append("mode")
                case .command: kinds.append("command")
                case .position: kinds.append("position")
                case .report: kinds.append("report")
                case .learn: kinds.append("learn")
                case .sensor: kinds.append("sensor")
                }
            }
        #expect(report.skippedLines == 1)
        #expect(report.lines == 5)
        #expect(warnings.messages.count == 1)
        #expect(warnings.messages.first?.contains(":3:") == true)
        // Line 4's HCI event holds two reports.
        #expect(kinds == ["ad", "mode", "ad", "ad", "command"])
    }

    @Test func aLastLineWithoutNewlineIsRead() throws {
        let file = try TemporaryFile(contents: Data(#"{"t": 1700000001, "mode": "foreground"}"#.utf8))
        var events: [SourceEvent] = []
        _ = try FileSource(spec: .trace(path: file.path)).read { events.append($0) }
        #expect(events == [.mode(Timestamp(microseconds: 1_700_000_001_000_000), .foreground)])
    }

    static let traceWithBadLine3 = """
        {"t": 1700000000.0, "uuid": "ACFD165E-C0C0-11E3-9BBE-1A514932AC01", "major": 1, "minor": 17081, "rssi": -62}
        {"t": 1700000001.0, "mode": "foreground"}
        {"t": 1700000002.0, "uuid": "ACFD165E-C0C0-11E3-9BBE-1A514932AC01", "major": 1, "minor": 17081}
        {"t": 1700000003.0, "hci": "3e52020203010f0e0d0c0b0a1e0201061aff4c000215b9407f30f5f8466eaff925556b57fe6d0049000ac5bf0000010000eeffc01e02011a1aff4c000215f2a74fc4762544db9b08cb7e130b2029cccceeeec5b9"}
        {"t": 1700000004.0, "command": "alert/done", "id": "17081"}

        """
}

/// A file in the temporary directory, removed when the value goes away.
final class TemporaryFile {
    let path: String

    init(contents: Data, suffix: String = "") throws {
        path =
            FileManager.default.temporaryDirectory
            .appendingPathComponent("beaconwatch-test-\(UUID().uuidString)\(suffix)").path
        try contents.write(to: URL(fileURLWithPath: path))
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}
