import BeaconCore
import Foundation
import RegionMonitor

/// OwnTracks iOS payloads (SPEC 15.1), on `owntracks/<user>/<device>` (location, lwt),
/// `…/event` (transition) and `…/beacon` (ranging).
enum OwnTracks {
    /// The `_type`s OwnTracks sends that beaconwatch has no use for: ignored without a word.
    static let unused: Set<String> = [
        "card", "cmd", "configuration", "encrypted", "request", "status", "steps", "waypoint", "waypoints", "dump",
    ]

    static func parse(rest: [String], payload: some Collection<UInt8>, topic: String) -> Result<
        [FleetObservation]?, FleetError
    > {
        // Our own setWaypoints commands, and what the phone publishes for other tools.
        if let level = rest.first, level != "event", level != "beacon" { return .success(nil) }
        guard case .object(let fields)? = JSONValue.parse(payload) else {
            return .failure(FleetError(topic: topic, "not a JSON object; OwnTracks sends {\"_type\": …}"))
        }
        guard case .string(let type)? = fields["_type"] else {
            return .failure(FleetError(topic: topic, "no \"_type\" string; OwnTracks sends {\"_type\": …}"))
        }
        var time: Timestamp?
        if let value = fields["tst"] {
            guard let seconds = value.integer(in: 0...4_102_444_800),
                let t = Timestamp(secondsSinceEpoch: Double(seconds))
            else {
                return .failure(FleetError(topic: topic, "\"tst\" must be whole seconds since the Unix epoch"))
            }
            time = t
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
            // The user's own circular regions and beacons: not beaconwatch's.
            guard fields["t"]?.string == "b", let desc = fields["desc"]?.string, desc.hasPrefix("bw:") else {
                return .success(nil)
            }
            guard let region = Region(desc.dropFirst(3)) else {
                return .failure(
                    FleetError(topic: topic, "transition: \"desc\" '\(desc.excerpt)' names no region after bw:"))
            }
            return one(.transition(region, entered: event == "enter"))
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
        default:
            if unused.contains(type) { return .success(nil) }
            return .failure(FleetError(topic: topic, "unknown \"_type\" '\(type.excerpt)'"))
        }
    }
}
