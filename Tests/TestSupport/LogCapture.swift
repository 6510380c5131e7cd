import Logging
import Synchronization

/// Collects what a component logs, for tests: every message with its level, in order; each new
/// line wakes ``Eventually`` waiters.
public final class LogCapture: Sendable {
    public let lines = Mutex<[(Logger.Level, String)]>([])

    public init() {}

    /// A logger whose every message (any level) lands here.
    public var logger: Logger {
        Logger(label: "test") { _ in
            LineHandler { event in
                self.lines.withLock { $0.append((event.level, "\(event.message)")) }
                Eventually.changed()
            }
        }
    }

    public func contains(_ text: String) -> Bool { lines.withLock { $0.contains { $0.1.contains(text) } } }

    public var text: String { lines.withLock { $0.map { "\($0.0): \($0.1)" }.joined(separator: "\n") } }
}

extension LogCapture {
    /// Every message so far, in order, without its level.
    public var messages: [String] { lines.withLock { $0.map(\.1) } }
}

/// A log handler that hands each event, whatever its level, to `line`: the tests' and the
/// benchmarks' one way to see what a component says.
public struct LineHandler: LogHandler {
    let line: @Sendable (LogEvent) -> Void
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .trace

    public init(_ line: @escaping @Sendable (LogEvent) -> Void) { self.line = line }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) { line(event) }
}
