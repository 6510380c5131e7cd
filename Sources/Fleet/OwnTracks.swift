import BeaconCore
import Foundation
import JSONText
import RegionMonitor

/// OwnTracks iOS payloads (docs/behaviour.md §15.1), on `owntracks/<user>/<device>` (location, lwt),
/// `…/event` (transition), `…/beacon` (ranging) and `…/waypoints` (the phone's regions), read as
/// the app writes them (docs/owntracks-app.md).
enum OwnTracks {
    /// The `_type`s OwnTracks sends that beaconwatch has no use for: ignored without a word.
    static let unused: Set<String> = [
        "card", "cmd", "configuration", "encrypted", "request", "status", "steps", "dump",
    ]

    /// The topic levels after `owntracks/<user>/<device>` that carry what beaconwatch reads: none
    /// (location, lwt), `event` (transition), `beacon` (ranging), `waypoints` (the phone's answer
    /// to `action: waypoints`), `waypoint` (a region its user made or changed).
    static let levels: Set<String> = ["event", "beacon", "waypoints", "waypoint"]

    static func parse(rest: [String], payload: some Collection<UInt8>, topic: String) -> Result<
        [FleetObservation]?, FleetError
    > {
        // Our own commands (`…/cmd`), and what the phone publishes for other tools.
        if let level = rest.first, !levels.contains(level) { return .success(nil) }
        guard case .object(let fields)? = JSONValue.parse(payload) else {
            return .failure(FleetError(topic: topic, "not a JSON object; OwnTracks sends {\"_type\": …}"))
        }
        guard case .string(let type)? = fields["_type"] else {
            return .failure(FleetError(topic: topic, "no \"_type\" string; OwnTracks sends {\"_type\": …}"))
        }
        func seconds(_ key: String) -> Result<Timestamp?, FleetError> {
            guard let value = fields[key], value != .null else { return .success(nil) }
            guard let seconds = value.number(in: 0...4_102_444_800),
                let time = Timestamp(secondsSinceEpoch: seconds.rounded(.down))
            else {
                return .failure(FleetError(topic: topic, "\"\(key)\" must be seconds since the Unix epoch"))
            }
            return .success(time)
        }
        // When the message was made (the age check, Fleet.maxAge): `created_at`, which the app
        // adds when its last fix is older than a second, else `tst`. A `beacon` message's `tst` is
        // the phone's last fix, often minutes old, and says nothing of when it ranged: never used.
        let time: Timestamp?
        switch (seconds("created_at"), seconds("tst")) {
        case (.failure(let error), _), (_, .failure(let error)): return .failure(error)
        case (.success(let created), .success(let fix)): time = type == "beacon" ? nil : created ?? fix
        }
        func one(_ kind: FleetObservation.Kind) -> Result<[FleetObservation]?, FleetError> {
            .success([FleetObservation(time: time, kind: kind)])
        }
        switch type {
        case "location":
            guard let latitude = fields["lat"]?.number(in: -90...90),
                let longitude = fields["lon"]?.number(in: -180...180)
            else {
                return .failure(FleetError(topic: topic, "location: \"lat\" and \"lon\" must be degrees"))
            }
            var accuracy: Double?
            if let value = fields["acc"], value != .null {
                guard let metres = value.number(in: 0...1e7) else {
                    return .failure(FleetError(topic: topic, "location: \"acc\" must be metres"))
                }
                accuracy = metres
            }
            return one(.position(Position(latitude: latitude, longitude: longitude, accuracy: accuracy)))
        case "lwt":
            return one(.offline)
        case "transition":
            guard case .string(let event)? = fields["event"], event == "enter" || event == "leave" else {
                return .failure(FleetError(topic: topic, "transition: \"event\" must be \"enter\" or \"leave\""))
            }
            // The user's circular regions (`t: "c"`) are not beaconwatch's; a beacon region is
            // matched by its `rid`, else its `desc`, against the hierarchy's (Devices).
            guard fields["t"]?.string == "b" else { return .success(nil) }
            let rid = fields["rid"]?.string
            let desc = fields["desc"]?.string
            guard rid != nil || desc != nil else {
                return .failure(FleetError(topic: topic, "transition: neither \"rid\" nor \"desc\" names the region"))
            }
            return one(.transition(PhoneTransition(rid: rid, desc: desc, entered: event == "enter")))
        case "beacon":
            guard let uuidText = fields["uuid"]?.string, let uuid = UUID(uuidString: uuidText) else {
                return .failure(FleetError(topic: topic, "beacon: \"uuid\" must be a UUID"))
            }
            guard let major = fields["major"]?.integer(in: 0...65535),
                let minor = fields["minor"]?.integer(in: 0...65535)
            else {
                return .failure(FleetError(topic: topic, "beacon: \"major\" and \"minor\" must be 0 to 65535"))
            }
            // iOS says 0 when it could not measure the RSSI: no sighting to range with.
            guard let rssi = fields["rssi"]?.integer(in: -127...0) else {
                return .failure(FleetError(topic: topic, "beacon: \"rssi\" must be dBm from -127 to 0"))
            }
            guard rssi < 0 else { return .success([]) }
            var proximity: Proximity?
            if let value = fields["prox"], value != .null {
                guard let prox = value.integer(in: 0...3) else {
                    return .failure(FleetError(topic: topic, "beacon: \"prox\" must be 0 to 3"))
                }
                proximity = [nil, Proximity.immediate, .near, .far][prox]
            }
            let advertisement = Advertisement(
                format: .ibeacon, beacon: BeaconID(uuid: uuid, major: UInt16(major), minor: UInt16(minor)),
                power: TraceParser.defaultPower, rssi: Int8(rssi), address: nil)
            return one(.sighting(advertisement, phoneProximity: proximity))
        case "waypoints":
            guard case .array(let items)? = fields["waypoints"] else {
                return .failure(FleetError(topic: topic, "waypoints: \"waypoints\" must be a list"))
            }
            guard items.count <= 10_000 else {
                return .failure(FleetError(topic: topic, "waypoints: \(items.count) waypoints are too many"))
            }
            return one(.waypoints(items.compactMap(PhoneWaypoint.init)))
        case "waypoint":
            // Its user made or changed a region: what the phone holds is asked again.
            return one(.waypointChanged)
        default:
            if unused.contains(type) { return .success(nil) }
            return .failure(FleetError(topic: topic, "unknown \"_type\" '\(type.excerpt)'"))
        }
    }
}

/// An OwnTracks `transition` of a beacon region (`t: "b"`): the phone's iOS entered or left the
/// region it holds under `rid` (named `desc`).
package struct PhoneTransition: Sendable, Hashable {
    package var rid: String?
    package var desc: String?
    package var entered: Bool

    package init(rid: String?, desc: String?, entered: Bool) {
        self.rid = rid
        self.desc = desc
        self.entered = entered
    }
}

/// One waypoint of an OwnTracks phone's list (its answer to `action: waypoints`), as the app
/// writes it (`regionAsJSON`): what matters is whether iOS monitors it, and whose it is.
package struct PhoneWaypoint: Sendable, Hashable {
    package var rid: String?
    package var name: String
    /// iOS monitors it: a circle (`rad` > 0) or a beacon region (a UUID in `desc`), with a name
    /// (the app's `Region.CLregion`).
    package var monitored: Bool

    package init(rid: String?, name: String, monitored: Bool) {
        self.rid = rid
        self.name = name
        self.monitored = monitored
    }

    /// A waypoint object of the list; `nil` for anything else (skipped, as the app skips it).
    init?(_ value: JSONValue) {
        guard case .object(let fields) = value, let desc = fields["desc"]?.string else { return nil }
        let parts = desc.split(separator: ":", omittingEmptySubsequences: false)
        name = parts.first.map(String.init) ?? ""
        rid = fields["rid"]?.string
        let radius = fields["rad"]?.number(in: -1e9...1e9) ?? 0
        let beacon = parts.count >= 2 && UUID(uuidString: String(parts[1])) != nil
        monitored = !name.isEmpty && (radius > 0 || beacon)
    }
}
