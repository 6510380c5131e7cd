import BeaconCore

/// `Web.*` (docs/behaviour.md §16): where the web view and HTTP API listen, and the token that guards them.
/// The token never appears in ``description``.
package struct WebSettings: Sendable, Hashable, CustomStringConvertible {
    /// A host name or an IP address (IPv6 without brackets).
    package var host: String
    /// 0 asks the system for a free port (tests).
    package var port: Int
    /// `Web.listen` was given: an address that cannot be bound is an error then, where the
    /// default only warns.
    package var explicit: Bool
    /// `Web.token`: with it every request needs `Authorization: Bearer <token>`; POSTs always do.
    package var token: String?

    package static let defaultHost = "127.0.0.1"
    package static let defaultPort = 8080

    package init(
        host: String = Self.defaultHost, port: Int = Self.defaultPort, explicit: Bool = false, token: String? = nil
    ) {
        self.host = host
        self.port = port
        self.explicit = explicit
        self.token = token
    }

    /// The address only this machine reaches: 127.0.0.0/8, `::1`, `localhost`.
    package var isLoopback: Bool { Self.isLoopback(host) }

    package static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" || host == "::1" || host == "0:0:0:0:0:0:0:1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    /// `HOST:PORT` as a URL's authority (IPv6 in brackets).
    package var authority: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    package var description: String { "\(authority)\(token == nil ? "" : " (token set)")" }

    /// Reads `HOST:PORT` (`[IPv6]:PORT`); `nil` with the reason when it is not one.
    package static func parseListen(_ text: String) -> Result<(host: String, port: Int), ListenError> {
        let host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                return .failure(ListenError(reason: "an IPv6 address is written [ADDRESS]:PORT"))
            }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":") else {
                return .failure(ListenError(reason: "give HOST:PORT, such as 127.0.0.1:8080"))
            }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
            if host.contains(":") {
                return .failure(ListenError(reason: "an IPv6 address is written [ADDRESS]:PORT"))
            }
        }
        guard !host.isEmpty, host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || ".-:_".contains($0)) })
        else {
            return .failure(ListenError(reason: "the host is not a host name or an IP address"))
        }
        guard let port = Int(portText), (0...65_535).contains(port) else {
            return .failure(ListenError(reason: "the port is not a number from 0 to 65535"))
        }
        return .success((String(host), port))
    }

    /// `Web.listen`'s value with the token in force: the settings, or why they cannot be (not an
    /// address, or one other machines reach without a token).
    package static func listening(on text: String, token: String?) -> Result<WebSettings, ListenError> {
        parseListen(text).flatMap { host, port in
            let settings = WebSettings(host: host, port: port, explicit: true, token: token)
            guard settings.isLoopback || token != nil else {
                return .failure(
                    ListenError(
                        reason:
                            "is reachable from other machines; set Web.token = <a long random secret> (requests then send Authorization: Bearer <token>), or listen on 127.0.0.1",
                        reachable: true))
            }
            return .success(settings)
        }
    }

    package struct ListenError: Error, Sendable {
        package var reason: String
        /// An address other machines reach, given without a token (not a malformed one).
        package var reachable = false

        /// The one line that says it of `value` given as `key`.
        package func message(_ key: String, _ value: String) -> String {
            reachable ? "\(key) = \(value.excerpt) \(reason)" : "\(key) = '\(value.excerpt)': \(reason)"
        }
    }
}
