import Foundation
import TestSupport
import Testing

/// `etc/beaconwatch.service` runs the daemon as docs/behaviour.md §13 says: unprivileged, with CAP_NET_RAW only.
@Suite struct SystemdUnitTests {
    static func settings() throws -> [String: [String]] {
        let root = Conformance.directory.deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("etc/beaconwatch.service"), encoding: .utf8)
        var settings: [String: [String]] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") && line.contains("=") {
            let parts = line.split(separator: "=", maxSplits: 1)
            settings[String(parts[0]), default: []].append(String(parts[1]))
        }
        return settings
    }

    @Test func theUnitRunsTheDaemonUnprivilegedWithOnlyCapNetRaw() throws {
        let unit = try Self.settings()
        #expect(unit["ExecStart"] == ["/usr/bin/beaconwatch run --config /etc/beaconwatch/hsyco.ini"])
        #expect(unit["ExecReload"] == ["/bin/kill -HUP $MAINPID"])
        #expect(unit["User"] == ["beaconwatch"])
        #expect(unit["AmbientCapabilities"] == ["CAP_NET_RAW"])
        #expect(unit["CapabilityBoundingSet"] == ["CAP_NET_RAW"])
        #expect(unit["NoNewPrivileges"] == ["yes"])
        #expect(unit["Restart"] == ["on-failure"])
        #expect(unit["RestartPreventExitStatus"] == ["2"])
        #expect(unit["StateDirectory"] == ["beaconwatch"])
        #expect(unit["RestrictAddressFamilies"]?.first?.contains("AF_BLUETOOTH") == true)
    }
}
