import Daemon
import Foundation
import Testing

/// The progress line of `replay`, `decode` and `simulate` on a terminal.
@Suite struct ProgressLineTests {
    @Test func nothingShowsForTheFirstTwoSecondsThenAtMostFourTimesASecond() {
        var line = ProgressLine(label: "replay office.btsnoop", unit: .bytes)
        #expect(line.update(done: 1_000_000, total: 48_000_000, elapsed: 1.9) == nil)
        #expect(line.clear() == nil)
        #expect(
            line.update(done: 12_000_000, total: 48_000_000, elapsed: 2.0)
                == "\rreplay office.btsnoop: 12.0 of 48.0 MB (25%)\u{1B}[K")
        #expect(line.isShown)
        #expect(line.update(done: 13_000_000, total: 48_000_000, elapsed: 2.2) == nil)
        #expect(
            line.update(done: 47_990_000, total: 48_000_000, elapsed: 2.25)?.contains("48.0 of 48.0 MB (99%)") == true)
        #expect(line.clear() == "\r\u{1B}[K")
        #expect(!line.isShown)
        #expect(line.clear() == nil)
    }

    @Test func aPipeHasNoTotalAndThingsAreCounted() {
        let bytes = ProgressLine(label: "decode trace:-", unit: .bytes)
        #expect(bytes.text(done: 2_560_000, total: nil) == "decode trace:-: 2.6 MB read")
        #expect(bytes.text(done: 5, total: 0) == "decode trace:-: 0.0 MB read")
        let items = ProgressLine(label: "simulate walk.txt", unit: .items("lines"))
        #expect(items.text(done: 1024, total: 4096) == "simulate walk.txt: 1024 of 4096 lines (25%)")
        // A count past the total (a file that grew) says 100%, never more.
        #expect(items.text(done: 5000, total: 4096).hasSuffix("(100%)"))
    }

    /// Piped, the commands write no progress line: no carriage return, no escape, whatever the
    /// input's length.
    @Test func commandsOnAPipeWriteNoProgressLine() async throws {
        let capture = CheckCommandTests.repository.appendingPathComponent("etc/demo/office-walk.btsnoop").path
        let config = CheckCommandTests.repository.appendingPathComponent("etc/hsyco.ini").path
        for arguments in [["decode", "btsnoop:" + capture], ["replay", config, "btsnoop:" + capture]] {
            let run = try await DecodeCommandTests.beaconwatch(arguments)
            #expect(run.status == 0, "\(run.stderr)")
            #expect(!run.stderr.contains("\r") && !run.stderr.contains("\u{1B}"), "\(run.stderr)")
        }
    }
}
