import BeaconCore
import RegionMonitor

/// One message to publish.
package struct MQTTMessage: Sendable, Hashable {
    package var topic: String
    package var payload: String
    package var qos: Int32
    package var retain: Bool

    package init(topic: String, payload: String, qos: Int32, retain: Bool) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
    }
}

/// The topics and payloads of docs/behaviour.md §10.1 under `B = MQTT.topic/userid`: pure, so that the mapping
/// of every output to its messages is tested without a broker.
package struct TopicTree: Sendable, Hashable {
    /// `MQTT.topic/userid`.
    package let base: String
    /// `MQTT.topic`: the building's own topics (`MQTT.topic/occupancy/<region>`) are under it.
    package let root: String
    /// `MQTT.qos`, for events.
    package let qos: Int32
    /// The fleet device whose topics these are (docs/behaviour.md §15): its events' payloads carry `"device"`.
    package let device: String?

    package init(topic: String, userid: String, qos: Int32, device: String? = nil) {
        base = "\(topic)/\(userid)"
        root = topic
        self.qos = qos
        self.device = device
    }

    package var statusTopic: String { "\(base)/status" }

    /// `B/cmd/+`: the commands the daemon takes.
    package var commandFilter: String { "\(base)/cmd/+" }

    /// The command name of a message on `B/cmd/<name>`; `nil` for any other topic.
    package func commandName(topic: String) -> String? {
        let prefix = "\(base)/cmd/"
        guard topic.hasPrefix(prefix) else { return nil }
        return String(topic.dropFirst(prefix.count))
    }

    /// `B/status`: `online`, or `offline` (also the will).
    package func status(online: Bool) -> MQTTMessage {
        MQTTMessage(topic: statusTopic, payload: online ? "online" : "offline", qos: 1, retain: true)
    }

    /// The messages one output makes: its event (not retained) and the retained state it changes.
    package func messages(for output: MonitorOutput) -> [MQTTMessage] {
        (event(for: output).map { [$0] } ?? []) + retained(for: output)
    }

    /// The event an output publishes (`B/event`, `B/transition`, `B/rule`, `B/server`,
    /// `B/notification`, `B/alert`, `B/learned`, `B/occupancy`), if any: what goes through the outbox.
    package func event(for output: MonitorOutput) -> MQTTMessage? {
        let topic: String
        switch output {
        case .location: topic = "event"
        case .transition, .geofence: topic = "transition"
        case .rule, .server, .notification, .alert, .learned, .occupancy: topic = output.type
        case .monitoring, .nearest, .position: return nil
        }
        return MQTTMessage(topic: "\(base)/\(topic)", payload: output.json(device: device), qos: qos, retain: false)
    }

    /// The retained state an output changes (`B/beacon/<id>`, `B/monitoring`, `B/dwell/<region>`,
    /// `B/position`);
    /// `B/area`, `B/zone` and `B/nearest` follow the state after each step (``current(area:zone:nearest:)``).
    package func retained(for output: MonitorOutput) -> [MQTTMessage] {
        switch output {
        case .location(_, let event): [beacon(event.zone, event.distance)]
        case .transition(_, let transition):
            if transition.direction == .exit, let today = transition.dwellToday {
                [dwell(region: transition.region.description, seconds: today)]
            } else {
                []
            }
        case .geofence(_, let transition):
            if transition.direction == .exit, let today = transition.dwellToday {
                [dwell(region: Geofence.dwellKey(id: transition.id), seconds: today)]
            } else {
                []
            }
        case .rule, .server, .notification, .alert, .nearest, .learned: []
        case .monitoring:
            [MQTTMessage(topic: "\(base)/monitoring", payload: output.json(device: device), qos: 1, retain: true)]
        case .occupancy(_, let change):
            // A region's occupancy, the latest object (docs/behaviour.md §23).
            [occupancy(region: change.region, payload: output.json)]
        case .position:
            // Where a tag is on its floor (docs/behaviour.md §20): state, not an event.
            [MQTTMessage(topic: "\(base)/position", payload: output.json(device: device), qos: 1, retain: true)]
        }
    }

    /// `MQTT.topic/occupancy/<region>`: a region's latest `occupancy` output, retained.
    package func occupancy(region: Region, payload: String) -> MQTTMessage {
        MQTTMessage(topic: "\(root)/occupancy/\(region.description)", payload: payload, qos: 1, retain: true)
    }

    /// `B/geofence`: the labels (name, else id) of the geofences inside, comma-separated in
    /// document order, or `none` (docs/behaviour.md §17).
    package func geofences(_ labels: [String]) -> MQTTMessage {
        MQTTMessage(
            topic: "\(base)/geofence", payload: labels.isEmpty ? "none" : labels.joined(separator: ","), qos: 1,
            retain: true)
    }

    /// `B/beacon/<id>`: the class last reported for the beacon with that Location ID.
    package func beacon(_ locationID: String, _ proximity: Proximity) -> MQTTMessage {
        MQTTMessage(topic: "\(base)/beacon/\(locationID)", payload: proximity.rawValue, qos: 1, retain: true)
    }

    /// `B/dwell/<region>`: the seconds inside `region` (canonical) today.
    package func dwell(region: String, seconds: Double) -> MQTTMessage {
        MQTTMessage(topic: "\(base)/dwell/\(region)", payload: Self.seconds(seconds), qos: 1, retain: true)
    }

    /// Seconds as the retained dwell payload: a plain number, to the millisecond.
    static func seconds(_ value: Double) -> String {
        let rounded = (value * 1000).rounded() / 1000
        return rounded == rounded.rounded() ? String(Int64(rounded)) : String(rounded)
    }

    /// `B/area`, `B/zone` and `B/nearest`: the current Area's and Zone's name (else canonical
    /// region) and the nearest beacon's Location ID, or `none`.
    package func current(area: String?, zone: String?, nearest: String?) -> [MQTTMessage] {
        [
            MQTTMessage(topic: "\(base)/area", payload: area ?? "none", qos: 1, retain: true),
            MQTTMessage(topic: "\(base)/zone", payload: zone ?? "none", qos: 1, retain: true),
            MQTTMessage(topic: "\(base)/nearest", payload: nearest ?? "none", qos: 1, retain: true),
        ]
    }
}
