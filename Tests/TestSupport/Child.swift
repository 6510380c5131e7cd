import Foundation
import Synchronization

/// A child process run to its end from async test code without holding a thread of the
/// cooperative pool: its output is read by threads of their own (``readUntilEnd(_:name:_:)``), and
/// its exit wakes the wait (``Eventually``). Foundation's `waitUntilExit()` and
/// `readDataToEndOfFile()` block the calling thread; on the pool's two threads of a 2-core machine
/// two such waits stop every other test's tasks (subscribers, servers) until the children end, and
/// on a loaded machine their waits time out (docs/reliability.md, "Waits in tests").
package enum Child {
    /// What a child printed and how it ended.
    package struct Run: Sendable {
        package var status: Int32
        package var stdout: String
        package var stderr: String
    }

    /// Runs `executable` with `arguments` (in `directory`, `stdin` written to its standard input
    /// then closed) and returns once it has exited and both its outputs have ended; throws after
    /// `seconds`, naming the command.
    package static func run(
        _ executable: URL, _ arguments: [String], stdin: Data = Data(), in directory: URL? = nil,
        environment: [String: String]? = nil, within seconds: Double = Eventually.patience
    ) async throws -> Run {
        let process = Process()
        if let directory { process.currentDirectoryURL = directory }
        if let environment { process.environment = environment }
        process.executableURL = executable
        process.arguments = arguments
        let input = Pipe()
        let output = Pipe()
        let errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        let out = Collected()
        let err = Collected()
        Eventually.watchExit(of: process)
        try process.run()
        let name = ([executable.lastPathComponent] + arguments.prefix(1)).joined(separator: " ")
        readUntilEnd(output.fileHandleForReading, name: "\(name): standard output") { out.take($0) }
        readUntilEnd(errors.fileHandleForReading, name: "\(name): standard error") { err.take($0) }
        // Written by a thread of its own: a child that prints before it reads (or never reads)
        // must not hold the test's thread on a full pipe.
        let writer = UncheckedPipe(input)
        let text = stdin
        Thread {
            try? writer.pipe.fileHandleForWriting.write(contentsOf: text)
            try? writer.pipe.fileHandleForWriting.close()
        }.start()
        try await Eventually.until("'\(name)' to exit and close its output", within: seconds) {
            !process.isRunning && out.ended && err.ended
        }
        return Run(status: process.terminationStatus, stdout: out.text, stderr: err.text)
    }

    /// Waits until `process` (started elsewhere, with ``Eventually/watchExit(of:)`` or
    /// ``Eventually/start(_:loggingTo:)``, so that its exit wakes the wait) has exited and returns
    /// its status; throws after `seconds`, naming `what`. (Foundation's `waitUntilExit()` would
    /// hold the thread, and on a thread without a run loop it spins.)
    package static func exit(of process: Process, _ what: String, within seconds: Double = Eventually.patience)
        async throws -> Int32
    {
        try await Eventually.until("\(what) to exit", within: seconds) { !process.isRunning }
        return process.terminationStatus
    }
}

/// A child's output as it comes, and whether it has ended.
private final class Collected: Sendable {
    private let state = Mutex((data: Data(), ended: false))

    func take(_ chunk: Data) {
        state.withLock {
            if chunk.isEmpty { $0.ended = true } else { $0.data.append(chunk) }
        }
        Eventually.changed()
    }

    var ended: Bool { state.withLock { $0.ended } }
    var text: String { state.withLock { String(decoding: $0.data, as: UTF8.self) } }
}

/// A pipe handed to the one thread that writes it.
private struct UncheckedPipe: @unchecked Sendable {
    let pipe: Pipe
    init(_ pipe: Pipe) { self.pipe = pipe }
}
