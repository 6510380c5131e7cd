import BeaconCore
import Foundation
import JSONText

/// Who the monitor reports for: HSYCO's `session`, `address` and `userid`, resolved at start.
package struct MonitorIdentity: Sendable, Hashable {
    package var session: String
    package var address: String
    package var userid: String

    package init(session: String, address: String, userid: String) {
        self.session = session
        self.address = address
        self.userid = userid
    }
}

/// A change of the monitored set (docs/behaviour.md §5.2): the `monitoring` output.
package struct MonitoringChange: Sendable, Hashable {
    package enum Mode: String, Sendable, Hashable {
        case areas, zones, beacons
    }

    package var mode: Mode
    /// The Area whose Zones are monitored (hierarchical plan), else `nil`.
    package var area: UUID?
    /// The monitored regions, in file order.
    package var regions: [Region]

    package init(mode: Mode, area: UUID?, regions: [Region]) {
        self.mode = mode
        self.area = area
        self.regions = regions
    }
}

/// An `enter` or `exit` of a region (docs/behaviour.md §5.3).
package struct Transition: Sendable, Hashable {
    package enum Direction: String, Sendable, Hashable {
        case enter, exit
    }

    package enum How: String, Sendable, Hashable {
        /// The region itself is monitored.
        case monitored
        /// An Area or Zone containing a monitored region.
        case derived
    }

    package var direction: Direction
    package var region: Region
    package var name: String?
    package var how: How
    /// Seconds of the visit, on `exit`.
    package var dwell: Double?
    /// Seconds inside the region this local day (`Monitor.timezone`), this visit included, on the
    /// `exit` of an Area or Zone (docs/behaviour.md §9.3).
    package var dwellToday: Double?
    /// Under `Monitor.exitTimeout = auto`, the silence (seconds) after which a monitored region
    /// exited (docs/behaviour.md §18).
    package var timeout: Double?

    package init(
        direction: Direction, region: Region, name: String?, how: How, dwell: Double? = nil, dwellToday: Double? = nil
    ) {
        self.direction = direction
        self.region = region
        self.name = name
        self.how = how
        self.dwell = dwell
        self.dwellToday = dwellToday
    }
}

/// A beacon's reported proximity changed (docs/behaviour.md §6): the six HSYCO callback fields, then the rest.
package struct LocationBeaconEvent: Sendable, Hashable {
    package var session: String
    package var address: String
    package var userid: String
    /// The beacon's Location ID (HSYCO passes it as `zone`).
    package var zone: String
    package var distance: Proximity
    package var background: Bool
    package var beacon: BeaconID
    package var name: String?
    /// The Area's name, else its canonical region.
    package var area: String
    /// The Zone's name, else its canonical region.
    package var zoneName: String
    /// The filtered RSSI, dBm; `nil` for `off`.
    package var rssi: Double?
    /// The distance estimate, metres; `nil` for `off`.
    package var meters: Double?
    /// The class the device's own operating system gave the beacon (an OwnTracks phone's `prox`,
    /// docs/behaviour.md §15.1); `nil` for other devices, and then not in the JSON.
    package var phoneProximity: Proximity?

    package init(
        session: String, address: String, userid: String, zone: String, distance: Proximity, background: Bool,
        beacon: BeaconID, name: String?, area: String, zoneName: String, rssi: Double?, meters: Double?
    ) {
        self.session = session
        self.address = address
        self.userid = userid
        self.zone = zone
        self.distance = distance
        self.background = background
        self.beacon = beacon
        self.name = name
        self.area = area
        self.zoneName = zoneName
        self.rssi = rssi
        self.meters = meters
    }
}

/// The nearest beacon changed (docs/behaviour.md §9.2): its Location ID, or `nil` when none is heard.
package struct NearestChange: Sendable, Hashable {
    package var locationID: String?
    package var name: String?

    package init(locationID: String?, name: String? = nil) {
        self.locationID = locationID
        self.name = name
    }
}

/// What the engine says (the monitor, and the rules on its transitions), stamped with the
/// instant it happened.
package enum MonitorOutput: Sendable, Hashable {
    case monitoring(Timestamp, MonitoringChange)
    case transition(Timestamp, Transition)
    case location(Timestamp, LocationBeaconEvent)
    case rule(Timestamp, RuleEvaluation)
    case server(Timestamp, ServerNotice)
    case notification(Timestamp, UserNotification)
    case nearest(Timestamp, NearestChange)
    case alert(Timestamp, AlertChange)
    /// A geofence's `enter` or `exit` (docs/behaviour.md §17).
    case geofence(Timestamp, GeofenceTransition)
    /// Where a tag is on a floor with a plan (docs/behaviour.md §20).
    case position(Timestamp, PositionReport)
    /// A training session ended (docs/behaviour.md §22).
    case learned(Timestamp, LearnedReport)
    /// A Zone's or Area's occupancy changed (docs/behaviour.md §23).
    case occupancy(Timestamp, OccupancyChange)

    package var time: Timestamp {
        switch self {
        case .monitoring(let time, _), .transition(let time, _), .location(let time, _), .rule(let time, _),
            .server(let time, _), .notification(let time, _), .nearest(let time, _), .alert(let time, _),
            .geofence(let time, _), .position(let time, _), .learned(let time, _), .occupancy(let time, _):
            time
        }
    }

    /// The output type of docs/behaviour.md §10: `monitoring`, `enter`, `exit`, `location`, `rule`, `server`,
    /// `notification`, `nearest` or `alert`.
    package var type: String {
        switch self {
        case .monitoring: "monitoring"
        case .transition(_, let transition): transition.direction.rawValue
        case .geofence(_, let transition): transition.direction.rawValue
        case .location: "location"
        case .rule: "rule"
        case .server: "server"
        case .notification: "notification"
        case .nearest: "nearest"
        case .position: "position"
        case .learned: "learned"
        case .occupancy: "occupancy"
        case .alert: "alert"
        }
    }

    /// The output as one JSON object (docs/behaviour.md §10), `t` and `type` first.
    package var json: String { json(device: nil) }

    /// The output of fleet device `device` (docs/behaviour.md §15): `"device"` follows `type`; without one,
    /// exactly ``json``.
    package func json(device: String?) -> String {
        var object = JSONObjectWriter()
        object.add("t", time.iso8601)
        object.add("type", type)
        if let device { object.add("device", device) }
        switch self {
        case .monitoring(_, let change):
            object.add("mode", change.mode.rawValue)
            object.add("area", change.area?.text)
            var list: [UInt8] = [UInt8(ascii: "[")]
            for (index, region) in change.regions.enumerated() {
                if index > 0 { list.append(UInt8(ascii: ",")) }
                JSONObjectWriter.appendString(region.description, to: &list)
            }
            list.append(UInt8(ascii: "]"))
            object.add("regions", rawJSON: String(decoding: list, as: UTF8.self))
        case .transition(_, let transition):
            object.add("region", transition.region.description)
            object.add("kind", transition.region.kind.rawValue)
            object.add("name", transition.name)
            object.add("how", transition.how.rawValue)
            if let dwell = transition.dwell { object.add("dwell", dwell) }
            if let today = transition.dwellToday { object.add("dwellToday", today) }
            if let timeout = transition.timeout { object.add("timeout", timeout) }
        case .geofence(_, let transition):
            object.add("region", transition.id)
            object.add("kind", "geofence")
            object.add("name", transition.name)
            object.add("how", "monitored")
            object.add("distance", transition.distance)
            if let dwell = transition.dwell { object.add("dwell", dwell) }
            if let today = transition.dwellToday { object.add("dwellToday", today) }
        case .location(_, let event):
            object.add("session", event.session)
            object.add("address", event.address)
            object.add("userid", event.userid)
            object.add("zone", event.zone)
            object.add("distance", event.distance.rawValue)
            object.add("background", event.background)
            object.add("uuid", event.beacon.uuid.text)
            object.add("major", Int(event.beacon.major))
            object.add("minor", Int(event.beacon.minor))
            object.add("name", event.name)
            object.add("area", event.area)
            object.add("zoneName", event.zoneName)
            object.add("rssi", event.rssi)
            object.add("meters", event.meters)
            if let phone = event.phoneProximity { object.add("phoneProximity", phone.rawValue) }
        case .rule(_, let evaluation):
            object.add("region", evaluation.region)
            if evaluation.geofence { object.add("kind", "geofence") }
            object.add("rule", evaluation.rule)
            object.add("trigger", evaluation.trigger)
            object.add("fired", evaluation.fired)
            if let reason = evaluation.reason { object.add("reason", reason.rawValue) }
            if let detail = evaluation.detail { object.add("detail", detail) }
            object.add("count", evaluation.count)
            if let groupCount = evaluation.groupCount { object.add("groupCount", groupCount) }
        case .server(_, let notice):
            object.add("region", notice.region)
            if notice.geofence { object.add("kind", "geofence") }
            object.add("rule", notice.rule)
            object.add("url", notice.url)
        case .notification(_, let notification):
            object.add("region", notification.region)
            if notification.geofence { object.add("kind", "geofence") }
            object.add("rule", notification.rule)
            object.add("title", notification.title)
            object.add("body", notification.body)
            object.add("payload", rawJSON: notification.payload?.jsonText ?? "null")
            object.add("url", notification.url)
            object.add("pbk", notification.pbk)
            object.add("delivery", notification.delivery.rawValue)
        case .nearest(_, let change):
            object.add("id", change.locationID)
            object.add("name", change.name)
        case .position(_, let report):
            object.add("area", report.area.description)
            object.add("x", report.x)
            object.add("y", report.y)
            object.add("error", report.error)
            object.add("room", report.room?.description)
            object.add("confidence", report.confidence)
        case .learned(_, let report):
            object.add("room", report.room.description)
            object.add("name", report.name)
            object.add("samples", report.samples)
            object.add("scanners", report.scanners)
            if report.stopped { object.add("stopped", true) }
        case .occupancy(_, let change):
            object.add("region", change.region.description)
            object.add("kind", change.region.kind.rawValue)
            object.add("name", change.name)
            object.add("occupied", change.occupied)
            object.add("count", change.count)
            object.add("devices", rawJSON: JSONValue.array(change.devices.map(JSONValue.string)).jsonText)
            var sensors = JSONObjectWriter()
            for (id, state) in change.sensors.sorted(by: { $0.key < $1.key }) {
                switch state {
                case .detected(let value): sensors.add(id, value)
                case .count(let people): sensors.add(id, people)
                case .none, .offline: sensors.add(id, rawJSON: "null")
                }
            }
            object.add("sensors", rawJSON: sensors.text)
        case .alert(_, let change):
            object.add("action", change.action.rawValue)
            object.add("id", change.locationID)
            object.add("title", change.title)
            object.add("alertAction", change.alertAction)
        }
        return object.text
    }
}

/// A configured beacon's *computed* class changed (docs/behaviour.md §4): what rules with `maximum_proximity`
/// and alerts see, whatever is reported. In `background` mode a LocationBeaconEvent reports a
/// class only inside a ranging window; this is every change, window or not (docs/behaviour.md §7.2, §9.1).
package struct ProximityChange: Sendable, Hashable {
    package var time: Timestamp
    package var beacon: BeaconID
    package var locationID: String
    package var proximity: Proximity
    /// The estimated distance, rounded to the centimetre; `nil` when `off`.
    package var meters: Double?

    package init(time: Timestamp, beacon: BeaconID, locationID: String, proximity: Proximity, meters: Double?) {
        self.time = time
        self.beacon = beacon
        self.locationID = locationID
        self.proximity = proximity
        self.meters = meters
    }
}
