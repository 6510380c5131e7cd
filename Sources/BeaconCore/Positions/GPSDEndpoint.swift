/// `Monitor.position = gpsd:HOST:PORT` (docs/behaviour.md §17): where gpsd listens.
package struct GPSDEndpoint: Sendable, Hashable, CustomStringConvertible {
    package var host: String
    package var port: UInt16

    package init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Parses `gpsd:HOST:PORT` (an IPv6 host in brackets: `gpsd:[::1]:2947`); `nil` otherwise.
    package init?(_ text: String) {
        guard text.hasPrefix("gpsd:") else { return nil }
        let rest = text.dropFirst("gpsd:".count)
        guard let colon = rest.lastIndex(of: ":") else { return nil }
        var host = rest[..<colon]
        if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        guard !host.isEmpty, host.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != "/" }),
            let port = UInt16(rest[rest.index(after: colon)...]), port > 0
        else { return nil }
        self.init(host: String(host), port: port)
    }

    package var description: String { host.contains(":") ? "gpsd:[\(host)]:\(port)" : "gpsd:\(host):\(port)" }
}
