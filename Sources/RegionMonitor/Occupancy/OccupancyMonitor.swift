import BeaconCore
import JSONText

/// What a sensor's state is shown as in an `occupancy` output: `true`/`false` (motion within its
/// hold, presence), a count, or `null` (not known yet, or offline).
package enum SensorShown: Sendable, Hashable {
    case detected(Bool)
    case count(Int)
    /// No reading yet, or the sensor says it does not know.
    case none
    /// Offline: its firmware's status topic says so, or it was silent for its `silence`.
    case offline
}

/// A region's occupancy changed (docs/behaviour.md §23): the `occupancy` output.
package struct OccupancyChange: Sendable, Hashable {
    package var region: Region
    package var name: String?
    package var occupied: Bool
    package var count: Int
    /// The counted devices inside, by id, sorted.
    package var devices: [String]
    /// Each of the region's sensors' state, by id (sorted).
    package var sensors: [String: SensorShown]
    /// `occupied` flipped from an announced state (what `occupied`/`vacant` rules see); false for
    /// a count or sensor change, and for a region's first announcement after a start.
    package var flipped: Bool
    /// The door sensors among ``sensors`` (sorted): shown `true` while closed, never a reason.
    package var doors: [String]
    /// The closed doors that hold the region occupied (docs/occupancy.md, "Doors"): someone
    /// moved inside after the last of them closed. Empty when the doors hold nothing.
    package var heldBy: [String]

    package init(
        region: Region, name: String?, occupied: Bool, count: Int, devices: [String], sensors: [String: SensorShown],
        flipped: Bool, doors: [String] = [], heldBy: [String] = []
    ) {
        (self.region, self.name, self.occupied, self.count) = (region, name, occupied, count)
        (self.devices, self.sensors, self.flipped) = (devices, sensors, flipped)
        (self.doors, self.heldBy) = (doors, heldBy)
    }

    /// The same announcement, whether or not it flipped.
    func sameState(as other: OccupancyChange) -> Bool {
        (occupied, count, devices, sensors, name, heldBy) == (
            other.occupied, other.count, other.devices, other.sensors, other.name, other.heldBy
        )
    }

    /// Why the region is occupied, for a person (`check`, the web view): "anna's badge, and the
    /// lab radar says present"; `names` gives a device's display name.
    package func explanation(names: (String) -> String = { $0 }) -> String {
        let label = name ?? region.description
        guard occupied else { return "\(label) is vacant" }
        var reasons = devices.map(names)
        for (id, state) in sensors.sorted(by: { $0.key < $1.key }) where !doors.contains(id) {
            switch state {
            case .detected(true): reasons.append("\(id) says present")
            case .count(let people) where people > 0: reasons.append("\(id) counts \(people)")
            default: continue
            }
        }
        if !heldBy.isEmpty {
            let closed =
                heldBy.count == 1
                ? "its door \(heldBy[0]) is" : "its doors \(heldBy.joined(separator: ", ")) are"
            reasons.append("\(closed) closed since someone moved inside (held until a door opens)")
        }
        if reasons.isEmpty { return "\(label) is occupied: nobody is seen now; vacant once that has lasted" }
        let list =
            reasons.count == 1
            ? reasons[0] : reasons.dropLast().joined(separator: ", ") + ", and " + reasons[reasons.count - 1]
        return "\(label) is occupied: \(list)"
    }
}

/// Occupancy per Zone (and Area) from the devices inside and the presence sensors
/// (docs/behaviour.md §23): a pure state machine on the caller's clock.
///
/// The rule: a region is occupied while a counted device is inside, a presence sensor says
/// present, a motion sensor fired within its hold, or a count sensor says more than 0; its count
/// is the larger of the devices inside and the count sensors' number (a presence or motion sensor
/// alone counts 1); an Area's is at least its Zones' sum. It is vacant only once every signal
/// has said so for ``OccupancySettings/vacantAfter``: when they disagree, occupied wins. A sensor
/// counts for nothing while offline: its firmware's ``SensorDefinition/status`` topic says so, or
/// (until that topic has said anything) it was silent for its ``SensorDefinition/silence``. After
/// a start a region is announced occupied as soon as anything says so, and vacant only after
/// ``OccupancySettings/vacantAfter`` of nothing, so that a sensor's retained state or a device's
/// first report can arrive first.
package struct OccupancyMonitor: Sendable {
    package let settings: OccupancySettings
    /// The regions kept, Zones first, in hierarchy order: those with an occupancy, and the Zones
    /// of counted Areas (for their sum) when Zones are not counted.
    package let regions: [Region]
    package let names: [String?]
    private let position: [Region: Int]
    /// Each region's sensors, by index into ``OccupancySettings/sensors``.
    private let sensorsOf: [[Int]]
    private let sensorIndex: [String: Int]
    private let topicIndex: [String: [Int]]
    /// Each status topic's sensors (docs/occupancy.md, "Liveness").
    private let statusIndex: [String: [Int]]
    /// The regions announced (`Occupancy.count`); the others are Zones kept for their Area's sum.
    private let announces: [Bool]
    /// Each Zone's Area, by index, when the Area has an occupancy.
    private let areaOf: [Int?]
    /// Each Area's Zones, by index (`nil` for a Zone).
    private let zonesOf: [[Int]?]

    private struct SensorState: Sendable, Hashable {
        var reading: SensorReading?
        /// The last message (any that was not garbage), microseconds.
        var heard: Int64?
        /// The last detection of a motion sensor, or the last message of a presence sensor saying
        /// present.
        var motion: Int64?
        /// Since when a door sensor says closed (`nil`: open, unknown or not heard).
        var closedSince: Int64?
        /// What its firmware's status topic said last: `nil` before it said anything (the
        /// sensor's ``SensorDefinition/silence`` applies until then).
        var online: Bool?
        /// The kinds of garbage said already (each is said once).
        var said: Set<String> = []
        /// Whether a JSON object held its field; since when objects came without it, and
        /// their keys (for the warning once a minute of them has passed).
        var fieldFound = false
        var fieldMissingSince: Int64?
        var keysSeen: Set<String> = []
        /// Taken for dead by its silence (said in the log when it became so, and when it spoke again).
        var silent = false
    }

    /// Lines for the log that no input returned: a sensor taken for dead by its silence, and
    /// speaking again (``takeNotices()``).
    package private(set) var notices: [String] = []

    private var sensorStates: [SensorState]
    /// Each device's Areas and Zones inside, as last told, counted or not: a reload that makes a
    /// device a person (or a region counted) counts it where it is, without waiting for it to move.
    private var membership: [String: Set<Region>] = [:]
    /// The counted devices inside each region.
    private var occupants: [Set<String>]
    /// What was announced last for each region; `nil` before its first announcement.
    package private(set) var announced: [OccupancyChange?]
    /// Since when nothing has said anyone is there (announced occupied, or not announced yet).
    private var quietSince: [Int64?]
    /// Each region's next instant its state may change with no input.
    private var due: [Int64?]
    private var queue = DeadlineQueue<Int>()
    private var dirty: Set<Int> = []
    private var started: Int64?

    /// A monitor for `settings` on `hierarchy`.
    package init(settings: OccupancySettings, hierarchy: Hierarchy) {
        self.settings = settings
        // An Area's count is the sum of its Zones': they are kept whenever Areas are counted.
        var regions: [Region] = []
        if settings.scope.zones || settings.scope.areas { regions += hierarchy.zones.map(\.region) }
        announces =
            Array(repeating: settings.scope.zones, count: regions.count)
            + Array(repeating: true, count: settings.scope.areas ? hierarchy.areas.count : 0)
        if settings.scope.areas { regions += hierarchy.areas.map(\.region) }
        self.regions = regions
        names = regions.map { hierarchy.name(of: $0) }
        let position = Dictionary(regions.enumerated().map { ($1, $0) }) { first, _ in first }
        self.position = position
        areaOf = regions.map { region in
            if case .zone(let uuid, _) = region { position[.area(uuid)] } else { nil }
        }
        var zonesOf = regions.map { $0.kind == .area ? [Int]() : nil }
        for (zone, area) in areaOf.enumerated() { if let area { zonesOf[area]?.append(zone) } }
        self.zonesOf = zonesOf
        var sensorsOf = [[Int]](repeating: [], count: regions.count)
        var topicIndex: [String: [Int]] = [:]
        var statusIndex: [String: [Int]] = [:]
        for (index, sensor) in settings.sensors.enumerated() {
            topicIndex[sensor.topic, default: []].append(index)
            if let status = sensor.status { statusIndex[status.topic, default: []].append(index) }
            if let zone = position[sensor.zone] { sensorsOf[zone].append(index) }
            if case .zone(let uuid, _) = sensor.zone, let area = position[.area(uuid)] {
                sensorsOf[area].append(index)
            }
        }
        self.sensorsOf = sensorsOf
        self.topicIndex = topicIndex
        self.statusIndex = statusIndex
        sensorIndex = Dictionary(settings.sensors.enumerated().map { ($1.id, $0) }) { first, _ in first }
        sensorStates = Array(repeating: SensorState(), count: settings.sensors.count)
        occupants = Array(repeating: [], count: regions.count)
        announced = Array(repeating: nil, count: regions.count)
        quietSince = Array(repeating: nil, count: regions.count)
        due = Array(repeating: nil, count: regions.count)
    }

    /// A monitor for new settings or a new hierarchy going on from `previous`: who is inside,
    /// what each sensor (by id) said, and what was announced carry over.
    package init(reloading previous: OccupancyMonitor, settings: OccupancySettings, hierarchy: Hierarchy) {
        self.init(settings: settings, hierarchy: hierarchy)
        started = previous.started
        for (index, sensor) in settings.sensors.enumerated() {
            guard let old = previous.sensorIndex[sensor.id] else { continue }
            let oldDefinition = previous.settings.sensors[old]
            guard oldDefinition.kind == sensor.kind, oldDefinition.zone == sensor.zone else { continue }
            sensorStates[index] = previous.sensorStates[old]
            // What another status topic or another field will say is not known yet.
            if oldDefinition.status != sensor.status { sensorStates[index].online = nil }
            if oldDefinition.path != sensor.path {
                (sensorStates[index].fieldFound, sensorStates[index].fieldMissingSince) = (false, nil)
                sensorStates[index].keysSeen = []
            }
        }
        membership = previous.membership
        for (device, regions) in membership where !settings.nonOccupants.contains(device) {
            for region in regions { if let index = position[region] { occupants[index].insert(device) } }
        }
        for (index, region) in self.regions.enumerated() {
            guard let old = previous.position[region] else { continue }
            announced[index] = previous.announced[old]
            quietSince[index] = previous.quietSince[old]
        }
        dirty = Set(self.regions.indices)
    }

    /// The sensors listening on `topic` (ids), for the shell's subscriptions.
    package func sensors(on topic: String) -> [String] {
        (topicIndex[topic] ?? []).map { settings.sensors[$0].id }
    }

    /// Every sensor topic, sorted, without repeats.
    package var topics: [String] { topicIndex.keys.sorted() }

    /// The sensors whose firmware says on `topic` whether they are alive (ids).
    package func sensors(status topic: String) -> [String] {
        (statusIndex[topic] ?? []).map { settings.sensors[$0].id }
    }

    // MARK: - Inputs

    /// The clock starts: every region is looked at now (occupied ones are announced at once,
    /// vacant ones after ``OccupancySettings/vacantAfter``).
    package mutating func start(at time: Timestamp, into outputs: inout [MonitorOutput]) {
        begin(at: time)
        dirty.formUnion(regions.indices)
        settle(at: time, into: &outputs)
    }

    /// The first input starts the clock when ``start(at:into:)`` was not called (as the
    /// monitor's does: a file run starts at its first record).
    private mutating func begin(at time: Timestamp) {
        guard started == nil else { return }
        started = time.microseconds
        dirty.formUnion(regions.indices)
    }

    /// Device `device` is now inside `regions` (of any kind: only the regions with an occupancy
    /// count). A device that is not a person (``OccupancySettings/nonOccupants``) counts nowhere.
    package mutating func place(
        _ device: String, inside regions: some Sequence<Region>, at time: Timestamp, into outputs: inout [MonitorOutput]
    ) {
        advance(to: time, into: &outputs)
        begin(at: time)
        let now = Set(regions.lazy.filter { $0.kind != .beacon })
        let before = membership[device] ?? []
        if now != before {
            membership[device] = now.isEmpty ? nil : now
            if !settings.nonOccupants.contains(device) {
                for region in before.subtracting(now) {
                    guard let index = position[region] else { continue }
                    occupants[index].remove(device)
                    dirty.insert(index)
                }
                for region in now.subtracting(before) {
                    guard let index = position[region] else { continue }
                    occupants[index].insert(device)
                    dirty.insert(index)
                }
            }
        }
        settle(at: time, into: &outputs)
    }

    /// A message of sensor `id`. Returns what was wrong with it when it was garbage of a kind not
    /// said before for this sensor (the shell logs it; nothing changes then), or when a minute of
    /// its JSON objects went by without its field (once: the field to set).
    @discardableResult
    package mutating func sensor(
        _ id: String, payload: [UInt8], at time: Timestamp, into outputs: inout [MonitorOutput]
    ) -> String? {
        guard let index = sensorIndex[id] else { return nil }
        advance(to: time, into: &outputs)
        begin(at: time)
        let definition = settings.sensors[index]
        let now = time.microseconds
        switch SensorPayload.parse(payload, kind: definition.kind, path: definition.path) {
        case .garbage(let why):
            guard sensorStates[index].said.insert(Self.kind(of: why)).inserted else { return nil }
            return "sensor \(id): \(why); its state is unchanged"
        case .heartbeat:
            sensorStates[index].heard = now
            if let notice = missingField(index, payload: payload, at: now) {
                touch(sensor: index)
                settle(at: time, into: &outputs)
                return notice
            }
        case .reading(let reading):
            sensorStates[index].heard = now
            sensorStates[index].fieldFound = true
            sensorStates[index].reading = reading
            if definition.kind == .motion || definition.kind == .presence, reading == .detected(true) {
                sensorStates[index].motion = now
            }
            if definition.kind == .door {
                if reading != .detected(true) {
                    sensorStates[index].closedSince = nil
                } else if sensorStates[index].closedSince == nil {
                    sensorStates[index].closedSince = now
                }
            }
        }
        touch(sensor: index)
        settle(at: time, into: &outputs)
        return nil
    }

    /// A minute of a sensor's JSON objects without its field, in microseconds.
    private static let fieldGrace: Int64 = 60_000_000
    /// The most keys kept of a sensor's JSON objects for the warning.
    private static let keysKept = 32

    /// What kind of garbage `why` says: its text without the quoted excerpts and numbers it
    /// names ("\"maybe\" is neither on nor off" and "\"perhaps\" ..." are one kind).
    static func kind(of why: String) -> String {
        var kind = ""
        var quoted = false
        var digits = false
        for character in why {
            if character == "\"" {
                quoted.toggle()
                kind.append(character)
            } else if quoted {
                continue
            } else if character.isNumber {
                if !digits { kind.append("#") }
                digits = true
                continue
            } else {
                kind.append(character)
            }
            digits = false
        }
        return kind
    }

    /// The warning for sensor `index`'s JSON object without its field, once a minute of them
    /// went by and its field never came (an Aqara FP1 says `presence`, not `occupancy`).
    private mutating func missingField(_ index: Int, payload: [UInt8], at now: Int64) -> String? {
        guard !sensorStates[index].fieldFound, sensorStates[index].fieldMissingSince != .min else { return nil }
        if case .object(let object)? = JSONValue.parse(payload) {
            // A few dozen keys say what the device sends; a hostile sender gets no more memory.
            for key in object.keys where sensorStates[index].keysSeen.count < Self.keysKept {
                sensorStates[index].keysSeen.insert(key)
            }
        }
        guard let since = sensorStates[index].fieldMissingSince else {
            sensorStates[index].fieldMissingSince = now
            return nil
        }
        guard now &- since >= Self.fieldGrace else { return nil }
        sensorStates[index].fieldMissingSince = .min
        let definition = settings.sensors[index]
        let keys = sensorStates[index].keysSeen.sorted()
        let seen = keys.isEmpty ? "no field" : keys.prefix(12).map { $0.excerpt }.joined(separator: ", ")
        let guess = Self.likelyField(keys, kind: definition.kind) ?? keys.first ?? "<field>"
        return "sensor \(definition.id): no \"\(definition.path.excerpt)\" in a minute of its messages "
            + "(they hold \(seen)); name the field as the fourth part of its key, such as "
            + "Sensor.\(definition.id) = \(definition.topic.excerpt), \(definition.kind.rawValue), "
            + "<Zone>, \(guess.excerpt)"
    }

    /// The key among `keys` a sensor of `kind` most likely reads.
    private static func likelyField(_ keys: [String], kind: SensorKind) -> String? {
        let likely =
            switch kind {
            case .motion: ["motion", "occupancy", "presence", "pir"]
            case .presence: ["presence", "occupancy", "motion", "presence_state"]
            case .count: ["target_count", "people", "count", "presence_count", "targets"]
            case .door: ["contact", "door", "state", "window"]
            }
        return likely.first { keys.contains($0) }
    }

    /// A message on sensor `id`'s status topic: `online` or `offline` from its firmware (or its
    /// broker, by the MQTT will). Returns what to log: the sensor going offline or online again,
    /// or the first garbage of its kind.
    @discardableResult
    package mutating func sensorStatus(
        _ id: String, payload: [UInt8], at time: Timestamp, into outputs: inout [MonitorOutput]
    ) -> String? {
        guard let index = sensorIndex[id], let status = settings.sensors[index].status else { return nil }
        advance(to: time, into: &outputs)
        begin(at: time)
        guard let online = SensorStatus.parse(payload) else {
            let why =
                "status \"\(String(decoding: payload.prefix(40), as: UTF8.self).printable)\" is neither online nor offline"
            guard sensorStates[index].said.insert(Self.kind(of: why)).inserted else { return nil }
            return "sensor \(id): \(why) (on \(status.topic.excerpt)); its liveness is unchanged"
        }
        let before = sensorStates[index].online
        sensorStates[index].online = online
        // A door offline may open and close unseen: closed again counts from its next message.
        if !online { sensorStates[index].closedSince = nil }
        guard before != online else { return nil }
        touch(sensor: index)
        settle(at: time, into: &outputs)
        if online { return before == nil ? nil : "sensor \(id) is online again (\(status.topic.excerpt))" }
        return "sensor \(id) is offline: \(status.topic.excerpt) says so; it counts for nothing until it is online"
    }

    private mutating func touch(sensor index: Int) {
        let zone = settings.sensors[index].zone
        if let region = position[zone] { dirty.insert(region) }
        if case .zone(let uuid, _) = zone, let area = position[.area(uuid)] { dirty.insert(area) }
    }

    // MARK: - Time

    /// The earliest instant a region's state may change with no input: a hold or a silence
    /// running out, a vacancy due.
    package var nextDeadline: Timestamp? {
        queue.nextDue.map(Timestamp.init(microseconds:))
    }

    /// Drops the entries at the head of the queue that were re-armed or cleared since, so that
    /// ``nextDeadline`` names an instant something is due (a replay runs its clock to it).
    private mutating func dropStaleDeadlines() {
        let due = due
        _ = queue.earliestCurrent { at, region in due[region] == at }
    }

    /// Every region whose deadline is due at or before `time` is looked at again, instant by
    /// instant: a vacancy is announced at its own instant however late the clock is moved.
    package mutating func advance(to time: Timestamp, into outputs: inout [MonitorOutput]) {
        let now = time.microseconds
        while let instant = queue.nextDue, instant <= now {
            while let (at, region) = queue.popDue(atOrBefore: instant) {
                guard due[region] == at else { continue }
                due[region] = nil
                dirty.insert(region)
            }
            settle(at: Timestamp(microseconds: instant), into: &outputs)
        }
        settle(at: time, into: &outputs)
        dropStaleDeadlines()
    }

    /// Every instant held moves by `delta` microseconds (the wall clock was stepped).
    package mutating func shiftClock(by delta: Int64) {
        guard delta != 0 else { return }
        started = started?.shifted(by: delta)
        for index in sensorStates.indices {
            sensorStates[index].heard = sensorStates[index].heard?.shifted(by: delta)
            sensorStates[index].motion = sensorStates[index].motion?.shifted(by: delta)
            sensorStates[index].closedSince = sensorStates[index].closedSince?.shifted(by: delta)
            if let since = sensorStates[index].fieldMissingSince, since != .min {
                sensorStates[index].fieldMissingSince = since.shifted(by: delta)
            }
        }
        quietSince = quietSince.map { $0?.shifted(by: delta) }
        due = due.map { $0?.shifted(by: delta) }
        queue.shiftClock(by: delta)
    }

    // MARK: - The rule

    /// What sensor `index` contributes at `now`: its state shown, whether it says someone is
    /// there, its count, and when that may change with no message.
    private func contribution(_ index: Int, at now: Int64) -> (SensorShown, positive: Bool, count: Int, until: Int64?) {
        let definition = settings.sensors[index]
        let state = sensorStates[index]
        if state.online == false { return (.offline, false, 0, nil) }
        guard let heard = state.heard else { return (.none, false, 0, nil) }
        var until: Int64?
        // The silence until the firmware's status topic has said something.
        if definition.silence > 0, state.online == nil {
            let end = heard.adding(seconds: definition.silence)
            if now >= end { return (.offline, false, 0, nil) }
            until = end
        }
        switch definition.kind {
        case .motion:
            guard let motion = state.motion else {
                return (state.reading == .unknown || state.reading == nil ? .none : .detected(false), false, 0, until)
            }
            let end = motion.adding(seconds: definition.hold)
            guard now < end else { return (.detected(false), false, 0, until) }
            return (.detected(true), true, 1, min(until ?? end, end))
        case .presence:
            guard case .detected(let present)? = state.reading else { return (.none, false, 0, until) }
            return (.detected(present), present, present ? 1 : 0, until)
        case .count:
            guard case .count(let people)? = state.reading else { return (.none, false, 0, until) }
            return (.count(people), people > 0, people, until)
        case .door:
            // A door says nobody is there: it only holds what motion said (``heldBy(_:at:)``).
            guard case .detected(let closed)? = state.reading else { return (.none, false, 0, until) }
            return (.detected(closed), false, 0, until)
        }
    }

    /// The doors that hold Zone `region` occupied at `now` (docs/occupancy.md, "Doors"): it has
    /// doors, every one is online and closed, and a motion or presence sensor of the Zone
    /// detected someone after the last of them closed. An Area is held by its held Zones' doors.
    private func heldBy(_ region: Int, at now: Int64) -> [String] {
        if let zones = zonesOf[region] { return zones.flatMap { announced[$0]?.heldBy ?? [] }.sorted() }
        var doors: [String] = []
        var closed = Int64.min
        var seen = Int64.min
        for index in sensorsOf[region] {
            let definition = settings.sensors[index]
            switch definition.kind {
            case .door:
                guard contribution(index, at: now).0 == .detected(true),
                    let since = sensorStates[index].closedSince
                else { return [] }
                doors.append(definition.id)
                closed = max(closed, since)
            case .motion, .presence:
                // A sensor offline says nothing of who moved.
                if contribution(index, at: now).0 != .offline, let motion = sensorStates[index].motion {
                    seen = max(seen, motion)
                }
            case .count:
                continue
            }
        }
        return !doors.isEmpty && seen > closed ? doors.sorted() : []
    }

    /// Looks at every dirty region at `time`, announcing those whose state changed.
    private mutating func settle(at time: Timestamp, into outputs: inout [MonitorOutput]) {
        guard !dirty.isEmpty, let started else {
            return
        }
        let now = time.microseconds
        // An Area's count is its Zones' sum: a Zone looked at has its Area looked at after it
        // (Zones come first).
        for region in dirty { if let area = areaOf[region] { dirty.insert(area) } }
        for region in dirty.sorted() {
            var shown: [String: SensorShown] = [:]
            var positive = !occupants[region].isEmpty
            var count = occupants[region].count
            if let zones = zonesOf[region] {
                count = max(count, zones.reduce(0) { $0 + (announced[$1]?.count ?? 0) })
            }
            var next: Int64?
            var doors: [String] = []
            for index in sensorsOf[region] {
                if settings.sensors[index].kind == .door { doors.append(settings.sensors[index].id) }
                let (state, says, people, until) = contribution(index, at: now)
                shown[settings.sensors[index].id] = state
                if regions[region] == settings.sensors[index].zone {
                    noteSilence(index, silent: state == .offline && sensorStates[index].online == nil)
                }
                positive = positive || says
                count = max(count, people)
                if let until { next = min(next ?? until, until) }
            }
            let previous = announced[region]
            // Doors keep a room occupied; they never make one so (a door back online, say).
            let held = positive || previous?.occupied == true ? heldBy(region, at: now) : []
            var change = OccupancyChange(
                region: regions[region], name: names[region], occupied: true, count: count,
                devices: occupants[region].sorted(), sensors: shown, flipped: previous?.occupied == false,
                doors: doors.sorted(), heldBy: held)
            if positive {
                quietSince[region] = nil
            } else if !held.isEmpty {
                // Closed doors with someone inside: no vacancy until a door opens, and the wait
                // starts then.
                quietSince[region] = nil
                change.count = max(count, previous?.occupied == true ? previous?.count ?? 1 : 1)
            } else if previous?.occupied != false {
                // Announced occupied, or not yet announced: vacant once quiet for vacantAfter.
                let quiet = quietSince[region] ?? (previous == nil ? max(started, now) : now)
                quietSince[region] = quiet
                let vacancy = quiet.adding(seconds: settings.vacantAfter)
                if now >= vacancy {
                    change.occupied = false
                    change.count = 0
                    change.flipped = previous != nil
                    quietSince[region] = nil
                } else if let previous {
                    change.count = previous.count
                    next = min(next ?? vacancy, vacancy)
                } else {
                    next = min(next ?? vacancy, vacancy)
                    schedule(region, at: next)
                    continue
                }
            } else {
                change.occupied = false
                change.count = 0
                change.flipped = false
            }
            schedule(region, at: next)
            if let previous, previous.sameState(as: change) { continue }
            announced[region] = change
            if announces[region] { outputs.append(.occupancy(time, change)) }
        }
        dirty.removeAll(keepingCapacity: true)
        dropStaleDeadlines()
    }

    /// Says when sensor `index` was taken for dead by its silence, and when it spoke again.
    private mutating func noteSilence(_ index: Int, silent: Bool) {
        guard sensorStates[index].silent != silent else { return }
        sensorStates[index].silent = silent
        let definition = settings.sensors[index]
        let seconds = JSONValue.numberText(definition.silence)
        notices.append(
            silent
                ? "sensor \(definition.id) is offline: no message for \(seconds) s (Sensor.\(definition.id).silence); "
                    + "it counts for nothing until it speaks"
                : "sensor \(definition.id) speaks again after its silence")
    }

    /// The log lines since the last call, taken.
    package mutating func takeNotices() -> [String] {
        guard !notices.isEmpty else { return [] }
        defer { notices.removeAll() }
        return notices
    }

    private mutating func schedule(_ region: Int, at instant: Int64?) {
        guard due[region] != instant else { return }
        due[region] = instant
        if let instant { queue.schedule(region, at: instant) }
    }

    /// Each region's announced state now (regions not announced yet left out), for the web view
    /// and `/metrics`.
    package var current: [OccupancyChange] {
        announced.indices.compactMap { announces[$0] ? announced[$0] : nil }
    }
}

extension Int64 {
    /// This instant `seconds` later, saturating.
    fileprivate func adding(seconds: Double) -> Int64 {
        let micros = (seconds * 1_000_000).rounded()
        guard micros.isFinite, micros < Double(Int64.max) else { return .max }
        return addingReportingOverflow(Int64(micros)).overflow ? .max : self &+ Int64(micros)
    }
}
