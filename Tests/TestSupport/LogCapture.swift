import Logging
import Synchronization

/// Collects what a component logs, for tests: every message with its level, in order; each new
/// line wakes ``Eventually`` waiters.
public final class LogCapture: Sendable {
    public let lines = Mutex<[(Logger.Level, String)]>([])

    public init() {}

    /// A logger whose every message (any level) lands here.
    public var logger: Logger {
        Logger(label: "test") { _ in Handler(capture: self) }
    }

    public func contains(_ text: String) -> Bool { lines.withLock { $0.contains { $0.1.contains(text) } } }

    public var text: String { lines.withLock { $0.map { "\($0.0): \($0.1)" }.joined(separator: "\n") } }

    struct Handler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            capture.lines.withLock { $0.append((event.level, "\(event.message)")) }
            Eventually.changed()
        }
    }
}
