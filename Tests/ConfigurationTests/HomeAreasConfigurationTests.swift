import BeaconConfiguration
import Testing

/// `MQTT.homeAreas` (docs/configuration.md, docs/home-assistant.md): the Areas a Home Assistant
/// tracker is `home` in, as `B/area` says them.
@Suite struct HomeAreasConfigurationTests {
    static let areas = """
        LocationBaseBeacon.101 = E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,1,1
        LocationAreaName.E2C56DB5-DFFB-48D2-B060-D0F5A71096E0 = Flat
        LocationBaseBeacon.201 = A1C56DB5-DFFB-48D2-B060-D0F5A71096E1,1,1
        MQTT.host = 127.0.0.1

        """

    @Test func namesAndUUIDsAreTheAreasAsBAreaSaysThem() throws {
        let loaded = try Configuration.load(
            Array((Self.areas + "MQTT.homeAreas = Flat, a1c56db5-dffb-48d2-b060-d0f5a71096e1\n").utf8),
            path: "hsyco.ini"
        ).get()
        #expect(loaded.mqtt?.homeAreas == ["Flat", "A1C56DB5-DFFB-48D2-B060-D0F5A71096E1"])
        // What `check` says of MQTT.
        #expect(
            loaded.mqtt?.description.hasSuffix(
                "Home Assistant discovery under homeassistant (home in Flat, A1C56DB5-DFFB-48D2-B060-D0F5A71096E1)")
                == true, "\(loaded.mqtt?.description ?? "")")
        #expect(try Configuration.load(Array(Self.areas.utf8), path: "hsyco.ini").get().mqtt?.homeAreas == nil)
    }

    @Test func anAreaThatIsNotConfiguredIsOneLineNamingTheAreas() {
        guard
            case .failure(let errors) = Configuration.load(
                Array((Self.areas + "MQTT.homeAreas = Flat, House\n").utf8), path: "hsyco.ini")
        else {
            Issue.record("loaded")
            return
        }
        #expect(
            errors.errors.map(\.description) == [
                "hsyco.ini:5: MQTT.homeAreas: 'House' is no Area; give Areas' names or UUIDs (Flat, A1C56DB5-DFFB-48D2-B060-D0F5A71096E1), comma-separated"
            ])
    }
}
