import ArgumentParser
import BeaconConfiguration
import BeaconCore
import Daemon
import Foundation

/// The commands a user runs, end to end as processes (issue 19): `decode` on a capture and
/// `replay` of a long trace, each timed from start to exit with its output to /dev/null.
enum CommandRuns {
    /// Runs `binary` with `arguments` `runs` times, standard output to /dev/null; the wall time
    /// of each run, seconds. Throws when a run fails.
    static func time(_ binary: String, _ arguments: [String], runs: Int) throws -> [Double] {
        try (0..<runs).map { _ in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = arguments
            process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
            let errors = Pipe()
            process.standardError = errors
            let start = ContinuousClock.now
            try process.run()
            let said = errors.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            let elapsed = (ContinuousClock.now - start).inSeconds
            guard process.terminationStatus == 0 else {
                throw RuntimeFailure(
                    "\(binary) \(arguments.joined(separator: " ")) exited \(process.terminationStatus): "
                        + String(decoding: said.suffix(500), as: UTF8.self))
            }
            return elapsed
        }
    }

    /// "a, b, c (median m)" of `rates`, in millions.
    static func summary(_ rates: [Double]) -> String {
        let sorted = rates.sorted()
        return rates.map { format($0 / 1e6, 2) }.joined(separator: ", ")
            + " million/s (median \(format(sorted[sorted.count / 2] / 1e6, 2)))"
    }
}

/// `beaconwatch decode --quiet btsnoop:FILE > /dev/null` on the capture `scripts/make-bench-capture` writes.
struct DecodeCommandBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode-cli",
        abstract: "`beaconwatch decode` end to end on a capture: reports per second, process start included."
    )

    @Option(help: "The beaconwatch binary.")
    var binary = ".build/release/beaconwatch"

    @Option(help: "The capture (scripts/make-bench-capture writes one).")
    var capture: String

    @Option(help: "Reports in the capture (as scripts/make-bench-capture was told).")
    var reports = 200_000

    @Option(help: "Runs.")
    var runs = 5

    func run() throws {
        let times = try CommandRuns.time(binary, ["decode", "--quiet", "btsnoop:\(capture)"], runs: runs)
        let rates = times.map { Double(reports) / $0 }
        print(
            "decode-cli: \(reports) reports (70% iBeacon, 10% AltBeacon, 20% other devices) to JSON lines on /dev/null, \(runs) runs: \(CommandRuns.summary(rates)) reports"
        )
    }
}

/// `beaconwatch replay` of a long simulated walk through the example office with rules on
/// every Zone.
struct ReplayCommandBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "`beaconwatch replay` end to end on a trace of about a million lines: lines per second.",
        discussion: """
            Writes, in --folder: a copy of etc/hsyco.ini with Rules.source set to a u_beacons \
            document with two rules on every Zone (on_entry with latch, counts and a \
            notification; on_exit), and a trace from `beaconwatch simulate` of the office walk \
            (etc/demo/office-walk.plan) repeated, every beacon advertising every 25 ms with 20% \
            loss. Then times `beaconwatch replay INI trace:FILE > /dev/null`.
            """
    )

    @Option(help: "The beaconwatch binary.")
    var binary = ".build/release/beaconwatch"

    @Option(help: "Where the configuration, rules and trace are written.")
    var folder = ".build/bench"

    @Option(help: "Times the walk is repeated (81: just over a million lines).")
    var walks = 81

    @Option(help: "Runs.")
    var runs = 5

    func run() throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let example = try String(contentsOfFile: "etc/hsyco.ini", encoding: .utf8)
        let configuration = try Configuration.load(Array(example.utf8), path: "etc/hsyco.ini").get()
        let rules = PipelineBench.rulesDocument(for: configuration.hierarchy, server: nil)
        try rules.write(toFile: "\(folder)/replay-rules.json", atomically: true, encoding: .utf8)
        let ini = example + "\nRules.source = replay-rules.json\nRules.autoServerNotify = false\n"
        try ini.write(toFile: "\(folder)/replay.ini", atomically: true, encoding: .utf8)
        let stops = try String(contentsOfFile: "etc/demo/office-walk.plan", encoding: .utf8)
            .split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.allSatisfy(\.isWhitespace) }
            .map { $0.replacingOccurrences(of: #"\s+0$"#, with: " 10", options: .regularExpression) }
        let plan = Array(repeating: stops.joined(separator: "\n"), count: walks).joined(separator: "\n") + "\n"
        try plan.write(toFile: "\(folder)/replay.plan", atomically: true, encoding: .utf8)

        let trace = "\(folder)/replay.jsonl"
        _ = FileManager.default.createFile(atPath: trace, contents: nil)
        let simulate = Process()
        simulate.executableURL = URL(fileURLWithPath: binary)
        simulate.arguments = [
            "simulate", "--config", "\(folder)/replay.ini", "--walk", "\(folder)/replay.plan", "--interval", "0.025",
        ]
        simulate.standardOutput = FileHandle(forWritingAtPath: trace)
        try simulate.run()
        simulate.waitUntilExit()
        guard simulate.terminationStatus == 0 else {
            throw RuntimeFailure("simulate exited \(simulate.terminationStatus)")
        }
        let lines = try Data(contentsOf: URL(fileURLWithPath: trace)).reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }

        let times = try CommandRuns.time(binary, ["replay", "\(folder)/replay.ini", "trace:\(trace)"], runs: runs)
        let rates = times.map { Double(lines) / $0 }
        print(
            "replay: \(lines) trace lines through etc/hsyco.ini with rules on every zone, output to /dev/null, \(runs) runs: \(CommandRuns.summary(rates)) lines"
        )
    }
}
