import BeaconCore
import JSONText
import RegionMonitor

/// What Home Assistant discovery is published with (docs/home-assistant.md): the prefix, what
/// makes its ids unique to this daemon, the Areas a tracker is `home` in, and the names HA shows
/// for the nearest beacon and the rooms.
package struct HomeAssistantDiscovery: Sendable, Hashable {
    /// `MQTT.discoveryPrefix`.
    package var prefix: String
    /// `Cluster.name`, else `MQTT.clientId`: part of every discovery topic's node id, `unique_id`
    /// and device identifier, so that two daemons on one broker never take over each other's
    /// entities (a cluster's members share theirs: one of them reports at a time).
    package var scope: String
    /// `MQTT.homeAreas`, as `B/area` says them (the Area's name, else its UUID); `nil`: every Area.
    package var homeAreas: [String]?
    /// What the nearest-beacon sensor shows for each Location ID (``nearestNames(_:)``).
    package var nearestNames: [String: String]
    /// Each Zone's name by its canonical region: the room attribute of a tag on a floor plan,
    /// whose `B/position` says the room by region.
    package var roomNames: [String: String]

    package init(
        prefix: String = "homeassistant", scope: String, homeAreas: [String]? = nil,
        hierarchy: Hierarchy = Hierarchy()
    ) {
        self.prefix = prefix
        self.scope = scope
        self.homeAreas = homeAreas
        nearestNames = Self.nearestNames(hierarchy)
        var rooms: [String: String] = [:]
        for zone in hierarchy.zones { if let name = zone.name { rooms[zone.region.description] = name } }
        roomNames = rooms
    }

    /// A beacon's name; else its Zone's name (a scanner's room), with its Location ID when the
    /// Zone has other unnamed beacons; else its Location ID.
    static func nearestNames(_ hierarchy: Hierarchy) -> [String: String] {
        var names: [String: String] = [:]
        for (index, beacon) in hierarchy.beacons.enumerated() {
            if let name = beacon.name {
                names[beacon.locationID] = name
                continue
            }
            let zone = hierarchy.zones[Int(hierarchy.zoneOfBeacon[index])]
            guard let room = zone.name else { continue }
            let unnamed = zone.beacons.filter { hierarchy.beacons[Int($0)].name == nil }.count
            names[beacon.locationID] = unnamed > 1 ? "\(room) \(beacon.locationID)" : room
        }
        return names
    }
}

extension TopicTree {
    /// The node id of this tree's discovery topics, also its `unique_id`s' and device's stem:
    /// HA keys a discovered entity by `<component> <node> <object>`
    /// (homeassistant/components/mqtt/discovery.py:240-241) and its registry entry by `unique_id`.
    package func homeAssistantNode(_ discovery: HomeAssistantDiscovery) -> String {
        Self.objectID(discovery.scope) + "_" + Self.objectID(base)
    }

    /// The node id this tree's discovery had before ids were made unique per daemon: its
    /// retained configs are cleared at start (``homeAssistantLegacy(prefix:objects:)``).
    var legacyNode: String { Self.objectID(base) }

    /// Empty retained payloads on the discovery topics an earlier version published under
    /// ``legacyNode``: HA removes an entity whose config topic turns empty
    /// (homeassistant/components/mqtt/mixins.py:1003-1005), and the broker forgets the topic.
    package func homeAssistantLegacy(prefix: String, objects: [(component: String, object: String)]) -> [MQTTMessage] {
        objects.map {
            MQTTMessage(
                topic: "\(prefix)/\($0.component)/\(legacyNode)/\($0.object)/config", payload: "", qos: 1, retain: true)
        }
    }

    /// Home Assistant MQTT discovery of the daemon itself (retained, under the prefix): a device
    /// with a `Status` connectivity sensor (`B/status`); with a radio of its own (`ownRadio`), a
    /// `device_tracker` for the user (``homeAssistantTracker``), sensors for the current Zone, the
    /// nearest beacon and each beacon's class, all available while `B/status` says `online`.
    package func homeAssistantDiscovery(
        _ discovery: HomeAssistantDiscovery, userid: String, hierarchy: Hierarchy, ownRadio: Bool = true
    ) -> [MQTTMessage] {
        let node = homeAssistantNode(discovery)
        let device =
            #"{"identifiers":["beaconwatch_\#(node)"],"name":"beaconwatch \#(Self.escape(userid))","manufacturer":"beaconwatch","model":"\#(ownRadio ? "iBeacon presence" : "daemon")"}"#
        let availability =
            #","availability_topic":"\#(Self.escape(statusTopic))","payload_available":"online","payload_not_available":"offline""#
        func config(_ component: String, _ object: String, _ fields: String, available: Bool = true) -> MQTTMessage {
            MQTTMessage(
                topic: "\(discovery.prefix)/\(component)/\(node)/\(object)/config",
                payload: "{\(fields)\(available ? availability : ""),\"device\":\(device)}",
                qos: 1,
                retain: true
            )
        }
        // Not available by B/status: it says B/status itself (off while the daemon is away).
        var messages = [
            config(
                "binary_sensor", "status",
                #""name":"Status","unique_id":"\#(node)_status","state_topic":"\#(Self.escape(statusTopic))","payload_on":"online","payload_off":"offline","device_class":"connectivity","entity_category":"diagnostic""#,
                available: false)
        ]
        guard ownRadio else { return messages }
        messages += [
            config("device_tracker", "location", homeAssistantTracker(discovery, node: node, room: "zone")),
            config(
                "sensor", "zone",
                #""name":"Zone","unique_id":"\#(node)_zone","state_topic":"\#(Self.escape(base))/zone","value_template":"\#(Self.escape(Self.awayTemplate))","icon":"mdi:map-marker""#
            ),
            config("sensor", "nearest", homeAssistantNearest(discovery, node: node)),
        ]
        for beacon in hierarchy.beacons {
            let object = "beacon_" + Self.objectID(beacon.locationID)
            let name = Self.escape(beacon.name ?? "Beacon \(beacon.locationID)")
            messages.append(
                config(
                    "sensor", object,
                    #""name":"\#(name)","unique_id":"\#(node)_\#(object)","state_topic":"\#(Self.escape(base))/beacon/\#(Self.escape(beacon.locationID))","icon":"mdi:signal-distance-variant""#
                ))
        }
        return messages
    }

    /// The objects ``homeAssistantDiscovery(_:userid:hierarchy:ownRadio:)`` published under the
    /// legacy node, for ``homeAssistantLegacy(prefix:objects:)``.
    package static func legacyObjects(hierarchy: Hierarchy) -> [(component: String, object: String)] {
        [("device_tracker", "location"), ("sensor", "zone"), ("sensor", "nearest")]
            + hierarchy.beacons.map { ("sensor", "beacon_" + objectID($0.locationID)) }
    }

    /// `{{ … }}`: a Zone's or room's name as `B/zone` says it, `not_home` for `none` (what HA's own
    /// room sensor says when a device is in no room: homeassistant/components/mqtt_room/sensor.py:115
    /// and :188; a text sensor cannot be made `unknown` by its payload in HA 2024.3, which keeps
    /// any text as the state: homeassistant/components/mqtt/sensor.py:237-239).
    static let awayTemplate = "{{ 'not_home' if value == 'none' else value }}"

    /// A `device_tracker`'s fields: no name of its own (it is the device's main feature: HA names it
    /// after the device, homeassistant/helpers/entity.py:1019-1021), its state `home` or
    /// `not_home` from `B/area` (``homeTemplate(_:)``), the Zone's or room's name in the attribute
    /// `room` (from `B/zone`; null when in none) or `zone`.
    func homeAssistantTracker(
        _ discovery: HomeAssistantDiscovery, node: String, room: String, positioned: Bool = false
    ) -> String {
        // Attributes come from a JSON topic through a template (homeassistant/components/mqtt/mixins.py:529-544).
        let attributes =
            positioned
            ? #""json_attributes_topic":"\#(Self.escape(base))/position","json_attributes_template":"\#(Self.escape(Self.positionTemplate(discovery.roomNames)))""#
            : #""json_attributes_topic":"\#(Self.escape(base))/zone","json_attributes_template":"\#(Self.escape("{{ {'\(room)': None if value == 'none' else value} | tojson }}"))""#
        return
            #""name":null,"unique_id":"\#(node)_location","state_topic":"\#(Self.escape(base))/area","value_template":"\#(Self.escape(Self.homeTemplate(discovery.homeAreas)))","source_type":"bluetooth_le",\#(attributes)"#
    }

    /// `{{ … }}` of a tracker's state: `home` inside one of `homeAreas` (any Area when `nil`),
    /// else `not_home`. HA's MQTT tracker maps exactly these two words to its states
    /// (homeassistant/components/mqtt/device_tracker.py:66-67, 127-130); any other text becomes a
    /// zone name that `person` ignores (homeassistant/components/person/__init__.py:536-541).
    static func homeTemplate(_ homeAreas: [String]?) -> String {
        guard let homeAreas else { return "{{ 'not_home' if value == 'none' else 'home' }}" }
        let list = "[" + homeAreas.map { "\"\(escape($0))\"" }.joined(separator: ",") + "]"
        return "{{ 'home' if value in \(list) else 'not_home' }}"
    }

    /// `{{ … }}` of a positioned tag's attributes from `B/position`: `x`, `y`, `confidence` and
    /// the room's name (its region in the payload).
    static func positionTemplate(_ roomNames: [String: String]) -> String {
        let map =
            "{"
            + roomNames.sorted { $0.key < $1.key }.map { "\"\(escape($0.key))\":\"\(escape($0.value))\"" }
            .joined(separator: ",") + "}"
        return
            "{{ {'x': value_json.x, 'y': value_json.y, 'confidence': value_json.confidence, 'room': \(map).get(value_json.room, value_json.room)} | tojson }}"
    }

    /// The nearest-beacon sensor's fields: its name shown (``HomeAssistantDiscovery/nearestNames``),
    /// `not_home` when none is heard.
    func homeAssistantNearest(_ discovery: HomeAssistantDiscovery, node: String) -> String {
        let map =
            "{"
            + discovery.nearestNames.sorted { $0.key < $1.key }.map {
                "\"\(Self.escape($0.key))\":\"\(Self.escape($0.value))\""
            }.joined(separator: ",") + "}"
        let template = "{{ 'not_home' if value == 'none' else \(map).get(value, value) }}"
        return
            #""name":"Nearest beacon","unique_id":"\#(node)_nearest","state_topic":"\#(Self.escape(base))/nearest","value_template":"\#(Self.escape(template))","icon":"mdi:bluetooth""#
    }

    /// Home Assistant discovery for a fleet device (docs/behaviour.md §15), whose topics these are: a
    /// `device_tracker` (``homeAssistantTracker``) and sensors for its Zone and nearest beacon,
    /// available while the `daemon`'s status says `online`, and shown as a device connected
    /// through the daemon's. A `tag` (heard by fixed scanners, docs/rooms.md) has its Zone sensor
    /// named "Room" and its model "tag"; the object IDs are the same either way. A tag on a floor
    /// plan (`positioned`, docs/behaviour.md §20) has its tracker carry `x`, `y`, `confidence` and
    /// `room` as attributes, from `B/position`.
    package func homeAssistantDevice(
        _ discovery: HomeAssistantDiscovery, name: String, daemon: TopicTree, tag: Bool = false,
        positioned: Bool = false
    ) -> [MQTTMessage] {
        let node = homeAssistantNode(discovery)
        let availabilityTopic = daemon.statusTopic
        let model = tag ? "tag" : "fleet device"
        let device =
            #"{"identifiers":["beaconwatch_\#(node)"],"name":"\#(Self.escape(name))","manufacturer":"beaconwatch","model":"\#(model)","via_device":"beaconwatch_\#(daemon.homeAssistantNode(discovery))"}"#
        let availability =
            #""availability_topic":"\#(Self.escape(availabilityTopic))","payload_available":"online","payload_not_available":"offline""#
        func config(_ component: String, _ object: String, _ fields: String) -> MQTTMessage {
            MQTTMessage(
                topic: "\(discovery.prefix)/\(component)/\(node)/\(object)/config",
                payload: "{\(fields),\(availability),\"device\":\(device)}", qos: 1, retain: true)
        }
        return [
            config(
                "device_tracker", "location",
                homeAssistantTracker(discovery, node: node, room: tag ? "room" : "zone", positioned: positioned)),
            config(
                "sensor", "zone",
                #""name":"\#(tag ? "Room" : "Zone")","unique_id":"\#(node)_zone","state_topic":"\#(Self.escape(base))/zone","value_template":"\#(Self.escape(Self.awayTemplate))","icon":"mdi:map-marker""#
            ),
            config("sensor", "nearest", homeAssistantNearest(discovery, node: node)),
        ]
    }

    /// Home Assistant discovery for a region's occupancy (docs/behaviour.md §23, docs/mqtt.md): a
    /// `binary_sensor` (device class `occupancy`) and a count `sensor` (state class `measurement`,
    /// unit `people`), both reading the retained `MQTT.topic/occupancy/<region>` JSON through value
    /// templates, available while this daemon's `B/status` says `online`. Each region is a device
    /// of its own, connected through the daemon's, and suggests its name as Home Assistant's area
    /// (a region without a name suggests none). The binary sensor carries the count, the devices
    /// inside and the sensors' states as attributes.
    package func homeAssistantOccupancy(_ discovery: HomeAssistantDiscovery, region: Region, name: String?)
        -> [MQTTMessage]
    {
        let node = homeAssistantNode(discovery)
        let object = Self.objectID(region.description)
        let label = name ?? region.description
        let suggested = name.map { #","suggested_area":"\#(Self.escape($0))""# } ?? ""
        let device =
            #"{"identifiers":["beaconwatch_\#(node)_\#(object)"],"name":"\#(Self.escape(label))","manufacturer":"beaconwatch","model":"\#(region.kind.rawValue) occupancy","via_device":"beaconwatch_\#(node)"\#(suggested)}"#
        let availability =
            #""availability_topic":"\#(Self.escape(statusTopic))","payload_available":"online","payload_not_available":"offline""#
        let state = Self.escape(occupancy(region: region, payload: "").topic)
        func config(_ component: String, _ kind: String, _ fields: String) -> MQTTMessage {
            MQTTMessage(
                topic: "\(discovery.prefix)/\(component)/\(node)/\(kind)_\(object)/config",
                payload: "{\(fields),\(availability),\"device\":\(device)}", qos: 1, retain: true)
        }
        return [
            config(
                "binary_sensor", "occupancy",
                #""name":"Occupancy","unique_id":"\#(node)_occupancy_\#(object)","device_class":"occupancy","state_topic":"\#(state)","value_template":"{{ 'ON' if value_json.occupied else 'OFF' }}","payload_on":"ON","payload_off":"OFF","json_attributes_topic":"\#(state)","json_attributes_template":"{{ {'count': value_json.count, 'devices': value_json.devices, 'sensors': value_json.sensors} | tojson }}""#
            ),
            config(
                "sensor", "occupants",
                #""name":"Occupants","unique_id":"\#(node)_occupants_\#(object)","state_topic":"\#(state)","value_template":"{{ value_json.count }}","state_class":"measurement","unit_of_measurement":"people","icon":"mdi:account-group""#
            ),
        ]
    }

    /// Home Assistant's object IDs: letters, digits, `_` and `-`.
    static func objectID(_ text: String) -> String {
        String(text.map { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") ? $0 : "_" })
    }

    static func escape(_ text: String) -> String {
        var bytes: [UInt8] = []
        JSONObjectWriter.appendString(text, to: &bytes)
        return String(decoding: bytes.dropFirst().dropLast(), as: UTF8.self)
    }
}
