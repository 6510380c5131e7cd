import ArgumentParser
import BeaconCore
import Daemon
import Logging

/// `beaconwatch decode SOURCE`.
struct Decode: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print every decoded beacon advertisement of a source as JSON lines.",
        discussion: """
            SOURCE is btsnoop:PATH (a capture: datalink 1001, 1002, or btmon's 2001), trace:PATH \
            (JSON lines; trace:- reads standard input), or an adapter such as hci0. Each line: \
            t (ISO-8601 UTC), format, uuid, major, minor, power, rssi, address. A summary of what \
            was decoded goes to standard error.
            """
    )

    @Argument(
        help: "btsnoop:PATH, trace:PATH, trace:-, hciN, uart:DEVICE[@BAUD] or h4tcp:HOST:PORT.", transform: parseSource)
    var source: SourceSpec

    @Flag(help: "Skip malformed trace lines (counted, and each reported on stderr) instead of stopping.")
    var skipBadLines = false

    @Flag(name: .shortAndLong, help: "Print no summary on standard error.")
    var quiet = false

    func run() async throws {
        let output = LineWriter()
        defer { output.flush() }
        let progress = TerminalProgress.make(label: "decode \(source.displayName)", unit: .bytes)
        let job = {
            var job = DecodeJob(source: source, skipBadLines: skipBadLines)
            if let progress { job.progress = { progress.update(done: $0, total: $1) } }
            return job
        }()
        let logger = WarningLines.logger { progress?.clear() }
        let report: FileSource.Report
        if case .adapter = source {
            // A radio runs until SIGINT or SIGTERM, which the service group turns into a stop.
            report = try await runUntilStopped(logger: Logger(label: "beaconwatch")) { control in
                try job.run(lines: output, logger: logger, control: control)
            }
        } else {
            report = try job.run(lines: output, logger: logger)
        }
        output.flush()
        progress?.clear()
        if !quiet {
            var summary = "decoded \(source.displayName): \(report.decode.summary)"
            if report.skippedLines > 0 { summary += ", \(report.skippedLines) bad lines skipped" }
            if report.skippedRecords > 0 {
                summary += ", \(report.skippedRecords) records with a time outside 2000-2100 skipped"
            }
            printError(summary)
        }
    }
}

/// Parses a source argument, or explains the three forms.
func parseSource(_ text: String) throws -> SourceSpec {
    guard let spec = SourceSpec(text) else {
        if Radio.looksLikeRadio(text), let problem = Radio.problem(text) { throw ValidationError(problem) }
        throw ValidationError(
            "'\(text)' is not a source; give btsnoop:PATH, trace:PATH, trace:-, an adapter like hci0, "
                + "uart:DEVICE[@BAUD] or h4tcp:HOST:PORT")
    }
    return spec
}
