import Logging
import Testing

extension Logger {
    /// A logger for a test that expects nothing said: each message (any level) is a recorded issue.
    package static var issues: Logger {
        Logger(label: "test.issues") { _ in LineHandler { Issue.record("said: \($0.message)") } }
    }
}
