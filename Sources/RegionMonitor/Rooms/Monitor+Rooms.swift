import BeaconCore

/// Why a tag's room last changed (docs/behaviour.md §19): the evidence the hand-over rule saw.
public struct RoomChange: Sendable, Hashable {
    /// The room it left (a Zone), `nil` when it was in none.
    public var from: Region?
    public var to: Region
    public var at: Timestamp
    /// The Location ID of the scanner whose report moved it.
    public var scanner: String
    /// The new room's evidence and the old one's (dB above the tag's measured power), `nil` for
    /// none fresh.
    public var evidence: Double
    public var previous: Double?

    /// One line: what moved the tag, and why that was clear enough.
    public var why: String { why(room: \.description, scanner: { "the scanner at \($0)" }) }

    /// ``why``, naming rooms with `room` and the scanner at a Location ID with `scanner`.
    public func why(room: (Region) -> String, scanner: (String) -> String) -> String {
        let strength = RoomRule.text((evidence * 10).rounded() / 10)
        let by = scanner(self.scanner)
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
    public var currentRoom: Region? { room < 0 ? nil : hierarchy.zones[Int(room)].region }

    /// The evidence for room `zone`: its best scanner's strength among reports fresh under `rule`.
    func roomEvidence(_ zone: Int32, rule: RoomRule) -> Double? {
        let oldest = now &- Int64((rule.fresh * 1_000_000).rounded())
        var best: Double?
        for beacon in hierarchy.zones[Int(zone)].beacons {
            let index = Int(beacon)
            let value = heardStrength[index]
            guard value > -.infinity, sightedAt[index] >= oldest else { continue }
            best = max(best ?? value, value)
        }
        return best
    }

    /// The room other than `current` with the strongest fresh evidence, with the scanner that gave
    /// it; `nil` when no other room has any.
    func bestOtherRoom(than current: Int32, rule: RoomRule) -> (zone: Int32, scanner: Int32)? {
        let oldest = now &- Int64((rule.fresh * 1_000_000).rounded())
        var best: (zone: Int32, scanner: Int32, strength: Double)?
        for beacon in watchList {
            let index = Int(beacon)
            let zone = hierarchy.zoneOfBeacon[index]
            let value = heardStrength[index]
            guard zone != current, value > -.infinity, sightedAt[index] >= oldest else { continue }
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
        var current = room
        if current >= 0 {
            let roomArea = RegionRef(.area, hierarchy.areaOfZone[Int(current)])
            if !(exitDeadline(roomArea).map { now < $0 } ?? false) { current = -1 }
        }
        if current < 0 {
            roomChange = RoomChange(
                from: nil, to: hierarchy.zones[Int(zone)].region, at: Timestamp(microseconds: now),
                scanner: hierarchy.beacons[Int(beacon)].locationID, evidence: heardStrength[Int(beacon)])
            current = zone
            roomSince = now
        } else {
            // The report's own room, or, when it weakened the present room, the best other one.
            let challenger = zone != current ? (zone, beacon) : bestOtherRoom(than: current, rule: rule)
            if let (candidateZone, scanner) = challenger, let candidate = roomEvidence(candidateZone, rule: rule) {
                let present = roomEvidence(current, rule: rule)
                // The same rule at every instant: a live run takes a burst of reports at one
                // instant, a trace spreads them, and both must decide alike.
                let wins = present.map { candidate >= $0 + rule.margin } ?? true
                if wins {
                    roomChange = RoomChange(
                        from: hierarchy.zones[Int(current)].region, to: hierarchy.zones[Int(candidateZone)].region,
                        at: Timestamp(microseconds: now), scanner: hierarchy.beacons[Int(scanner)].locationID,
                        evidence: candidate, previous: present)
                    let oldArea = hierarchy.areaOfZone[Int(current)]
                    let newArea = hierarchy.areaOfZone[Int(candidateZone)]
                    zoneLast[Int(current)] = Self.never
                    for old in hierarchy.zones[Int(current)].beacons { beaconLast[Int(old)] = Self.never }
                    if oldArea != newArea { areaLast[Int(oldArea)] = Self.never }
                    current = candidateZone
                    roomSince = now
                    room = current
                    presenceChanges &+= 1
                    // The new room is inside from now (its evidence is fresh), before the old one
                    // exits: an Area both are in stays inside.
                    beaconLast[Int(scanner)] = now
                    zoneLast[Int(candidateZone)] = now
                    areaLast[Int(newArea)] = now
                    reconcileAll(into: &outputs)
                    enterAncestors(of: scanner, zone: candidateZone, area: newArea, into: &outputs)
                }
            }
        }
        room = current
        let index = Int(beacon)
        if zone == current {
            beaconLast[index] = now
            zoneLast[Int(zone)] = now
            areaLast[Int(area)] = now
            enterAncestors(of: beacon, zone: zone, area: area, into: &outputs)
        } else if area == hierarchy.areaOfZone[Int(current)] {
            areaLast[Int(area)] = now
            zoneLast[Int(current)] = now
            // Monitored at the level of its scanners' locations, the room is held by those inside.
            for held in hierarchy.zones[Int(current)].beacons where tracked[RegionRef(.beacon, held)]?.inside == true {
                beaconLast[Int(held)] = now
            }
        }
        applyPolicy(into: &outputs)
    }
}
