import BeaconCore

/// Where a device is, as a restart needs it to go on without a repeated `enter` (docs/behaviour.md §15, §12):
/// the regions inside and since when, the regions its phone holds inside (15.1), the current Area
/// and Zone, and the last sighting of each beacon. Kept per fleet device in the state database as
/// ``text``.
package struct MonitorPresence: Sendable, Hashable {
    /// Regions inside, with the instant each was entered (microseconds).
    package var inside: [Region: Int64] = [:]
    /// Monitored regions the phone's own monitoring holds inside.
    package var held: Set<Region> = []
    package var currentArea: Region?
    package var currentZone: Region?
    /// Last sighting of each beacon (microseconds), by Location ID.
    package var sightings: [String: Int64] = [:]
    /// Last sighting by the phone's own ranging (microseconds), by Location ID.
    package var phoneSightings: [String: Int64] = [:]
    /// The sightings the phone's `leave` took back from presence, by Location ID: still what
    /// orders the cap's candidates (docs/behaviour.md §5.2).
    package var leftSightings: [String: Int64] = [:]
    /// Until when the Area the phone entered stays inside while its Zones are awaited.
    package var areaHoldUntil: Int64?
    /// The phone's last `beacon` message of each Area (microseconds), by the Area's region.
    package var phoneAreaSightings: [Region: Int64] = [:]
    /// A tag's last strength at each scanner heard (dB above its power), by Location ID: the
    /// evidence its room keeps across a restart (docs/behaviour.md §19).
    package var strengths: [String: Double] = [:]

    package init() {}

    /// One line per fact: `inside <µs> <region>`, `held <region>`, `area <region>`,
    /// `zone <region>`, `seen <µs> <location ID>`, `phone <µs> <location ID>`, `hold <µs>`,
    /// `heard <dB> <location ID>`, `phonearea <µs> <Area>`, `left <µs> <location ID>`.
    package var text: String {
        var lines: [String] = []
        for (region, since) in inside.sorted(by: { $0.key < $1.key }) { lines.append("inside \(since) \(region)") }
        for region in held.sorted() { lines.append("held \(region)") }
        if let currentArea { lines.append("area \(currentArea)") }
        if let currentZone { lines.append("zone \(currentZone)") }
        for (id, time) in sightings.sorted(by: { $0.key < $1.key }) { lines.append("seen \(time) \(id)") }
        for (id, time) in phoneSightings.sorted(by: { $0.key < $1.key }) { lines.append("phone \(time) \(id)") }
        for (id, time) in leftSightings.sorted(by: { $0.key < $1.key }) { lines.append("left \(time) \(id)") }
        if let areaHoldUntil { lines.append("hold \(areaHoldUntil)") }
        for (id, value) in strengths.sorted(by: { $0.key < $1.key }) { lines.append("heard \(value) \(id)") }
        for (area, time) in phoneAreaSightings.sorted(by: { $0.key < $1.key }) {
            lines.append("phonearea \(time) \(area)")
        }
        return lines.joined(separator: "\n")
    }

    /// Reads ``text``; a line that is not one of its forms is skipped (a damaged record resumes
    /// what it can, never traps).
    package init(text: String) {
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 2).map(String.init)
            guard parts.count >= 2 else { continue }
            switch (parts[0], parts.count) {
            case ("inside", 3):
                if let since = Int64(parts[1]), let region = Region(parts[2]) { inside[region] = since }
            case ("held", _): if let region = Region(parts.dropFirst().joined(separator: " ")) { held.insert(region) }
            case ("area", _): currentArea = Region(parts[1])
            case ("zone", _): currentZone = Region(parts[1])
            case ("seen", 3): if let time = Int64(parts[1]) { sightings[parts[2]] = time }
            case ("phone", 3): if let time = Int64(parts[1]) { phoneSightings[parts[2]] = time }
            case ("left", 3): if let time = Int64(parts[1]) { leftSightings[parts[2]] = time }
            case ("hold", _): areaHoldUntil = Int64(parts[1])
            case ("phonearea", 3):
                if let time = Int64(parts[1]), let area = Region(parts[2]) { phoneAreaSightings[area] = time }
            case ("heard", 3):
                if let value = Double(parts[1]), value.isFinite { strengths[parts[2]] = value }
            default: continue
            }
        }
    }
}

extension MonitorPresence {
    /// The latest instant it says something happened (a sighting, an entry), microseconds; `nil`
    /// for none. Later than the clock at a start, it says the wall clock went back meanwhile.
    package var latest: Int64? {
        [
            inside.values.max(), sightings.values.max(), phoneSightings.values.max(), leftSightings.values.max(),
            phoneAreaSightings.values.max(),
        ]
        .compactMap { $0 }.max()
    }

    /// Every instant re-expressed `delta` microseconds later (the wall clock was stepped).
    package mutating func shiftClock(by delta: Int64) {
        inside = inside.mapValues { $0.shifted(by: delta) }
        sightings = sightings.mapValues { $0.shifted(by: delta) }
        phoneSightings = phoneSightings.mapValues { $0.shifted(by: delta) }
        leftSightings = leftSightings.mapValues { $0.shifted(by: delta) }
        phoneAreaSightings = phoneAreaSightings.mapValues { $0.shifted(by: delta) }
        areaHoldUntil = areaHoldUntil?.shifted(by: delta)
    }
}

extension Monitor {
    /// Where the device is now (``MonitorPresence``).
    package var presence: MonitorPresence {
        var presence = MonitorPresence()
        for (ref, state) in tracked where state.inside { presence.inside[region(ref)] = state.enteredAt }
        presence.held = Set(phone.held.map(region))
        presence.currentArea = currentArea
        presence.currentZone = currentZone
        for (index, time) in sightings.beacon.enumerated() where time != Self.never {
            presence.sightings[hierarchy.beacons[index].locationID] = time
        }
        for (beacon, time) in phone.seen {
            presence.phoneSightings[hierarchy.beacons[Int(beacon)].locationID] = time
        }
        for (beacon, time) in phone.left { presence.leftSightings[hierarchy.beacons[Int(beacon)].locationID] = time }
        presence.areaHoldUntil = phone.areaHoldUntil
        for (area, time) in phone.areaSeen { presence.phoneAreaSightings[hierarchy.areas[Int(area)].region] = time }
        if settings.rooms != nil {
            for (index, value) in heardStrength.enumerated() where value > -.infinity {
                presence.strengths[hierarchy.beacons[index].locationID] = value
            }
        }
        return presence
    }

    /// Goes on from `presence` (a restart), before ``start(at:)``: the regions inside stay inside
    /// without an `enter`, as a reload carries them (``init(reloading:hierarchy:settings:identity:restored:restoredNearest:)``);
    /// those the sightings no longer hold exit at the start. Regions and beacons this hierarchy
    /// does not have are left out.
    package mutating func resume(_ presence: MonitorPresence) {
        guard life == .new else { return }
        // A tag's Zone is sighted only as its room (docs/behaviour.md §19): a room it was not in
        // is not sighted by the scanners it heard there, or the room's stale deadline turned a
        // weak scanner `off` at the next report, at every burst after a restart (issue 72).
        let roomsInside = Set(
            presence.inside.keys.compactMap { region -> Int? in
                guard settings.rooms != nil, let ref = reference(to: region), ref.level == .zone else { return nil }
                return Int(ref.index)
            })
        for (id, time) in presence.sightings {
            guard let index = hierarchy.index(ofLocation: id) else { continue }
            sightings.beacon[index] = time
            sightings.any[index] = time
            let zone = Int(hierarchy.zoneOfBeacon[index])
            guard settings.rooms == nil || roomsInside.contains(zone) else { continue }
            let area = Int(hierarchy.areaOfZone[zone])
            sightings.zone[zone] = max(sightings.zone[zone], time)
            sightings.area[area] = max(sightings.area[area], time)
        }
        for (id, time) in presence.phoneSightings {
            guard let index = hierarchy.index(ofLocation: id) else { continue }
            phone.seen[Int32(index)] = time
        }
        for (id, time) in presence.leftSightings {
            guard let index = hierarchy.index(ofLocation: id) else { continue }
            phone.left[Int32(index)] = time
        }
        for (region, since) in presence.inside {
            guard let ref = reference(to: region) else { continue }
            var state = RegionState()
            state.inside = true
            state.enteredAt = since
            carriedInside[ref] = state
        }
        phone.held = Set(presence.held.compactMap { reference(to: $0) })
        currentAreaIndex = presence.currentArea.flatMap { reference(to: $0) }
            .flatMap { carriedInside[$0] != nil ? Int($0.index) : nil }
        currentZoneIndex = presence.currentZone.flatMap { reference(to: $0) }
            .flatMap { carriedInside[$0] != nil ? Int($0.index) : nil }
        if let until = presence.areaHoldUntil {
            phone.areaHoldUntil = until
            timing.timers.schedule(.areaHold, at: until)
        }
        for (area, time) in presence.phoneAreaSightings {
            guard let ref = reference(to: area), ref.level == .area else { continue }
            phone.areaSeen[ref.index] = time
            timing.timers.schedule(.areaHold, at: time &+ exitTimeout)
        }
        // A tag's room is the Zone it was inside (docs/behaviour.md §19: one at a time), with the evidence
        // its scanners gave.
        if settings.rooms != nil {
            for (id, value) in presence.strengths {
                guard let index = hierarchy.index(ofLocation: id) else { continue }
                heardStrength[index] = value
            }
        }
        if settings.rooms != nil,
            let (zone, since) = presence.inside.filter({ $0.key.kind == .zone }).min(by: { $0.key < $1.key }),
            let ref = reference(to: zone)
        {
            rooms.zone = ref.index
            rooms.since = since
        }
    }
}
