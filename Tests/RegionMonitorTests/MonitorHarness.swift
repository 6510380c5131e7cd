import BeaconCore
import Foundation
import RegionMonitor

/// Drives a ``Monitor`` with sightings at times given in seconds after an epoch, and renders its
/// outputs as short lines that tests compare whole:
///
///     "0.000 monitoring beacons - [A1:1:1 A1:1:2]"
///     "0.000 enter A1 area derived"
///     "15.000 exit A1:1:1 beacon monitored dwell 15.0"
///     "0.000 location 101 near fg"
///
/// Regions are written `A<n>[:major[:minor]]` where `n` is the Area's UUID number (see ``uuid(_:)``).
struct MonitorHarness {
    static let epoch = 1_700_000_000.0

    var monitor: Monitor
    var outputs: [MonitorOutput] = []
    /// How many outputs ``take()`` has already returned.
    private var taken = 0

    /// A hierarchy from `"id=area,major,minor"` specs, in file order.
    init(
        _ beacons: [String],
        restored: [String: Proximity] = [:],
        restoredNearest: String? = nil,
        configure: (inout MonitorSettings) -> Void = { _ in }
    ) {
        self.init(
            hierarchy: Self.hierarchy(beacons), restored: restored, restoredNearest: restoredNearest,
            configure: configure)
    }

    init(
        hierarchy: Hierarchy, restored: [String: Proximity] = [:], restoredNearest: String? = nil,
        configure: (inout MonitorSettings) -> Void = { _ in }
    ) {
        var settings = MonitorSettings()
        settings.mode = .foreground
        configure(&settings)
        monitor = Monitor(
            hierarchy: hierarchy,
            settings: settings,
            identity: MonitorIdentity(session: "s", address: "10.0.0.1", userid: "u"),
            restored: restored,
            restoredNearest: restoredNearest
        )
    }

    static func uuid(_ number: Int) -> UUID {
        UUID(uuidString: String(format: "00000000-0000-0000-0000-%012d", number))!
    }

    static func hierarchy(_ specs: [String]) -> Hierarchy {
        Hierarchy(
            beacons: specs.map { spec in
                let parts = spec.split(separator: "=")
                let numbers = parts[1].split(separator: ",").map { Int($0)! }
                return Hierarchy.Beacon(
                    locationID: String(parts[0]),
                    id: BeaconID(uuid: uuid(numbers[0]), major: UInt16(numbers[1]), minor: UInt16(numbers[2]))
                )
            }
        )
    }

    static func time(_ seconds: Double) -> Timestamp { Timestamp(secondsSinceEpoch: epoch + seconds)! }

    mutating func start(at seconds: Double = 0) {
        monitor.start(at: Self.time(seconds), into: &outputs)
    }

    /// A sighting of the beacon with that Location ID.
    mutating func see(_ locationID: String, at seconds: Double, rssi: Int8 = -59, power: Int8 = -59) {
        let beacon = monitor.hierarchy.beacons[monitor.hierarchy.index(ofLocation: locationID)!]
        let advertisement = Advertisement(format: .ibeacon, beacon: beacon.id, power: power, rssi: rssi, address: nil)
        monitor.sighting(advertisement, at: Self.time(seconds), into: &outputs)
    }

    mutating func advance(to seconds: Double) {
        monitor.advance(to: Self.time(seconds), into: &outputs)
    }

    mutating func setMode(_ mode: RangingMode, at seconds: Double) {
        monitor.setMode(mode, at: Self.time(seconds), into: &outputs)
    }

    /// Runs the clock on until nothing is pending, as replay does at the end of input.
    mutating func drain() {
        while let due = monitor.nextDeadline { monitor.advance(to: due, into: &outputs) }
    }

    /// The outputs since the last call, as lines, optionally only those of some types (`nearest`
    /// only when asked for: its tests are its own).
    mutating func take(_ types: Set<String>? = nil) -> [String] {
        let new = outputs[taken...]
        taken = outputs.count
        return new.filter { types?.contains($0.type) ?? ($0.type != "nearest") }.map(Self.line)
    }

    static func label(_ region: Region) -> String {
        let area = "A\(Int(region.uuid.uuidString.suffix(12))!)"
        switch region {
        case .area: return area
        case .zone(_, let major): return "\(area):\(major)"
        case .beacon(let id): return "\(area):\(id.major):\(id.minor)"
        }
    }

    static func line(_ output: MonitorOutput) -> String {
        let seconds = String(format: "%.3f", output.time.secondsSinceEpoch - epoch)
        switch output {
        case .monitoring(_, let change):
            let area = change.area.map { label(.area($0)) } ?? "-"
            return
                "\(seconds) monitoring \(change.mode.rawValue) \(area) [\(change.regions.map(label).joined(separator: " "))]"
        case .transition(_, let transition):
            var text =
                "\(seconds) \(transition.direction.rawValue) \(label(transition.region)) "
                + "\(transition.region.kind.rawValue) \(transition.how.rawValue)"
            if let dwell = transition.dwell { text += " dwell \(dwell)" }
            return text
        case .location(_, let event):
            return "\(seconds) location \(event.zone) \(event.distance.rawValue) \(event.background ? "bg" : "fg")"
        case .nearest(_, let change):
            return "\(seconds) nearest \(change.locationID ?? "none")"
        case .rule, .server, .notification, .alert, .geofence, .position, .learned, .occupancy:
            return "\(seconds) \(output.json)"
        }
    }
}
