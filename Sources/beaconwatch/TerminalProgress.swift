import BeaconCore
import Daemon
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A ``ProgressLine`` kept on standard error while a long command works: only when standard
/// error is a terminal and standard output is not (output on the same terminal shows its own
/// progress, and a pipe or log file must not get control characters).
final class TerminalProgress: Sendable {
    private let line: Mutex<ProgressLine>
    private let clock: DaemonClock
    private let start: Duration

    private init(_ line: ProgressLine, clock: DaemonClock = .system) {
        self.line = Mutex(line)
        self.clock = clock
        start = clock.elapsed()
    }

    /// A progress line for `label`, or `nil` where none may show.
    static func make(label: String, unit: ProgressLine.Unit) -> TerminalProgress? {
        guard isatty(STDERR_FILENO) == 1, isatty(STDOUT_FILENO) == 0 else { return nil }
        return TerminalProgress(ProgressLine(label: label, unit: unit))
    }

    func update(done: Int, total: Int?) {
        let seconds = (clock.elapsed() - start).inSeconds
        write(line.withLock { $0.update(done: done, total: total, elapsed: seconds) })
    }

    /// Takes the line off the screen: before a warning, and at the end.
    func clear() {
        write(line.withLock { $0.clear() })
    }

    private func write(_ text: String?) {
        guard let text else { return }
        // One write(2) of the whole line: a short write on a terminal only loses a redraw.
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }
}
