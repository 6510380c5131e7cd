import BeaconCore
import JSONText
import RegionMonitor

extension TopicTree {
    /// Home Assistant MQTT discovery (retained, under `MQTT.discoveryPrefix`): a `device_tracker`
    /// for the user whose state is the current Area's name (`not_home` for `none`), sensors for the
    /// current Zone, the nearest beacon and each beacon's class, all available while `B/status`
    /// says `online`.
    package func homeAssistantDiscovery(prefix: String, userid: String, hierarchy: Hierarchy) -> [MQTTMessage] {
        let node = Self.objectID(base)
        let device =
            #"{"identifiers":["beaconwatch_\#(node)"],"name":"beaconwatch \#(Self.escape(userid))","manufacturer":"beaconwatch","model":"iBeacon presence"}"#
        let availability =
            #""availability_topic":"\#(Self.escape(statusTopic))","payload_available":"online","payload_not_available":"offline""#
        func config(_ component: String, _ object: String, _ fields: String) -> MQTTMessage {
            MQTTMessage(
                topic: "\(prefix)/\(component)/\(node)/\(object)/config",
                payload: "{\(fields),\(availability),\"device\":\(device)}",
                qos: 1,
                retain: true
            )
        }
        var messages = [
            config(
                "device_tracker", "location",
                #""name":"\#(Self.escape(userid))","unique_id":"\#(node)_location","state_topic":"\#(Self.escape(base))/area","payload_not_home":"none","source_type":"bluetooth_le""#
            ),
            config(
                "sensor", "zone",
                #""name":"Zone","unique_id":"\#(node)_zone","state_topic":"\#(Self.escape(base))/zone","icon":"mdi:map-marker""#
            ),
            config(
                "sensor", "nearest",
                #""name":"Nearest beacon","unique_id":"\#(node)_nearest","state_topic":"\#(Self.escape(base))/nearest","icon":"mdi:bluetooth""#
            ),
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

    /// Home Assistant discovery for a fleet device (docs/behaviour.md §15), whose topics these are: a
    /// `device_tracker` (state: its Area, `not_home` for `none`) and sensors for its Zone and
    /// nearest beacon, available while the `daemon`'s status says `online`, and shown as a device
    /// connected through the daemon's. A `tag` (heard by fixed scanners, docs/rooms.md) has its Zone
    /// sensor named "Room" and its model "tag"; the object IDs are the same either way. A tag on a
    /// floor plan (`positioned`, docs/behaviour.md §20) has its tracker carry `x`, `y` and
    /// `confidence` as attributes, from `B/position`.
    package func homeAssistantDevice(
        prefix: String, name: String, daemon: TopicTree, tag: Bool = false, positioned: Bool = false
    ) -> [MQTTMessage] {
        let node = Self.objectID(base)
        let availabilityTopic = daemon.statusTopic
        let model = tag ? "tag" : "fleet device"
        let device =
            #"{"identifiers":["beaconwatch_\#(node)"],"name":"\#(Self.escape(name))","manufacturer":"beaconwatch","model":"\#(model)","via_device":"beaconwatch_\#(Self.objectID(daemon.base))"}"#
        let availability =
            #""availability_topic":"\#(Self.escape(availabilityTopic))","payload_available":"online","payload_not_available":"offline""#
        func config(_ component: String, _ object: String, _ fields: String) -> MQTTMessage {
            MQTTMessage(
                topic: "\(prefix)/\(component)/\(node)/\(object)/config",
                payload: "{\(fields),\(availability),\"device\":\(device)}", qos: 1, retain: true)
        }
        // Home Assistant's MQTT device_tracker takes attributes from a JSON topic
        // (`json_attributes_topic`, `json_attributes_template`).
        let attributes =
            positioned
            ? #","json_attributes_topic":"\#(Self.escape(base))/position","json_attributes_template":"{{ {'x': value_json.x, 'y': value_json.y, 'confidence': value_json.confidence} | tojson }}""#
            : ""
        return [
            config(
                "device_tracker", "location",
                #""name":"\#(Self.escape(name))","unique_id":"\#(node)_location","state_topic":"\#(Self.escape(base))/area","payload_not_home":"none","source_type":"bluetooth_le""#
                    + attributes
            ),
            config(
                "sensor", "zone",
                #""name":"\#(tag ? "Room" : "Zone")","unique_id":"\#(node)_zone","state_topic":"\#(Self.escape(base))/zone","icon":"mdi:map-marker""#
            ),
            config(
                "sensor", "nearest",
                #""name":"Nearest beacon","unique_id":"\#(node)_nearest","state_topic":"\#(Self.escape(base))/nearest","icon":"mdi:bluetooth""#
            ),
        ]
    }

    /// Home Assistant discovery for a region's occupancy (docs/behaviour.md §23, docs/mqtt.md): a
    /// `binary_sensor` (device class `occupancy`) and a count `sensor` (state class `measurement`,
    /// unit `people`), both reading the retained `MQTT.topic/occupancy/<region>` JSON through value
    /// templates, available while this daemon's `B/status` says `online`. Each region is a device
    /// of its own, connected through the daemon's, and suggests its name as Home Assistant's area
    /// (a region without a name suggests none). The binary sensor carries the count, the devices
    /// inside and the sensors' states as attributes.
    package func homeAssistantOccupancy(prefix: String, region: Region, name: String?) -> [MQTTMessage] {
        let node = Self.objectID(base)
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
                topic: "\(prefix)/\(component)/\(node)/\(kind)_\(object)/config",
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
