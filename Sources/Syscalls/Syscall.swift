#if canImport(Glibc)
    import Glibc
#endif

/// The one wrapper every system call of the shells goes through: `EINTR` is retried, any other
/// failure becomes a ``SyscallError`` naming the call and `errno`, which each shell turns into
/// its own words (a Bluetooth failure, an input error).
package enum Syscall {
    /// Runs `call` until it does not fail with `EINTR`; a negative result is a ``SyscallError``.
    @discardableResult
    package static func retrying(_ operation: String, _ call: () -> Int) throws(SyscallError) -> Int {
        while true {
            let result = call()
            if result >= 0 { return result }
            let code = errno
            if code == EINTR { continue }
            throw SyscallError(operation: operation, code: code)
        }
    }

    /// Runs `call` once (for calls that must not be repeated after `EINTR`: a `connect` goes on
    /// in the background, a `bind` or `listen` is not interrupted); a negative result is a
    /// ``SyscallError``.
    @discardableResult
    package static func once(_ operation: String, _ call: () -> Int) throws(SyscallError) -> Int {
        let result = call()
        guard result < 0 else { return result }
        throw SyscallError(operation: operation, code: errno)
    }

    /// Closes `descriptor` once: Linux releases it even when `close` is interrupted, so a retry
    /// could close a descriptor another thread has just been given.
    package static func close(_ descriptor: Int32) {
        guard descriptor >= 0 else { return }
        _ = Glibc.close(descriptor)
    }

    /// What `fstat` says of the file open at `descriptor`; `nil` when it fails.
    package static func status(_ descriptor: Int32) -> stat? {
        var status = stat()
        return (try? retrying("fstat") { Int(fstat(descriptor, &status)) }) != nil ? status : nil
    }

    /// Cuts the file open at `descriptor` to `length` bytes, through `EINTR`.
    package static func truncate(_ descriptor: Int32, to length: Int64) throws(SyscallError) {
        try retrying("ftruncate") { Int(ftruncate(descriptor, off_t(length))) }
    }

    /// Waits until one of `descriptors` is readable (or in error), or `timeout` passes (`nil`:
    /// no limit); returns each descriptor's `revents` (all 0 when the time ran out).
    package static func waitReadable(_ descriptors: [Int32], timeout: Duration?) throws(SyscallError) -> [Int16] {
        var pollers = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        let milliseconds: Int32 =
            timeout.map { duration in
                // A deadline already passed: do not wait (a negative poll timeout waits forever,
                // and a negative fraction of a second has seconds 0).
                guard duration > .zero else { return 0 }
                let (seconds, attoseconds) = duration.components
                // Rounded up, so a deadline is never woken for early.
                let total = seconds.multipliedReportingOverflow(by: 1000)
                let part = (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
                let sum = total.partialValue.addingReportingOverflow(part)
                return total.overflow || sum.overflow ? Int32.max : Int32(clamping: sum.partialValue)
            } ?? -1
        let ready = try retrying("poll") { Int(poll(&pollers, nfds_t(pollers.count), milliseconds)) }
        return ready > 0 ? pollers.map(\.revents) : pollers.map { _ in 0 }
    }

    /// Writes all of `bytes` to `descriptor`, through partial writes and `EINTR`; returns how
    /// many were written and, when it stopped short, why (a full disk, a closed pipe).
    package static func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> (
        written: Int, error: SyscallError?
    ) {
        var written = 0
        while written < bytes.count {
            guard let base = bytes.baseAddress else { break }
            let result = write(descriptor, base + written, bytes.count - written)
            if result > 0 {
                written += result
                continue
            }
            if result < 0, errno == EINTR { continue }
            // 0 bytes written of a non-empty buffer: no progress can be made either.
            return (written, SyscallError(operation: "write", code: result < 0 ? errno : EIO))
        }
        return (written, nil)
    }

    /// Opens `path` for appending, creating it (mode 0644) when missing; close-on-exec.
    package static func openAppending(_ path: String) throws(SyscallError) -> Int32 {
        Int32(try retrying("open") { Int(open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)) })
    }

    /// Blocks the calling thread for `duration`, resuming after signals: a ``waitReadable(_:timeout:)``
    /// on nothing, the shell's one way of waiting (``ShellTimers``).
    package static func sleep(_ duration: Duration) {
        guard duration > .zero else { return }
        _ = try? waitReadable([], timeout: duration)
    }
}

/// A system call that failed: which, and `errno`.
package struct SyscallError: Error, Sendable, Hashable, CustomStringConvertible {
    package var operation: String
    package var code: Int32

    package init(operation: String, code: Int32) {
        self.operation = operation
        self.code = code
    }

    /// `strerror`'s words for ``code``.
    package var reason: String { String(cString: strerror(code)) }

    package var description: String { "\(operation): \(reason)" }
}
