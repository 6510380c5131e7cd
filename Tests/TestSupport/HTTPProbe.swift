import Foundation
import Synchronization
import Syscalls

/// A plain HTTP/1.0 client over a loopback socket, for tests of the daemon's web server: one
/// request per connection, the response read until the server closes it (a stream of
/// server-sent events is read as it comes, through ``EventStream``).
package enum HTTPProbe {
    package struct Response: Sendable {
        package var status: Int
        package var headers: [String: String]
        package var body: String
    }

    /// Sends one request on a thread of its own (a blocked socket must not hold one of the few
    /// threads the server's own tasks run on); waits for the whole response at most `seconds`.
    package static func request(
        _ method: String = "GET", _ path: String, port: Int, headers: [String: String] = [:], body: [UInt8] = [],
        within seconds: Double = Eventually.patience
    ) async throws -> Response {
        try await offThread {
            try blockingRequest(method, path, port: port, headers: headers, body: body, within: seconds)
        }
    }

    /// Runs blocking `work` on a new thread.
    static func offThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
        }
    }

    static func blockingRequest(
        _ method: String = "GET", _ path: String, port: Int, headers: [String: String] = [:], body: [UInt8] = [],
        within seconds: Double = Eventually.patience
    ) throws -> Response {
        let socket = try connect(port: port)
        defer { close(socket) }
        try send(socket, method: method, path: path, headers: headers, body: body)
        var received: [UInt8] = []
        let deadline = ContinuousClock.now.advanced(by: .milliseconds(Int64(seconds * 1000)))
        // Until the server closes, or the body its Content-Length announces is in.
        while try read(socket, into: &received, until: deadline) {
            guard let response = try? parse(received),
                let length = response.headers["content-length"].flatMap({ Int($0) })
            else { continue }
            if response.body.utf8.count >= length { return response }
        }
        return try parse(received)
    }

    /// A socket connected to 127.0.0.1:`port`.
    package static func connect(port: Int) throws -> Int32 {
        let descriptor = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure("socket: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard status == 0 else {
            close(descriptor)
            throw Failure("connect to 127.0.0.1:\(port): errno \(errno)")
        }
        return descriptor
    }

    static func send(_ socket: Int32, method: String, path: String, headers: [String: String], body: [UInt8]) throws {
        var head = "\(method) \(path) HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        let bytes = Array(head.utf8) + body
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes {
                Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard count > 0 else { throw Failure("send: errno \(errno)") }
            sent += count
        }
    }

    /// Reads what has come, waiting until `deadline`; false at the end of the stream.
    static func read(_ socket: Int32, into received: inout [UInt8], until deadline: ContinuousClock.Instant) throws
        -> Bool
    {
        let left = deadline - ContinuousClock.now
        guard left > .zero else { throw Failure("no complete response in time") }
        guard try !Syscall.waitReadable([socket], timeout: left).isEmpty else {
            throw Failure("no complete response in time")
        }
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let count = chunk.withUnsafeMutableBytes { Glibc.recv(socket, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return false }
        received += chunk[..<count]
        return true
    }

    static func parse(_ bytes: [UInt8]) throws -> Response {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let split = text.range(of: "\r\n\r\n") else { throw Failure("no header in \(text.prefix(200))") }
        var lines = text[..<split.lowerBound].components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw Failure("bad status line") }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        return Response(status: status, headers: headers, body: String(text[split.upperBound...]))
    }

    /// A stream of server-sent events (`/api/v1/events`), read as they come.
    package final class EventStream: @unchecked Sendable {
        let socket: Int32
        private var received: [UInt8] = []
        private var headerDone = false
        package private(set) var status = 0

        package init(_ path: String, port: Int, headers: [String: String] = [:]) throws {
            socket = try HTTPProbe.connect(port: port)
            try HTTPProbe.send(socket, method: "GET", path: path, headers: headers, body: [])
        }

        deinit { close(socket) }

        /// The next event's `data`, or `nil` when the server ended the stream; throws after
        /// `seconds` without one. One caller at a time.
        package func next(within seconds: Double = Eventually.patience) async throws -> String? {
            try await HTTPProbe.offThread { try self.blockingNext(within: seconds) }
        }

        /// Returns once the server has taken the client on (its first block, `retry:`, came):
        /// what is delivered from then on reaches it.
        package func connected(within seconds: Double = Eventually.patience) async throws {
            try await HTTPProbe.offThread { _ = try self.blockingNext(within: seconds, anyBlock: true) }
        }

        func blockingNext(within seconds: Double, anyBlock: Bool = false) throws -> String? {
            let deadline = ContinuousClock.now.advanced(by: .milliseconds(Int64(seconds * 1000)))
            while true {
                if !headerDone, let end = find([13, 10, 13, 10]) {
                    let head = String(decoding: received[..<end], as: UTF8.self)
                    status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
                    received.removeFirst(end + 4)
                    headerDone = true
                }
                if headerDone, let end = find([10, 10]) {
                    let block = String(decoding: received[..<end], as: UTF8.self)
                    received.removeFirst(end + 2)
                    let data = block.split(separator: "\n").filter { $0.hasPrefix("data: ") }.map { $0.dropFirst(6) }
                    if !data.isEmpty || anyBlock { return data.joined(separator: "\n") }
                    continue
                }
                guard try HTTPProbe.read(socket, into: &received, until: deadline) else { return nil }
            }
        }

        private func find(_ pattern: [UInt8]) -> Int? {
            guard received.count >= pattern.count else { return nil }
            for start in 0...(received.count - pattern.count)
            where received[start..<start + pattern.count].elementsEqual(pattern) {
                return start
            }
            return nil
        }
    }

    package struct Failure: Error, CustomStringConvertible {
        package var description: String
        package init(_ description: String) { self.description = description }
    }
}
