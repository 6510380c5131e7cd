import BeaconCore

/// Presence of the monitored regions and the transitions around them (docs/behaviour.md §5.1, §5.3): a region is
/// inside while sighted less than exitTimeout ago; enters nest outside-in, exits inside-out.
extension Monitor {

    func last(_ ref: RegionRef) -> Int64 {
        switch ref.level {
        case .area: sightings.area[Int(ref.index)]
        case .zone: sightings.zone[Int(ref.index)]
        case .beacon: sightings.beacon[Int(ref.index)]
        }
    }

    /// Inside: sighted less than exitTimeout ago (docs/behaviour.md §5.1; under `auto`, the silence its
    /// beacons allow now, 18), or held by the device's own monitoring (15.1).
    func isPresent(_ ref: RegionRef) -> Bool {
        if phone.held.contains(ref) { return true }
        return exitDeadline(ref).map { timing.now < $0 } ?? false
    }

    /// A due exit deadline: `true` when the region may have to exit now; re-armed when a later
    /// sighting moved it.
    mutating func checkExit(_ ref: RegionRef, generation: UInt32) -> Bool {
        guard var state = tracked[ref], state.monitored, state.inside, state.timerGeneration == generation else {
            return false
        }
        // Held by the device: its `leave` decides, and arms the sightings' deadline if need be.
        if phone.held.contains(ref) { return false }
        // Under `auto`, inside by the last second's estimate needs no more; an exit is decided on
        // one worked out now.
        refreshLimits(ref)
        if !isPresent(ref) { refreshLimits(ref, force: true) }
        if isPresent(ref) {
            timing.generation &+= 1
            state.timerGeneration = timing.generation
            tracked[ref] = state
            timing.timers.schedule(.exit(ref, timing.generation), at: nextLook(exitDeadline(ref) ?? timing.now))
            return false
        }
        return true
    }

    mutating func armExit(_ ref: RegionRef) {
        timing.generation &+= 1
        tracked[ref]?.timerGeneration = timing.generation
        // Held by the device with no sighting: its `leave` decides (no deadline before time began).
        refreshLimits(ref)
        guard let due = exitDeadline(ref) else { return }
        timing.timers.schedule(.exit(ref, timing.generation), at: nextLook(due))
    }

    /// The enters a sighting causes: its monitored region, if outside, and the tracked Areas and
    /// Zones around it, outside-in. Presence only grows at a sighting, so nothing else can change.
    mutating func enterAncestors(
        of beacon: Int32, zone: Int32, area: Int32, into outputs: inout [MonitorOutput]
    ) {
        let areaRef = RegionRef(.area, area)
        let zoneRef = RegionRef(.zone, zone)
        let beaconRef = RegionRef(.beacon, beacon)
        // The monitored set is one level (all Areas, all Zones, or all Beacons).
        let monitoredRef: RegionRef
        switch monitoring.mode {
        case .areas: monitoredRef = areaRef
        case .zones: monitoredRef = zoneRef
        case .beacons: monitoredRef = beaconRef
        }
        guard let state = tracked[monitoredRef], state.monitored else {
            monitoring.candidate = candidate(area: areaRef, zone: zoneRef)
            if monitoring.candidate != nil { monitoring.dirty = true }
            return
        }
        guard !state.inside else { return }
        if monitoredRef.level != .area, tracked[areaRef]?.inside == false { enter(areaRef, into: &outputs) }
        if monitoredRef.level == .beacon, tracked[zoneRef]?.inside == false { enter(zoneRef, into: &outputs) }
        enter(monitoredRef, into: &outputs)
    }

    /// The region of a sighting that the scan-assisted policy could monitor, when it is not
    /// monitored now: the Area in `areas` mode, a Zone of the monitored Area in `zones` mode.
    func candidate(area: RegionRef, zone: RegionRef) -> RegionRef? {
        guard case .hierarchical(scanAssisted: true) = plan else { return nil }
        switch monitoring.mode {
        case .areas: return area
        case .zones: return monitoring.area == area.index ? zone : nil
        case .beacons: return nil
        }
    }

    /// Recomputes every tracked region from the sightings: exits inside-out, then enters
    /// outside-in (docs/behaviour.md §5.3).
    mutating func reconcileAll(into outputs: inout [MonitorOutput]) {
        var desiredInside: Set<RegionRef> = []
        var newlyInsideAreas: [RegionRef] = []
        for ref in monitoring.regions where isPresent(ref) {
            if monitoring.mode == .areas, tracked[ref]?.inside == false, case .hierarchical = plan {
                newlyInsideAreas.append(ref)
                continue
            }
            desiredInside.insert(ref)
        }
        // In `areas` mode the first Area entered switches to its Zones; entering two at one instant
        // would leave one entered but untracked, so only the most recently sighted one enters.
        if let area = newlyInsideAreas.max(by: { last($0) != last($1) ? last($0) < last($1) : $0.index > $1.index }) {
            desiredInside.insert(area)
        }
        if isAreaHeld || isAreaRanged, let area = monitoring.area { desiredInside.insert(RegionRef(.area, area)) }
        // A tag on a floor plan in no room is in its Area while heard there (§20).
        if rooms.position.area >= 0, isPresent(RegionRef(.area, rooms.position.area)) {
            desiredInside.insert(RegionRef(.area, rooms.position.area))
        }
        for ref in desiredInside {
            var ancestor = parent(of: ref)
            while let up = ancestor {
                desiredInside.insert(up)
                ancestor = parent(of: up)
            }
        }
        let exits = tracked.filter { $0.value.inside && !desiredInside.contains($0.key) }.keys.sorted {
            $0.level != $1.level ? $0.level.rawValue > $1.level.rawValue : $0.index < $1.index
        }
        for ref in exits { exit(ref, into: &outputs) }
        let enters = desiredInside.filter { tracked[$0]?.inside == false }.sorted()
        for ref in enters { enter(ref, into: &outputs) }
    }

    func parent(of ref: RegionRef) -> RegionRef? {
        switch ref.level {
        case .area: nil
        case .zone: RegionRef(.area, hierarchy.areaOfZone[Int(ref.index)])
        case .beacon: RegionRef(.zone, hierarchy.zoneOfBeacon[Int(ref.index)])
        }
    }

    mutating func enter(_ ref: RegionRef, into outputs: inout [MonitorOutput]) {
        guard var state = tracked[ref] else { return }
        state.inside = true
        state.enteredAt = timing.now
        tracked[ref] = state
        monitoring.dirty = true
        presenceChanges &+= 1
        if state.monitored {
            armExit(ref)
            openWindow()
        }
        switch ref.level {
        case .area: currentAreaIndex = Int(ref.index)
        case .zone:
            currentZoneIndex = Int(ref.index)
            // A Zone took over from the device's Area.
            phone.areaHoldUntil = nil
        case .beacon: break
        }
        let transition = Transition(
            direction: .enter,
            region: region(ref),
            name: hierarchy.name(of: region(ref)),
            how: state.monitored ? .monitored : .derived
        )
        outputs.append(.transition(Timestamp(microseconds: timing.now), transition))
    }

    mutating func exit(_ ref: RegionRef, into outputs: inout [MonitorOutput]) {
        guard var state = tracked[ref] else { return }
        state.inside = false
        tracked[ref] = state
        monitoring.dirty = true
        presenceChanges &+= 1
        if state.monitored { openWindow() }
        leaveCurrent(ref)
        var transition = Transition(
            direction: .exit,
            region: region(ref),
            name: hierarchy.name(of: region(ref)),
            how: state.monitored ? .monitored : .derived,
            dwell: Double((timing.now - state.enteredAt) / 1000) / 1000
        )
        if exitConfidence != nil { transition.timeout = Double(currentLimit(ref) / 1000) / 1000 }
        turnOffWithExit(ref)
        outputs.append(.transition(Timestamp(microseconds: timing.now), transition))
    }

    /// After `ref` stopped being inside (an exit, or a drop from the monitored set): the current
    /// Area or Zone becomes the most recently entered one still inside.
    mutating func leaveCurrent(_ ref: RegionRef) {
        switch ref.level {
        case .area where currentAreaIndex == Int(ref.index):
            currentAreaIndex = latestInside(.area)
        case .zone where currentZoneIndex == Int(ref.index):
            currentZoneIndex = latestInside(.zone)
        default: break
        }
    }

    func latestInside(_ level: RegionRef.Level) -> Int? {
        tracked.filter { $0.key.level == level && $0.value.inside }
            .max {
                $0.value.enteredAt != $1.value.enteredAt ? $0.value.enteredAt < $1.value.enteredAt : $0.key > $1.key
            }
            .map { Int($0.key.index) }
    }

    func region(_ ref: RegionRef) -> Region {
        switch ref.level {
        case .area: hierarchy.areas[Int(ref.index)].region
        case .zone: hierarchy.zones[Int(ref.index)].region
        case .beacon: .beacon(hierarchy.beacons[Int(ref.index)].id)
        }
    }
}
