import BeaconCore
import Floorplan
import Foundation

/// The region monitor: presence, the HSYCO monitoring policy, transitions and ranging, as one state
/// machine driven by sightings and an injected clock (docs/behaviour.md §4–§6).
///
/// Nothing here reads a clock or does I/O. Each entry point takes the instant it happens at and
/// appends what follows from it to `outputs`, in causal order: transitions and `monitoring`
/// changes first, then `location`s. Deadlines (exits, beacons going `off`) fire from
/// ``advance(to:into:)``, which every entry point calls first, so a file replay and a live radio
/// drive the same code; ``nextDeadline`` tells a live shell when to wake.
package struct Monitor: Sendable {
    package let hierarchy: Hierarchy
    package let settings: MonitorSettings
    package let identity: MonitorIdentity
    /// The cap policy (docs/behaviour.md §5.2).
    package let policy: MonitoringPolicy
    package var plan: MonitoringPlan { policy.plan }
    package private(set) var mode: RangingMode

    let ranging: Ranging
    /// Microseconds of silence before an exit or an `off`: fixed, or the most under `auto`.
    let exitTimeout: Int64
    /// `Monitor.exitConfidence` under `Monitor.exitTimeout = auto` (docs/behaviour.md §18), else `nil`.
    let exitConfidence: Double?
    /// The silences part: what the adaptive exit has learned of each path's silences (§18).
    var silences: SilenceState
    /// The sightings part: when each beacon, Zone and Area was last sighted.
    var sightings: LastSightings
    /// The ranging part: each beacon's class and last reported one, its filter, the window.
    var classes: RangingState

    /// The cap policy's part: what is monitored now (§5.2).
    var monitoring = MonitoringState()
    /// The phone part: what a device's own operating system says (OwnTracks, §15.1).
    var phone = PhoneState()
    /// Counts every change of presence (an enter, an exit, a new monitored set, a region held or
    /// let go): a fleet keeps ``presence`` when it moved (docs/behaviour.md §15).
    package internal(set) var presenceChanges: UInt64 = 0
    /// The monitored regions and the Areas and Zones containing them, with their reported state.
    var tracked: [RegionRef: RegionState] = [:]
    /// The clock part: the instant the monitor is at, and its deadlines.
    var timing = MonitorClock()

    /// Where the monitor is in its life: before ``start(at:into:)``, running, or in the step in
    /// which a restart's grace fires (restored beacons not heard since may go `off` in it).
    var life = Lifecycle.new
    /// The regions a reload found inside, taken into ``tracked`` at ``start(at:)``.
    var carriedInside: [RegionRef: RegionState] = [:]
    /// Beacons restored as not `off` and not reported since the start: `off` waits for the grace.
    var restoredPending: Set<Int32> = []

    /// Record each step's computed class changes (``takeClassChanges()``): on when rules or
    /// alerts look at classes, off otherwise (the pipeline's hot path pays nothing).
    package var recordsClassChanges = false

    /// Per beacon, its filtered RSSI above its measured power, dB; -infinity while `off`.
    var heardStrength: [Double]
    /// The nearest beacon's part (§9.2).
    var nearestState: NearestState

    /// Under ``MonitorSettings/rooms``: the tag's room, why it last changed, and where the tag is
    /// on its floor (§19, §20); only the room rules write it.
    package internal(set) var rooms: RoomState
    /// Why the tag's room last changed.
    package var roomChange: RoomChange? { rooms.change }

    package internal(set) var currentAreaIndex: Int?
    package internal(set) var currentZoneIndex: Int?

    static let never = Int64.min

    /// A monitor for `hierarchy`, with the last reported class of beacons from a kept state
    /// (Location ID → class; unknown IDs are ignored) and the last reported nearest beacon, which
    /// stays the nearest until something else is heard or, heard or not, the restart grace ends
    /// (it counts only when its class was restored as not `off`).
    package init(
        hierarchy: Hierarchy,
        settings: MonitorSettings,
        identity: MonitorIdentity,
        restored: [String: Proximity] = [:],
        restoredNearest: String? = nil
    ) {
        self.hierarchy = hierarchy
        self.settings = settings
        self.identity = identity
        self.policy = MonitoringPolicy(hierarchy, maxRegions: settings.maxRegions)
        self.mode = settings.mode
        self.ranging = Ranging(settings)
        self.exitTimeout = Int64(
            ((settings.adaptiveExit ? settings.exitTimeoutMax : settings.exitTimeout) * 1_000_000).rounded())
        self.exitConfidence = settings.adaptiveExit ? settings.exitConfidence : nil
        nearestState = NearestState(margin: settings.nearestMargin)
        classes = RangingState(
            beacons: hierarchy.beacons.count, windowLength: Int64((settings.backgroundRanging * 1_000_000).rounded()),
            enterRSSI: settings.enterRSSI)
        let beacons = hierarchy.beacons.count
        sightings = LastSightings(beacons: beacons, zones: hierarchy.zones.count, areas: hierarchy.areas.count)
        heardStrength = Array(repeating: -.infinity, count: beacons)
        rooms = RoomState(
            grace: settings.adaptiveExit && settings.rooms != nil ? Array(repeating: 0, count: beacons) : [])
        silences = SilenceState(
            beacons: beacons, regions: hierarchy.areas.count + hierarchy.zones.count + beacons,
            adaptive: settings.adaptiveExit, rooms: settings.rooms != nil)
        for (locationID, value) in restored where value != .off {
            guard let index = hierarchy.index(ofLocation: locationID) else { continue }
            classes.reported[index] = value
            restoredPending.insert(Int32(index))
            watch(Int32(index))
        }
        if let id = restoredNearest, let index = hierarchy.index(ofLocation: id), restoredPending.contains(Int32(index))
        {
            nearestState.beacon = Int32(index)
        }
    }

    // MARK: - Entry points

    /// The computed classes that changed since the last call, in order (with
    /// ``recordsClassChanges`` on): what rules and alerts see, in either ranging mode.
    package mutating func takeClassChanges() -> [ProximityChange] {
        guard !classes.changes.isEmpty else { return [] }
        defer { classes.changes.removeAll(keepingCapacity: true) }
        return classes.changes
    }

    /// The earliest pending deadline; `nil` when nothing is pending.
    package var nextDeadline: Timestamp? { timing.timers.nextDue.map { Timestamp(microseconds: $0) } }

    /// The Area most recently entered that is still inside.
    package var currentArea: Region? { currentAreaIndex.map { hierarchy.areas[$0].region } }

    /// The Zone most recently entered that is still inside.
    package var currentZone: Region? { currentZoneIndex.map { hierarchy.zones[$0].region } }

    /// The current Area's name (else its canonical region), for `B/area`.
    package var currentAreaName: String? { currentArea.map { hierarchy.name(of: $0) ?? $0.description } }

    /// The current Zone's name (else its canonical region), for `B/zone`.
    package var currentZoneName: String? { currentZone.map { hierarchy.name(of: $0) ?? $0.description } }

    /// The class last reported for each configured beacon that is not `off`, by Location ID: what
    /// a reload starts from, as a restart starts from the kept classes.
    package var reportedClasses: [String: Proximity] {
        var byLocation: [String: Proximity] = [:]
        for (index, value) in classes.reported.enumerated() where value != .off {
            byLocation[hierarchy.beacons[index].locationID] = value
        }
        return byLocation
    }

    /// Starts the clock at `time`: emits the first `monitoring` output. The other entry points
    /// start the monitor at their time when this was not called.
    package mutating func start(at time: Timestamp, into outputs: inout [MonitorOutput]) {
        guard life == .new else { return }
        life = .running
        timing.now = time.microseconds
        // A reload's regions that were inside stay so (``init(reloading:hierarchy:settings:identity:restored:restoredNearest:)``).
        tracked = carriedInside
        switch plan {
        case .beacons:
            let all = (0..<hierarchy.beacons.count).map { RegionRef(.beacon, $0) }
            applyMonitoring(all, mode: .beacons, area: nil, into: &outputs)
        case .zones:
            let all = (0..<hierarchy.zones.count).map { RegionRef(.zone, $0) }
            applyMonitoring(all, mode: .zones, area: nil, into: &outputs)
        case .hierarchical:
            if let area = carriedArea() {
                let zones = hierarchy.areas[Int(area)].zones.map { RegionRef(.zone, $0) }
                let carried = Set(carriedInside.keys).union(phone.held)
                applyMonitoring(mostRecent(zones, favouring: carried), mode: .zones, area: area, into: &outputs)
            } else {
                applyMonitoring(mostRecentAreas(), mode: .areas, area: nil, into: &outputs)
            }
        }
        if !carriedInside.isEmpty {
            carriedInside = [:]
            // What the sightings say now: exits the new settings call for, enters of regions new here.
            reconcileAll(into: &outputs)
            monitoring.dirty = true
            applyPolicy(into: &outputs)
        }
        if !restoredPending.isEmpty {
            timing.timers.schedule(.grace, at: timing.now + exitTimeout)
        }
    }

    /// The monitor's clock: the latest instant it was advanced to.
    package var clock: Timestamp { Timestamp(microseconds: timing.now) }

    /// Fires every deadline up to and including `time`, each at its own instant.
    package mutating func advance(to time: Timestamp, into outputs: inout [MonitorOutput]) {
        if life == .new { start(at: time, into: &outputs) }
        let target = time.microseconds
        while let due = timing.timers.nextDue, due <= target {
            timing.now = due
            var regionsMayExit = false
            while let (_, deadline) = timing.timers.popDue(atOrBefore: due) {
                switch deadline {
                case .exit(let ref, let generation):
                    regionsMayExit = checkExit(ref, generation: generation) || regionsMayExit
                case .off(let beacon):
                    checkOff(beacon)
                case .grace:
                    life = .graceFiring
                    classes.recheckAll = true
                case .areaHold:
                    monitoring.dirty = true
                    regionsMayExit = true
                    positionHoldFired()
                case .learnEnd:
                    learnDeadlineFired(into: &outputs)
                case .positionSettle:
                    positionSettled(into: &outputs)
                }
            }
            if regionsMayExit { reconcileAll(into: &outputs) }
            applyPolicy(into: &outputs)
            report(into: &outputs)
        }
        timing.now = max(timing.now, target)
    }

    /// One received advertisement. Advertisements of beacons that are not configured change
    /// nothing; the return value says whether this one was configured.
    ///
    /// The deadlines before `time` fire first; those *at* `time` fire after the sighting. A region
    /// is inside while sighted less than exitTimeout ago (docs/behaviour.md §5.1), so a sighting exactly at its
    /// exit deadline keeps it inside: it never was outside, and neither an exit nor an `off` is due.
    @discardableResult
    package mutating func sighting(
        _ advertisement: Advertisement,
        at time: Timestamp,
        into outputs: inout [MonitorOutput]
    ) -> Bool {
        if life == .new { start(at: time, into: &outputs) }
        advance(to: Timestamp(microseconds: time.microseconds - 1), into: &outputs)
        timing.now = max(timing.now, time.microseconds)
        defer { advance(to: time, into: &outputs) }
        guard let index = hierarchy.index(of: advertisement.beacon) else { return false }
        let beacon = Int32(index)
        let power =
            settings.powerFromSighting ? advertisement.power : hierarchy.beacons[index].power ?? advertisement.power
        range(beacon, rssi: advertisement.rssi, power: power)
        if settings.rooms != nil { notePrint(beacon, level: Double(advertisement.rssi) - Double(power)) }
        if classes.enterRSSI.map({ Int(advertisement.rssi) >= $0 }) ?? true {
            let zone = hierarchy.zoneOfBeacon[index]
            let area = hierarchy.areaOfZone[Int(zone)]
            if settings.floorPlans != nil, isPositioned(beacon, area: area) {
                sightPosition(
                    beacon, level: Double(advertisement.rssi) - Double(power), zone: zone, area: area, into: &outputs)
                report(into: &outputs)
                return true
            }
            if let rule = settings.rooms {
                dropRoomAfterSilence(into: &outputs)
                if !sightPrintedRoom(beacon, area: area, into: &outputs) {
                    sightRoom(beacon, zone: zone, area: area, rule: rule, into: &outputs)
                }
                report(into: &outputs)
                return true
            }
            sightings.beacon[index] = timing.now
            sightings.zone[Int(zone)] = timing.now
            sightings.area[Int(area)] = timing.now
            enterAncestors(of: beacon, zone: zone, area: area, into: &outputs)
            applyPolicy(into: &outputs)
        }
        report(into: &outputs)
        return true
    }

    /// The device's own monitoring says it entered (`entered`) or left `region` (an OwnTracks
    /// transition, docs/behaviour.md §15.1). A region is inside while the device holds it or a sighting less than
    /// exitTimeout old does; derived regions follow (5.3). A region that is not monitored now (the
    /// phone has not yet taken the latest waypoints) is not entered.
    package mutating func deviceTransition(
        _ region: Region, entered: Bool, at time: Timestamp, into outputs: inout [MonitorOutput]
    ) {
        advance(to: time, into: &outputs)
        guard let ref = reference(to: region) else { return }
        if entered {
            guard tracked[ref]?.monitored == true, phone.held.insert(ref).inserted else { return }
        } else {
            guard phone.held.remove(ref) != nil else { return }
            presenceChanges &+= 1
            // The phone left: what it ranged there no longer says it is inside (docs/behaviour.md §15.1: inside
            // until the phone's `leave`, not until exitTimeout after its last beacon message).
            forgetPhoneSightings(in: ref)
            // Still sighted: the sightings' own exit deadline takes over.
            if tracked[ref]?.inside == true, isPresent(ref) { armExit(ref) }
        }
        reconcileAll(into: &outputs)
        applyPolicy(into: &outputs)
        report(into: &outputs)
    }

    /// Forgets the phone's ranging of the beacons in `ref`, and the presence it gave them.
    mutating func forgetPhoneSightings(in ref: RegionRef) {
        if ref.level == .area { phone.areaSeen[ref.index] = nil }
        let beacons = phone.seen.keys.filter { contains(ref, beacon: $0) }
        guard !beacons.isEmpty else { return }
        var zones: Set<Int32> = []
        for beacon in beacons {
            let index = Int(beacon)
            if sightings.beacon[index] == phone.seen[beacon] {
                phone.left[beacon] = max(phone.left[beacon] ?? Self.never, sightings.beacon[index])
                sightings.beacon[index] = Self.never
            }
            phone.seen[beacon] = nil
            zones.insert(hierarchy.zoneOfBeacon[index])
        }
        for zone in zones {
            sightings.zone[Int(zone)] =
                hierarchy.zones[Int(zone)].beacons.map { sightings.beacon[Int($0)] }.max() ?? Self.never
            let area = Int(hierarchy.areaOfZone[Int(zone)])
            sightings.area[area] = hierarchy.areas[area].zones.map { sightings.zone[$0] }.max() ?? Self.never
        }
        // A beacon sighted again since its `leave` needs no record of it.
        phone.left = phone.left.filter { sightings.beacon[Int($0.key)] < $0.value }
    }

    /// Notes the class a phone's own ranging gives `beacon` (reported as `phoneProximity`).
    package mutating func notePhoneProximity(_ proximity: Proximity, of beacon: BeaconID) {
        guard let index = hierarchy.index(of: beacon) else { return }
        phone.classes[Int32(index)] = proximity
    }

    /// The phone's own ranging reported `beacon` at `time` (an OwnTracks `beacon` message, after
    /// its ``sighting(_:at:into:)``). The app ranges only inside the regions iOS says it is in, and
    /// iOS settles a region it is given while inside without an `enter` (docs/behaviour.md §15.1): so the
    /// monitored region holding the beacon is inside until the phone's `leave` for it.
    package mutating func phoneRanged(_ beacon: BeaconID, at time: Timestamp, into outputs: inout [MonitorOutput]) {
        guard let index = hierarchy.index(of: beacon) else { return }
        phone.seen[Int32(index)] = time.microseconds
        let area = hierarchy.areaOfZone[Int(hierarchy.zoneOfBeacon[index])]
        phone.areaSeen[area] = time.microseconds
        // The look at the end of the Area's ranging (``isAreaRanged``), in whichever mode it comes.
        timing.timers.schedule(.areaHold, at: time.microseconds &+ exitTimeout)
        guard let ref = monitoredRegion(of: Int32(index)), tracked[ref]?.inside == true, phone.held.insert(ref).inserted
        else { return }
        presenceChanges &+= 1
        monitoring.dirty = true
        applyPolicy(into: &outputs)
        report(into: &outputs)
    }

    /// The monitored region that holds `beacon`, at the level monitored now; `nil` when it is not
    /// monitored.
    func monitoredRegion(of beacon: Int32) -> RegionRef? {
        let ref = regionAtMonitoredLevel(of: beacon)
        return tracked[ref]?.monitored == true ? ref : nil
    }

    /// The region of the level monitored now (Area, Zone or Beacon) that holds `beacon`.
    func regionAtMonitoredLevel(of beacon: Int32) -> RegionRef {
        let zone = hierarchy.zoneOfBeacon[Int(beacon)]
        switch monitoring.mode {
        case .areas: return RegionRef(.area, hierarchy.areaOfZone[Int(zone)])
        case .zones: return RegionRef(.zone, zone)
        case .beacons: return RegionRef(.beacon, beacon)
        }
    }

    /// The monitored regions now, outside-in and in file order.
    package var monitoredRegions: [Region] { monitoring.regions.map(region) }

    /// Switches between continuous (`foreground`) and windowed (`background`) ranging.
    package mutating func setMode(_ newMode: RangingMode, at time: Timestamp, into outputs: inout [MonitorOutput]) {
        advance(to: time, into: &outputs)
        guard newMode != mode else { return }
        mode = newMode
        classes.recheckAll = true
        report(into: &outputs)
    }
}

/// A region by its level and its index in the hierarchy's file-ordered lists: cheap to hash, and
/// ordered outside-in, then in file order.
struct RegionRef: Hashable, Comparable, Sendable {
    enum Level: UInt8, Sendable {
        case area, zone, beacon
    }

    var level: Level
    var index: Int32

    init(_ level: Level, _ index: Int32) {
        self.level = level
        self.index = index
    }

    init(_ level: Level, _ index: Int) {
        self.init(level, Int32(index))
    }

    static func < (lhs: RegionRef, rhs: RegionRef) -> Bool {
        lhs.level != rhs.level ? lhs.level.rawValue < rhs.level.rawValue : lhs.index < rhs.index
    }
}

/// What the monitor reported of a tracked region.
struct RegionState: Sendable {
    var monitored = false
    var inside = false
    var enteredAt: Int64 = 0
    /// The generation of the armed exit deadline; 0 for none.
    var timerGeneration: UInt32 = 0
}

enum Deadline: Sendable {
    /// A monitored region's exit, valid while its state carries that generation.
    case exit(RegionRef, UInt32)
    /// A beacon not sighted for exitTimeout goes `off`.
    case off(Int32)
    /// The end of the restart grace: restored beacons not seen since the start go `off`.
    case grace
    /// The end of ``Monitor/areaHoldUntil``: no Zone followed the device's Area.
    case areaHold
    /// The end of a training session (docs/behaviour.md §22).
    case learnEnd
    /// A burst of a tag's readings on a floor plan has settled (docs/behaviour.md §20, "Bursts").
    case positionSettle
}

/// A monitor's life (``Monitor/life``).
enum Lifecycle: Sendable, Hashable {
    /// Made, not started: the first entry point starts it at its time.
    case new
    case running
    /// A restart's grace fired in this step: beacons restored as heard and not heard since go
    /// `off` now (docs/behaviour.md §12); the step's ranging report ends it.
    case graceFiring
}
