import BeaconCore

/// Why a tag's room last changed (docs/behaviour.md §19, §20): the evidence the hand-over rule saw,
/// or the probabilities the position estimator gave.
package struct RoomChange: Sendable, Hashable {
    /// The room it left (a Zone), `nil` when it was in none.
    package var from: Region?
    /// The room it entered, `nil` when it is now in its Area with no room (§20).
    package var to: Region?
    package var at: Timestamp
    /// The Location ID of the scanner whose report moved it.
    package var scanner: String
    /// The new room's evidence and the old one's (dB above the tag's measured power), `nil` for
    /// none fresh.
    package var evidence: Double
    package var previous: Double?
    /// Under a floor plan (§20): the probability of the room it entered (of the most probable one
    /// when it entered none), and of the room it left.
    package var probability: Double?
    package var previousProbability: Double?
    /// Without a floor plan (§22): the room's training (its fingerprints) placed it, at
    /// ``probability`` among the trained rooms; not a position.
    package var byFingerprints = false

    package init(
        from: Region?, to: Region?, at: Timestamp, scanner: String, evidence: Double, previous: Double? = nil,
        probability: Double? = nil, previousProbability: Double? = nil
    ) {
        (self.from, self.to, self.at, self.scanner, self.evidence, self.previous) =
            (from, to, at, scanner, evidence, previous)
        (self.probability, self.previousProbability) = (probability, previousProbability)
    }

    /// One line: what moved the tag, and why that was clear enough.
    package var why: String { why(room: \.description, scanner: { "the scanner at \($0)" }) }

    /// ``why``, naming rooms with `room` and the scanner at a Location ID with `scanner`.
    package func why(room: (Region) -> String, scanner: (String) -> String) -> String {
        let by = scanner(self.scanner)
        if let probability {
            func percent(_ value: Double) -> String { "\(Int((value * 100).rounded())) %" }
            let old = previousProbability.map { " against \(percent($0)) for \(from.map(room) ?? "no room")" } ?? ""
            guard let to else {
                return "left \(from.map(room) ?? "its room") for no room: no room is probable enough (the most "
                    + "probable at \(percent(probability))) after a report of \(by)"
            }
            let start = from.map { "moved from \(room($0)) to \(room(to))" } ?? "entered \(room(to))"
            if byFingerprints {
                return "\(start): its readings match the room's training (learned fingerprints, "
                    + "\(percent(probability)) among the trained rooms), after a report of \(by)"
            }
            return "\(start): its position puts it there at \(percent(probability))\(old), after a report of \(by)"
        }
        let strength = RoomRule.text((evidence * 10).rounded() / 10)
        guard let to else { return "left \(from.map(room) ?? "its room")" }
        guard let from else { return "entered \(room(to)): first heard by \(by) (\(strength) dB)" }
        guard let previous else {
            return "moved from \(room(from)) to \(room(to)): \(by) heard it (\(strength) dB) while no "
                + "scanner of \(room(from)) had heard it lately"
        }
        let old = RoomRule.text((previous * 10).rounded() / 10)
        return "moved from \(room(from)) to \(room(to)): \(by) heard it at \(strength) dB against "
            + "\(old) dB for \(room(from))"
    }
}

extension Monitor {
    /// The tag's room, if it is in one.
    package var currentRoom: Region? { rooms.zone < 0 ? nil : hierarchy.zones[Int(rooms.zone)].region }

    /// The tag's room while it is inside it (``currentRoom`` is the last one, also after it left):
    /// its Zone inside, or its Area when the Zone is not monitored.
    package var presentRoom: Region? {
        guard rooms.zone >= 0 else { return nil }
        if let state = tracked[RegionRef(.zone, rooms.zone)] { return state.inside ? currentRoom : nil }
        return tracked[RegionRef(.area, hierarchy.areaOfZone[Int(rooms.zone)])]?.inside == true ? currentRoom : nil
    }

    /// The evidence for room `zone`: its best scanner's level, less ``RoomRule/staleness`` dB for
    /// each second its last report is older than ``RoomRule/grace``; a report older than
    /// ``RoomRule/fresh`` (`present`: three times that) is none.
    func roomEvidence(_ zone: Int32, rule: RoomRule, present: Bool = false) -> Double? {
        var best: Double?
        for beacon in hierarchy.zones[Int(zone)].beacons {
            guard let value = evidence(of: beacon, rule: rule, present: present) else { continue }
            best = max(best ?? value, value)
        }
        return best
    }

    /// One scanner's evidence (see ``roomEvidence(_:rule:present:)``).
    func evidence(of beacon: Int32, rule: RoomRule, present: Bool = false) -> Double? {
        let index = Int(beacon)
        let value = heardStrength[index]
        // Never sighted since a restart restored its level (`never`), or a time that does not
        // subtract: no evidence.
        let (elapsed, overflow) = timing.now.subtractingReportingOverflow(sightings.any[index])
        guard value > -.infinity, !overflow, elapsed >= 0 else { return nil }
        // Not the time the whole tag was silent (``quietTotal``).
        let quiet = index < silences.quietAt.count ? max(0, silences.quietTotal &- silences.quietAt[index]) : 0
        let age = Double(max(0, elapsed &- quiet)) / 1_000_000
        guard age <= rule.fresh * (present ? 3 : 1) else { return nil }
        return value - max(0, age - grace(of: index, rule: rule)) * rule.staleness
    }

    /// How long scanner `index`'s level holds after its last report: ``RoomRule/grace``, or under
    /// an adaptive exit the silence its own path makes plausible at ``RoomRule/graceConfidence``
    /// when longer (a path that loses advertisements in runs of several seconds does not give a
    /// still tag away at every run), at most ``RoomRule/fresh``: ``RoomState/grace``, worked out at the
    /// scanner's last report (``plausibleSilence(_:rule:)``).
    func grace(of index: Int, rule: RoomRule) -> Double {
        guard rule.graceConfidence != nil, index < rooms.grace.count else { return rule.grace }
        return max(rule.grace, rooms.grace[index])
    }

    /// Seconds of silence after its last sighting that scanner `index`'s own path makes plausible
    /// at ``RoomRule/graceConfidence``, at most ``RoomRule/fresh``; 0 before its silence model has
    /// figures. Depends only on the model at its last sighting: worked out then, once.
    func plausibleSilence(_ index: Int, rule: RoomRule) -> Double {
        guard let confidence = rule.graceConfidence, index < silences.beacons.count else { return 0 }
        let model = silences.beacons[index]
        guard let last = model.last, model.figures != nil, rule.fresh > 0 else { return 0 }
        let maximum = Int64(min(rule.fresh, 3600) * 1_000_000)
        let limit = SilenceModel.timeout(
            after: last, beacons: CollectionOfOne(model), confidence: confidence, maximum: maximum, pooled: false)
        return Double(limit) / 1_000_000
    }

    /// What one reading of the scanner at `index` stands for in the room rule: the tag's
    /// advertising interval (as that scanner's silence model has learned it under `auto`, else as
    /// the shortest any other scanner hearing it has: a scanner that just began hearing the tag
    /// has no figures yet), in seconds, at most 1. A tag advertising ten times a second then moves
    /// levels and adds to a contest per second of its time as a 1 Hz tag does.
    func readingWeight(_ index: Int) -> Double {
        guard settings.rooms?.perSecond == true, exitConfidence != nil else { return 1 }
        var interval = silences.beacons[index].figures?.interval
        if interval == nil {
            for beacon in classes.watchList {
                guard let other = silences.beacons[Int(beacon)].figures?.interval else { continue }
                interval = min(interval ?? other, other)
            }
        }
        return interval.map { min(1, Double($0) / 1_000_000) } ?? 1
    }

    /// The room other than `current` with the strongest fresh evidence, with the scanner that gave
    /// it; `nil` when no other room has any.
    func bestOtherRoom(than current: Int32, rule: RoomRule) -> (zone: Int32, scanner: Int32)? {
        var best: (zone: Int32, scanner: Int32, strength: Double)?
        for beacon in classes.watchList {
            let zone = hierarchy.zoneOfBeacon[Int(beacon)]
            guard zone != current, let value = evidence(of: beacon, rule: rule) else { continue }
            if best.map({ value > $0.strength }) ?? true { best = (zone, beacon, value) }
        }
        return best.map { ($0.zone, $0.scanner) }
    }

    /// A sighting of a tag by the scanner at `beacon` under exclusive rooms (``RoomRule``): the
    /// room is decided, the old one (and its Area, when the new room is in another) let go, and
    /// presence given to the room alone. A report from another room of the same Area keeps the
    /// room and its Area inside: the tag leaves them when no scanner of the Area has heard it for
    /// the exit timeout.
    mutating func sightRoom(
        _ beacon: Int32, zone: Int32, area: Int32, rule: RoomRule, into outputs: inout [MonitorOutput]
    ) {
        dropRoomAfterSilence(into: &outputs)
        var current = rooms.zone
        if current < 0 {
            rooms.change = RoomChange(
                from: nil, to: hierarchy.zones[Int(zone)].region, at: Timestamp(microseconds: timing.now),
                scanner: hierarchy.beacons[Int(beacon)].locationID, evidence: heardStrength[Int(beacon)])
            current = zone
            rooms.since = timing.now
            rooms.contest = RoomRule.Contest()
        } else {
            // The best other room contests the present one at every report.
            if let (candidateZone, scanner) = bestOtherRoom(than: current, rule: rule),
                let candidate = roomEvidence(candidateZone, rule: rule)
            {
                let present = roomEvidence(current, rule: rule, present: true)
                let counts = zone == current || zone == candidateZone
                let wins = rule.wins(
                    candidateZone, lead: present.map { candidate - $0 }, counts: counts,
                    weight: readingWeight(Int(beacon)), contest: &rooms.contest)
                if wins {
                    rooms.change = RoomChange(
                        from: hierarchy.zones[Int(current)].region, to: hierarchy.zones[Int(candidateZone)].region,
                        at: Timestamp(microseconds: timing.now), scanner: hierarchy.beacons[Int(scanner)].locationID,
                        evidence: candidate, previous: present)
                    let oldArea = hierarchy.areaOfZone[Int(current)]
                    let newArea = hierarchy.areaOfZone[Int(candidateZone)]
                    sightings.zone[Int(current)] = Self.never
                    for old in hierarchy.zones[Int(current)].beacons { sightings.beacon[Int(old)] = Self.never }
                    if oldArea != newArea { sightings.area[Int(oldArea)] = Self.never }
                    current = candidateZone
                    rooms.since = timing.now
                    rooms.zone = current
                    rooms.contest = RoomRule.Contest()
                    presenceChanges &+= 1
                    // The new room is inside from now (its evidence is fresh), before the old one
                    // exits: an Area both are in stays inside.
                    sightings.beacon[Int(scanner)] = timing.now
                    sightings.zone[Int(candidateZone)] = timing.now
                    sightings.area[Int(newArea)] = timing.now
                    reconcileAll(into: &outputs)
                    enterAncestors(of: scanner, zone: candidateZone, area: newArea, into: &outputs)
                }
            }
        }
        rooms.zone = current
        let index = Int(beacon)
        if zone == current {
            sightings.beacon[index] = timing.now
            sightings.zone[Int(zone)] = timing.now
            sightings.area[Int(area)] = timing.now
            enterAncestors(of: beacon, zone: zone, area: area, into: &outputs)
        } else if area == hierarchy.areaOfZone[Int(current)] {
            sightings.area[Int(area)] = timing.now
            sightings.zone[Int(current)] = timing.now
            // Monitored at the level of its scanners' locations, the room is held by those inside.
            for beacon in hierarchy.zones[Int(current)].beacons
            where tracked[RegionRef(.beacon, beacon)]?.inside == true {
                sightings.beacon[Int(beacon)] = timing.now
            }
        }
        applyPolicy(into: &outputs)
    }
}
