import Logging
import Synchronization

/// Collects what a component logs, for tests: every message with its level, in order; each new
/// line wakes ``Eventually`` waiters.
package final class LogCapture: Sendable {
    package let lines = Mutex<[(Logger.Level, String)]>([])

    package init() {}

    /// A logger whose every message (any level) lands here.
    package var logger: Logger {
        Logger(label: "test") { _ in
            LineHandler { event in
                self.lines.withLock { $0.append((event.level, "\(event.message)")) }
                Eventually.changed()
            }
        }
    }

    package func contains(_ text: String) -> Bool { lines.withLock { $0.contains { $0.1.contains(text) } } }

    package var text: String { lines.withLock { $0.map { "\($0.0): \($0.1)" }.joined(separator: "\n") } }
}

extension LogCapture {
    /// Every message so far, in order, without its level.
    package var messages: [String] { lines.withLock { $0.map(\.1) } }
}

/// A log handler that hands each event, whatever its level, to `line`: the tests' and the
/// benchmarks' one way to see what a component says.
package struct LineHandler: LogHandler {
    let line: @Sendable (LogEvent) -> Void
    package var metadata: Logger.Metadata = [:]
    package var logLevel: Logger.Level = .trace

    package init(_ line: @escaping @Sendable (LogEvent) -> Void) { self.line = line }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) { line(event) }
}
