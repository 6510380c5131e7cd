import BeaconConfiguration
import Engine
import Foundation
import RegionMonitor
import Rules

#if canImport(Glibc)
    import Glibc
#endif

extension MonitorIdentity {
    /// `Monitor.userid`, `Monitor.session` and `Monitor.address`, with docs/behaviour.md §2.2's defaults for the
    /// unset ones: the host name, a random session per start, the first non-loopback IPv4 address
    /// (`127.0.0.1` when the machine has none).
    package static func resolve(_ settings: MonitorSettings) -> MonitorIdentity {
        MonitorIdentity(
            session: settings.session ?? UUID().uuidString.lowercased(),
            address: settings.address ?? firstNonLoopbackAddress() ?? "127.0.0.1",
            userid: settings.userid ?? ProcessInfo.processInfo.hostName
        )
    }

    static func firstNonLoopbackAddress() -> String? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return nil }
        defer { freeifaddrs(list) }
        var cursor: UnsafeMutablePointer<ifaddrs>? = first
        while let entry = cursor {
            defer { cursor = entry.pointee.ifa_next }
            guard let address = entry.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET),
                entry.pointee.ifa_flags & UInt32(IFF_LOOPBACK) == 0
            else { continue }
            var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            let ok = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { ipv4 in
                var raw = ipv4.pointee.sin_addr
                return inet_ntop(AF_INET, &raw, &text, socklen_t(INET_ADDRSTRLEN)) != nil
            }
            if ok { return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) }
        }
        return nil
    }
}

extension RuleSettings {
    /// The rule engine's settings from `configuration`: `Rules.*`, `Monitor.timezone` (the
    /// system's zone when unset), and the template values, with `Monitor.udid` defaulting to
    /// /etc/machine-id (empty when unreadable).
    package static func resolve(_ configuration: Configuration) -> RuleSettings {
        RuleSettings(configuration, machineID: configuration.monitor.udid == nil ? machineID() : nil)
    }

    static func machineID() -> String? {
        guard let text = try? String(contentsOfFile: "/etc/machine-id", encoding: .utf8) else { return nil }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? nil : trimmed
    }
}
