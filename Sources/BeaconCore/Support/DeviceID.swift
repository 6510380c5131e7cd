/// Which device something belongs to: the daemon's own radio, or a fleet device (a phone, a
/// tracker, a node, a tag) by its id (docs/fleet.md).
///
/// The own radio is a device like any other in the table of devices, the state database and
/// the sinks; only what it is named by differs: its outputs carry no `"device"` and its topics
/// are the daemon's own (`MQTT.topic/<Monitor.userid>`), where a fleet device's carry its id.
package enum DeviceID: Hashable, Sendable, CustomStringConvertible {
    /// The daemon's own radio.
    case own
    /// The fleet device with this id.
    case fleet(String)

    /// The fleet device's id; `nil` for the own radio.
    package var fleetID: String? {
        switch self {
        case .own: nil
        case .fleet(let id): id
        }
    }

    package var description: String {
        switch self {
        case .own: "the own radio"
        case .fleet(let id): id
        }
    }
}
