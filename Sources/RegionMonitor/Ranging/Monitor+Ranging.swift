import BeaconCore

/// A beacon's filter and latest estimate, held while it is not `off`.
struct BeaconRanging: Sendable {
    var filter: RSSIFilter
    var rssi = 0.0
    var meters = 0.0
    /// The last sighting's RSSI, before the filter (what a tag's page shows, docs/behaviour.md §19).
    var raw: Int8 = 0
}

/// Ranging and LocationBeaconEvent (docs/behaviour.md §4, §6).
extension Monitor {
    /// Filters a sighting's RSSI into the beacon's distance and class. Every sighting counts here,
    /// whatever its strength: `Monitor.enterRssi` gates presence, not ranging.
    mutating func range(_ beacon: Int32, rssi: Int8, power: Int8) {
        let index = Int(beacon)
        var slot = classes.slot[index]
        if slot < 0 {
            if let free = classes.freeSlots.popLast() {
                slot = free
            } else {
                slot = Int32(classes.pool.count)
                classes.pool.append(
                    BeaconRanging(filter: RSSIFilter(kind: settings.rssiFilter, windowSeconds: settings.rssiWindow))
                )
            }
            classes.slot[index] = slot
        }
        let filtered = classes.pool[Int(slot)].filter.add(rssi, at: Timestamp(microseconds: timing.now))
        let meters = ranging.distance(rssi: filtered, power: Double(power))
        classes.pool[Int(slot)].rssi = filtered
        classes.pool[Int(slot)].meters = meters
        classes.pool[Int(slot)].raw = rssi
        if let rule = settings.rooms {
            // A tag's room evidence: its own rise-fast, fall-slow level of the readings (docs/behaviour.md §19).
            heardStrength[index] = rule.level(
                heardStrength[index], reading: Double(rssi) - Double(power), weight: readingWeight(index))
        } else {
            heardStrength[index] = filtered - Double(power)
        }
        nearestState.lastRanged = beacon
        let previous = classes.proximity[index]
        let next = ranging.proximity(distance: meters, current: previous)
        classes.proximity[index] = next
        sightings.any[index] = timing.now
        if let rule = settings.rooms, index < silences.quietAt.count {
            if silences.tagHeardAt != .min {
                let beyond = timing.now &- silences.tagHeardAt &- Int64(rule.grace * 1_000_000)
                if beyond > 0 { silences.quietTotal &+= beyond }
            }
            silences.tagHeardAt = max(silences.tagHeardAt, timing.now)
            silences.quietAt[index] = silences.quietTotal
        }
        if exitConfidence != nil {
            // A beacon heard again after it went `off` starts a new visit (what earlier ones
            // showed carries over at half weight).
            if previous == .off { silences.beacons[index].startVisit() }
            // Of a node's reports, one a period counts (a walk's quick ones say nothing of how often
            // it reports a still tag): the scanner's level then holds between a still tag's reports.
            let period = settings.reportPeriod.map { Int64($0 * 800_000) } ?? 0
            if previous == .off || silences.beacons[index].last.map({ timing.now &- $0 >= period }) ?? true {
                silences.beacons[index].sighted(at: timing.now)
            }
            if settings.rooms != nil, settings.reportPeriod == nil {
                // One advertisement heard by several scanners (tens of milliseconds apart live) is one.
                let last = silences.transmitter.last
                if let last, timing.now &- last > exitTimeout { silences.transmitter.startVisit() }
                if last.map({ timing.now &- $0 >= Self.sameAdvertisement }) ?? true {
                    silences.transmitter.sighted(at: timing.now)
                }
            }
            if index < rooms.grace.count, let rule = settings.rooms {
                rooms.grace[index] = plausibleSilence(index, rule: rule)
            }
        }
        if !restoredPending.isEmpty { restoredPending.remove(beacon) }
        if previous == .off {
            timing.timers.schedule(.off(beacon), at: offDeadline(beacon))
            watch(beacon)
        }
        if next != previous { classes.dirty.append(beacon) }
    }

    /// A due `off` deadline: the beacon goes `off` unless sighted since.
    mutating func checkOff(_ beacon: Int32) {
        guard classes.proximity[Int(beacon)] != .off else { return }
        let due = offDeadline(beacon)
        if due > timing.now {
            timing.timers.schedule(.off(beacon), at: due)
            return
        }
        turnOff(beacon)
    }

    /// Under `auto`, the beacons of a Zone (or the beacon) that just exited go `off` now if their
    /// own deadline or the Zone's has passed, instead of at their pending deadline, which was
    /// worked out before the estimate reached its present value.
    mutating func turnOffWithExit(_ ref: RegionRef) {
        guard exitConfidence != nil else { return }
        let beacons: [Int32]
        switch ref.level {
        case .area: return
        case .zone: beacons = hierarchy.zones[Int(ref.index)].beacons
        case .beacon: beacons = [ref.index]
        }
        for beacon in beacons where classes.proximity[Int(beacon)] != .off && offDeadline(beacon) <= timing.now {
            turnOff(beacon)
        }
    }

    private mutating func turnOff(_ beacon: Int32) {
        let index = Int(beacon)
        classes.proximity[index] = .off
        // A tag's room evidence outlives the class: it ages out by its own rule (RoomRule.fresh),
        // so a run of losses weakens a room instead of emptying it.
        if settings.rooms == nil { heardStrength[index] = -.infinity }
        let slot = classes.slot[index]
        classes.pool[Int(slot)].filter.reset()
        classes.freeSlots.append(slot)
        classes.slot[index] = -1
        classes.dirty.append(beacon)
    }

    /// A background ranging window opens (an enter or exit of a monitored region).
    mutating func openWindow() {
        classes.windowEnd = timing.now + classes.windowLength
        classes.recheckAll = true
    }

    mutating func watch(_ beacon: Int32) {
        guard !classes.watched[Int(beacon)] else { return }
        classes.watched[Int(beacon)] = true
        classes.watchList.append(beacon)
    }

    /// Emits a LocationBeaconEvent for each beacon whose reportable class differs from the one
    /// last reported: the beacons that changed in this step, or all watched ones when a window
    /// opened, the mode changed or the restart grace ended.
    mutating func report(into outputs: inout [MonitorOutput]) {
        if recordsClassChanges, !classes.dirty.isEmpty { recordClassChanges() }
        if classes.recheckAll {
            classes.watchList.sort()
            var kept: [Int32] = []
            kept.reserveCapacity(classes.watchList.count)
            for beacon in classes.watchList {
                consider(beacon, into: &outputs)
                let index = Int(beacon)
                if classes.proximity[index] == .off, classes.reported[index] == .off, !restoredPending.contains(beacon)
                {
                    classes.watched[index] = false
                } else {
                    kept.append(beacon)
                }
            }
            classes.watchList = kept
        } else if classes.dirty.count == 1 {
            consider(classes.dirty[0], into: &outputs)
        } else if !classes.dirty.isEmpty {
            var previous: Int32 = -1
            for beacon in classes.dirty.sorted() where beacon != previous {
                consider(beacon, into: &outputs)
                previous = beacon
            }
        }
        classes.dirty.removeAll(keepingCapacity: true)
        classes.recheckAll = false
        updateNearest(into: &outputs)
        if life == .graceFiring {
            life = .running
            restoredPending.removeAll()
        }
    }

    /// The computed classes that changed in this step, for rules and alerts (which go by the
    /// computed class in either ranging mode, docs/behaviour.md §7.2 and 9.1), in beacon order.
    private mutating func recordClassChanges() {
        var previous: Int32 = -1
        for beacon in classes.dirty.count == 1 ? classes.dirty : classes.dirty.sorted() where beacon != previous {
            previous = beacon
            let index = Int(beacon)
            let value = classes.proximity[index]
            let slot = classes.slot[index]
            classes.changes.append(
                ProximityChange(
                    time: Timestamp(microseconds: timing.now), beacon: hierarchy.beacons[index].id,
                    locationID: hierarchy.beacons[index].locationID, proximity: value,
                    meters: value == .off || slot < 0 ? nil : (classes.pool[Int(slot)].meters * 100).rounded() / 100))
        }
    }

    private mutating func consider(_ beacon: Int32, into outputs: inout [MonitorOutput]) {
        let index = Int(beacon)
        let value = mode == .foreground || insideMonitoredRegion(beacon) ? classes.proximity[index] : .off
        guard value != classes.reported[index] else { return }
        let restoring = restoredPending.contains(beacon)
        if restoring && value == .off && life != .graceFiring { return }
        guard mode == .foreground || timing.now < classes.windowEnd || (life == .graceFiring && restoring) else {
            return
        }
        classes.reported[index] = value
        if restoring { restoredPending.remove(beacon) }
        outputs.append(.location(Timestamp(microseconds: timing.now), event(beacon, value)))
    }

    /// Background ranging reports a beacon only while the monitored region containing it is inside;
    /// its exit reports `off` (docs/behaviour.md §6).
    private func insideMonitoredRegion(_ beacon: Int32) -> Bool {
        tracked[regionAtMonitoredLevel(of: beacon)].map { $0.monitored && $0.inside } ?? false
    }

    private func event(_ beacon: Int32, _ value: Proximity) -> LocationBeaconEvent {
        let index = Int(beacon)
        let configured = hierarchy.beacons[index]
        let zone = hierarchy.zones[Int(hierarchy.zoneOfBeacon[index])]
        let area = hierarchy.areas[Int(hierarchy.areaOfZone[Int(hierarchy.zoneOfBeacon[index])])]
        let slot = classes.slot[index]
        let estimate = value == .off || slot < 0 ? nil : classes.pool[Int(slot)]
        var event = LocationBeaconEvent(
            session: identity.session,
            address: identity.address,
            userid: identity.userid,
            zone: configured.locationID,
            distance: value,
            background: mode == .background,
            beacon: configured.id,
            name: configured.name,
            area: area.name ?? area.region.description,
            zoneName: zone.name ?? zone.region.description,
            rssi: estimate.map { ($0.rssi * 10).rounded() / 10 },
            meters: estimate.map { ($0.meters * 100).rounded() / 100 }
        )
        if value != .off { event.phoneProximity = phone.classes[beacon] }
        return event
    }
}
