import BeaconCore
import Syscalls

#if canImport(Glibc)
    import Glibc
#endif

/// Buffered line output to a file descriptor (standard output by default), flushed every 64 KiB
/// and on ``flush()`` (``Syscall/writeAll(_:_:)``).
/// Used from one thread at a time (the one running the engine), hence `@unchecked Sendable`.
package final class LineWriter: @unchecked Sendable {
    private let descriptor: Int32
    private var buffer: [UInt8] = []

    package init(descriptor: Int32 = STDOUT_FILENO) {
        self.descriptor = descriptor
        buffer.reserveCapacity(1 << 16)
    }

    deinit { flush() }

    package func write(line: String) {
        buffer.append(contentsOf: line.utf8)
        buffer.append(0x0A)
        if buffer.count >= 1 << 16 { flush() }
    }

    /// A line that `build` appends to the buffer itself (no string made for it), then a newline.
    package func write(_ build: (inout [UInt8]) -> Void) {
        build(&buffer)
        buffer.append(0x0A)
        if buffer.count >= 1 << 16 { flush() }
    }

    package func flush() {
        // A closed pipe: nothing more can be said there.
        _ = buffer.withUnsafeBytes { Syscall.writeAll(descriptor, $0) }
        buffer.removeAll(keepingCapacity: true)
    }
}

/// Writes a line to standard error at once.
package func printError(_ message: String) {
    _ = Array((message + "\n").utf8).withUnsafeBytes { Syscall.writeAll(STDERR_FILENO, $0) }
}
