import BeaconCore
import Foundation
import JSONText

/// Theengs Gateway / OpenMQTTGateway iBeacon reports (docs/behaviour.md §15): `{"id": MAC, "mfid": "4c00",
/// "uuid": 32 or 36 hex, "major", "minor", "txpower" or "power", "rssi"}`. A gateway reports every
/// Bluetooth device it hears; what is not an iBeacon is ignored without a word.
enum Theengs {
    static func parse(_ payload: some Collection<UInt8>, topic: String) -> Result<[FleetObservation]?, FleetError> {
        guard case .object(let fields)? = JSONValue.parse(payload) else {
            return .failure(FleetError(topic: topic, "not a JSON object; a gateway sends {\"id\": …, \"rssi\": …}"))
        }
        // Apple's company id, and a UUID: an iBeacon. Anything else is another device.
        guard fields["mfid"]?.string?.lowercased() == "4c00", let uuidValue = fields["uuid"] else {
            return .success(nil)
        }
        guard let uuidText = uuidValue.string, let uuid = uuid(uuidText) else {
            return .failure(FleetError(topic: topic, "\"uuid\" must be 32 hex digits, with or without dashes"))
        }
        guard let major = fields["major"]?.integer(in: 0...65535), let minor = fields["minor"]?.integer(in: 0...65535)
        else {
            return .failure(FleetError(topic: topic, "\"major\" and \"minor\" must be 0 to 65535"))
        }
        guard let rssi = fields["rssi"]?.integer(in: -127...(-1)) else {
            return .failure(FleetError(topic: topic, "\"rssi\" must be dBm from -127 to -1"))
        }
        var power = Int(TraceParser.defaultPower)
        if let value = fields["txpower"] ?? fields["power"], value != .null {
            guard let given = value.integer(in: -128...20) else {
                return .failure(FleetError(topic: topic, "\"txpower\" must be dBm from -128 to 20"))
            }
            power = given
        }
        let address = fields["id"]?.string.flatMap(BluetoothAddress.init)
        let advertisement = Advertisement(
            format: .ibeacon, beacon: BeaconID(uuid: uuid, major: UInt16(major), minor: UInt16(minor)),
            power: Int8(power), rssi: Int8(rssi), address: address)
        return .success([FleetObservation(time: nil, kind: .sighting(advertisement, phoneProximity: nil))])
    }

    /// A UUID written with or without dashes, in either case.
    static func uuid(_ text: String) -> UUID? {
        if text.utf8.count == 36 { return UUID(uuidString: text) }
        guard text.utf8.count == 32, Hex.decode(text) != nil else { return nil }
        var dashed = ""
        for (index, character) in text.enumerated() {
            if [8, 12, 16, 20].contains(index) { dashed.append("-") }
            dashed.append(character)
        }
        return UUID(uuidString: dashed)
    }
}

/// `beaconwatch forward` messages (docs/behaviour.md §15): one or more trace lines (3.3), sightings or HCI
/// events, in time order. A message with a bad line is refused whole, naming the line.
enum Forward {
    static func parse(_ payload: some Collection<UInt8>, topic: String) -> Result<[FleetObservation]?, FleetError> {
        var parser = TraceParser()
        var observations: [FleetObservation] = []
        let lines = Array(payload).split(separator: 0x0A, omittingEmptySubsequences: false)
        for (index, line) in lines.enumerated() {
            switch parser.parse(line, number: index + 1) {
            case .success(nil):
                continue
            case .success((let time, .sighting(let advertisement))?):
                observations.append(FleetObservation(time: time, kind: .sighting(advertisement, phoneProximity: nil)))
            case .success((let time, .hci(let bytes))?):
                observations.append(FleetObservation(time: time, kind: .hci(bytes)))
            case .success((let time, .position(let position))?):
                observations.append(FleetObservation(time: time, kind: .position(position)))
            case .success((_, .mode)?), .success((_, .command)?), .success((_, .report)?), .success((_, .learn)?),
                .success((_, .sensor)?):
                return .failure(
                    FleetError(topic: topic, "line \(index + 1): a forward node sends sightings and positions only"))
            case .failure(let error):
                return .failure(FleetError(topic: topic, "line \(index + 1): \(error)"))
            }
        }
        return .success(observations)
    }
}
