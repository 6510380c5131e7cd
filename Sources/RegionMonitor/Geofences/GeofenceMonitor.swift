import BeaconCore
import Foundation

/// `Monitor.maxPositionError` and `Monitor.geofenceHysteresis` (docs/behaviour.md §17), metres.
package struct GeofenceSettings: Sendable, Hashable {
    /// A fix less accurate than this is ignored.
    package var maxPositionError: Double = 100
    /// The least margin beyond the radius before an exit.
    package var hysteresis: Double = 20

    package init(maxPositionError: Double = 100, hysteresis: Double = 20) {
        self.maxPositionError = maxPositionError
        self.hysteresis = hysteresis
    }
}

/// Presence in geofences (docs/behaviour.md §17), decided fix by fix: pure, driven by the caller's fixes and
/// clock.
///
/// A geofence is entered when a fix is at most its radius from the centre, and exited when one is
/// farther than the radius plus max(the fix's accuracy, ``GeofenceSettings/hysteresis``). A fix
/// whose accuracy exceeds ``GeofenceSettings/maxPositionError`` is ignored; without fixes the
/// state holds (no timers). One fix's exits come before its enters, each in document order. Which
/// geofences a fix can touch comes from a grid index, so a fix costs the same against ten
/// geofences or ten thousand.
package struct GeofenceMonitor: Sendable {
    package let geofences: [Geofence]
    package let settings: GeofenceSettings
    private let index: GeofenceIndex
    /// Each centre's latitude in radians and its cosine.
    private let phi: [Double]
    private let cosPhi: [Double]
    /// When the visit of each geofence inside began (microseconds); `Int64.min` outside.
    private var enteredAt: [Int64]
    /// The geofences inside, in document order.
    package private(set) var inside: [Int] = []
    /// The fix each geofence was last looked at for, to find those inside that a fix is far from.
    private var seen: [UInt32]
    private var generation: UInt32 = 0
    /// Fixes ignored for their accuracy.
    package private(set) var inaccurateFixes = 0
    /// The last fix taken, and when.
    package private(set) var lastFix: Position?
    package private(set) var lastFixTime: Timestamp?

    package init(geofences: [Geofence], settings: GeofenceSettings = GeofenceSettings()) {
        self.geofences = geofences
        self.settings = settings
        index = GeofenceIndex(geofences, margin: max(settings.maxPositionError, settings.hysteresis))
        phi = geofences.map { $0.latitude * GreatCircle.radiansPerDegree }
        cosPhi = geofences.map { cos($0.latitude * GreatCircle.radiansPerDegree) }
        enteredAt = Array(repeating: .min, count: geofences.count)
        seen = Array(repeating: 0, count: geofences.count)
    }

    /// A monitor for new `geofences` that goes on from `previous`: a geofence with the same id
    /// that was inside stays inside, its visit going on, without a transition; one that is gone
    /// is dropped without one.
    package init(reloading previous: GeofenceMonitor, geofences: [Geofence], settings: GeofenceSettings) {
        self.init(geofences: geofences, settings: settings)
        var kept: [String: Int64] = [:]
        for position in previous.inside { kept[previous.geofences[position].id] = previous.enteredAt[position] }
        for (position, geofence) in geofences.enumerated() {
            guard let start = kept.removeValue(forKey: geofence.id) else { continue }
            enteredAt[position] = start
            inside.append(position)
        }
        insideLabels = inside.map { geofences[$0].label }
        inaccurateFixes = previous.inaccurateFixes
        lastFix = previous.lastFix
        lastFixTime = previous.lastFixTime
    }

    /// The labels (name, else id) of the geofences inside, in document order: kept, as every
    /// engine step reads them for `B/geofence`.
    package private(set) var insideLabels: [String] = []

    /// Whether geofence `position` (in document order) is inside.
    package func isInside(_ position: Int) -> Bool {
        geofences.indices.contains(position) && enteredAt[position] != .min
    }

    /// The wall clock was stepped by `delta` microseconds: visits keep their lengths.
    package mutating func shiftClock(by delta: Int64) {
        for position in inside {
            enteredAt[position] = enteredAt[position].addingReportingOverflow(delta).partialValue
        }
        lastFixTime = lastFixTime?.adding(microseconds: delta)
    }

    /// One fix at `time`: the exits and enters it decides, appended to `outputs`. Returns `false`
    /// when the fix was ignored for its accuracy.
    @discardableResult
    package mutating func fix(_ position: Position, at time: Timestamp, into outputs: inout [MonitorOutput]) -> Bool {
        let accuracy = position.accuracy ?? 0
        guard accuracy <= settings.maxPositionError else {
            inaccurateFixes += 1
            return false
        }
        lastFix = position
        lastFixTime = time
        generation &+= 1
        if generation == 0 {
            for position in seen.indices { seen[position] = 0 }
            generation = 1
        }
        let fixPhi = position.latitude * GreatCircle.radiansPerDegree
        let fixCos = cos(fixPhi)
        let exitMargin = max(accuracy, settings.hysteresis)
        var exits: [(Int, Double)] = []
        var enters: [(Int, Double)] = []
        let index = self.index
        index.forEachCandidate(latitude: position.latitude, longitude: position.longitude) { candidate in
            seen[candidate] = generation
            let geofence = geofences[candidate]
            let distance = GreatCircle.distance(
                phi1: phi[candidate], cosPhi1: cosPhi[candidate], phi2: fixPhi, cosPhi2: fixCos,
                deltaLambda: position.longitude - geofence.longitude)
            if enteredAt[candidate] != .min {
                if distance > geofence.radius + exitMargin { exits.append((candidate, distance)) }
            } else if distance <= geofence.radius {
                enters.append((candidate, distance))
            }
        }
        // Inside but not a candidate: farther than its reach, so beyond any exit margin.
        for candidate in inside where seen[candidate] != generation {
            let geofence = geofences[candidate]
            exits.append(
                (
                    candidate,
                    GreatCircle.distance(
                        phi1: phi[candidate], cosPhi1: cosPhi[candidate], phi2: fixPhi, cosPhi2: fixCos,
                        deltaLambda: position.longitude - geofence.longitude)
                ))
        }
        guard !exits.isEmpty || !enters.isEmpty else { return true }
        exits.sort { $0.0 < $1.0 }
        enters.sort { $0.0 < $1.0 }
        for (position, distance) in exits {
            let start = enteredAt[position]
            enteredAt[position] = .min
            let micros = time.microseconds.subtractingReportingOverflow(start)
            let seconds = micros.overflow ? 0 : Double(max(micros.partialValue, 0)) / 1_000_000
            var transition = transition(.exit, position, distance)
            transition.dwell = (seconds * 1000).rounded() / 1000
            outputs.append(.geofence(time, transition))
        }
        for (position, distance) in enters {
            enteredAt[position] = time.microseconds
            outputs.append(.geofence(time, transition(.enter, position, distance)))
        }
        inside = (inside.filter { enteredAt[$0] != .min } + enters.map(\.0)).sorted()
        insideLabels = inside.map { geofences[$0].label }
        return true
    }

    private func transition(_ direction: Transition.Direction, _ position: Int, _ distance: Double)
        -> GeofenceTransition
    {
        let geofence = geofences[position]
        return GeofenceTransition(
            direction: direction, id: geofence.id, name: geofence.name, distance: (distance * 10).rounded() / 10)
    }
}
