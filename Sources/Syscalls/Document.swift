#if canImport(Glibc)
    import Glibc
#endif

/// A whole document read into memory (a configuration, a rules file), never more than a limit.
///
/// A file over the limit is refused before it is read (its size is known), a pipe or device as
/// soon as it passes the limit: a runaway or hostile file costs neither time nor memory.
package enum Document {
    /// Why a document was not read, in words that finish "PATH: …".
    package enum Failure: Error, Sendable, Hashable, CustomStringConvertible {
        case missing
        case folder
        case unreadable(reason: String)
        case tooLarge(limit: Int)

        package var description: String {
            switch self {
            case .missing: "no such file"
            case .folder: "is a folder, not a file"
            case .unreadable(let reason): "cannot be read: \(reason)"
            case .tooLarge(let limit): "is larger than \(Document.describe(bytes: limit)), the limit for this file"
            }
        }
    }

    /// The bytes of the file at `path`, at most `limit` of them.
    package static func read(_ path: String, limit: Int) -> Result<[UInt8], Failure> {
        let descriptor: Int32
        do {
            // Non-blocking: a FIFO with no writer or a terminal gives what it has (or an error)
            // instead of holding the command forever; a regular file reads as ever.
            descriptor = Int32(try Syscall.retrying("open") { Int(open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) })
        } catch {
            return .failure(failure(error))
        }
        defer { close(descriptor) }
        var status = stat()
        if fstat(descriptor, &status) == 0 {
            if status.st_mode & S_IFMT == S_IFDIR { return .failure(.folder) }
            if status.st_mode & S_IFMT == S_IFREG, status.st_size > limit { return .failure(.tooLarge(limit: limit)) }
        }
        var bytes: [UInt8] = []
        let chunk = 1 << 16
        while true {
            let got = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: chunk) { scratch in
                Result { () throws(SyscallError) -> Int in
                    let got = try Syscall.retrying("read") {
                        scratch.baseAddress.map { Glibc.read(descriptor, $0, chunk) } ?? 0
                    }
                    bytes.append(contentsOf: UnsafeBufferPointer(rebasing: scratch[..<got]))
                    return got
                }
            }
            switch got {
            case .success(0): return .success(bytes)
            case .success: if bytes.count > limit { return .failure(.tooLarge(limit: limit)) }
            case .failure(let error): return .failure(failure(error))
            }
        }
    }

    static func failure(_ error: SyscallError) -> Failure {
        switch error.code {
        case ENOENT: .missing
        case EISDIR: .folder
        default: .unreadable(reason: error.reason)
        }
    }

    /// `16 MiB`, `64 KiB`, or bytes.
    package static func describe(bytes: Int) -> String {
        if bytes >= 1 << 20, bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
        if bytes >= 1 << 10, bytes % (1 << 10) == 0 { return "\(bytes >> 10) KiB" }
        return "\(bytes) bytes"
    }
}
