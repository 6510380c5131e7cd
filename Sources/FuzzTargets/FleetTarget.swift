import BeaconCore
import BeaconConfiguration
import Fleet

/// A fleet message (docs/behaviour.md §15): the first byte picks the source (OwnTracks, Theengs, forward), then
/// the topic up to the first NUL, then the payload.
enum FleetTarget {
    static let filters: [(FleetSource, TopicFilter?)] = [
        (.owntracks, TopicFilter("owntracks/+/+")), (.theengs, TopicFilter("home/+/BTtoMQTT/#")),
        (.forward, TopicFilter("beaconwatch/+/sightings")),
    ]

    static func run(_ bytes: [UInt8]) {
        guard let (pick, topic, payload) = MessageBytes.split(bytes) else { return }
        let (source, filter) = filters[pick % filters.count]
        guard let filter else { preconditionFailure("a fuzz target's own filter does not parse") }
        switch FleetMessage.parse(source: source, filter: filter, topic: topic, payload: payload) {
        case .failure(let error):
            Message.check(error.description)
        case .success(let message?):
            precondition(DeviceDeclaration.isValidID(message.device), "device id \(message.device.debugDescription)")
            for observation in message.observations {
                switch observation.kind {
                case .sighting(let advertisement, _):
                    // A trace line may carry any RSSI but 127 ("not available"); phones and
                    // gateways give negative ones only.
                    precondition(
                        advertisement.rssi != 127 && (message.source == .forward || advertisement.rssi < 0),
                        "a sighting with RSSI \(advertisement.rssi)")
                case .position(let position):
                    precondition(abs(position.latitude) <= 90 && abs(position.longitude) <= 180, "\(position)")
                case .hci(let event):
                    var decoder = AdvertisingReportDecoder()
                    decoder.decode(event: event) { _ in }
                case .transition(let transition):
                    precondition(transition.rid != nil || transition.desc != nil, "a transition naming nothing")
                case .waypoints(let list):
                    precondition(list.count <= 10_000, "\(list.count) waypoints")
                case .offline, .waypointChanged:
                    break
                }
            }
        case .success(nil):
            break
        }
    }
}

/// An MQTT message as a fuzz target's bytes: the first byte picks a source, the topic runs to the
/// first NUL, the payload is the rest.
enum MessageBytes {
    static func split(_ bytes: [UInt8]) -> (pick: Int, topic: String, payload: ArraySlice<UInt8>)? {
        guard let first = bytes.first else { return nil }
        let rest = bytes.dropFirst()
        let cut = rest.firstIndex(of: 0) ?? rest.endIndex
        return (Int(first), String(decoding: rest[..<cut], as: UTF8.self), rest[min(cut + 1, rest.endIndex)...])
    }
}
