import Logging
import BeaconCore
import BlueZ
import Daemon
import Foundation

/// `beaconwatch decode SOURCE`: every decoded advertisement as one JSON line.
struct DecodeJob: Sendable {
    var source: SourceSpec
    var skipBadLines = false
    /// Bytes of a file source read so far and its size (``FileSource/progress``).
    var progress: @Sendable (_ read: Int, _ size: Int?) -> Void = { _, _ in }

    init(source: SourceSpec, skipBadLines: Bool = false) {
        self.source = source
        self.skipBadLines = skipBadLines
    }

    /// Runs the job, writing lines to `output` and warnings to `logger`; returns what was read.
    ///
    /// Throws ``InputError`` (status 2) or ``BluetoothUnavailable`` (status 3).
    /// A live adapter runs until `control` stops it.
    func run(output: (String) -> Void, logger: Logger, control: EngineControl? = nil) throws
        -> FileSource.Report
    {
        try run(advertisement: { output($1.jsonLine(at: $0)) }, logger: logger, control: control)
    }

    /// Runs the job, writing lines into `lines`'s buffer (no string made for a line).
    func run(lines: LineWriter, logger: Logger, control: EngineControl? = nil) throws
        -> FileSource.Report
    {
        try run(
            advertisement: { time, advertisement in lines.write { advertisement.appendJSONLine(at: time, to: &$0) } },
            logger: logger, control: control)
    }

    /// Runs the job, handing each advertisement with its time to `advertisement`.
    private func run(
        advertisement emit: (Timestamp, Advertisement) -> Void, logger: Logger,
        control: EngineControl?
    ) throws -> FileSource.Report {
        if case .adapter(let name) = source {
            // Live: every advertisement the adapter hears, stamped on the real clock, until stopped.
            let scanner = try LiveScanner(adapter: name, logger: logger)
            var radio = LiveAdvertisements()
            while control?.isStopping != true {
                try radio.next(
                    from: scanner, timeout: .seconds(60), wake: control?.wakeDescriptor, stamp: DaemonClock.system.now,
                    emit)
            }
            scanner.stop()
            var report = FileSource.Report()
            report.decode = radio.decoder.statistics
            return report
        }
        var file = FileSource(spec: source, skipBadLines: skipBadLines, logger: logger)
        file.progress = progress
        return try file.read { event in
            if case .advertisement(let time, let advertisement) = event { emit(time, advertisement) }
        }
    }
}
