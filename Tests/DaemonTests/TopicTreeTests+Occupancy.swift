import BeaconCore
import Daemon
import Foundation
import RegionMonitor
import Testing

extension TopicTreeTests {
    static func config(_ message: MQTTMessage) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(message.payload.utf8)) as? [String: Any])
    }

    /// docs/behaviour.md §23, docs/mqtt.md: a Zone's occupancy is a `binary_sensor` (device class
    /// `occupancy`) and a count `sensor`, both reading the retained `MQTT.topic/occupancy/<region>`,
    /// on a device of the room's own that suggests its name as Home Assistant's area.
    @Test func homeAssistantDiscoveryOfAZonesOccupancy() throws {
        let zone = Region.zone(Self.uuid, major: 2)
        let tree = TopicTree(topic: "bw", userid: "flat", qos: 1)
        let messages = tree.homeAssistantOccupancy(
            HomeAssistantDiscovery(scope: "d1"), region: zone, name: #"Kitchen "K""#)
        let object = "ACFD165E-C0C0-11E3-9BBE-1A514932AC01_2"
        #expect(
            messages.map(\.topic) == [
                "homeassistant/binary_sensor/d1_bw_flat/occupancy_\(object)/config",
                "homeassistant/sensor/d1_bw_flat/occupants_\(object)/config",
            ])
        #expect(messages.allSatisfy { $0.retain && $0.qos == 1 })
        let (binary, count) = (try Self.config(messages[0]), try Self.config(messages[1]))
        let state = "bw/occupancy/ACFD165E-C0C0-11E3-9BBE-1A514932AC01:2"

        #expect(binary["name"] as? String == "Occupancy")
        #expect(binary["unique_id"] as? String == "d1_bw_flat_occupancy_\(object)")
        #expect(binary["device_class"] as? String == "occupancy")
        #expect(binary["state_topic"] as? String == state)
        #expect(binary["value_template"] as? String == "{{ 'ON' if value_json.occupied else 'OFF' }}")
        #expect(binary["payload_on"] as? String == "ON")
        #expect(binary["payload_off"] as? String == "OFF")
        #expect(binary["json_attributes_topic"] as? String == state)
        #expect(
            binary["json_attributes_template"] as? String
                == "{{ {'count': value_json.count, 'devices': value_json.devices, 'sensors': value_json.sensors} | tojson }}"
        )

        #expect(count["name"] as? String == "Occupants")
        #expect(count["unique_id"] as? String == "d1_bw_flat_occupants_\(object)")
        #expect(count["state_topic"] as? String == state)
        #expect(count["value_template"] as? String == "{{ value_json.count }}")
        #expect(count["state_class"] as? String == "measurement")
        #expect(count["unit_of_measurement"] as? String == "people")
        #expect(count["device_class"] == nil)
        #expect(count["icon"] as? String == "mdi:account-group")

        for config in [binary, count] {
            #expect(config["availability_topic"] as? String == "bw/flat/status")
            #expect(config["payload_available"] as? String == "online")
            #expect(config["payload_not_available"] as? String == "offline")
            let device = try #require(config["device"] as? [String: Any])
            #expect(device["identifiers"] as? [String] == ["beaconwatch_d1_bw_flat_\(object)"])
            #expect(device["name"] as? String == #"Kitchen "K""#)
            #expect(device["suggested_area"] as? String == #"Kitchen "K""#)
            #expect(device["manufacturer"] as? String == "beaconwatch")
            #expect(device["model"] as? String == "zone occupancy")
            // Connected through the daemon's own device (homeAssistantDiscovery's identifier).
            #expect(device["via_device"] as? String == "beaconwatch_d1_bw_flat")
        }
        #expect(messages[0].topic.hasPrefix("homeassistant/binary_sensor/"))

        // The templates read what the retained topic holds: the occupancy output's own keys.
        let change = OccupancyChange(
            region: zone, name: "Kitchen", occupied: true, count: 2, devices: ["anna"],
            sensors: ["kitchen-pir": .detected(true), "kitchen-radar": .none], flipped: true)
        let output = MonitorOutput.occupancy(Timestamp(secondsSinceEpoch: 1_700_000_000)!, change)
        let retained = tree.retained(for: output)
        #expect(retained.map(\.topic) == [state])
        let payload = try Self.config(try #require(retained.first))
        #expect(payload["occupied"] as? Bool == true)
        #expect(payload["count"] as? Int == 2)
        #expect(payload["devices"] as? [String] == ["anna"])
        #expect((payload["sensors"] as? [String: Any])?.keys.sorted() == ["kitchen-pir", "kitchen-radar"])
    }

    /// An Area (Occupancy.count = areas or both) and a region without a name: their own object IDs,
    /// the canonical region as the device's name, and no suggested area.
    @Test func homeAssistantDiscoveryOfAnAreaWithoutAName() throws {
        let tree = TopicTree(topic: "beaconwatch", userid: "hq", qos: 0)
        let area = tree.homeAssistantOccupancy(
            HomeAssistantDiscovery(prefix: "ha", scope: "d1"), region: .area(Self.uuid), name: nil)
        #expect(
            area.map(\.topic) == [
                "ha/binary_sensor/d1_beaconwatch_hq/occupancy_ACFD165E-C0C0-11E3-9BBE-1A514932AC01/config",
                "ha/sensor/d1_beaconwatch_hq/occupants_ACFD165E-C0C0-11E3-9BBE-1A514932AC01/config",
            ])
        let configs = try area.map(Self.config)
        for config in configs {
            let device = try #require(config["device"] as? [String: Any])
            #expect(device["name"] as? String == "ACFD165E-C0C0-11E3-9BBE-1A514932AC01")
            #expect(device["model"] as? String == "area occupancy")
            #expect(device["suggested_area"] == nil)
            #expect(config["state_topic"] as? String == "beaconwatch/occupancy/ACFD165E-C0C0-11E3-9BBE-1A514932AC01")
        }
        // A Zone of the same UUID is another pair of entities.
        let zone = tree.homeAssistantOccupancy(
            HomeAssistantDiscovery(prefix: "ha", scope: "d1"), region: .zone(Self.uuid, major: 1), name: nil)
        let ids = try (area + zone).map { try Self.config($0)["unique_id"] as? String }
        #expect(Set(ids).count == 4)
    }
}
