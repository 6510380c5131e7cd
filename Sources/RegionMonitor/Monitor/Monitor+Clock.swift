import BeaconCore

extension Monitor {
    /// Re-expresses every instant the monitor holds `delta` microseconds later (earlier when
    /// negative): the wall clock it runs on was stepped, and no time passed. Visits, silences and
    /// filter windows keep their lengths; every deadline stays as far ahead as it was.
    package mutating func shiftClock(by delta: Int64) {
        guard delta != 0 else { return }
        for index in sightings.beacon.indices { sightings.beacon[index] = sightings.beacon[index].shifted(by: delta) }
        for index in sightings.zone.indices { sightings.zone[index] = sightings.zone[index].shifted(by: delta) }
        for index in sightings.area.indices { sightings.area[index] = sightings.area[index].shifted(by: delta) }
        for index in sightings.any.indices { sightings.any[index] = sightings.any[index].shifted(by: delta) }
        for index in classes.pool.indices { classes.pool[index].filter.shiftClock(by: delta) }
        for index in silences.beacons.indices { silences.beacons[index].shiftClock(by: delta) }
        silences.transmitter.shiftClock(by: delta)
        silences.tagHeardAt = silences.tagHeardAt.shifted(by: delta)
        // A worked-out limit is reused only when fresh: its instant moves with the clock.
        for index in silences.limits.indices {
            silences.limits[index].at = silences.limits[index].at.shifted(by: delta)
        }
        phone.seen = phone.seen.mapValues { $0.shifted(by: delta) }
        phone.left = phone.left.mapValues { $0.shifted(by: delta) }
        phone.areaSeen = phone.areaSeen.mapValues { $0.shifted(by: delta) }
        rooms.since = rooms.since.shifted(by: delta)
        if let change = roomChange { rooms.change?.at = change.at.adding(microseconds: delta) }
        tracked = tracked.mapValues { state in
            var moved = state
            moved.enteredAt = state.enteredAt.shifted(by: delta)
            return moved
        }
        carriedInside = carriedInside.mapValues { state in
            var moved = state
            moved.enteredAt = state.enteredAt.shifted(by: delta)
            return moved
        }
        timing.timers.shiftClock(by: delta)
        timing.now = timing.now.shifted(by: delta)
        classes.windowEnd = classes.windowEnd.shifted(by: delta)
        phone.areaHoldUntil = phone.areaHoldUntil?.shifted(by: delta)
        if let session = rooms.prints.session {
            rooms.prints.session?.started = session.started.shifted(by: delta)
            rooms.prints.session?.until = session.until.shifted(by: delta)
            for index in session.samples.indices {
                rooms.prints.session?.samples[index].at = session.samples[index].at.shifted(by: delta)
            }
        }
        rooms.prints.recent = rooms.prints.recent.map { ($0.beacon, $0.level, $0.at.shifted(by: delta)) }
        rooms.prints.scoredAt = rooms.prints.scoredAt.shifted(by: delta)
    }
}
