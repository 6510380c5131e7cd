import BeaconCore

/// A reloaded configuration (docs/behaviour.md §13: SIGHUP, `cmd/reload`) carries presence over.
extension Monitor {
    /// A monitor for a new `hierarchy` and `settings` that goes on from `previous`: the beacons
    /// both configurations hold keep their last sightings, and the regions both hold that were
    /// inside stay inside, with their visits' start, without an exit or an enter. ``start(at:)``
    /// then emits the `monitoring` of the new configuration and only the transitions its
    /// sightings call for (a shorter exitTimeout, a region no longer configured).
    package init(
        reloading previous: Monitor, hierarchy: Hierarchy, settings: MonitorSettings, identity: MonitorIdentity,
        restored: [String: Proximity] = [:], restoredNearest: String? = nil
    ) {
        self.init(
            hierarchy: hierarchy, settings: settings, identity: identity, restored: restored,
            restoredNearest: restoredNearest)
        for (index, beacon) in hierarchy.beacons.enumerated() {
            guard let old = previous.hierarchy.index(of: beacon.id) else { continue }
            let last = previous.sightings.beacon[old]
            sightings.beacon[index] = last
            sightings.any[index] = previous.sightings.any[old]
            let zone = Int(hierarchy.zoneOfBeacon[index])
            let area = Int(hierarchy.areaOfZone[zone])
            sightings.zone[zone] = max(sightings.zone[zone], last)
            sightings.area[area] = max(sightings.area[area], last)
        }
        for (ref, state) in previous.tracked where state.inside {
            guard let carried = reference(to: previous.region(ref)) else { continue }
            var kept = RegionState()
            kept.inside = true
            kept.enteredAt = state.enteredAt
            carriedInside[carried] = kept
        }
        // Presence goes on counting: a fleet compares the count with the one it last kept.
        presenceChanges = previous.presenceChanges &+ 1
        // What the device holds stays held (its waypoints are still on it), and what its phone
        // ranged is remembered.
        phone.held = Set(previous.phone.held.compactMap { reference(to: previous.region($0)) })
        for (beacon, time) in previous.phone.seen {
            guard let index = hierarchy.index(of: previous.hierarchy.beacons[Int(beacon)].id) else { continue }
            phone.seen[Int32(index)] = time
        }
        for (beacon, time) in previous.phone.left {
            guard let index = hierarchy.index(of: previous.hierarchy.beacons[Int(beacon)].id) else { continue }
            phone.left[Int32(index)] = time
        }
        for (area, time) in previous.phone.areaSeen {
            guard let ref = reference(to: previous.region(RegionRef(.area, area))) else { continue }
            phone.areaSeen[ref.index] = time
            timing.timers.schedule(.areaHold, at: time &+ exitTimeout)
        }
        if let until = previous.phone.areaHoldUntil, until > previous.timing.now {
            phone.areaHoldUntil = until
            timing.timers.schedule(.areaHold, at: until)
        }
        if settings.rooms != nil, let previousRoom = previous.currentRoom, let ref = reference(to: previousRoom) {
            rooms.zone = ref.index
            rooms.since = previous.rooms.since
            rooms.change = previous.rooms.change
        }
        if settings.rooms != nil {
            // The fingerprints go on; a session goes on in its room while the Zone is there.
            rooms.prints.offset = previous.rooms.prints.offset
            if let session = previous.rooms.prints.session,
                let zone = reference(to: previous.hierarchy.zones[Int(session.zone)].region)
            {
                var kept = session
                kept.zone = zone.index
                rooms.prints.session = kept
                timing.timers.schedule(.learnEnd, at: kept.until)
            }
        }
        currentAreaIndex = previous.currentArea.flatMap { reference(to: $0) }
            .flatMap { carriedInside[$0] != nil ? Int($0.index) : nil }
        currentZoneIndex = previous.currentZone.flatMap { reference(to: $0) }
            .flatMap { carriedInside[$0] != nil ? Int($0.index) : nil }
    }

    /// The regions inside now, monitored or derived.
    package var insideRegions: Set<Region> {
        Set(tracked.filter { $0.value.inside }.keys.map(region))
    }

    /// The Zones and Areas inside now, in canonical order: where the device counts as an
    /// occupant (docs/behaviour.md §23).
    package var occupiedRegions: [Region] {
        insideRegions.filter { $0.kind != .beacon }.sorted { $0.description < $1.description }
    }

    /// `region` in this monitor's hierarchy, if it holds it.
    func reference(to region: Region) -> RegionRef? {
        switch region {
        case .area(let uuid): hierarchy.areaIndex(of: uuid).map { RegionRef(.area, $0) }
        case .zone: hierarchy.zoneIndex(of: region).map { RegionRef(.zone, $0) }
        case .beacon(let id): hierarchy.index(of: id).map { RegionRef(.beacon, $0) }
        }
    }

    /// The first monitored set of a reloaded monitor in the hierarchical plan: the Zones of the
    /// Area it is inside (the current one first), else the Areas.
    func carriedArea() -> Int32? {
        guard !carriedInside.isEmpty else { return nil }
        if let current = currentAreaIndex { return Int32(current) }
        return carriedInside.keys.filter { $0.level == .area }.min()?.index
    }
}
