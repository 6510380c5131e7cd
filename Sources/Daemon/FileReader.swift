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
        let start = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: count))
        while true {
            let got = buffer.withUnsafeMutableBytes { raw in
                Glibc.read(descriptor, raw.baseAddress! + start, count)
            }
            if got >= 0 {
                buffer.removeLast(count - got)
                return got
            }
            if errno == EINTR { continue }
            let error = errno
            buffer.removeLast(count)
            throw InputError(file: name, message: "cannot read: \(Self.describe(error))")
        }
    }

    static func describe(_ error: Int32) -> String {
        String(cString: strerror(error))
    }
}
