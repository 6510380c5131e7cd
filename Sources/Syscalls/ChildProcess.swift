#if canImport(Glibc)
    import Glibc
#endif

/// A program started in a process group of its own, whose id is its pid: it and everything it
/// starts can be signalled together (``signalGroup(_:)``), so a script's `sleep` or `curl` never
/// outlives the stop of the script.
///
/// The child gets default signal handling and an empty signal mask (the daemon ignores and
/// blocks signals it handles itself), standard input, output and error from the descriptors
/// given, and no other descriptor of the daemon's. Waiting is in two steps: ``waitUntilEnded()``
/// leaves the ended child unreaped, so its pid and group id cannot be reused while the shell
/// still signals it; ``reap()`` then collects its status.
package struct ChildProcess: Sendable, Hashable {
    /// The child's pid, also its process group id.
    package let pid: Int32

    /// How a child ended.
    package enum Termination: Sendable, Hashable {
        case exited(Int32)
        case signalled(Int32)
    }

    /// Starts `path` (no shell, no search of `PATH`) with only `environment`, its standard
    /// streams on `input`, `output` and `error`.
    package static func spawn(
        path: String, environment: [String: String], input: Int32, output: Int32, error: Int32
    ) throws(SyscallError) -> ChildProcess {
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawnattr_init(&attributes)
        defer {
            posix_spawn_file_actions_destroy(&actions)
            posix_spawnattr_destroy(&attributes)
        }
        for (source, target) in [(input, STDIN_FILENO), (output, STDOUT_FILENO), (error, STDERR_FILENO)] {
            posix_spawn_file_actions_adddup2(&actions, source, target)
        }
        // Descriptors not marked close-on-exec (a library's socket) stay with the daemon.
        for descriptor in openDescriptors() where descriptor > STDERR_FILENO {
            posix_spawn_file_actions_addclose(&actions, descriptor)
        }
        var defaults = sigset_t()
        sigfillset(&defaults)
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let arguments = [path]
        let variables = environment.map { "\($0.key)=\($0.value)" }
        var pid: pid_t = 0
        let result = withCStrings(arguments) { argv in
            withCStrings(variables) { envp in posix_spawn(&pid, path, &actions, &attributes, argv, envp) }
        }
        guard result == 0 else { throw SyscallError(operation: "posix_spawn \(path)", code: result) }
        return ChildProcess(pid: pid)
    }

    /// Blocks until the child has ended, without reaping it.
    package func waitUntilEnded() throws(SyscallError) {
        var info = siginfo_t()
        try Syscall.retrying("waitid") { Int(waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT)) }
    }

    /// Sends `signal` to every process of the child's group; safe until ``reap()``.
    package func signalGroup(_ signal: Int32) {
        _ = kill(-pid, signal)
    }

    /// Collects the status of the ended child (blocking until it ends).
    package func reap() throws(SyscallError) -> Termination {
        var status: Int32 = 0
        try Syscall.retrying("waitpid") { Int(waitpid(pid, &status, 0)) }
        let low = status & 0x7F
        return low == 0 ? .exited((status >> 8) & 0xFF) : .signalled(low)
    }

    /// The descriptors open in this process now.
    static func openDescriptors() -> [Int32] {
        guard let folder = opendir("/proc/self/fd") else { return [] }
        defer { closedir(folder) }
        let own = dirfd(folder)
        var found: [Int32] = []
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if let descriptor = Int32(name), descriptor != own { found.append(descriptor) }
        }
        return found
    }

    /// `strings` as a NULL-terminated array of C strings, alive for `body`.
    static func withCStrings<Result>(
        _ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> Result
    ) -> Result {
        var pointers = strings.map { strdup($0) }
        pointers.append(nil)
        defer { for pointer in pointers { free(pointer) } }
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}
