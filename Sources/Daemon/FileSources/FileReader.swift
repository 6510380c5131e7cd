import BeaconCore
import Syscalls

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
    /// The size of a regular file, for progress; `nil` for a pipe or standard input.
    let size: Int?

    init(path: String, displayName: String) throws(InputError) {
        name = displayName
        if path == "-" {
            descriptor = STDIN_FILENO
            ownsDescriptor = false
            size = Self.regularSize(STDIN_FILENO)
            return
        }
        do {
            descriptor = Int32(try Syscall.retrying("open") { Int(open(path, O_RDONLY | O_CLOEXEC)) })
        } catch {
            throw InputError(file: displayName, message: "cannot open: \(error.reason); check the path")
        }
        ownsDescriptor = true
        size = Self.regularSize(descriptor)
    }

    private static func regularSize(_ descriptor: Int32) -> Int? {
        guard let status = Syscall.status(descriptor), status.st_mode & S_IFMT == S_IFREG else { return nil }
        return Int(status.st_size)
    }

    deinit {
        if ownsDescriptor { close(descriptor) }
    }

    /// Appends up to `count` bytes to `buffer`; returns how many (0 at the end of the file).
    /// When no input is waiting (a pipe, standard input), calls `idle` before waiting, and again
    /// each time file descriptor `wake` turns readable while it waits (someone has something for
    /// the loop), and when a wait lasts `idleTimeout()`; what `idle` throws ends the read.
    func read(
        into buffer: inout [UInt8], count: Int = 1 << 16, wake: Int32? = nil, idleTimeout: () -> Duration? = { nil },
        idle: () throws -> Void = {}
    ) throws -> Int {
        if try !isReadable(wake: nil) {
            try idle()
            while try !isReadable(wake: wake, waiting: true, timeout: idleTimeout()) { try idle() }
        }
        // Read into scratch memory and append what came: no zero-filling of the buffer.
        do {
            return try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: count) { scratch in
                let got = try Syscall.retrying("read") {
                    scratch.baseAddress.map { Glibc.read(descriptor, $0, count) } ?? 0
                }
                if got > 0 { buffer.append(contentsOf: UnsafeBufferPointer(rebasing: scratch[..<got])) }
                return got
            }
        } catch let error as SyscallError {
            throw InputError(file: name, message: "cannot read: \(error.reason)")
        }
    }

    /// Whether input waits; with `waiting`, blocks until it does, `wake` turns readable or
    /// `timeout` passes.
    private func isReadable(wake: Int32?, waiting: Bool = false, timeout: Duration? = nil) throws -> Bool {
        do {
            let descriptors = [descriptor] + (wake.map { [$0] } ?? [])
            return try Syscall.waitReadable(descriptors, timeout: waiting ? timeout : .zero)[0] != 0
        } catch {
            throw InputError(file: name, message: "cannot wait for input: \(error.reason)")
        }
    }
}
