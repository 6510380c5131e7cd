import Logging
import BeaconCore
import Foundation

/// A btsnoop capture or a JSON-lines trace, read to the end and delivered as ``SourceEvent``s in
/// file order. HCI events, from either, go through the one ``AdvertisingReportDecoder``.
package struct FileSource {
    package let spec: SourceSpec
    /// Skip and count malformed trace lines instead of stopping at the first.
    package var skipBadLines: Bool
    /// Where it says a skipped line or a capture cut short (one line each).
    package var logger: Logger
    /// A descriptor that wakes a wait for input (``EngineControl/wakeDescriptor``): `idle` is
    /// called then, to take what came.
    package var wake: Int32?
    /// How long a wait for input may last before `idle` is called again (`nil`: until input or
    /// ``wake``): asked before each wait, so a shell with something to retry gets its turn.
    package var idleTimeout: () -> Duration? = { nil }
    /// Called after each chunk read with the bytes read so far and the file's size (`nil` for a
    /// pipe): what a progress line shows.
    package var progress: (_ read: Int, _ size: Int?) -> Void = { _, _ in }

    /// What was read, for the end-of-run summary.
    package struct Report: Sendable, Hashable {
        package var decode = DecodeStatistics()
        package var lines = 0
        package var skippedLines = 0
        package var records = 0
        /// Capture records skipped and counted: their time lies outside ``Timestamp/captureRange``.
        package var skippedRecords = 0
        /// The time of the last record or line, whatever it held: where the input's clock ends.
        package var lastTime: Timestamp?

        package init() {}
    }

    package init(spec: SourceSpec, skipBadLines: Bool = false, logger: Logger = .silent) {
        self.spec = spec
        self.skipBadLines = skipBadLines
        self.logger = logger
    }

    /// Reads the whole source, calling `body` for each event.
    ///
    /// Throws ``InputError`` for input that cannot be read (exit status 2), or what `body` throws.
    /// `idle` is called when a pipe or standard input has nothing to read, before waiting and
    /// whenever ``wake`` turns readable meanwhile; what it throws ends the read (a stop), and it
    /// may step the engine (commit what is staged, take commands).
    package func read(idle: () throws -> Void = {}, _ body: (SourceEvent) throws -> Void) throws -> Report {
        switch spec {
        case .btsnoop(let path):
            return try readCapture(path: path, idle: idle, body)
        case .trace(let path):
            return try readTrace(path: path, idle: idle, body)
        case .adapter(let name):
            throw InputError(file: name, message: "is a live adapter, not a file; give btsnoop:PATH or trace:PATH")
        case .none:
            throw InputError(file: "none", message: "is no source of sightings; give btsnoop:PATH or trace:PATH")
        }
    }

    private func readTrace(path: String, idle: () throws -> Void, _ body: (SourceEvent) throws -> Void) throws -> Report
    {
        let reader = try FileReader(path: path, displayName: spec.displayName)
        var report = Report()
        var parser = TraceParser()
        var decoder = AdvertisingReportDecoder()
        var buffer: [UInt8] = []
        var lineStart = 0
        // Bytes of the line being read known to hold no newline, so each byte is searched once.
        var searched = 0
        // The line being read passed the limit: its bytes are dropped up to the next newline.
        var overlong = false
        var atEnd = false
        var consumed = 0
        while !atEnd {
            let got = try reader.read(into: &buffer, count: 1 << 20, wake: wake, idleTimeout: idleTimeout, idle: idle)
            atEnd = got == 0
            consumed += got
            progress(consumed, reader.size)
            // Every complete line in the buffer; at the end of input, the last one without "\n".
            while true {
                let end: Int
                if let newline = Self.newline(in: buffer, from: lineStart + searched) {
                    end = newline
                } else if atEnd, lineStart < buffer.count || overlong {
                    end = buffer.count
                } else {
                    break
                }
                report.lines += 1
                let line = buffer[lineStart..<end]
                lineStart = min(end + 1, buffer.count)
                searched = 0
                let parsed = overlong ? .failure(TraceParser.overlongLine) : parser.parse(line, number: report.lines)
                overlong = false
                switch parsed {
                case .success(nil):
                    continue
                case .success(let (time, record)?):
                    report.lastTime = time
                    switch record {
                    case .sighting(let advertisement):
                        try body(.advertisement(time, advertisement))
                    case .hci(let bytes):
                        try decoder.decode(event: bytes) { try body(.advertisement(time, $0)) }
                    case .mode(let mode):
                        try body(.mode(time, mode))
                    case .command(let command):
                        try body(.command(time, command))
                    case .position(let position):
                        try body(.position(time, position))
                    case .report(let scannerReport):
                        try body(.report(time, scannerReport))
                    case .learn(let command):
                        try body(.learn(time, command))
                    case .sensor(let message):
                        try body(.sensor(time, message))
                    }
                case .failure(let error):
                    let problem = InputError(file: spec.displayName, line: report.lines, message: error.message)
                    guard skipBadLines else {
                        throw InputError(
                            file: problem.file,
                            line: problem.line,
                            message: problem.message + "; or pass --skip-bad-lines to skip such lines"
                        )
                    }
                    report.skippedLines += 1
                    logger.warning("skipped \(problem)")
                }
            }
            searched = buffer.count - lineStart
            if searched > TraceParser.maximumLineLength {
                overlong = true
                buffer.removeAll(keepingCapacity: true)
                searched = 0
            } else {
                buffer.removeFirst(lineStart)
            }
            lineStart = 0
        }
        report.decode = decoder.statistics
        return report
    }

    /// The index of the first newline in `buffer` at or after `start` (memchr: a long line is
    /// searched at memory speed, in debug builds too).
    static func newline(in buffer: [UInt8], from start: Int) -> Int? {
        guard start < buffer.count else { return nil }
        return buffer.withUnsafeBufferPointer { bytes -> Int? in
            guard let base = bytes.baseAddress, let found = memchr(base + start, 0x0A, bytes.count - start) else {
                return nil
            }
            return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
        }
    }

    private func readCapture(path: String, idle: () throws -> Void, _ body: (SourceEvent) throws -> Void) throws
        -> Report
    {
        let reader = try FileReader(path: path, displayName: spec.displayName)
        var report = Report()
        var decoder = AdvertisingReportDecoder()
        var buffer: [UInt8] = []
        while buffer.count < BTSnoop.headerSize,
            try reader.read(into: &buffer, wake: wake, idleTimeout: idleTimeout, idle: idle) > 0
        {}
        let datalink: BTSnoop.Datalink
        switch BTSnoop.parseHeader(buffer) {
        case .success(let link): datalink = link
        case .failure(let failure): throw InputError(file: spec.displayName, message: failure.description)
        }
        var offset = BTSnoop.headerSize
        var consumedBefore = 0  // bytes of the file dropped from the front of `buffer`
        var atEnd = false
        while true {
            while let parsed = BTSnoop.parseRecord(buffer, at: offset) {
                switch parsed {
                case .failure(let failure):
                    throw InputError(
                        file: spec.displayName,
                        message: "byte \(consumedBefore + offset): \(failure.description)"
                    )
                case .success(let (record, next)):
                    report.records += 1
                    defer { offset = next }
                    if let problem = BTSnoop.problem(with: record) {
                        // Skipped and counted, like a malformed report (docs/behaviour.md §3.2); the first is named.
                        report.skippedRecords += 1
                        if report.skippedRecords == 1 {
                            logger.warning(
                                Logger.Message(
                                    stringLiteral:
                                        "\(spec.displayName): record \(report.records) (byte \(consumedBefore + offset)): "
                                        + "\(problem); it and any like it are skipped and counted"))
                        }
                        continue
                    }
                    report.lastTime = record.time
                    if let event = BTSnoop.event(in: record, datalink: datalink) {
                        try event.withUnsafeBytes { bytes in
                            try decoder.decode(event: bytes) { try body(.advertisement(record.time, $0)) }
                        }
                    }
                }
            }
            if atEnd { break }
            buffer.removeFirst(offset)
            consumedBefore += offset
            offset = 0
            atEnd =
                try reader.read(into: &buffer, count: 1 << 20, wake: wake, idleTimeout: idleTimeout, idle: idle) == 0
            progress(consumedBefore + buffer.count, reader.size)
        }
        if offset < buffer.count {
            logger.warning(
                Logger.Message(
                    stringLiteral:
                        "\(spec.displayName): the last record (byte \(consumedBefore + offset)) is cut short; "
                        + "the capture was probably still being written")
            )
        }
        report.decode = decoder.statistics
        return report
    }
}
