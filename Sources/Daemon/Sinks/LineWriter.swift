import BeaconCore

#if canImport(Glibc)
    import Glibc
#endif

/// Buffered line output to a file descriptor (standard output by default), flushed every 64 KiB
/// and on ``flush()``. Writes retry `EINTR` and partial writes.
/// Used from one thread at a time (the one running the engine), hence `@unchecked Sendable`.
public final class LineWriter: @unchecked Sendable {
    private let descriptor: Int32
    private let ownsDescriptor: Bool
    private var buffer: [UInt8] = []

    public init(descriptor: Int32 = STDOUT_FILENO) {
        self.descriptor = descriptor
        self.ownsDescriptor = false
        buffer.reserveCapacity(1 << 16)
    }

    /// Appends to the file at `path`, creating it (mode 0644) when missing.
    public init(appendingTo path: String) throws {
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw InputError(
                file: path,
                message:
                    "cannot open for writing (\(String(cString: strerror(errno)))); give --events another file or -")
        }
        self.descriptor = descriptor
        self.ownsDescriptor = true
        buffer.reserveCapacity(1 << 16)
    }

    deinit {
        flush()
        if ownsDescriptor { close(descriptor) }
    }

    public func write(line: String) {
        buffer.append(contentsOf: line.utf8)
        buffer.append(0x0A)
        if buffer.count >= 1 << 16 { flush() }
    }

    /// A line that `build` appends to the buffer itself (no string made for it), then a newline.
    public func write(_ build: (inout [UInt8]) -> Void) {
        build(&buffer)
        buffer.append(0x0A)
        if buffer.count >= 1 << 16 { flush() }
    }

    public func flush() {
        var written = 0
        while written < buffer.count {
            let result = buffer.withUnsafeBytes { raw in
                Glibc.write(descriptor, raw.baseAddress! + written, raw.count - written)
            }
            if result < 0 {
                if errno == EINTR { continue }
                break  // a closed pipe: nothing more can be said there
            }
            written += result
        }
        buffer.removeAll(keepingCapacity: true)
    }
}

/// Writes a line to standard error at once.
public func printError(_ message: String) {
    let line = Array((message + "\n").utf8)
    var written = 0
    while written < line.count {
        let result = line.withUnsafeBytes { Glibc.write(STDERR_FILENO, $0.baseAddress! + written, $0.count - written) }
        if result < 0 {
            if errno == EINTR { continue }
            return
        }
        written += result
    }
}
