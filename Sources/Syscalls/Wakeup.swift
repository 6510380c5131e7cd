#if canImport(Glibc)
    import Glibc
#endif

/// A file descriptor another thread can make readable: a blocking loop waits on it beside its
/// own input (a radio's socket, a pipe), so a command, an answer or a stop wakes it at once
/// instead of it polling for them. (A non-blocking pipe: Glibc's module has no eventfd.)
package final class Wakeup: Sendable {
    /// The read end, to wait on for readability.
    package let descriptor: Int32
    private let writer: Int32

    package init() throws(SyscallError) {
        var ends: [Int32] = [0, 0]
        try Syscall.retrying("pipe") { Int(pipe(&ends)) }
        for end in ends {
            let flags = fcntl(end, F_GETFL)
            _ = fcntl(end, F_SETFL, flags | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        descriptor = ends[0]
        writer = ends[1]
    }

    deinit {
        close(descriptor)
        close(writer)
    }

    /// Makes ``descriptor`` readable until the next ``clear()`` (a full pipe is readable already).
    package func signal() {
        var byte: UInt8 = 1
        _ = try? Syscall.retrying("wake-up write") { write(writer, &byte, 1) }
    }

    /// Waits until ``descriptor`` is readable (signalled and not yet cleared) or `timeout` passes
    /// (`nil`: no timeout); returns whether it was signalled. A wait of the shell's one timer
    /// mechanism (``ShellTimers``): `poll(2)` on wake-ups with a timeout from the injected clock.
    @discardableResult
    package func wait(timeout: Duration?) -> Bool {
        ((try? Syscall.waitReadable([descriptor], timeout: timeout)) ?? [0]).first.map { $0 != 0 } ?? false
    }

    /// Makes ``descriptor`` unreadable again (what was signalled is being taken).
    package func clear() {
        var bytes = [UInt8](repeating: 0, count: 64)
        while (try? Syscall.retrying("wake-up read") { read(descriptor, &bytes, bytes.count) }) ?? 0 > 0 {}
    }
}
