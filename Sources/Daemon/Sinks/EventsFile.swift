import Logging
import BeaconCore
import Engine
import Foundation
import Persistence
import Syscalls
import RegionMonitor

#if canImport(Glibc)
    import Glibc
#endif

/// The `--events` output: every output as a JSON line, appended to a file (or standard output)
/// at every commit, so a quiet daemon holds nothing back.
///
/// For a regular file, each line is also kept in the state database, with the offset it goes at,
/// in the transaction of its step (``journal(for:)``); the file is written just after. A crash
/// between the two (SIGKILL, the OOM killer) leaves committed lines out of the file: opening it
/// again appends them (``init(path:store:warn:)``), so every committed output is in the file,
/// once. When the file does not end as the journal says (rotated, truncated or edited since),
/// nothing is appended and that is said.
///
/// Used from the engine's thread only, hence `@unchecked Sendable`.
package final class EventsFile: OutputSink, @unchecked Sendable {
    /// The file as given, for messages; `-` for standard output.
    package let path: String
    /// The absolute path the journal knows the file by; `nil` when not journaled.
    private let journalName: String?
    private let descriptor: Int32
    private let ownsDescriptor: Bool
    /// Where the next journaled line goes.
    private var end: Int64 = 0
    /// Where the bytes written so far end: a failed write is cut back to it.
    private var written: Int64 = 0
    /// Lines staged with their steps, not yet delivered, and the first of them.
    private var staged: [String] = []
    private var next = 0
    /// Delivered lines not yet written (all of a commit, written at once).
    private var buffer: [UInt8] = []
    private let logger: Logger
    private var failing = false

    /// Standard output: not journaled (a pipe cannot be completed afterwards).
    package init() {
        path = "-"
        journalName = nil
        descriptor = STDOUT_FILENO
        ownsDescriptor = false
        logger = .silent
    }

    /// Appends to the file at `path` (created, mode 0644, when missing), first completing it from
    /// `store`'s journal; `logger` says what was done about it.
    package init(path: String, store: StateStore, logger: Logger) throws {
        self.path = path
        self.logger = logger
        do {
            descriptor = try Syscall.openAppending(path)
        } catch {
            throw InputError(
                file: path, message: "cannot open for writing (\(error.reason)); give --events another file or -")
        }
        ownsDescriptor = true
        guard let status = Syscall.status(descriptor), (status.st_mode & S_IFMT) == S_IFREG else {
            journalName = nil  // a FIFO or a device: written, not journaled
            return
        }
        let name = URL(fileURLWithPath: path).standardizedFileURL.path
        journalName = name
        try recover(store: store, name: name, size: Int64(status.st_size))
    }

    deinit {
        write()
        if ownsDescriptor { Syscall.close(descriptor) }
    }

    package func journal(for outputs: [MonitorOutput], context: StepContext) -> [JournalLine] {
        // A commit's first lines go where the file ends now: it may have been truncated meanwhile
        // (logrotate's copytruncate).
        if journalName != nil, staged.isEmpty, buffer.isEmpty {
            if let status = Syscall.status(descriptor) {
                end = Int64(status.st_size)
                written = end
            }
        }
        var lines: [JournalLine] = []
        for output in outputs {
            let line = output.json(device: context.device?.id)
            staged.append(line)
            guard let journalName else { continue }
            lines.append(JournalLine(file: journalName, offset: end, text: line))
            end += Int64(line.utf8.count) + 1
        }
        return lines
    }

    package func deliver(
        _ outputs: ArraySlice<MonitorOutput>, entries: ArraySlice<OutboxEntry>, context: StepContext
    ) throws {
        for line in staged[next..<min(next + outputs.count, staged.count)] {
            buffer.append(contentsOf: line.utf8)
            buffer.append(0x0A)
        }
        next += outputs.count
        // The commit's last step: all of it goes out in one write.
        if next >= staged.count {
            staged.removeAll(keepingCapacity: true)
            next = 0
            FaultPoint.reach("events write")
            write()
        }
    }

    /// Writes what was delivered. A file that cannot take it (a full disk) is cut back to its last
    /// whole line and the lines wait for the next commit; a closed pipe drops them.
    private func write() {
        guard !buffer.isEmpty else { return }
        let (_, error) = buffer.withUnsafeBytes { Syscall.writeAll(descriptor, $0) }
        if let error {
            // A pipe that closed: its lines are dropped.
            guard journalName != nil else {
                buffer.removeAll(keepingCapacity: true)
                return
            }
            if !failing {
                logger.warning(
                    "cannot write --events \(path) (\(error.reason)); its lines wait and go out once it can be written")
            }
            failing = true
            try? Syscall.truncate(descriptor, to: written)
            return
        }
        if failing {
            logger.warning("--events \(path) is written again")
            failing = false
        }
        written += Int64(buffer.count)
        buffer.removeAll(keepingCapacity: true)
    }

    /// Appends the journaled lines a crash left out of the file of `size` bytes, when the file
    /// ends as the journal says; else says so and forgets the journal.
    private func recover(store: StateStore, name: String, size: Int64) throws {
        let journal = try store.journal(file: name)
        end = size
        written = size
        // The file as written since it last started again (truncated while running: copytruncate).
        let restart = journal.indices.dropFirst().last { journal[$0].offset < journal[$0 - 1].end } ?? 0
        let rows = journal[restart...]
        guard let missing = rows.firstIndex(where: { $0.end > size }) else { return }
        let cut = rows[missing]
        // Offsets before the file's start are a damaged journal's, which describes no file.
        var consistent = (rows.first?.offset ?? 0) >= 0
        if consistent, missing > rows.startIndex {
            let before = rows[missing - 1]
            consistent =
                read(at: before.offset, count: before.text.utf8.count + 1) == Array((before.text + "\n").utf8)
        } else if consistent {
            consistent = size >= cut.offset
        }
        if consistent, size > cut.offset {
            // A line cut short: it is written again whole.
            let part = read(
                at: cut.offset, count: Int(clamping: size.subtractingReportingOverflow(cut.offset).partialValue))
            consistent =
                Array((cut.text + "\n").utf8).starts(with: part)
                && (try? Syscall.truncate(descriptor, to: cut.offset)) != nil
        }
        let lost = rows.endIndex - missing
        guard consistent else {
            logger.warning(
                Logger.Message(
                    stringLiteral:
                        "--events \(path) does not end as the state database recorded (rotated or edited?); "
                        + "the last \(lost) outputs it may lack are not appended"))
            try store.clearJournal()
            return
        }
        end = cut.offset
        written = cut.offset
        for row in rows[missing...] {
            buffer.append(contentsOf: row.text.utf8)
            buffer.append(0x0A)
        }
        end = rows.last?.end ?? cut.end
        write()
        logger.warning("--events \(path): appended \(lost) outputs committed before the last stop but not yet written")
    }

    private func read(at offset: Int64, count: Int) -> [UInt8] {
        guard count > 0, count <= 1 << 20, let reader = FileHandle(forReadingAtPath: path) else { return [] }
        defer { try? reader.close() }
        guard (try? reader.seek(toOffset: UInt64(max(offset, 0)))) != nil else { return [] }
        return Array((try? reader.read(upToCount: count)) ?? Data())
    }
}
