import BeaconCore

/// Which regions are monitored under the cap (docs/behaviour.md §5.2): the ``MonitoringPolicy`` decides, the
/// monitor applies its decisions and determines the state of newly monitored regions at once.
extension Monitor {
    /// Applies the hierarchical policy until it is stable: switching between Areas and the Zones of
    /// the entered Area, and the scan-assisted replacement, each followed by the state
    /// determination of the newly monitored regions.
    mutating func applyPolicy(into outputs: inout [MonitorOutput]) {
        guard case .hierarchical = plan, monitoring.dirty else { return }
        monitoring.dirty = false
        for _ in 0..<4 {
            if monitoring.mode == .areas, let entered = monitoring.regions.first(where: { tracked[$0]?.inside == true })
            {
                let zones = hierarchy.areas[Int(entered.index)].zones
                // The device said it is in the Area; it will say which Zone once it monitors them.
                if phone.held.contains(entered) {
                    phone.areaHoldUntil = timing.now + exitTimeout
                    timing.timers.schedule(.areaHold, at: timing.now + exitTimeout)
                }
                applyMonitoring(
                    mostRecent(zones.map { RegionRef(.zone, $0) }), mode: .zones, area: entered.index, into: &outputs)
            } else if monitoring.mode == .zones, !monitoring.regions.contains(where: { tracked[$0]?.inside == true }),
                !isAreaHeld, !isAreaRanged
            {
                applyMonitoring(mostRecentAreas(), mode: .areas, area: nil, into: &outputs)
            } else if let candidate = monitoring.candidate, tracked[candidate]?.monitored != true {
                monitoring.candidate = nil
                let regions = policy.admit(candidate, to: monitoring.regions, lastSighting: lastSighted)
                applyMonitoring(regions, mode: monitoring.mode, area: monitoring.area, into: &outputs)
            } else {
                monitoring.candidate = nil
                return
            }
            reconcileAll(into: &outputs)
        }
    }

    /// Whether the phone's ranging reported a beacon of `ref` less than exitTimeout ago.
    func phoneRangedRecently(_ ref: RegionRef) -> Bool {
        phone.seen.contains { beacon, time in
            timing.now - time < exitTimeout && contains(ref, beacon: beacon)
        }
    }

    /// Whether `ref` holds `beacon`.
    func contains(_ ref: RegionRef, beacon: Int32) -> Bool {
        let zone = hierarchy.zoneOfBeacon[Int(beacon)]
        switch ref.level {
        case .beacon: return ref.index == beacon
        case .zone: return ref.index == zone
        case .area: return ref.index == hierarchy.areaOfZone[Int(zone)]
        }
    }

    /// Whether the monitored Area's Zones are awaited after the device's own `enter` of it.
    var isAreaHeld: Bool { phone.areaHoldUntil.map { timing.now < $0 } ?? false }

    /// Whether, with its Zones monitored, the phone's ranging reported a beacon of the monitored
    /// Area less than exitTimeout ago (any of its Zones, held or not: docs/behaviour.md §15.1).
    var isAreaRanged: Bool {
        guard monitoring.mode == .zones, let area = monitoring.area, let seen = phone.areaSeen[area] else {
            return false
        }
        return timing.now < seen &+ exitTimeout
    }

    /// The candidates the policy keeps: the `cap` most recently sighted; those in `favoured` (the
    /// regions a restart or reload carries inside) first.
    func mostRecent(_ candidates: [RegionRef], favouring favoured: Set<RegionRef> = []) -> [RegionRef] {
        guard candidates.count > policy.cap else { return candidates }
        return policy.select(candidates.map { ($0, favoured.contains($0) ? .max : lastSighted($0)) })
    }

    /// When `ref` was last sighted, as the cap orders its candidates (docs/behaviour.md §5.2): a
    /// phone's `leave` takes its ranging back from presence (15.1), not from the sightings' order,
    /// so the Zone just left stays ahead of those sighted earlier or never.
    func lastSighted(_ ref: RegionRef) -> Int64 {
        phone.left.reduce(last(ref)) { latest, left in
            left.value > latest && contains(ref, beacon: left.key) ? left.value : latest
        }
    }

    func mostRecentAreas() -> [RegionRef] {
        mostRecent((0..<hierarchy.areas.count).map { RegionRef(.area, $0) })
    }

    /// Makes `regions` the monitored set and emits the `monitoring` output. Regions that stay
    /// tracked keep their state; the others are dropped without an exit (docs/behaviour.md §5.2).
    mutating func applyMonitoring(
        _ regions: [RegionRef],
        mode: MonitoringChange.Mode,
        area: Int32?,
        into outputs: inout [MonitorOutput]
    ) {
        monitoring.regions = regions.sorted()
        presenceChanges &+= 1
        monitoring.mode = mode
        monitoring.area = area
        var next: [RegionRef: RegionState] = [:]
        for ref in monitoring.regions {
            var state = tracked[ref] ?? RegionState()
            if !state.monitored { state.timerGeneration = 0 }
            state.monitored = true
            next[ref] = state
            var ancestor = parent(of: ref)
            while let up = ancestor, next[up] == nil {
                var upState = tracked[up] ?? RegionState()
                upState.monitored = false
                next[up] = upState
                ancestor = parent(of: up)
            }
        }
        let dropped = tracked.filter { next[$0.key] == nil && $0.value.inside }.keys
        let added = monitoring.regions.filter { tracked[$0]?.monitored != true }
        tracked = next
        // The device no longer monitors what was dropped (its waypoint is deleted).
        phone.held = phone.held.filter { next[$0]?.monitored == true }
        // A region given to a phone whose ranging reported one of its beacons less than
        // exitTimeout ago: iOS settles it as inside without an `enter` (docs/behaviour.md §15.1).
        if !phone.seen.isEmpty {
            for ref in added where phoneRangedRecently(ref) { phone.held.insert(ref) }
        }
        for ref in dropped { leaveCurrent(ref) }
        // A region that turned monitored while inside needs its exit deadline.
        for ref in monitoring.regions where tracked[ref]!.inside && tracked[ref]!.timerGeneration == 0 { armExit(ref) }
        let change = MonitoringChange(
            mode: mode,
            area: area.map { hierarchy.areas[Int($0)].uuid },
            regions: monitoring.regions.map(region)
        )
        outputs.append(.monitoring(Timestamp(microseconds: timing.now), change))
    }
}
