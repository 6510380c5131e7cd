import BeaconCore

#if canImport(Glibc)
    import Glibc
#endif

/// Reads a file (or standard input, `-`) in chunks through `read(2)`, retrying `EINTR`.
///
/// The one place where file sources touch the operating system.
struct FileReader: ~Copyable {
    let name: String
    private let descriptor: Int32
    private let ownsDescriptor: Bool

    init(path: String, displayName: String) throws(InputError) {
        name = displayName
        if path == "-" {
            descriptor = STDIN_FILENO
            ownsDescriptor = false
            return
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw InputError(file: displayName, message: "cannot open: \(Self.describe(errno)); check the path")
        }
        descriptor = fd
        ownsDescriptor = true
    }

    deinit {
        if ownsDescriptor { close(descriptor) }
    }

    /// Appends up to `count` bytes to `buffer`; returns how many (0 at the end of the file).
    /// When no input is waiting (a pipe, standard input), calls `idle` before waiting and then
    /// every `idlePeriod` milliseconds; what it throws ends the read.
    func read(into buffer: inout [UInt8], count: Int = 1 << 16, idlePeriod: Int32 = 200, idle: () throws -> Void = {})
        throws -> Int
    {
        var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        if poll(&ready, 1, 0) == 0 {
            repeat { try idle() } while poll(&ready, 1, idlePeriod) == 0
        }
        while true {
            // Read into scratch memory and append what came: no zero-filling of the buffer.
            let (got, failure) = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: count) { scratch in
                let got = scratch.baseAddress.map { Glibc.read(descriptor, $0, count) } ?? 0
                if got > 0 { buffer.append(contentsOf: UnsafeBufferPointer(rebasing: scratch[..<got])) }
                return (got, got < 0 ? errno : 0)
            }
            if got >= 0 { return got }
            if failure == EINTR { continue }
            throw InputError(file: name, message: "cannot read: \(Self.describe(failure))")
        }
    }

    static func describe(_ error: Int32) -> String {
        String(cString: strerror(error))
    }
}
