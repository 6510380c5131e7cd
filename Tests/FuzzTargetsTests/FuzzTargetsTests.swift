import Foundation
import FuzzTargets
import Testing

/// What the fuzzers start from and what they found, replayed through the same targets on every
/// test run: a crash that came back would take this test process down.
@Suite struct FuzzTargetsTests {
    static let fuzzFolder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("fuzz")

    /// The files of `folder/<target>`, if any.
    static func inputs(_ folder: String, _ target: FuzzTarget) -> [URL] {
        let directory = fuzzFolder.appendingPathComponent(folder).appendingPathComponent(target.rawValue)
        let files = (try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)) ?? []
        return files.sorted { $0.path < $1.path }
    }

    @Test(arguments: FuzzTarget.allCases)
    func everySeedAndEveryFoundInputRunsThrough(target: FuzzTarget) throws {
        let files = Self.inputs("seeds", target) + Self.inputs("regressions", target)
        for file in files {
            target.run(Array(try Data(contentsOf: file)))
        }
        // Every target also takes nothing, and a few bytes of nothing much.
        target.run([])
        target.run([0, 0xFF, 0x0A, 0x7B, 0x22])
    }

    @Test func theTargetsThatHaveOwnSeedsHaveSome() {
        for target in [FuzzTarget.hci, .reply, .command, .engine, .fleet, .scanners, .h4, .trace, .ini, .sensor] {
            #expect(!Self.inputs("seeds", target).isEmpty, "\(target)")
        }
    }
}
