import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A real `mosquitto` on a free loopback port, for tests: started, waited for, killed.
package final class Broker: @unchecked Sendable {
    package let port: Int32
    package let folder: URL
    /// Whether the broker keeps its state on disk across restarts.
    package let persistent: Bool
    private var process: Process?
    /// The broker's process id while it runs (the wrapper execs mosquitto in place).
    package var pid: Int32 { process?.processIdentifier ?? 0 }
    /// What the broker has said on standard error, and who waits for a line of it.
    private let said = BrokerLog()

    /// Starts a broker (persistence on unless `persistent` is false, saved every second, in its
    /// own folder, as this user: run as root, mosquitto would otherwise drop to `mosquitto` and
    /// fail to save) and waits until it accepts connections.
    package init(persistent: Bool = true) throws {
        folder = try scratchFolder("broker")
        port = try Self.freePort()
        self.persistent = persistent
        try start()
    }

    deinit { kill(signal: SIGKILL) }

    /// (Re)starts the broker on the same port with the same persistence file.
    package func start() throws {
        let config = folder.appendingPathComponent("mosquitto.conf")
        try """
        listener \(port) 127.0.0.1
        allow_anonymous true
        persistence \(persistent)
        persistence_location \(folder.path)/
        autosave_interval 1
        user \(String(cString: getpwuid(getuid()).pointee.pw_name))
        max_queued_messages 0
        max_inflight_messages 0
        set_tcp_nodelay true
        log_dest stderr
        log_type error
        log_type warning
        log_type notice
        log_type information

        """.write(to: config, atomically: true, encoding: .utf8)
        let process = Process()
        // Through a wrapper that unblocks every signal: a test process blocks SIGTERM and SIGHUP
        // (for the code under test), its children inherit that mask, and a mosquitto that never
        // sees SIGTERM could not be restarted as an administrator restarts it.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [
            "-c",
            "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); "
                + "os.execv('/usr/sbin/mosquitto', ['mosquitto', '-c', sys.argv[1]])",
            config.path,
        ]
        process.standardOutput = FileHandle.nullDevice
        let pipe = Pipe()
        let said = said
        let starts = said.count(of: " running")
        process.standardError = pipe
        process.terminationHandler = { _ in Eventually.changed() }
        try process.run()
        readUntilEnd(pipe.fileHandleForReading, name: "mosquitto's log") { said.append($0) }
        self.process = process
        // mosquitto says "running" once its listener is open: waited for, not polled.
        guard said.wait(within: Eventually.patience, until: { $0.count(of: " running") > starts }),
            Self.accepts(port: port)
        else {
            throw BrokerError("mosquitto did not listen on 127.0.0.1:\(port) within \(Int(Eventually.patience)) s")
        }
    }

    /// Waits until the broker has saved its state (sessions, subscriptions) after now: what a
    /// SIGKILL from then on cannot lose.
    package func saved(within seconds: Double = Eventually.patience) throws {
        // A save that had begun before now may have missed what came since: the one after it.
        let saves = said.count(of: "Saving in-memory database")
        guard said.wait(within: seconds, until: { $0.count(of: "Saving in-memory database") >= saves + 2 }) else {
            throw BrokerError("mosquitto did not save its database within \(Int(seconds)) s")
        }
    }

    /// Stops the broker with `signal` (SIGKILL: no clean shutdown) and waits for it to exit (not
    /// from an async context, where Foundation's wait may spin and never return: use
    /// ``stop(signal:)`` there, or pass `wait: false`).
    package func kill(signal: Int32 = SIGTERM, wait: Bool = true) {
        guard let process, process.isRunning else { return }
        Glibc.kill(process.processIdentifier, signal)
        if wait { process.waitUntilExit() }
        self.process = nil
    }

    /// Stops the broker with `signal` and waits, from async code, until it has exited (its
    /// termination wakes the wait).
    package func stop(signal: Int32 = SIGTERM) async throws {
        guard let process, process.isRunning else { return }
        Glibc.kill(process.processIdentifier, signal)
        try await Eventually.until("mosquitto to exit") { !process.isRunning }
        self.process = nil
    }

    /// Whether something listens on `port` on loopback.
    package static func accepts(port: Int32) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    /// The next port ``freePort()`` tries: each test process starts at its own random place.
    private static let nextPort = Mutex(Int32.random(in: lowestPort...highestPort))
    static let lowestPort: Int32 = 20_000
    static let highestPort: Int32 = 32_000

    /// A loopback port nothing listens on, for a broker or a web view to take. From 20,000 to
    /// 32,000, below the kernel's ephemeral range (32,768 up on Linux): a port `bind` to port 0
    /// gives is one the kernel may also give an outgoing connection as its own end before the
    /// server binds it — a daemon's web view found its port taken so in CI ("Address already in
    /// use"), beside tests that open connections on loopback all the time.
    package static func freePort() throws -> Int32 {
        for _ in lowestPort...highestPort {
            let port = nextPort.withLock { next in
                let port = next
                next = next >= highestPort ? lowestPort : next + 1
                return port
            }
            if bindable(port) { return port }
        }
        throw BrokerError("no free port from \(lowestPort) to \(highestPort) on 127.0.0.1")
    }

    /// Whether `port` on 127.0.0.1 can be listened on now.
    static func bindable(_ port: Int32) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}

package struct BrokerError: Error, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}

/// A child's standard error as it comes, and waiting (with a deadline) for a line of it.
final class BrokerLog: Sendable {
    private let text = Mutex("")
    private let condition = NSCondition()

    func append(_ data: Data) {
        text.withLock { $0 += String(decoding: data, as: UTF8.self) }
        condition.lock()
        condition.broadcast()
        condition.unlock()
        Eventually.changed()
    }

    func count(of needle: String) -> Int { text.withLock { $0.components(separatedBy: needle).count - 1 } }

    /// Blocks until `predicate` holds of the log, woken by each new chunk; false after `seconds`.
    func wait(within seconds: Double, until predicate: (BrokerLog) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        condition.lock()
        defer { condition.unlock() }
        while !predicate(self) {
            guard condition.wait(until: deadline) else { return predicate(self) }
        }
        return true
    }
}
