import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP forwarder from a free loopback port to `127.0.0.1:target`, for tests that cut a client's
/// network: ``cut()`` drops every connection at once (the broker sees its client vanish, with no
/// MQTT DISCONNECT, and fires its will) and refuses new ones until ``restore()``; ``silence()``
/// keeps the connections open but passes nothing on (a cable pulled: neither end knows until
/// its keepalive runs out).
package final class TCPProxy: Sendable {
    package let port: Int32
    private let listener: Int32
    private let target: Int32
    private let state = Mutex<(open: Set<Int32>, cut: Bool, closed: Bool, silent: Bool)>(([], false, false, false))

    package init(to target: Int32) throws {
        self.target = target
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw BrokerError("proxy: socket failed") }
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(socket, 16) == 0 else {
            Glibc.close(socket)
            throw BrokerError("proxy: bind or listen failed")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        listener = socket
        port = Int32(UInt16(bigEndian: address.sin_port))
        Thread { [self] in acceptLoop() }.start()
    }

    deinit { close() }

    static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    /// Drops every connection and refuses new ones.
    package func cut() {
        let open = state.withLock { state in
            state.cut = true
            return state.open
        }
        for descriptor in open { shutdown(descriptor, Int32(SHUT_RDWR)) }
    }

    /// Takes connections again, and passes bytes on again.
    package func restore() {
        state.withLock {
            $0.cut = false
            $0.silent = false
        }
    }

    /// Passes nothing on from now on (what comes is dropped), the connections left open.
    package func silence() { state.withLock { $0.silent = true } }

    /// Stops listening and drops every connection.
    package func close() {
        let first = state.withLock { state in
            defer { state.closed = true }
            return !state.closed
        }
        guard first else { return }
        cut()
        shutdown(listener, Int32(SHUT_RDWR))
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                break
            }
            let refused = state.withLock { $0.cut || $0.closed }
            if refused {
                Glibc.close(client)
                continue
            }
            let upstream = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: UInt16(target))
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard upstream >= 0, connected == 0 else {
                Glibc.close(client)
                if upstream >= 0 { Glibc.close(upstream) }
                continue
            }
            state.withLock { $0.open.formUnion([client, upstream]) }
            let ends = Ends()
            for (from, to) in [(client, upstream), (upstream, client)] {
                Thread { [self] in
                    pump(from, to)
                    // Both directions done: the sockets go.
                    let last = ends.count.withLock { count in
                        count += 1
                        return count == 2
                    }
                    if last {
                        state.withLock { $0.open.subtract([client, upstream]) }
                        Glibc.close(client)
                        Glibc.close(upstream)
                    }
                }.start()
            }
        }
        Glibc.close(listener)
    }

    /// Copies bytes from `from` to `to` until either end is done, then shuts both down.
    private func pump(_ from: Int32, _ to: Int32) {
        var buffer = [UInt8](repeating: 0, count: 16_384)
        loop: while true {
            let count = buffer.withUnsafeMutableBytes { read(from, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            if state.withLock({ $0.silent }) { continue }
            var sent = 0
            while sent < count {
                let wrote = buffer.withUnsafeBytes { bytes in
                    bytes.baseAddress.map { write(to, $0 + sent, count - sent) } ?? -1
                }
                if wrote < 0, errno == EINTR { continue }
                guard wrote > 0 else { break loop }
                sent += wrote
            }
        }
        shutdown(from, Int32(SHUT_RDWR))
        shutdown(to, Int32(SHUT_RDWR))
    }
}

/// How many directions of one connection are done.
private final class Ends: Sendable {
    let count = Mutex(0)
}
