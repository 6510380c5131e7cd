import Foundation
import Testing
import TestSupport

/// The built `beaconwatch` binary, run as a user runs it.
@Suite struct DecodeCommandTests {
    @Test func decodeTraceFromStdinWithBadLine3PrintsTheLineAndExits2() async throws {
        let run = try await Self.beaconwatch(["decode", "trace:-"], stdin: FileSourceTests.traceWithBadLine3)
        #expect(run.status == 2)
        #expect(run.stderr.hasPrefix("beaconwatch: stdin:3: "), "\(run.stderr)")
        #expect(run.stderr.split(separator: "\n").count == 1)
        #expect(run.stdout.split(separator: "\n").count == 1)  // line 1's sighting came before the stop
    }

    @Test func decodeCapturePrintsOneJSONObjectPerAdvertisement() async throws {
        let run = try await Self.beaconwatch([
            "decode", "--quiet", "btsnoop:" + Conformance.url("capture-1002.btsnoop").path,
        ])
        #expect(run.status == 0)
        let lines = run.stdout.split(separator: "\n")
        #expect(lines.count == 3)
        let first = try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any]
        #expect(first?["t"] as? String == "2023-11-14T22:13:20.250Z")
        #expect(first?["format"] as? String == "ibeacon")
        #expect(first?["uuid"] as? String == "B9407F30-F5F8-466E-AFF9-25556B57FE6D")
        #expect(first?["address"] as? String == "0A:0B:0C:0D:0E:0F")
        #expect(lines[0].hasPrefix(#"{"t":"#))
        #expect(run.stderr.isEmpty)
    }

    @Test func aLiveAdapterWithoutKernelSupportExits3WithTheFix() async throws {
        let run = try await Self.beaconwatch(["decode", "hci0"])
        // This machine has no AF_BLUETOOTH; one with Bluetooth ends at "not in this build yet".
        #expect(run.status == 3)
        #expect(run.stderr.contains("Bluetooth") || run.stderr.contains("btsnoop"))
    }

    @Test func badArgumentsExit2AndHelpExits0() async throws {
        #expect(try await Self.beaconwatch(["decode", "nonsense"]).status == 2)
        #expect(try await Self.beaconwatch(["frobnicate"]).status == 2)
        let help = try await Self.beaconwatch(["decode", "--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("btsnoop:PATH"))
        #expect(try await Self.beaconwatch(["--help"]).stdout.contains("decode"))
    }

    typealias Run = Child.Run

    /// Runs the binary built beside the test bundle, feeding `stdin`, and waits for it to exit
    /// (without holding a thread of the cooperative pool: TestSupport's `Child`).
    static func beaconwatch(_ arguments: [String], stdin: String = "", in directory: URL? = nil) async throws -> Run {
        try await Child.run(
            productsDirectory.appendingPathComponent("beaconwatch"), arguments, stdin: Data(stdin.utf8), in: directory)
    }

    /// `run` of `config` fed the trace file `trace`, both in `directory`, without the web view, its
    /// events written to `events.jsonl` there: the run and those events.
    static func runTrace(config: String, trace: String, in directory: URL) async throws -> (run: Run, events: String) {
        let run = try await beaconwatch(
            [
                "run", "--web-listen", "", "--config", config, "--source", "trace:\(trace)", "--events",
                "events.jsonl", "--log-level", "error",
            ], in: directory)
        let events = try String(contentsOf: directory.appendingPathComponent("events.jsonl"), encoding: .utf8)
        return (run, events)
    }

    /// `.build/<triple>/debug`: where `swift build` put the test bundle and the executable.
    static var productsDirectory: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    }
}
