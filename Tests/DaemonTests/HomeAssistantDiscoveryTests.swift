import BeaconCore
import Daemon
import Foundation
import RegionMonitor
import Testing

/// Home Assistant discovery as HA's own code reads it (docs/home-assistant.md, issue 72), without
/// a broker: names, the entities of a radio the daemon has, `home`/`not_home`, no text `none`,
/// ids unique per daemon.
@Suite struct HomeAssistantDiscoveryTests {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    /// etc/rooms: three rooms of one Area, a scanner at a location of each.
    static let hierarchy = Hierarchy(
        beacons: [1, 2, 3].map {
            Hierarchy.Beacon(locationID: "10\($0)", id: BeaconID(uuid: uuid, major: UInt16($0), minor: 1))
        },
        areaNames: [uuid: "Flat"],
        zoneNames: [
            .zone(uuid, major: 1): "Kitchen", .zone(uuid, major: 2): "Hall", .zone(uuid, major: 3): "Office",
        ])
    static let daemon = TopicTree(topic: "beaconwatch", userid: "flat", qos: 1)
    static let anna = TopicTree(topic: "beaconwatch", userid: "anna", qos: 1, device: "anna")
    static let discovery = HomeAssistantDiscovery(scope: "beaconwatch-flat", hierarchy: hierarchy)

    static func configs(_ messages: [MQTTMessage]) throws -> [String: [String: Any]] {
        try Dictionary(
            uniqueKeysWithValues: messages.map {
                (
                    $0.topic,
                    try #require(try JSONSerialization.jsonObject(with: Data($0.payload.utf8)) as? [String: Any])
                )
            })
    }

    static func tag(_ discovery: HomeAssistantDiscovery = discovery, positioned: Bool = false) throws -> [String:
        [String: Any]]
    {
        try configs(
            anna.homeAssistantDevice(discovery, name: "Anna", daemon: daemon, tag: true, positioned: positioned))
    }

    /// HA names an entity "<device name> <entity name>" (homeassistant/helpers/entity.py:1019-1022):
    /// the tracker, the device's main feature, has a null name ("Anna", not "Anna Anna").
    @Test func theTrackerIsNamedAfterItsDeviceAlone() throws {
        let tag = try Self.tag()
        let tracker = try #require(
            tag["homeassistant/device_tracker/beaconwatch-flat_beaconwatch_anna/location/config"])
        #expect(tracker.keys.contains("name") && tracker["name"] is NSNull)
        #expect((tracker["device"] as? [String: Any])?["name"] as? String == "Anna")
        let names = tag.values.compactMap { $0["name"] as? String }.sorted()
        #expect(names == ["Nearest beacon", "Room"])
        let own = try Self.configs(
            Self.daemon.homeAssistantDiscovery(Self.discovery, userid: "flat", hierarchy: Self.hierarchy))
        let ownTracker = try #require(
            own["homeassistant/device_tracker/beaconwatch-flat_beaconwatch_flat/location/config"])
        #expect(ownTracker["name"] is NSNull)
        #expect(!own.values.contains { ($0["name"] as? String)?.contains("flat") == true })
    }

    /// `Monitor.source = none`: no tracker, zone, nearest or beacon entities for a radio the daemon
    /// does not have; only the daemon's status (the device its tags and rooms connect through).
    @Test func noEntitiesForARadioTheDaemonHasNot() throws {
        let none = Self.daemon.homeAssistantDiscovery(
            Self.discovery, userid: "flat", hierarchy: Self.hierarchy, ownRadio: false)
        #expect(none.map(\.topic) == ["homeassistant/binary_sensor/beaconwatch-flat_beaconwatch_flat/status/config"])
        let status = try #require(try Self.configs(none).values.first)
        #expect(status["state_topic"] as? String == "beaconwatch/flat/status")
        #expect(status["device_class"] as? String == "connectivity")
        #expect(status["availability_topic"] == nil)
        let radio = Self.daemon.homeAssistantDiscovery(Self.discovery, userid: "flat", hierarchy: Self.hierarchy)
        #expect(radio.count == 1 + 3 + 3)
    }

    /// The tracker is `home` or `not_home` (HA's MQTT tracker and `person` know only these words:
    /// homeassistant/components/mqtt/device_tracker.py:127-130, person/__init__.py:536-541): inside
    /// any Area by default, inside one of `MQTT.homeAreas` when set; the room is an attribute.
    @Test func theTrackerIsHomeOrNotHome() throws {
        let tracker = try #require(try Self.tag().first { $0.key.contains("device_tracker") }?.value)
        #expect(tracker["state_topic"] as? String == "beaconwatch/anna/area")
        #expect(tracker["value_template"] as? String == "{{ 'not_home' if value == 'none' else 'home' }}")
        #expect(tracker["payload_not_home"] == nil)
        #expect(tracker["json_attributes_topic"] as? String == "beaconwatch/anna/zone")
        #expect(
            tracker["json_attributes_template"] as? String
                == "{{ {'room': None if value == 'none' else value} | tojson }}")
        var some = Self.discovery
        some.homeAreas = ["Flat", #"Mum's "house""#]
        let limited = try #require(try Self.tag(some).first { $0.key.contains("device_tracker") }?.value)
        #expect(
            limited["value_template"] as? String
                == #"{{ 'home' if value in ["Flat","Mum's \"house\""] else 'not_home' }}"#)
        // On a floor plan: x, y, confidence and the room's name from B/position.
        let positioned = try #require(try Self.tag(positioned: true).first { $0.key.contains("device_tracker") }?.value)
        #expect(positioned["json_attributes_topic"] as? String == "beaconwatch/anna/position")
        let template = try #require(positioned["json_attributes_template"] as? String)
        #expect(template.contains("value_json.x") && template.contains("value_json.confidence"))
        #expect(template.contains(#""E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1":"Kitchen""#))
    }

    /// No text `none` reaches HA: the room and nearest sensors say `not_home` for it (as HA's own
    /// room sensor does: homeassistant/components/mqtt_room/sensor.py:115), and the nearest beacon
    /// is shown by its name (its room's, for a scanner's location), not its Location ID.
    @Test func noTextNoneAndTheNearestByName() throws {
        let tag = try Self.tag()
        let room = try #require(tag.first { $0.key.hasSuffix("/zone/config") }?.value)
        #expect(room["value_template"] as? String == "{{ 'not_home' if value == 'none' else value }}")
        let nearest = try #require(tag.first { $0.key.hasSuffix("/nearest/config") }?.value)
        #expect(
            nearest["value_template"] as? String
                == #"{{ 'not_home' if value == 'none' else {"101":"Kitchen","102":"Hall","103":"Office"}.get(value, value) }}"#
        )
        // Two unnamed beacons in one room: the room's name with the Location ID; a name wins.
        let shared = Hierarchy(
            beacons: [
                Hierarchy.Beacon(locationID: "7", id: BeaconID(uuid: Self.uuid, major: 1, minor: 1)),
                Hierarchy.Beacon(locationID: "8", id: BeaconID(uuid: Self.uuid, major: 1, minor: 2)),
                Hierarchy.Beacon(locationID: "9", id: BeaconID(uuid: Self.uuid, major: 1, minor: 3), name: "Desk"),
            ], zoneNames: [.zone(Self.uuid, major: 1): "Kitchen"])
        #expect(
            HomeAssistantDiscovery(scope: "x", hierarchy: shared).nearestNames
                == ["7": "Kitchen 7", "8": "Kitchen 8", "9": "Desk"])
    }

    /// Two daemons with a tag of the same id (each its own `MQTT.clientId`) have their own
    /// discovery topics, `unique_id`s and devices; a cluster's members (one `Cluster.name`) share them.
    @Test func idsAreUniquePerDaemonOrCluster() throws {
        func ids(_ scope: String) -> Set<String> {
            let discovery = HomeAssistantDiscovery(scope: scope, hierarchy: Self.hierarchy)
            let messages =
                Self.anna.homeAssistantDevice(discovery, name: "Anna", daemon: Self.daemon, tag: true)
                + Self.daemon.homeAssistantDiscovery(discovery, userid: "flat", hierarchy: Self.hierarchy)
                + Self.daemon.homeAssistantOccupancy(discovery, region: .zone(Self.uuid, major: 1), name: "Kitchen")
            var ids = Set(messages.map(\.topic))
            for message in messages {
                let config = try? JSONSerialization.jsonObject(with: Data(message.payload.utf8)) as? [String: Any]
                if let id = config?["unique_id"] as? String { ids.insert(id) }
                if let device = config?["device"] as? [String: Any],
                    let identifiers = device["identifiers"] as? [String]
                {
                    ids.formUnion(identifiers)
                }
            }
            return ids
        }
        #expect(ids("beaconwatch-flat").isDisjoint(with: ids("beaconwatch-house")))
        #expect(ids("shop") == ids("shop"))
        #expect(!ids("beaconwatch-flat").contains("beaconwatch_anna_location"))
    }

    /// An upgrade leaves no duplicates: the configs an earlier version published under the old
    /// node (`<MQTT.topic>_<userid>`) are cleared, empty and retained (HA removes the entity).
    @Test func theOldConfigsAreCleared() {
        let legacy = Self.daemon.homeAssistantLegacy(
            prefix: "homeassistant", objects: TopicTree.legacyObjects(hierarchy: Self.hierarchy))
        #expect(legacy.map(\.topic).contains("homeassistant/device_tracker/beaconwatch_flat/location/config"))
        #expect(legacy.map(\.topic).contains("homeassistant/sensor/beaconwatch_flat/beacon_101/config"))
        #expect(legacy.allSatisfy { $0.payload.isEmpty && $0.retain })
        #expect(Self.daemon.homeAssistantNode(Self.discovery) != "beaconwatch_flat")
    }
}
