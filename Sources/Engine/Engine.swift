import BeaconCore
import Floorplan
import BeaconConfiguration
import RegionMonitor
import Rules

/// The whole per-device state machine — monitor, ranging, nearest, rules, alerts, dwell — behind
/// one entry point: inputs in, ordered ``EngineAction``s out.
///
/// Pure: no clock, no database, no network, no threads. The shell owns the clock and says when
/// each input happens (``handle(_:at:into:)``) and how far time has gone (``advance(to:into:)``);
/// a file run drives it on the virtual clock of its input, a live run on the real one, tests on
/// whatever they like. Persistence, HTTP calls and scripts are actions the shell performs.
///
/// Every timer kind — region exits and beacons going `off` (the monitor's), rule latches, alert
/// resets, and local midnight for dwell — is read through ``nextDeadline`` and ``nextWake``, and
/// fired by ``fire(_:into:)``, the one place that orders an instant: latches and alert resets
/// before the monitor's deadlines, each instant its own step, every instant before an input's
/// before it.
package struct Engine: Sendable {
    package private(set) var monitor: Monitor
    /// The Ubudu rules on the monitor's and the geofences' transitions; `nil` without
    /// `Rules.source` and `Rules.geofences`.
    package private(set) var rules: RuleEngine?
    /// Presence in the geofences of `Rules.geofences` (docs/behaviour.md §17); `nil` without it.
    package private(set) var geofences: GeofenceMonitor?
    /// The regions of each rules document, as the rule engine was built from them: a refresh of
    /// one keeps the other.
    private var beaconRegions: [RuleRegion]?
    private var fenceRegions: [RuleRegion]?
    /// The `LocationAlert.*` alerts (docs/behaviour.md §9.1); `nil` without any.
    package private(set) var alerts: AlertConsumer?
    /// Time inside each Area and Zone per local day (docs/behaviour.md §9.3).
    package private(set) var dwell: DwellLedger
    /// The building's occupancy (docs/behaviour.md §23): kept by the own radio's engine alone
    /// (``countsOccupancy``), when the configuration has `Occupancy.*` or `Sensor.*` keys.
    package private(set) var occupancy: OccupancyMonitor?
    /// This engine keeps the building's occupancy (the own radio's).
    package let countsOccupancy: Bool
    /// Lines for the log since the last ``takeNotices()`` (a sensor's garbage, its field never
    /// seen, its firmware saying it is offline or online again).
    package private(set) var notices: [String] = []
    /// The monitor's presence count when the occupancy was last told where the own radio is.
    private var placedPresence: UInt64?
    /// The earliest latch or alert reset, and the earliest latch: kept, as every input asks (and
    /// reading through the optionals would copy the rule engine each time).
    private var latchDeadline: Timestamp?
    private var ruleDeadline: Timestamp?
    /// The rules or alerts were called in this step: their deadlines and changes need a look.
    private var touched = false
    /// When the dwell ledger next has something to show (a local midnight), in microseconds.
    private var dwellDue = Int64.min
    /// The rule counts a start began from: what a reload that brings rules in starts from.
    private var keptRules: RuleState
    /// The latest instant of the kept presence this engine goes on from (``MonitorPresence/latest``).
    package let keptLatest: Int64?
    /// Outputs of the step being made, emptied (its storage kept) when the step closes.
    private var pending: [MonitorOutput] = []
    /// Trace commands that nothing takes (an alert command for an alert not in progress, an
    /// unknown command), counted.
    package private(set) var ignoredCommands = 0
    /// Advertisements of beacons that are not configured: decoded, counted, moving nothing.
    package private(set) var unconfiguredSightings = 0
    package private(set) var sightings = 0

    /// An engine for `configuration`, reporting for `identity`, going on from a `kept` state; with
    /// `rules` (the regions of `Rules.source`, and the geofences of `Rules.geofences`), the rule
    /// engine runs by `ruleSettings`.
    /// With `occupancy`, the engine keeps the building's occupancy (docs/behaviour.md §23): the
    /// own radio's, told of every device's regions by the table of devices.
    package init(
        configuration: Configuration, identity: MonitorIdentity, kept: KeptState = KeptState(),
        rules: [RuleRegion]? = nil, ruleSettings: RuleSettings = RuleSettings(), occupancy: Bool = false
    ) {
        countsOccupancy = occupancy
        if occupancy, let settings = configuration.occupancy {
            self.occupancy = OccupancyMonitor(settings: settings, hierarchy: configuration.hierarchy)
        }
        monitor = Monitor(
            hierarchy: configuration.hierarchy,
            settings: configuration.monitor,
            identity: identity,
            restored: kept.classes,
            restoredNearest: kept.nearest
        )
        if let presence = kept.presence { monitor.resume(presence) }
        keptLatest = kept.presence?.latest
        dwell = DwellLedger(
            timeZone: configuration.monitor.timezone ?? .current, restored: kept.dwell, regions: kept.dwellRegions)
        keptRules = kept.rules
        if let rules {
            beaconRegions = rules.filter { $0.geofence == nil }
            let fences = rules.filter { $0.geofence != nil }
            if !fences.isEmpty || configuration.rules.geofences != nil { fenceRegions = fences }
            self.rules = RuleEngine(
                regions: rules, hierarchy: configuration.hierarchy, settings: ruleSettings, restored: kept.rules)
            // The regions a restart resumes inside were entered before it: no `enter` rule again.
            if let presence = kept.presence, !presence.inside.isEmpty {
                self.rules?.assumePresence(inside: Set(presence.inside.keys), classesOf: nil)
            }
        }
        if let fenceRegions {
            geofences = GeofenceMonitor(
                geofences: fenceRegions.compactMap(\.geofence), settings: configuration.monitor.geofence)
        }
        if !configuration.alerts.isEmpty {
            alerts = AlertConsumer(
                definitions: configuration.alerts, resetAfter: configuration.alertResetAfter, restored: kept.alerts)
        }
        monitor.recordsClassChanges = self.rules?.proximityRules == true || alerts != nil
        refreshDeadlines()
    }

    /// Reads the rules' and alerts' next deadlines into the kept ones.
    private mutating func refreshDeadlines() {
        ruleDeadline = rules?.nextDeadline
        latchDeadline = Self.earliest(ruleDeadline, alerts?.nextDeadline)
    }

    static func earliest(_ first: Timestamp?, _ second: Timestamp?) -> Timestamp? {
        guard let first else { return second }
        guard let second else { return first }
        return min(first, second)
    }

    // MARK: - Time

    /// The engine's clock: the latest instant it has seen.
    package var now: Timestamp { monitor.clock }

    /// The earliest pending timer: an exit, a beacon going `off`, a latch, an alert reset. A
    /// replay runs its clock on until there is none.
    package var nextDeadline: Timestamp? {
        Self.earliest(Self.earliest(monitor.nextDeadline, latchDeadline), occupancy?.nextDeadline)
    }

    /// When a live shell must wake even with no input: ``nextDeadline``, or the next local
    /// midnight, when `B/dwell` shows a new day.
    package var nextWake: Timestamp? { Self.earliest(nextDeadline, dwell.nextMidnight) }

    /// The wall clock the engine runs on was stepped by `delta` microseconds (an administrator, a
    /// first NTP sync, a virtual machine resumed): every instant held is re-expressed on the new
    /// clock and no time passes, so nothing exits or fires because of the step, visits and
    /// latches keep their lengths, and what is read from the calendar (schedules, dwell days,
    /// outputs' `t`) follows the new time. The shell detects steps (``LiveRun``).
    package mutating func shiftClock(by delta: Int64) {
        guard delta != 0 else { return }
        monitor.shiftClock(by: delta)
        occupancy?.shiftClock(by: delta)
        geofences?.shiftClock(by: delta)
        rules?.shiftClock(by: delta)
        alerts?.shiftClock(by: delta)
        touched = true
        refreshDeadlines()
        // The day shown is read again at the next instant (a step across midnight).
        dwellDue = .min
    }

    /// Starts the clock: the first `monitoring` output (and, after a reload, what the new
    /// configuration's sightings call for), as one step.
    package mutating func start(at time: Timestamp, into actions: inout [EngineAction]) {
        let start = pending.count
        monitor.start(at: time, into: &pending)
        occupancy?.start(at: time, into: &pending)
        observe(from: start)
        closeStep(into: &actions)
    }

    /// Fires every timer due at or before `time`, instant by instant, each instant a step; then
    /// the clock stands at `time` (a local midnight passed on the way closes a step of its own).
    package mutating func advance(to time: Timestamp, into actions: inout [EngineAction]) {
        while let due = nextDeadline, due <= time { fire(due, into: &actions) }
        if monitor.clock < time {
            monitor.advance(to: time, into: &pending)
            closeStep(into: &actions)
        }
    }

    /// The earliest timer that can cause an output: an exit, a beacon going `off`, a latch. An
    /// alert's reset only changes a status (the beacon's condition does not hold then, so nothing
    /// can be offered), and midnight only what is shown.
    package var nextOutputDeadline: Timestamp? {
        Self.earliest(Self.earliest(monitor.nextDeadline, ruleDeadline), occupancy?.nextDeadline)
    }

    /// Fires the earliest instant with a timer that can cause an output, if it falls at or before
    /// `limit` (any, when `limit` is `nil`); returns whether one fired. A replay drains its clock
    /// with this at the end of input: it runs on until no exit, `off` or latch is pending, and
    /// what it keeps (a `done` alert waiting for its reset) is what a restart goes on from.
    @discardableResult
    package mutating func advanceToNextDeadline(notAfter limit: Timestamp?, into actions: inout [EngineAction]) -> Bool
    {
        guard let due = nextOutputDeadline, limit.map({ due <= $0 }) ?? true else { return false }
        while let earlier = nextDeadline, earlier < due { fire(earlier, into: &actions) }
        fire(due, into: &actions)
        return true
    }

    /// One instant's timers, as one step: latches and alert resets first (an event "before" a
    /// latch expires is strictly before it), then the monitor's exits and `off`s, which the
    /// rules, alerts and dwell then see. The one place that orders an instant.
    private mutating func fire(_ due: Timestamp, into actions: inout [EngineAction]) {
        fireLatches(at: due)
        let start = pending.count
        monitor.advance(to: due, into: &pending)
        occupancy?.advance(to: due, into: &pending)
        observe(from: start)
        closeStep(into: &actions)
    }

    private mutating func fireLatches(at time: Timestamp) {
        guard let latch = latchDeadline, latch <= time else { return }
        touched = true
        if rules != nil { rules!.advance(to: time, into: &pending) }
        if alerts != nil { alerts!.advance(to: time, into: &pending) }
        refreshDeadlines()
    }

    // MARK: - Inputs

    /// One input at `time` (not before ``now``; an earlier time is taken as ``now``).
    ///
    /// The timers of earlier instants fire first, each its own step. At `time` itself, latches
    /// and alert resets come before the input; the monitor's deadlines come after a sighting
    /// (which may renew them: docs/behaviour.md §5.1) and before anything else.
    package mutating func handle(_ input: EngineInput, at time: Timestamp, into actions: inout [EngineAction]) {
        if case .advertisement(let advertisement) = input { return sighting(advertisement, at: time, into: &actions) }
        if case .phoneSighting(let advertisement, let proximity) = input {
            monitor.notePhoneProximity(proximity, of: advertisement.beacon)
            return sighting(advertisement, at: time, byPhone: true, into: &actions)
        }
        let time = max(time, now)
        while let due = nextDeadline, due <= time { fire(due, into: &actions) }
        fireLatches(at: time)
        let start = pending.count
        switch input {
        case .advertisement, .phoneSighting:
            break  // above
        case .mode(let mode):
            monitor.setMode(mode, at: time, into: &pending)
            observe(from: start)
        case .deviceTransition(let region, let entered):
            monitor.deviceTransition(region, entered: entered, at: time, into: &pending)
            observe(from: start)
        case .command(let command):
            monitor.advance(to: time, into: &pending)
            if !obey(command, at: time) { ignoredCommands += 1 }
            observe(from: start)
        case .answer(let answer, let call):
            monitor.advance(to: time, into: &pending)
            touched = true
            rules?.answer(answer, to: call, at: time, into: &pending)
        case .reconfigure(let configuration, let regions, let settings):
            closeStep(into: &actions)
            reconfigure(configuration, rules: regions, settings: settings, at: time, into: &actions)
            return
        case .rules(let regions):
            // A fetched rules document: the monitor goes on, the rules take the new regions.
            monitor.advance(to: time, into: &pending)
            beaconRegions = regions.filter { $0.geofence == nil }
            replaceRuleRegions()
        case .geofences(let regions):
            // A fetched geofences document: presence goes on in the geofences that stay.
            monitor.advance(to: time, into: &pending)
            fenceRegions = regions.filter { $0.geofence != nil }
            if let geofences {
                self.geofences = GeofenceMonitor(
                    reloading: geofences, geofences: fenceRegions?.compactMap(\.geofence) ?? [],
                    settings: geofences.settings)
            }
            replaceRuleRegions()
        case .learn(let region, let seconds):
            if let zone = monitor.hierarchy.zoneIndex(of: region) {
                monitor.startLearning(zone: Int32(zone), seconds: seconds, at: time, into: &pending)
            } else {
                monitor.advance(to: time, into: &pending)
            }
            observe(from: start)
        case .stopLearning:
            monitor.stopLearning(at: time, into: &pending)
            observe(from: start)
        case .sensor(let message):
            monitor.advance(to: time, into: &pending)
            let problem =
                message.status
                ? occupancy?.sensorStatus(message.sensor, payload: message.payload, at: time, into: &pending)
                : occupancy?.sensor(message.sensor, payload: message.payload, at: time, into: &pending)
            if let problem { notices.append(problem) }
            observe(from: start)
        case .occupants(let device, let regions):
            monitor.advance(to: time, into: &pending)
            occupancy?.place(device, inside: regions, at: time, into: &pending)
            observe(from: start)
        case .position(let position):
            monitor.advance(to: time, into: &pending)
            if geofences != nil {
                geofences!.fix(position, at: time, into: &pending)
                observe(from: start)
            }
        }
        closeStep(into: &actions)
    }

    /// The rule engine on the regions of both documents as they are now, going on from the one
    /// in force.
    private mutating func replaceRuleRegions() {
        let regions = (beaconRegions ?? []) + (fenceRegions ?? [])
        rules = rules?.replacingRegions(with: regions, hierarchy: monitor.hierarchy)
        monitor.recordsClassChanges = rules?.proximityRules == true || alerts != nil
        touched = true
    }

    /// A source event at its own time.
    package mutating func handle(_ event: SourceEvent, into actions: inout [EngineAction]) {
        if case .advertisement(let time, let advertisement) = event {
            sighting(advertisement, at: time, into: &actions)
        } else if let input = EngineInput(event) {
            handle(input, at: event.time, into: &actions)
        }
    }

    /// One advertisement: the hot path, the same order as any input, but the monitor's own
    /// deadlines at `time` come after it (a sighting may renew them: docs/behaviour.md §5.1).
    private mutating func sighting(
        _ advertisement: Advertisement, at time: Timestamp, byPhone: Bool = false, into actions: inout [EngineAction]
    ) {
        let time = max(time, now)
        while let due = nextDeadline, due < time { fire(due, into: &actions) }
        fireLatches(at: time)
        let start = pending.count
        sightings += 1
        if !monitor.sighting(advertisement, at: time, into: &pending) { unconfiguredSightings += 1 }
        // A phone's own ranging also says which region its iOS holds it in (docs/behaviour.md §15.1).
        if byPhone { monitor.phoneRanged(advertisement.beacon, at: time, into: &pending) }
        observe(from: start)
        closeStep(into: &actions)
    }

    /// The actions of one input, returned: for tests and one-off callers.
    package mutating func handle(_ input: EngineInput, at time: Timestamp) -> [EngineAction] {
        var actions: [EngineAction] = []
        handle(input, at: time, into: &actions)
        return actions
    }

    /// The actions of advancing to `time`, returned.
    package mutating func advance(to time: Timestamp) -> [EngineAction] {
        var actions: [EngineAction] = []
        advance(to: time, into: &actions)
        return actions
    }

    /// A trace (or `B/cmd/alert`) command: `alert/done` and `alert/decline` with an `id`. Returns
    /// whether it was taken.
    private mutating func obey(_ command: TraceCommand, at time: Timestamp) -> Bool {
        guard command.name.hasPrefix("alert/"), let id = command.arguments["id"], alerts != nil else { return false }
        touched = true
        return alerts!.command(String(command.name.dropFirst("alert/".count)), id: id, at: time, into: &pending)
    }

    /// A new configuration in force from `time`, as a restart would start on it, but carrying
    /// over what the running engine knows: presence (no exit or enter for regions that stay
    /// inside, docs/behaviour.md §13), the rules' view of it, counts, alert statuses, dwell, the reported
    /// classes and the nearest beacon. The mode stays the app's (`cmd/mode`), not the file's.
    private mutating func reconfigure(
        _ configuration: Configuration, rules regions: [RuleRegion]?, settings: RuleSettings, at time: Timestamp,
        into actions: inout [EngineAction]
    ) {
        var kept = KeptState()
        kept.classes = monitor.reportedClasses
        kept.rules = rules?.state ?? keptRules
        kept.alerts = alerts?.records ?? [:]
        kept.dwell = dwell.totals
        kept.nearest = monitor.nearestLocationID
        var next = Engine(
            configuration: configuration, identity: monitor.identity, kept: kept, rules: regions,
            ruleSettings: settings, occupancy: countsOccupancy)
        let recording = next.monitor.recordsClassChanges
        next.monitor = Monitor(
            reloading: monitor, hierarchy: configuration.hierarchy, settings: configuration.monitor,
            identity: monitor.identity, restored: kept.classes, restoredNearest: kept.nearest)
        next.monitor.recordsClassChanges = recording
        if let occupancy, let settings = configuration.occupancy {
            next.occupancy = OccupancyMonitor(
                reloading: occupancy, settings: settings, hierarchy: configuration.hierarchy)
        }
        if next.dwell.timeZone == dwell.timeZone {
            next.dwell = dwell
            next.dwellDue = dwellDue
        }
        if let geofences, let fresh = next.geofences {
            next.geofences = GeofenceMonitor(reloading: geofences, geofences: fresh.geofences, settings: fresh.settings)
        }
        next.rules?.numberActions(after: rules)
        next.rules?.assumePresence(inside: monitor.insideRegions, classesOf: rules)
        next.refreshDeadlines()
        next.sightings = sightings
        next.unconfiguredSightings = unconfiguredSightings
        next.ignoredCommands = ignoredCommands
        let mode = monitor.mode
        self = next
        start(at: time, into: &actions)
        if monitor.mode != mode { handle(.mode(mode), at: time, into: &actions) }
    }

    // MARK: - Steps

    /// Lets the dwell ledger, the rules and the alerts see the outputs from `start` on (an Area's
    /// or Zone's `exit` gets the day's dwell), then the step's computed class changes.
    private mutating func observe(from start: Int) {
        guard start < pending.count || monitor.recordsClassChanges else { return }
        placeOwnRadio()
        let end = pending.count
        for index in start..<end {
            if case .transition(let time, var transition) = pending[index], transition.direction == .exit,
                transition.region.kind != .beacon, let seconds = transition.dwell
            {
                // Milliseconds, as `dwell`: a sum of visits carries float noise (7.199999999999999).
                let today = dwell.exit(transition.region, at: time, after: seconds)
                transition.dwellToday = (today * 1000).rounded() / 1000
                pending[index] = .transition(time, transition)
            } else if case .geofence(let time, var transition) = pending[index], let seconds = transition.dwell {
                let today = dwell.exit(named: Geofence.dwellKey(id: transition.id), at: time, after: seconds)
                transition.dwellToday = (today * 1000).rounded() / 1000
                pending[index] = .geofence(time, transition)
            }
            if rules != nil {
                touched = true
                let output = pending[index]
                rules!.observe(output, into: &pending)
            }
        }
        // The computed classes (docs/behaviour.md §7.2, §9.1: not only the reported ones), where the step's
        // `location` outputs stand: after its transitions.
        for change in monitor.takeClassChanges() {
            touched = true
            if rules != nil { rules!.observe(change, into: &pending) }
            if alerts != nil { alerts!.observe(change, into: &pending) }
        }
    }

    /// Ends a step: its outputs, then what to keep with them (when there is anything: outputs, a
    /// changed count or status, a new day's dwell), then the requests it made. Empties the
    /// pending outputs and keeps their storage for the next step.
    private mutating func closeStep(into actions: inout [EngineAction]) {
        defer { if !pending.isEmpty { pending.removeAll(keepingCapacity: true) } }
        // A sensor taken for dead by its silence is said when its deadline ran out, not by an input.
        if occupancy?.notices.isEmpty == false { notices += occupancy!.takeNotices() }
        var dwellShown: [String: Double]?
        if now.microseconds >= dwellDue {
            dwellShown = dwell.published(at: now)
            dwellDue = dwell.nextMidnight?.microseconds ?? .min
        }
        // Most sightings change nothing: ask before taking (and so before mutating anything).
        var rulesWork = false
        var alertsWork = false
        if touched {
            touched = false
            refreshDeadlines()
            rulesWork = rules?.hasPendingWork ?? false
            alertsWork = alerts?.hasChanges ?? false
        }
        guard !pending.isEmpty || dwellShown?.isEmpty == false || rulesWork || alertsWork || dwell.hasChanges else {
            return
        }
        let requests = rulesWork ? rules!.takeActions() : []
        let changes = StateChanges(
            rules: rulesWork ? rules!.takeChanges() : RuleState(), alerts: alertsWork ? alerts!.takeChanges() : [:],
            dwell: dwell.takeChanges())
        actions.reserveCapacity(actions.count + pending.count + 1 + requests.count)
        for output in pending { actions.append(.output(output)) }
        actions.append(
            .persist(
                EngineStep(
                    changes: changes,
                    whereabouts: whereabouts(dwell: dwellShown ?? [:]))))
        for request in requests { actions.append(.request(request)) }
    }

    /// Where the user is now, with `dwell` to show.
    package func whereabouts(dwell: [String: Double] = [:]) -> Whereabouts {
        Whereabouts(
            area: monitor.currentAreaName, zone: monitor.currentZoneName, nearest: monitor.nearestLocationID,
            dwell: dwell, geofences: geofences?.insideLabels)
    }
}

extension Engine {
    /// The building's radio as its scanners learned it (docs/behaviour.md §20): what the tag's
    /// position is read with from its next report on.
    package mutating func setRadio(_ radio: RadioModel) {
        guard monitor.radio != radio else { return }
        monitor.radio = radio
    }

    /// The building's fingerprints (docs/behaviour.md §22), made again only when their version
    /// changed; `nil`: untrained.
    package mutating func setFingerprints(_ fingerprints: RoomFingerprints?) {
        guard monitor.fingerprints?.version != fingerprints?.version else { return }
        monitor.fingerprints = fingerprints
    }

    /// The own radio is a device too: the occupancy it keeps hears where it is at the instant
    /// its presence changed (docs/behaviour.md §23); other devices are told by the table.
    private mutating func placeOwnRadio() {
        guard occupancy != nil, monitor.presenceChanges != placedPresence else { return }
        placedPresence = monitor.presenceChanges
        occupancy!.place(monitor.identity.userid, inside: monitor.occupiedRegions, at: now, into: &pending)
    }

    /// The log lines since the last call, taken.
    package mutating func takeNotices() -> [String] {
        guard !notices.isEmpty else { return [] }
        defer { notices.removeAll() }
        return notices
    }

    /// A session that ended, taken (``Monitor/takeLearned()``).
    package mutating func takeLearned() -> LearnedRoom? {
        monitor.takeLearned()
    }
}
