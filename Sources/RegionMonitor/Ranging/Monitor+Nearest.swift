import BeaconCore

/// The nearest beacon, with hand-over (docs/behaviour.md §9.2).
extension Monitor {
    /// The Location ID of the nearest beacon, `nil` for none.
    package var nearestLocationID: String? {
        nearestState.beacon < 0 ? nil : hierarchy.beacons[Int(nearestState.beacon)].locationID
    }

    /// How strong a beacon is heard: its filtered RSSI above its measured power at 1 m, in dB;
    /// `nil` while it is `off`.
    @inline(__always)
    func strength(_ beacon: Int32) -> Double? {
        let value = heardStrength[Int(beacon)]
        return value == -.infinity || classes.proximity[Int(beacon)] == .off ? nil : value
    }

    /// The strongest beacon heard (not `off`), -1 for none; the first in watch order on a tie.
    /// By ``strength(_:)``: a tag's heard strength outlives its class (its room evidence ages by
    /// its own rule), and a beacon gone `off` must not stay the nearest after the tag left (issue 72).
    func strongest() -> Int32 {
        var best: Int32 = -1
        var bestStrength = -Double.infinity
        for beacon in classes.watchList {
            guard let value = strength(beacon), value > bestStrength else { continue }
            best = beacon
            bestStrength = value
        }
        return best
    }

    /// After a step: a beacon takes over from the nearest only when it is stronger by
    /// `Monitor.nearestMargin` dB; when the nearest is lost, the strongest left takes over;
    /// `none` when nothing is heard. A change is a `nearest` output. A nearest restored from the
    /// kept state and not heard since is held until some beacon is heard or the grace ends.
    mutating func updateNearest(into outputs: inout [MonitorOutput]) {
        let sighted = nearestState.lastRanged
        nearestState.lastRanged = -1
        var next = nearestState.beacon
        if next >= 0, strength(next) == nil, sighted >= 0 || life == .graceFiring || !restoredPending.contains(next) {
            next = -1
        }
        if next < 0 {
            if sighted >= 0 || nearestState.beacon >= 0 { next = strongest() }
        } else if sighted >= 0, let current = strength(next) {
            if sighted == next {
                // The nearest itself weakened: another may now be clearly stronger.
                let best = strongest()
                if best >= 0, best != next, let value = strength(best), value >= current + nearestState.margin {
                    next = best
                }
            } else if let value = strength(sighted), value >= current + nearestState.margin {
                next = sighted
            }
        }
        guard next != nearestState.beacon else { return }
        nearestState.beacon = next
        let beacon = next < 0 ? nil : hierarchy.beacons[Int(next)]
        outputs.append(
            .nearest(
                Timestamp(microseconds: timing.now), NearestChange(locationID: beacon?.locationID, name: beacon?.name)))
    }
}
