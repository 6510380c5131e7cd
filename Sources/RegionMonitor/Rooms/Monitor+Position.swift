import BeaconCore
import Floorplan

/// A tag's position on the floors that have a plan (docs/behaviour.md §20): one filter per
/// building (all its floors), the radio they read with, and the Area it is in while in no room.
package struct PositionState: Sendable {
    /// By building: the Area index of its first floor.
    var filters: [Int32: PositionFilter] = [:]
    /// How signals weaken: the building's, learned from its scanners (set by the device table).
    package var radio = RadioModel()
    /// The Area the tag is in without a room (no room probable enough), -1 for none.
    var area: Int32 = -1
    /// The last `position` output: when, and where.
    var reportedAt: Int64 = .min
    var reportedPoint: PlanPoint?
    var reportedRoom: Int32 = -2
    /// The contest: the challenger (a Zone index, -1 for no room), its summed lead, and when it
    /// was last added to.
    var challenger: Int32 = -2
    var score = 0.0
    var contestAt: Int64 = .min
    /// When the look at the exit of the Area it is in without a room is scheduled.
    var holdDue: Int64 = .min
    /// Whether the last reading placed the tag by an exit door (most of its probability within
    /// ``Building/exitReach`` of one): its silence is then its leaving.
    var byExit = false
    /// The tag's last reading (µs) and the seconds between its readings, smoothed (readings of
    /// one advertisement by several scanners count once).
    var lastReading: Int64 = .min
    var interval = 0.0
    /// When its readings began again after a silence of ``PositionSettings/corroboration`` or more.
    var readingSince: Int64 = .min
    /// The estimate's recent points (µs, the likeliest floor, the point there), oldest first, and
    /// whether it moved far enough among them to be walking.
    var trail: [(at: Int64, floor: Int, point: PlanPoint)] = []
    var walking = false
    /// The room is decided once a burst of readings has settled (``Monitor/sameAdvertisement``
    /// after its first): when, and the last reading's scanner and Area.
    var settleDue: Int64 = .min
    var settleBeacon: Int32 = -1
    var settleArea: Int32 = -1

    package init() {}
}

/// Where a tag is (docs/behaviour.md §20): the `position` output.
package struct PositionReport: Sendable, Hashable {
    package var area: Region
    package var x: Double
    package var y: Double
    /// One standard deviation of the distance from the estimate, metres.
    package var error: Double
    /// The room (a Zone) it is in, `nil` for none.
    package var room: Region?
    /// The probability of that room, or of the most probable one when it is in none.
    package var confidence: Double

    package init(area: Region, x: Double, y: Double, error: Double, room: Region?, confidence: Double) {
        (self.area, self.x, self.y, self.error, self.room, self.confidence) = (area, x, y, error, room, confidence)
    }
}

extension Monitor {
    /// The radio the tag's position is read with.
    package var radio: RadioModel {
        get { rooms.position.radio }
        set { rooms.position.radio = newValue }
    }

    /// The probability of each room of the tag's floor, highest first, with the share on that
    /// floor outside every room last (`nil` region); empty when it has no position.
    package var roomProbabilities: [(room: Region?, probability: Double)] {
        guard let (area, building, filter) = currentFilter, let floor = building.floor(ofArea: area) else { return [] }
        let first = building.roomOffsets[floor]
        var rows = building.floors[floor].zones.indices.map {
            (
                room: Optional(hierarchy.zones[Int(building.zones[first + $0])].region),
                probability: Double(filter.rooms[first + $0])
            )
        }
        rows.sort { $0.probability > $1.probability }
        rows.append((nil, Double(building.floors.count == 1 ? filter.unroomed : filter.outside[floor])))
        return rows
    }

    /// The tag's estimated position: Area, point and error, `nil` when it has none.
    package var estimatedPosition: (area: Region, point: PlanPoint, error: Double)? {
        guard let (area, building, filter) = currentFilter, let floor = building.floor(ofArea: area) else { return nil }
        let (point, error) = filter.estimate(building: building, floor: floor)
        return (hierarchy.areas[Int(area)].region, point, error)
    }

    /// The floor the tag is on (its room's Area, else the Area it is in without one), its building
    /// and the building's filter.
    var currentFilter: (Int32, Building, PositionFilter)? {
        let area = rooms.zone >= 0 ? hierarchy.areaOfZone[Int(rooms.zone)] : rooms.position.area
        guard area >= 0, let building = settings.floorPlans?.buildings[area],
            let filter = rooms.position.filters[Self.key(of: building)]
        else { return nil }
        return (area, building, filter)
    }

    /// The key of `building`'s filter: the Area of its first floor.
    static func key(of building: Building) -> Int32 { building.floors[0].plan.area }

    /// Whether a report of the scanner at `beacon`, in `area`, goes to the position estimator.
    func isPositioned(_ beacon: Int32, area: Int32) -> Bool {
        guard let building = settings.floorPlans?.buildings[area] else { return false }
        return building.scannerSlot[beacon] != nil
    }

    /// A reading of the scanner at `beacon` (`level` dB above the tag's measured power) in a
    /// building with a plan: the filter takes it, and once the burst it came in has settled
    /// (``positionSettled(into:)``) the room follows from the probabilities of every room of every
    /// floor — a change needs the new room at `Rooms.minConfidence`, the present room
    /// is kept while it stays at ``PositionSettings/holdShare`` of that, and below it the tag is
    /// on its floor (its Area) with no room. The floor changes only when another floor holds
    /// `Rooms.minConfidence` of the probability, which reaches it only up the stairs.
    mutating func sightPosition(
        _ beacon: Int32, level: Double, zone: Int32, area: Int32, into outputs: inout [MonitorOutput]
    ) {
        guard let settings = settings.floorPlans, let building = settings.buildings[area],
            let slot = building.scannerSlot[beacon]
        else { return }
        dropRoomAfterSilence(into: &outputs)
        if rooms.position.area >= 0, building.floor(ofArea: rooms.position.area) == nil,
            !(exitDeadline(RegionRef(.area, rooms.position.area)).map { timing.now < $0 } ?? false)
        {
            rooms.position.area = -1
        }
        let key = Self.key(of: building)
        // In place: a copy would copy every cell's probability at every report.
        let radio = rooms.position.radio
        rooms.position.filters[key, default: PositionFilter(building: building)].observe(
            slot: slot, level: level, at: timing.now, building: building, radio: radio, settings: settings)
        guard let filter = rooms.position.filters[key] else { return }
        noteReading(byExit: !building.exitCells.isEmpty && filter.byExit(building) >= 0.5, settings: settings)
        rooms.position.settleBeacon = beacon
        rooms.position.settleArea = area
        if rooms.position.settleDue < timing.now {
            rooms.position.settleDue = timing.now &+ Self.sameAdvertisement
            timing.timers.schedule(.positionSettle, at: rooms.position.settleDue)
        }
    }

    /// The burst has settled: the room is decided on all of its readings (docs/behaviour.md §20,
    /// "Bursts"). ESPresense nodes' reports of one 5 s slot come within 30 ms of each other in any
    /// order, and one advertisement's receptions within a few: decided at each, the room was taken
    /// part-way through a burst (on the recorded tracks as nodes report them, 30.0 to 36.5 % right
    /// as the order of the reports inside the bursts changed; 42.0 to 44.3 % once settled, the
    /// filter still weighing each report as it comes: docs/performance.md "Real radio").
    mutating func positionSettled(into outputs: inout [MonitorOutput]) {
        guard timing.now >= rooms.position.settleDue, rooms.position.settleBeacon >= 0 else { return }
        rooms.position.settleDue = .min
        let beacon = rooms.position.settleBeacon
        let area = rooms.position.settleArea
        guard let settings = settings.floorPlans, let building = settings.buildings[area] else { return }
        dropRoomAfterSilence(into: &outputs)
        let key = Self.key(of: building)
        let radio = rooms.position.radio
        guard let filter = rooms.position.filters[key] else { return }
        // Each room's probability, with the fingerprints' evidence where rooms are trained (§22).
        let shares = printedShares(filter, building: building)
        // The most probable room of the building.
        var best = -1
        for index in shares.indices where best < 0 || shares[index] > shares[best] { best = index }
        let confidence = best >= 0 ? Double(shares[best]) : 0
        let current = rooms.zone
        var target: Int32? = current >= 0 ? current : nil
        // The floor it is on: its room's, else the one it is on without a room, unless another
        // floor holds Rooms.minConfidence of the probability.
        var floor = building.floor(ofArea: current >= 0 ? hierarchy.areaOfZone[Int(current)] : rooms.position.area)
        if floor.map({ Double(filter.floors[$0]) < 1 - settings.minConfidence }) ?? true {
            floor = filter.floors.indices.max { filter.floors[$0] < filter.floors[$1] }
        }
        // The trail every half second at most: the estimate is a pass over the cells, and readings
        // of one advertisement by several scanners come within milliseconds.
        if isTrailDue, let likeliest = filter.floors.indices.max(by: { filter.floors[$0] < filter.floors[$1] }) {
            noteTrail(filter.estimate(building: building, floor: likeliest).point, floor: likeliest, settings: settings)
        }
        // One scanner alone cannot place a tag in a room (a ring around it may cross a wall).
        let corroborated =
            building.scannerSlot.count < 2
            || filter.scannersHeard(within: settings.corroboration, of: timing.now) >= 2
        // Nor on a floor of several, until it has been heard alone for as long: its first report
        // may come through a floor (the scanner below hears it before those beside it). And a
        // floor is first placed, as it is changed, only at Rooms.minConfidence.
        if current < 0, building.floors.count > 1,
            rooms.position.area < 0 || building.floor(ofArea: rooms.position.area) == nil,
            !(corroborated || heardAlone(for: settings.corroboration))
                || floor.map({ Double(filter.floors[$0]) < settings.minConfidence }) ?? true
        {
            return
        }
        // A scanner gone quiet where it would hear the tag: no room is entered on the others' word
        // (its room's scanner died, and the tag in it is heard only through walls).
        func unexplained() -> Bool {
            filter.silenceUnexplained(
                within: settings.window, of: timing.now, building: building, radio: radio,
                audible: settings.audible)
        }
        if let loudest = openPlanRoom(
            filter, building: building, shares: shares, best: best, current: current, settings: settings)
        {
            if building.zones[loudest] != current, corroborated, !unexplained() { target = building.zones[loudest] }
        } else if current >= 0, let mine = building.roomSlot(ofZone: current) {
            let share = Double(shares[mine])
            // The room follows the position when another is the most probable by a clear lead, even
            // below Rooms.minConfidence: the present room's confidence has gone (an open plan's
            // four quadrants split the probability; docs/behaviour.md §20, "Real radio").
            let lead = confidence - share
            if best != mine, confidence >= settings.minConfidence || lead >= PositionSettings.followLead,
                corroborated, !unexplained()
            {
                // A room on another floor holds Rooms.minConfidence only once the probability has
                // come up or down the stairs: a walker has taken them, and no contest holds it.
                let climbed = rooms.position.walking && building.roomFloor[best] != building.roomFloor[mine]
                if climbed || contest(building.zones[best], lead: lead, settings: settings) {
                    target = building.zones[best]
                }
            } else if share < settings.minConfidence * settings.holdShare {
                if contest(-1, lead: settings.minConfidence - share, settings: settings) { target = nil }
            } else {
                contest(nil, lead: 0, settings: settings)
            }
        } else if best >= 0, confidence >= settings.minConfidence, corroborated, !unexplained() {
            target = building.zones[best]
        } else if current >= 0, building.floor(ofArea: hierarchy.areaOfZone[Int(current)]) != nil {
            target = nil  // its room has no polygon on its floor: no longer placed there
        }
        let floorArea =
            target.map { hierarchy.areaOfZone[Int($0)] } ?? floor.map { building.floors[$0].plan.area } ?? area
        if target != (current >= 0 ? current : nil) || (target == nil && rooms.position.area != floorArea) {
            let previous = current >= 0 ? building.roomSlot(ofZone: current).map { Double(shares[$0]) } : nil
            if target == nil, rooms.position.area >= 0, rooms.position.area != floorArea,
                building.floor(ofArea: rooms.position.area) != nil
            {
                // Another floor of the building, with no room: the old floor is left at once.
                sightings.area[Int(rooms.position.area)] = Self.never
            }
            moveRoom(
                to: target, area: floorArea, scanner: beacon,
                probability: target.flatMap { building.roomSlot(ofZone: $0) }.map { Double(shares[$0]) }
                    ?? confidence,
                previous: previous, into: &outputs)
        }
        // The report keeps the tag's room, or its floor, inside.
        sightings.area[Int(floorArea)] = timing.now
        if rooms.zone >= 0, building.roomSlot(ofZone: rooms.zone) != nil {
            let anchor = hierarchy.zones[Int(rooms.zone)].beacons[0]
            sightings.beacon[Int(anchor)] = timing.now
            sightings.zone[Int(rooms.zone)] = timing.now
            enterAncestors(of: anchor, zone: rooms.zone, area: floorArea, into: &outputs)
        } else if rooms.zone < 0 {
            rooms.position.area = floorArea
            armPositionHold()
            reconcileAll(into: &outputs)
        }
        applyPolicy(into: &outputs)
        // By an exit door its regions exit after a shorter silence: their looks move up to it.
        if rooms.position.byExit {
            for ref in tracked.filter({ $0.value.inside }).keys.sorted() { armExit(ref) }
        }
        if let shown = building.floor(ofArea: floorArea) {
            reportPosition(area: floorArea, filter: filter, building: building, floor: shown, into: &outputs)
        }
    }

    /// An open plan's room (`LocationAreaWalls = none`, one floor; docs/behaviour.md §20, "Open
    /// plans"): the room whose scanners hear the tag loudest together
    /// (``PositionFilter/loudness(at:building:settings:)``), another winning at once some dB ahead
    /// or when its lead less a drift adds up (``PositionSettings/openWalking``,
    /// ``PositionSettings/openStill``). Its rooms are lines drawn across one hall:
    /// the tag is in the room it is heard in, which needs no model of the radio (on the recorded
    /// tracks 85 % right where the position's most probable room is 75 %: docs/performance.md
    /// "Real radio"). `nil` where the position decides: a plan with walls or floors, no room's
    /// scanner heard, or a room with no scanner of its own that the position holds.
    mutating func openPlanRoom(
        _ filter: PositionFilter, building: Building, shares: [Float], best: Int, current: Int32,
        settings: PositionSettings
    ) -> Int? {
        guard building.floors.count == 1, building.floors[0].plan.open else { return nil }
        let mine = current >= 0 ? building.roomSlot(ofZone: current) : nil
        // A room with no scanner is the position's to enter and to hold.
        let unheard = { (slot: Int) in !building.scannerRoom.contains(slot) }
        if best >= 0, unheard(best), Double(shares[best]) >= settings.minConfidence { return nil }
        if let mine, unheard(mine), Double(shares[mine]) >= settings.minConfidence * settings.holdShare {
            return nil
        }
        let levels = filter.loudness(at: timing.now, building: building, settings: settings)
        var loudest = -1
        for slot in levels.indices {
            guard let level = levels[slot] else { continue }
            if loudest < 0 || level > levels[loudest] ?? -.infinity { loudest = slot }
        }
        guard loudest >= 0 else { return nil }
        guard let mine, !unheard(mine) else { return loudest }
        let seconds = contestSeconds()
        // A walker's room follows within a second or two; a still tag's wobble must add up to more.
        let (atOnce, drift, need) = rooms.position.walking ? PositionSettings.openWalking : PositionSettings.openStill
        guard loudest != mine else {
            rooms.position.score = max(0, rooms.position.score - drift * seconds)
            return mine
        }
        let lead = (levels[loudest] ?? 0) - (levels[mine] ?? -.infinity)
        if building.zones[loudest] != rooms.position.challenger {
            rooms.position.challenger = building.zones[loudest]
            rooms.position.score = 0
        }
        rooms.position.score = max(0, rooms.position.score + (lead - drift) * seconds)
        guard lead >= atOnce || rooms.position.score >= need else {
            return mine
        }
        rooms.position.score = 0
        rooms.position.challenger = -2
        return loudest
    }

    /// Whether the trail's last point is ``trailStep`` old or more (or none, or the clock went back).
    var isTrailDue: Bool {
        guard let last = rooms.position.trail.last else { return true }
        let (age, overflow) = timing.now.subtractingReportingOverflow(last.at)
        return overflow || age < 0 || age >= Self.trailStep
    }

    /// The least time between two points of the trail, µs.
    static let trailStep: Int64 = 500_000

    /// Adds `point` on `floor` (the likeliest) to the estimate's trail and notes whether the tag
    /// walks: the estimate moved ``PositionSettings/moving`` metres or changed floor within
    /// ``PositionSettings/movingWindow`` seconds.
    mutating func noteTrail(_ point: PlanPoint, floor: Int, settings: PositionSettings) {
        let window = Int64(max(0, min(settings.movingWindow, 3600)) * 1_000_000)
        let now = timing.now
        rooms.position.trail.removeAll { entry in
            let (age, overflow) = now.subtractingReportingOverflow(entry.at)
            return overflow || age > window || age < 0
        }
        rooms.position.walking = rooms.position.trail.contains {
            $0.floor != floor || $0.point.distance(to: point) >= settings.moving
        }
        rooms.position.trail.append((now, floor, point))
    }

    /// Whether the tag's readings have gone on without a silence for `seconds` or more.
    func heardAlone(for seconds: Double) -> Bool {
        guard rooms.position.readingSince != .min else { return false }
        let (span, overflow) = timing.now.subtractingReportingOverflow(rooms.position.readingSince)
        return !overflow && span >= Int64(max(0, min(seconds, 86_400)) * 1_000_000)
    }

    /// Notes a reading's time (for the interval between the tag's readings, and when they began
    /// after a silence of ``PositionSettings/corroboration``) and whether it placed the tag by an
    /// exit door.
    mutating func noteReading(byExit: Bool, settings: PositionSettings) {
        rooms.position.byExit = byExit
        let last = rooms.position.lastReading
        rooms.position.lastReading = timing.now
        let (silence, wrapped) = timing.now.subtractingReportingOverflow(last)
        if last == .min || wrapped || silence < 0
            || silence >= Int64(max(0, min(settings.corroboration, 86_400)) * 1_000_000)
        {
            rooms.position.readingSince = timing.now
        }
        guard last != .min else { return }
        let (gap, overflow) = timing.now.subtractingReportingOverflow(last)
        guard !overflow, gap > Self.sameAdvertisement else { return }
        let seconds = min(Double(gap) / 1_000_000, 3600)
        rooms.position.interval =
            rooms.position.interval == 0 ? seconds : rooms.position.interval * 0.8 + seconds * 0.2
    }

    /// The silence after which a tag placed by an exit door has left (docs/behaviour.md §20): three
    /// of its usual intervals between readings, 1.5 s at least; `nil` when it is not by one, or its
    /// readings are nodes' reports (``PositionSettings/exitDoors``).
    var exitDoorSilence: Int64? {
        guard settings.floorPlans?.exitDoors == true, rooms.position.byExit, rooms.position.interval > 0 else {
            return nil
        }
        return Int64((max(1.5, 3 * rooms.position.interval) * 1_000_000).rounded())
    }

    /// A look at the exit of the Area the tag is in without a room: one pending at a time, moved
    /// on when it fires early (``positionHoldFired()``), not one per report.
    mutating func armPositionHold() {
        guard rooms.position.area >= 0, let deadline = exitDeadline(RegionRef(.area, rooms.position.area)),
            deadline > timing.now
        else { return }
        let due = nextLook(deadline)
        guard rooms.position.holdDue < timing.now || due < rooms.position.holdDue else { return }
        rooms.position.holdDue = due
        timing.timers.schedule(.areaHold, at: due)
    }

    /// The look fired: the Area exits now if its deadline passed, else the look moves to it.
    mutating func positionHoldFired() {
        guard rooms.position.area >= 0, timing.now >= rooms.position.holdDue else { return }
        rooms.position.holdDue = .min
        armPositionHold()
    }

    /// Seconds since the contest was last added to (at most 1; 0 the first time or when the clock
    /// went back), and now noted as its last time.
    mutating func contestSeconds() -> Double {
        let (elapsed, overflow) = timing.now.subtractingReportingOverflow(rooms.position.contestAt)
        let seconds =
            rooms.position.contestAt == .min || overflow || elapsed < 0 ? 0 : min(1, Double(elapsed) / 1_000_000)
        rooms.position.contestAt = timing.now
        return seconds
    }

    /// Adds to the contest of `challenger` (a Zone index, -1 for no room; `nil`: none now, the
    /// sum wanes) against the present room, for the time since the last report: its `lead` less
    /// ``PositionSettings/drift``, a second at most. Whether it has won.
    @discardableResult
    mutating func contest(_ challenger: Int32?, lead: Double, settings: PositionSettings) -> Bool {
        let seconds = contestSeconds()
        // Scaled by how much of the radio's spread lasts (PositionSettings.contestScale).
        let scale = settings.contestScale(for: rooms.position.radio)
        guard let challenger else {
            rooms.position.score = max(0, rooms.position.score - settings.threshold * scale * seconds / 4)
            return false
        }
        if challenger != rooms.position.challenger {
            rooms.position.challenger = challenger
            rooms.position.score = 0
        }
        rooms.position.score = max(0, rooms.position.score + (lead - settings.drift * scale) * seconds)
        let threshold = (rooms.position.walking ? settings.walkThreshold : settings.threshold) * scale
        guard rooms.position.score >= threshold else { return false }
        rooms.position.score = 0
        rooms.position.challenger = -2
        return true
    }

    /// Moves the tag from its room (if any) to `target`, or to its Area `area` with no room.
    mutating func moveRoom(
        to target: Int32?, area: Int32, scanner: Int32, probability: Double, previous: Double?,
        into outputs: inout [MonitorOutput]
    ) {
        let from = rooms.zone >= 0 ? hierarchy.zones[Int(rooms.zone)].region : nil
        if rooms.zone >= 0 {
            let oldArea = hierarchy.areaOfZone[Int(rooms.zone)]
            sightings.zone[Int(rooms.zone)] = Self.never
            for old in hierarchy.zones[Int(rooms.zone)].beacons { sightings.beacon[Int(old)] = Self.never }
            if oldArea != area { sightings.area[Int(oldArea)] = Self.never }
        }
        rooms.since = timing.now
        presenceChanges &+= 1
        if let target {
            rooms.change = RoomChange(
                from: from, to: hierarchy.zones[Int(target)].region, at: Timestamp(microseconds: timing.now),
                scanner: hierarchy.beacons[Int(scanner)].locationID, evidence: heardStrength[Int(scanner)],
                previous: nil, probability: probability, previousProbability: previous)
            rooms.zone = target
            rooms.position.area = -1
            let anchor = hierarchy.zones[Int(target)].beacons[0]
            sightings.beacon[Int(anchor)] = timing.now
            sightings.zone[Int(target)] = timing.now
            sightings.area[Int(area)] = timing.now
            reconcileAll(into: &outputs)
            enterAncestors(of: anchor, zone: target, area: area, into: &outputs)
        } else {
            if let from {
                rooms.change = RoomChange(
                    from: from, to: nil, at: Timestamp(microseconds: timing.now),
                    scanner: hierarchy.beacons[Int(scanner)].locationID, evidence: heardStrength[Int(scanner)],
                    previous: nil, probability: probability, previousProbability: previous)
            }
            rooms.zone = -1
            rooms.position.area = area
            sightings.area[Int(area)] = timing.now
            reconcileAll(into: &outputs)
        }
    }

    /// The tag left its room and its Area by the silence, whether or not their exit deadlines have
    /// fired yet (each is looked at on its own clock): they exit now, before any room is entered,
    /// so that it is never in two rooms at once (§19).
    mutating func dropRoomAfterSilence(into outputs: inout [MonitorOutput]) {
        guard rooms.zone >= 0 else { return }
        let roomArea = RegionRef(.area, hierarchy.areaOfZone[Int(rooms.zone)])
        guard !(exitDeadline(roomArea).map { timing.now < $0 } ?? false) else { return }
        sightings.zone[Int(rooms.zone)] = Self.never
        for old in hierarchy.zones[Int(rooms.zone)].beacons { sightings.beacon[Int(old)] = Self.never }
        sightings.area[Int(roomArea.index)] = Self.never
        rooms.zone = -1
        reconcileAll(into: &outputs)
    }

    /// The `position` output: on every room change, and at most once a second while the estimate
    /// moves 0.5 m or more.
    mutating func reportPosition(
        area: Int32, filter: PositionFilter, building: Building, floor: Int, into outputs: inout [MonitorOutput]
    ) {
        let roomNow = rooms.zone >= 0 && hierarchy.areaOfZone[Int(rooms.zone)] == area ? rooms.zone : -1
        let changed = roomNow != rooms.position.reportedRoom
        guard changed || rooms.position.reportedAt == .min || timing.now &- rooms.position.reportedAt >= 1_000_000
        else {
            return
        }
        let (point, error) = filter.estimate(building: building, floor: floor)
        if !changed, let last = rooms.position.reportedPoint, last.distance(to: point) < 0.5 { return }
        rooms.position.reportedAt = timing.now
        rooms.position.reportedPoint = point
        rooms.position.reportedRoom = roomNow
        var confidence = 0.0
        if roomNow >= 0, let slot = building.roomSlot(ofZone: roomNow) {
            confidence = Double(filter.rooms[slot])
        } else {
            let first = building.roomOffsets[floor]
            confidence = Double(filter.rooms[first..<(first + building.floors[floor].zones.count)].max() ?? 0)
        }
        let report = PositionReport(
            area: hierarchy.areas[Int(area)].region, x: Self.rounded(point.x), y: Self.rounded(point.y),
            error: Self.rounded(error), room: roomNow >= 0 ? hierarchy.zones[Int(roomNow)].region : nil,
            confidence: (confidence * 1000).rounded() / 1000)
        outputs.append(.position(Timestamp(microseconds: timing.now), report))
    }

    static func rounded(_ value: Double) -> Double { (value * 100).rounded() / 100 }
}
