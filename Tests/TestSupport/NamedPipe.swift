import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A named pipe a test feeds a daemon's trace through (`--source trace:PATH`), held open for
/// reading and writing, so that neither end waits for the other to open it and the daemon never
/// sees its end while the test holds it.
package final class NamedPipe {
    private let descriptor: Int32

    /// Makes the pipe at `path` and opens it.
    package init(at path: String) throws {
        guard mkfifo(path, 0o600) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        descriptor = open(path, O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    }

    deinit { close(descriptor) }

    /// Writes `lines`, each ended by a newline.
    package func write(_ lines: [some StringProtocol]) throws {
        let bytes = Array(lines.map { $0 + "\n" }.joined().utf8)
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
            written += count
        }
    }
}
