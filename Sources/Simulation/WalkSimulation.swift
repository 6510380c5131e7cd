import BeaconCore
import Foundation
import RegionMonitor

/// A walk through a configured building: where the walker stops, for how long, and how long the
/// way to the next stop takes. Read from a plan file, one stop a line:
///
///     # where            stay (s)   walk to the next (s)
///     Reception          60         5
///     17091              120        10
///     ACFD165E-C0C0-11E3-9BBE-1A514932AC01:3   30
///
/// `where` is a Location ID (standing at that beacon), or a Zone by name or `UUID:major`
/// (standing in the middle of it). `#` starts a comment.
package struct WalkPlan: Sendable, Hashable {
    package struct Stop: Sendable, Hashable {
        /// The Zone stood in.
        package var zone: Int
        /// The beacon stood at, if the plan named one.
        package var beacon: Int?
        package var stay: Double
        package var walk: Double

        package init(zone: Int, beacon: Int? = nil, stay: Double, walk: Double = 0) {
            self.zone = zone
            self.beacon = beacon
            self.stay = stay
            self.walk = walk
        }
    }

    package var stops: [Stop]

    package init(stops: [Stop]) { self.stops = stops }

    /// Parses `text` against `hierarchy`; errors name `file` and the line.
    package static func parse(_ text: String, file: String, hierarchy: Hierarchy) -> Result<WalkPlan, InputError> {
        var stops: [Stop] = []
        for (number, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" })
            guard !fields.isEmpty else { continue }
            func failure(_ message: String) -> Result<WalkPlan, InputError> {
                .failure(InputError(file: file, line: number + 1, message: message))
            }
            // A Zone name may hold spaces: the numbers are the last one or two fields, whichever
            // leaves a place the configuration knows.
            var parsed: Stop?
            for count in [2, 1] where fields.count > count {
                let numbers = fields.suffix(count).map { Double($0) }
                guard numbers.allSatisfy({ $0 != nil && $0!.isFinite && $0! >= 0 }) else { continue }
                let target = fields.dropLast(count).joined(separator: " ")
                guard let stop = Self.place(target, in: hierarchy) else { continue }
                guard numbers[0]! > 0 else { return failure("a stop's stay must be more than 0 seconds") }
                parsed = Stop(
                    zone: stop.zone, beacon: stop.beacon, stay: numbers[0]!, walk: count == 2 ? numbers[1]! : 0)
                break
            }
            guard let parsed else {
                return failure(
                    "a stop is: a Location ID, Zone name or UUID:major of the configuration, seconds to stay, and seconds to walk to the next (optional), such as \"Kitchen 60 5\""
                )
            }
            stops.append(parsed)
        }
        guard !stops.isEmpty else {
            return .failure(InputError(file: file, message: "has no stops; write one a line: where, stay, walk"))
        }
        return .success(WalkPlan(stops: stops))
    }

    /// The Zone (and beacon) a plan's `where` names.
    static func place(_ target: String, in hierarchy: Hierarchy) -> (zone: Int, beacon: Int?)? {
        if let beacon = hierarchy.index(ofLocation: target) { return (Int(hierarchy.zoneOfBeacon[beacon]), beacon) }
        if let region = Region(target), case .zone = region, let zone = hierarchy.zoneIndex(of: region) {
            return (zone, nil)
        }
        return hierarchy.zones.firstIndex { $0.name == target }.map { ($0, nil) }
    }
}

/// A simulated walk (`beaconwatch simulate`): each beacon advertises every `interval` seconds
/// (its own random phase); the walker hears the beacons of the Zone it stands in, at 1 m from the
/// one it stands at and 4 m from the others (2 m from each when standing in the Zone), nothing
/// while walking between stops. RSSI follows the log-distance model with Gaussian shadowing of
/// `sigma` dB; each advertisement is lost with probability `loss`, independently, or with
/// `burst` in runs. Deterministic for a seed.
package struct WalkSimulation: Sendable {
    package var interval = 1.0
    package var sigma = 4.0
    /// 0…1.
    package var loss = 0.2
    /// Losses in runs of this many advertisements on average (a Gilbert–Elliott channel per
    /// beacon: a good state that loses nothing and a bad one that loses everything, switching so
    /// that `loss` of the advertisements are lost in all); `nil`: each lost independently.
    package var burst: Double?
    package var pathLossExponent = 2.0
    package var seed: UInt64 = 1

    /// Where the walker really was: a Zone from `arrive` to `leave`.
    package struct Visit: Sendable, Hashable {
        package var zone: Region
        package var beacon: Int?
        package var arrive: Timestamp
        package var leave: Timestamp
    }

    package init() {}

    /// The sightings of `plan` from `start`, in time order, and the visits they come from.
    package func run(_ plan: WalkPlan, through hierarchy: Hierarchy, from start: Timestamp) -> (
        sightings: [SourceEvent], visits: [Visit]
    ) {
        var random = SeededGenerator(seed: seed)
        // Every beacon's phase, drawn up front so a plan's change does not shift the others.
        let phases = hierarchy.beacons.map { _ in Double.random(in: 0..<interval, using: &random) }
        var sightings: [SourceEvent] = []
        var visits: [Visit] = []
        // The channel of each beacon under `burst`: in its bad state (losing) or not.
        var bad = hierarchy.beacons.map { _ in false }
        var clock = 0.0
        for stop in plan.stops {
            let arrive = clock
            let leave = clock + stop.stay
            let zone = hierarchy.zones[stop.zone]
            visits.append(
                Visit(
                    zone: zone.region, beacon: stop.beacon, arrive: start.adding(seconds: arrive),
                    leave: start.adding(seconds: leave)))
            var heard: [(Double, Int32, Int8)] = []
            for beacon in zone.beacons {
                let meters = stop.beacon.map { $0 == Int(beacon) ? 1.0 : 4.0 } ?? 2.0
                let configured = hierarchy.beacons[Int(beacon)]
                let power = configured.power ?? -59
                // The first advertisement at or after arriving, then every interval while there.
                let phase = phases[Int(beacon)]
                var time = arrive + (phase - arrive).truncatingRemainder(dividingBy: interval)
                if time < arrive { time += interval }
                while time < leave {
                    let lost: Bool
                    if let burst, burst >= 1, loss < 1 {
                        // Leaves the bad state after `burst` advertisements on average; enters it
                        // as often as keeps `loss` of them lost.
                        let draw = Double.random(in: 0..<1, using: &random)
                        let index = Int(beacon)
                        bad[index] = bad[index] ? draw >= 1 / burst : draw < loss / (1 - loss) / burst
                        lost = bad[index]
                    } else {
                        lost = Double.random(in: 0..<1, using: &random) < loss
                    }
                    if !lost {
                        let mean = Double(power) - 10 * pathLossExponent * log10(meters)
                        let rssi = (mean + sigma * Self.gaussian(&random)).rounded()
                        heard.append((time, beacon, Int8(clamping: Int(min(max(rssi, -110), -10)))))
                    }
                    time += interval
                }
            }
            heard.sort { ($0.0, $0.1) < ($1.0, $1.1) }
            for (time, beacon, rssi) in heard {
                let configured = hierarchy.beacons[Int(beacon)]
                sightings.append(
                    .advertisement(
                        start.adding(seconds: time),
                        Advertisement(
                            format: .ibeacon, beacon: configured.id, power: configured.power ?? -59, rssi: rssi,
                            address: nil)))
            }
            clock = leave + stop.walk
        }
        return (sightings, visits)
    }

    /// A standard normal draw (Box–Muller).
    static func gaussian(_ random: inout SeededGenerator) -> Double {
        let u = Double.random(in: Double.ulpOfOne..<1, using: &random)
        let v = Double.random(in: 0..<1, using: &random)
        return (-2 * log(u)).squareRoot() * cos(2 * .pi * v)
    }
}
