import BeaconCore
import BeaconConfiguration
import Foundation
import RegionMonitor
import Testing

/// `Fleet.*` and `Device.<id>` (docs/behaviour.md §15).
@Suite struct FleetConfigurationTests {
    static let base = """
        LocationBaseBeacon.1 = E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,1,1
        MQTT.host = 127.0.0.1

        """

    static func load(_ text: String) -> Result<Configuration, ConfigurationErrors> {
        Configuration.load(Array(text.utf8), path: "conf/hsyco.ini")
    }

    @Test func theFleetSettingsLoadWithTheirDefaults() throws {
        let configuration = try Self.load(
            Self.base + """
                Fleet.owntracks = owntracks/+/+
                Fleet.theengs = home/+/BTtoMQTT/#
                Fleet.forward = beaconwatch/+/sightings
                Fleet.shard = 1/3
                Device.alice-phone = Alice's iPhone,alice
                Device.cart-7 = Cart 7
                """
        ).get()
        let fleet = try #require(configuration.fleet)
        #expect(fleet.owntracks == "owntracks/+/+" && fleet.theengs == "home/+/BTtoMQTT/#")
        #expect(fleet.forward == "beaconwatch/+/sightings")
        #expect(fleet.shard == Shard(index: 1, count: 3))
        #expect(fleet.autoAdd && fleet.maxDevices == 10_000 && fleet.maxAge == 30)
        #expect(fleet.devices.map(\.id) == ["alice-phone", "cart-7"])
        #expect(fleet.devices[0].name == "Alice's iPhone" && fleet.devices[0].userid == "alice")
        #expect(fleet.devices[1].userid == nil)
        #expect(try Self.load(Self.base).get().fleet == nil)
    }

    /// A declared device or tag that `Fleet.shard` gives to another daemon is a warning naming its
    /// line and its shard (issue 47: docs/fleet.md's example dropped alice-iphone without a word).
    @Test func aDeclaredDeviceOfAnotherShardIsAWarning() throws {
        let shard = Shard(index: 0, count: 2)
        let ids = ["alice-iphone", "bob-iphone", "cart-7", "cart-8", "badge-1", "badge-2"]
        let others = ids.filter { !shard.owns($0) }
        #expect(!others.isEmpty && others.count < ids.count)
        var text = Self.base + "Fleet.forward = beaconwatch/+/sightings\nFleet.shard = 0/2\n"
        text += ids.filter { !$0.hasPrefix("badge") }.map { "Device.\($0) = \($0)\n" }.joined()
        text += "Scanners.espresense = espresense/devices/+/+\n"
        text += ids.filter { $0.hasPrefix("badge") }.map { "Tag.\($0) = mac:AA:BB:CC:DD:EE:0\($0.suffix(1))\n" }
            .joined()
        let configuration = try Self.load(text).get()
        let warned = configuration.warnings.filter { $0.message.contains("Fleet.shard") }
        #expect(warned.count == others.count, "\(configuration.warnings)")
        for id in others {
            let owner = shard.owner(of: id)
            #expect(owner != shard)
            #expect(
                warned.contains {
                    $0.message.contains(".\(id) falls in shard \(owner), not this daemon's 0/2")
                        && $0.line == text.split(separator: "\n").firstIndex { $0.contains(".\(id) = ") }.map { $0 + 1 }
                }, "\(id): \(warned)")
        }
        #expect(try Self.load(text.replacingOccurrences(of: "Fleet.shard = 0/2\n", with: "")).get().warnings.isEmpty)
    }

    @Test(arguments: [
        ("Fleet.owntracks = owntracks/+", "two + levels"),
        ("Fleet.theengs = home/#/x", "a + level"),
        ("Fleet.shard = 2/2", "expected i/n"),
        ("Fleet.shard = half", "expected i/n"),
        ("Fleet.maxDevices = 0", "Fleet.maxDevices"),
        ("Fleet.maxAge = -1", "Fleet.maxAge"),
        ("Fleet.maxAge = soon", "Fleet.maxAge"),
        ("Device.al ice = Alice", "device id"),
        ("Device.alice = ", "Device.alice = "),
        ("Device.alice = Alice,ali/ce", "userid"),
    ])
    func aBadFleetSettingIsAnErrorOnItsLine(line: String, message: String) {
        guard case .failure(let failure) = Self.load(Self.base + "Fleet.forward = beaconwatch/+/sightings\n" + line)
        else {
            Issue.record("\(line) was taken")
            return
        }
        #expect(failure.errors.map(\.line) == [4], "\(failure)")
        #expect(failure.description.contains(message), "\(failure)")
    }

    @Test func aFleetNeedsABrokerAndSettingsNeedASource() throws {
        let text = "LocationBaseBeacon.1 = E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,1,1\nFleet.owntracks = owntracks/+/+\n"
        guard case .failure(let failure) = Self.load(text) else {
            Issue.record("a fleet without MQTT.host was taken")
            return
        }
        #expect(failure.description.contains("set MQTT.host"), "\(failure)")
        let sourceless = try Self.load(Self.base + "Fleet.autoAdd = false\n").get()
        #expect(sourceless.fleet == nil)
        #expect(sourceless.warnings.contains { $0.message.contains("the fleet is off") })
    }

    /// OwnTracks reads a major or minor of 0 as "any": `check` says so for each such beacon.
    @Test func ownTracksWarnsAboutMajorOrMinorZero() throws {
        let configuration = try Self.load(
            """
            LocationBaseBeacon.1 = E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,0,1
            LocationBaseBeacon.2 = E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,2,0
            LocationBaseBeacon.3 = E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,2,3
            MQTT.host = 127.0.0.1
            Fleet.owntracks = owntracks/+/+
            """
        ).get()
        let zeros = configuration.warnings.filter { $0.message.contains("'any' to OwnTracks") }
        #expect(zeros.map(\.line) == [1, 2])
        #expect(zeros[0].message.contains("major 0") && zeros[1].message.contains("minor 0"))
    }
}
