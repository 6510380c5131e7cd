import Foundation
import Syscalls

/// Waiting in tests for something another thread or process does: woken by the event itself
/// (``changed()``, called by whatever the tests watch: a subscriber's inbox, a child's standard
/// error, its exit), never by polling, with a deadline long enough for a loaded machine.
package enum Eventually {
    /// How long a test waits, unless it says otherwise: generous, since CI may run on a busy
    /// 2-core machine; a passing test never waits it out.
    package static let patience: Double = 60

    private static let changes = Awaitable()

    /// Something a waiting test looks at may have changed.
    package static func changed() { changes.changed() }

    /// Returns once `condition` holds; throws after `seconds` naming `what` was awaited.
    package static func until(
        _ what: String, within seconds: Double = patience, _ condition: () -> Bool
    ) async throws {
        guard await changes.wait(within: .milliseconds(Int64(seconds * 1000)), until: condition) else {
            throw TimedOut(what: what, seconds: seconds)
        }
    }

    /// Starts `process` with its standard error appended to `log` as it comes, each chunk and
    /// its exit waking the waiters.
    package static func start(_ process: Process, loggingTo log: URL) throws {
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let file = try FileHandle(forWritingTo: log)
        let pipe = Pipe()
        process.standardError = pipe
        watchExit(of: process)
        try process.run()
        let writer = UncheckedFile(file)
        readUntilEnd(pipe.fileHandleForReading, name: "standard error") { data in
            if !data.isEmpty { writer.file.write(data) }
            changed()
        }
    }

    /// Wakes the waiters when `process` exits (call before `run()`).
    package static func watchExit(of process: Process) {
        process.terminationHandler = { _ in changed() }
    }

    package struct TimedOut: Error, CustomStringConvertible {
        package var what: String
        package var seconds: Double
        package var description: String { "timed out after \(Int(seconds)) s waiting for \(what)" }

        package init(what: String, seconds: Double) {
            self.what = what
            self.seconds = seconds
        }
    }
}

/// The log file a child's standard error goes to, written by the one thread that reads the pipe.
private struct UncheckedFile: @unchecked Sendable {
    let file: FileHandle
    init(_ file: FileHandle) { self.file = file }
}
