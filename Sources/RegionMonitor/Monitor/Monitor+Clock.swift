import BeaconCore

extension Monitor {
    /// Re-expresses every instant the monitor holds `delta` microseconds later (earlier when
    /// negative): the wall clock it runs on was stepped, and no time passed. Visits, silences and
    /// filter windows keep their lengths; every deadline stays as far ahead as it was.
    public mutating func shiftClock(by delta: Int64) {
        guard delta != 0 else { return }
        for index in beaconLast.indices { beaconLast[index] = beaconLast[index].shifted(by: delta) }
        for index in zoneLast.indices { zoneLast[index] = zoneLast[index].shifted(by: delta) }
        for index in areaLast.indices { areaLast[index] = areaLast[index].shifted(by: delta) }
        for index in sightedAt.indices { sightedAt[index] = sightedAt[index].shifted(by: delta) }
        for index in classes.pool.indices { classes.pool[index].filter.shiftClock(by: delta) }
        for index in silence.indices { silence[index].shiftClock(by: delta) }
        transmitterSilence.shiftClock(by: delta)
        tagHeardAt = tagHeardAt.shifted(by: delta)
        // A worked-out limit is reused only when fresh: its instant moves with the clock.
        for index in limits.indices { limits[index].at = limits[index].at.shifted(by: delta) }
        phoneSeen = phoneSeen.mapValues { $0.shifted(by: delta) }
        phoneAreaSeen = phoneAreaSeen.mapValues { $0.shifted(by: delta) }
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
        timers.shiftClock(by: delta)
        now = now.shifted(by: delta)
        classes.windowEnd = classes.windowEnd.shifted(by: delta)
        areaHoldUntil = areaHoldUntil?.shifted(by: delta)
    }
}
