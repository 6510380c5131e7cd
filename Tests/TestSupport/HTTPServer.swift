import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A real HTTP/1.1 server on a free loopback port, for tests of the rules' server hook and URL
/// sources: each request is answered by `route` from its path (with query), one connection
/// per request, on threads of its own.
package final class HTTPServer: Sendable {
    /// How to answer one request.
    package enum Response: Sendable {
        case reply(status: Int, body: String)
        /// Say nothing until the server stops: the client's timeout.
        case hang
    }

    package let port: Int32
    private let listener: Int32
    private let route: @Sendable (String) -> Response
    private let paths = Mutex<[String]>([])
    private let stopping = DispatchSemaphore(value: 0)
    private let stopped = Mutex(false)

    /// Starts listening; `route` answers each request's path.
    package init(route: @escaping @Sendable (String) -> Response) throws {
        self.route = route
        listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var yes: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let fd = listener
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 && listen(fd, 16) == 0
            }
        }
        guard bound else { throw BrokerError("HTTP test server: \(String(cString: strerror(errno)))") }
        port = Int32(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "http test server"
        thread.start()
    }

    deinit { stop() }

    /// `http://127.0.0.1:<port>` and `path`.
    package func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// The paths requested so far, in order.
    package var requests: [String] { paths.withLock { $0 } }

    package func stop() {
        guard
            !stopped.withLock({ stopped in
                defer { stopped = true }; return stopped
            })
        else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        // Wakes every hanging connection.
        for _ in 0..<64 { stopping.signal() }
    }

    private func acceptLoop() {
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else {
                if errno == EINTR { continue }
                return
            }
            let thread = Thread { [self] in serve(connection) }
            thread.start()
        }
    }

    private func serve(_ connection: Int32) {
        defer { close(connection) }
        var request: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !request.contains(subsequence: [13, 10, 13, 10]) {
            let count = read(connection, &buffer, buffer.count)
            guard count > 0 else { return }
            request += buffer[0..<count]
        }
        let line = String(decoding: request.prefix { $0 != 13 }, as: UTF8.self).split(separator: " ")
        let path = line.count > 1 ? String(line[1]) : "/"
        paths.withLock { $0.append(path) }
        switch route(path) {
        case .hang:
            stopping.wait()
        case .reply(let status, let body):
            let bytes = Array(body.utf8)
            let head =
                "HTTP/1.1 \(status) Status\r\nContent-Type: application/json\r\nContent-Length: \(bytes.count)\r\nConnection: close\r\n\r\n"
            let reply = Array(head.utf8) + bytes
            var sent = 0
            while sent < reply.count {
                let count = reply[sent...].withUnsafeBytes { write(connection, $0.baseAddress, $0.count) }
                guard count > 0 else { return }
                sent += count
            }
        }
    }

    /// A loopback port nothing listens on: a refused connection.
    package static func closedPort() throws -> Int32 { try Broker.freePort() }
}

extension Array where Element == UInt8 {
    fileprivate func contains(subsequence: [UInt8]) -> Bool {
        guard count >= subsequence.count else { return false }
        for start in 0...(count - subsequence.count)
        where self[start..<start + subsequence.count].elementsEqual(subsequence) {
            return true
        }
        return false
    }
}
