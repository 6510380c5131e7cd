import BeaconConfiguration
import Testing

/// `Cluster.*` (docs/behaviour.md §21): read with their defaults, every mistake said at its line.
@Suite struct ClusterConfigurationTests {
    static let base = """
        LocationBaseBeacon.1 = E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,1,1
        MQTT.host = 127.0.0.1
        MQTT.clientId = bw-hall-1

        """

    static func load(_ text: String) -> Result<Configuration, ConfigurationErrors> {
        Configuration.load(Array(text.utf8), path: "conf/hsyco.ini")
    }

    /// The one error of `text`, as `line: message`.
    static func error(_ text: String) -> String {
        guard case .failure(let failure) = load(text) else { return "loaded" }
        return failure.errors.map { "\($0.line ?? 0): \($0.message)" }.joined(separator: " | ")
    }

    @Test func aClusterIsReadWithItsMemberAndDefaultKeepalive() throws {
        let cluster = try #require(try Self.load(Self.base + "Cluster.name = hall\n").get().cluster)
        #expect(cluster == ClusterSettings(name: "hall", keepalive: 2, member: "bw-hall-1"))
        let faster = try Self.load(Self.base + "Cluster.name = hall\nCluster.keepalive = 7\n").get()
        #expect(faster.cluster?.keepalive == 7)
        #expect(try Self.load(Self.base).get().cluster == nil)
    }

    @Test func everyMistakeIsSaidAtItsLine() throws {
        #expect(
            Self.error(Self.base + "Cluster.name = a/b\n").hasPrefix("4: Cluster.name 'a/b' must be 1 to 64 letters"))
        #expect(Self.error(Self.base + "Cluster.name = \n").hasPrefix("4: Cluster.name '' must be"))
        #expect(
            Self.error("LocationBaseBeacon.1 = E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,1,1\nCluster.name = hall\n")
                .hasPrefix("2: a cluster elects its active through the broker: set MQTT.host"))
        #expect(
            Self.error(
                "LocationBaseBeacon.1 = E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,1,1\nMQTT.host = h\nCluster.name = hall\n"
            )
            .hasPrefix("3: a cluster's daemons are told apart by MQTT.clientId"))
        #expect(
            Self.error(Self.base.replacingOccurrences(of: "bw-hall-1", with: "bw hall") + "Cluster.name = hall\n")
                .hasPrefix("3: MQTT.clientId 'bw hall' names this daemon"))
        #expect(
            Self.error(
                Self.base.replacingOccurrences(of: "bw-hall-1", with: "beaconwatch-hall-1") + "Cluster.name = hall\n"
            )
            .contains("in a cluster MQTT 3.1.1 allows 15"))
        // MQTT 5 allows the longer id.
        let five =
            Self.base.replacingOccurrences(of: "bw-hall-1", with: "beaconwatch-hall-1")
            + "MQTT.version = 5\nCluster.name = hall\n"
        #expect(try Self.load(five).get().cluster?.member == "beaconwatch-hall-1")
        for keepalive in ["0", "3601", "two", "-1", "99999999999999999999"] {
            #expect(Self.error(Self.base + "Cluster.name = hall\nCluster.keepalive = \(keepalive)\n").hasPrefix("5: "))
        }
    }

    @Test func aKeepaliveWithoutANameIsAWarning() throws {
        let configuration = try Self.load(Self.base + "Cluster.keepalive = 3\n").get()
        #expect(configuration.cluster == nil)
        #expect(
            configuration.warnings.map(\.message) == [
                "Cluster.keepalive without Cluster.name: this daemon runs alone; set Cluster.name for a cluster"
            ])
    }
}
