import BeaconCore
import Configuration
import Persistence
import RegionMonitor
import Rules

/// The one engine behind `replay`, `run` and the benchmarks: source events in, outputs out.
///
/// Pure: the caller owns the clock. A file source drives it on the virtual clock (each event's own
/// time, then its remaining deadlines at the end of input); a live source calls ``advance(to:into:)`` when
/// ``nextDeadline`` comes due on the real clock. Either way the same state machines run.
public struct Engine: Sendable {
    public private(set) var monitor: Monitor
    /// The Ubudu rules on the monitor's transitions; `nil` without `Rules.source`.
    public private(set) var rules: RuleEngine? {
        didSet {
            latchDeadline = Self.earliest(rules?.nextDeadline, alerts?.nextDeadline)
            monitor.recordsClassChanges = rules?.proximityRules == true || alerts != nil
        }
    }
    /// The `LocationAlert.*` alerts (SPEC 9.1); `nil` without any.
    public private(set) var alerts: AlertConsumer? {
        didSet { latchDeadline = Self.earliest(rules?.nextDeadline, alerts?.nextDeadline) }
    }
    /// Time inside each Area and Zone per local day (SPEC 9.3).
    public private(set) var dwell: DwellLedger
    /// The earliest latch or alert reset, kept: every sighting asks.
    private var latchDeadline: Timestamp?
    /// Trace commands that nothing takes (an alert command for an alert not in progress, an
    /// unknown command), counted.
    public private(set) var ignoredCommands = 0
    /// Advertisements of beacons that are not configured: decoded, counted, moving nothing.
    public private(set) var unconfiguredSightings = 0
    public private(set) var sightings = 0

    /// An engine for `configuration`, reporting for `identity`, with the last reported beacon
    /// classes of a kept state; with `rules` (the regions of `Rules.source`), the rule engine
    /// runs by `ruleSettings` from the kept `ruleState`.
    public init(
        configuration: Configuration, identity: MonitorIdentity, restored: [String: Proximity] = [:],
        rules: [RuleRegion]? = nil, ruleSettings: RuleSettings = RuleSettings(), ruleState: RuleState = RuleState(),
        alertRecords: [String: AlertRecord] = [:], dwell: [DwellKey: Double] = [:], dwellRegions: Set<String> = [],
        nearest: String? = nil
    ) {
        monitor = Monitor(
            hierarchy: configuration.hierarchy,
            settings: configuration.monitor,
            identity: identity,
            restored: restored,
            restoredNearest: nearest
        )
        self.dwell = DwellLedger(
            timeZone: configuration.monitor.timezone ?? .current, restored: dwell, regions: dwellRegions)
        if let rules {
            self.rules = RuleEngine(
                regions: rules, hierarchy: configuration.hierarchy, settings: ruleSettings, restored: ruleState)
        }
        if !configuration.alerts.isEmpty {
            alerts = AlertConsumer(
                definitions: configuration.alerts, resetAfter: configuration.alertResetAfter, restored: alertRecords)
        }
        latchDeadline = Self.earliest(self.rules?.nextDeadline, alerts?.nextDeadline)
        monitor.recordsClassChanges = self.rules?.proximityRules == true || alerts != nil
    }

    /// An engine that starts from a store's `kept` state.
    public init(
        configuration: Configuration, identity: MonitorIdentity, kept: KeptState, rules: [RuleRegion]?,
        ruleSettings: RuleSettings
    ) {
        self.init(
            configuration: configuration, identity: identity, restored: kept.classes, rules: rules,
            ruleSettings: ruleSettings, ruleState: kept.rules, alertRecords: kept.alerts, dwell: kept.dwell,
            dwellRegions: kept.dwellRegions, nearest: kept.nearest)
    }

    static func earliest(_ first: Timestamp?, _ second: Timestamp?) -> Timestamp? {
        guard let first else { return second }
        guard let second else { return first }
        return min(first, second)
    }

    /// The earliest pending deadline: the monitor's, a rule's latch or an alert's reset.
    public var nextDeadline: Timestamp? {
        guard let latch = latchDeadline else { return monitor.nextDeadline }
        return min(latch, monitor.nextDeadline ?? latch)
    }

    /// Starts the clock (the first `monitoring` output).
    public mutating func start(at time: Timestamp, into outputs: inout [MonitorOutput]) {
        let start = outputs.count
        monitor.start(at: time, into: &outputs)
        observe(from: start, &outputs)
    }

    /// The last instant whose deadlines come before `event`. A sighting comes before the
    /// monitor's deadlines of its own instant, which it may renew (``Monitor/sighting(_:at:into:)``);
    /// a mode change or a command comes after them.
    public static func deadlinesBefore(_ event: SourceEvent) -> Timestamp {
        guard case .advertisement(let time, _) = event else { return event.time }
        return Timestamp(microseconds: time.microseconds - 1)
    }

    /// One event from a source, at its own time.
    public mutating func handle(_ event: SourceEvent, into outputs: inout [MonitorOutput]) {
        // With rules or alerts, the deadlines due before the event fire instant by instant,
        // latches and resets first (the monitor would fire its own all at once); latches and
        // resets of the event's own instant come before it too.
        if rules != nil || alerts != nil, let due = nextDeadline, due <= event.time {
            advance(to: Self.deadlinesBefore(event), into: &outputs)
            if let ruleDue = rules?.nextDeadline, ruleDue <= event.time {
                rules!.advance(to: event.time, into: &outputs)
            }
            if let resetDue = alerts?.nextDeadline, resetDue <= event.time {
                alerts!.advance(to: event.time, into: &outputs)
            }
        }
        let start = outputs.count
        switch event {
        case .advertisement(let time, let advertisement):
            sightings += 1
            if !monitor.sighting(advertisement, at: time, into: &outputs) { unconfiguredSightings += 1 }
        case .mode(let time, let mode):
            monitor.setMode(mode, at: time, into: &outputs)
        case .command(let time, let command):
            monitor.advance(to: time, into: &outputs)
            observe(from: start, &outputs)
            let commandStart = outputs.count
            if !obey(command, at: time, into: &outputs) { ignoredCommands += 1 }
            observe(from: commandStart, &outputs)
            return
        }
        observe(from: start, &outputs)
    }

    /// A trace (or `B/cmd/alert`) command: `alert/done` and `alert/decline` with an `id`. Returns
    /// whether it was taken.
    private mutating func obey(_ command: TraceCommand, at time: Timestamp, into outputs: inout [MonitorOutput])
        -> Bool
    {
        guard command.name.hasPrefix("alert/"), let id = command.arguments["id"], alerts != nil else { return false }
        return alerts!.command(String(command.name.dropFirst("alert/".count)), id: id, at: time, into: &outputs)
    }

    /// Lets the dwell ledger, the rules and the alerts see the outputs from `start` on; an Area's
    /// or Zone's `exit` gets the day's dwell.
    private mutating func observe(from start: Int, _ outputs: inout [MonitorOutput]) {
        guard start < outputs.count || monitor.recordsClassChanges else { return }
        let end = outputs.count
        for index in start..<end {
            if case .transition(let time, var transition) = outputs[index], transition.direction == .exit,
                transition.region.kind != .beacon, let seconds = transition.dwell
            {
                transition.dwellToday = dwell.exit(transition.region, at: time, after: seconds)
                outputs[index] = .transition(time, transition)
            }
            if rules != nil { rules!.observe(outputs[index], into: &outputs) }
        }
        // Then the computed classes of the step (SPEC 7.2, 9.1: not only the reported ones), where
        // the step's `location` outputs stand: after its transitions.
        for change in monitor.takeClassChanges() {
            if rules != nil { rules!.observe(change, into: &outputs) }
            if alerts != nil { alerts!.observe(change, into: &outputs) }
        }
    }

    /// Fires the deadlines up to `time`, instant by instant.
    public mutating func advance(to time: Timestamp, into outputs: inout [MonitorOutput]) {
        guard rules != nil || alerts != nil else {
            let start = outputs.count
            monitor.advance(to: time, into: &outputs)
            return observe(from: start, &outputs)
        }
        while advanceToNextDeadline(notAfter: time, into: &outputs) {}
        monitor.advance(to: time, into: &outputs)
    }

    /// Fires the earliest pending deadline's instant alone, if it falls at or before `limit`
    /// (any, when `limit` is `nil`); returns whether one fired. Shells step with this so that
    /// state read after a step (the current Area and Zone) is the state of that instant. At one
    /// instant, latches expire before the monitor's deadlines: an event "before" a latch expires
    /// is strictly before.
    public mutating func advanceToNextDeadline(notAfter limit: Timestamp?, into outputs: inout [MonitorOutput]) -> Bool
    {
        guard let due = nextDeadline, limit.map({ due <= $0 }) ?? true else { return false }
        if let latch = latchDeadline, latch <= due {
            if let ruleDue = rules?.nextDeadline, ruleDue <= due { rules!.advance(to: due, into: &outputs) }
            if let resetDue = alerts?.nextDeadline, resetDue <= due { alerts!.advance(to: due, into: &outputs) }
        }
        let start = outputs.count
        monitor.advance(to: due, into: &outputs)
        observe(from: start, &outputs)
        return true
    }

    /// The engine's clock: the latest instant it has seen.
    public var now: Timestamp { monitor.clock }

    /// Carries out what the rules ask of the outside world with `hook`, waiting for each answer,
    /// which is taken at the engine's clock: the way of a file run, whose clock waits too.
    public mutating func settleActions(with hook: ServerHook, into outputs: inout [MonitorOutput]) {
        while true {
            let actions = takeActions()
            guard !actions.isEmpty else { return }
            for action in actions {
                let (call, answer) = hook.perform(action)
                self.answer(answer, to: call, at: now, into: &outputs)
            }
        }
    }

    /// What the rules ask of the outside world (server calls, `Script.server`), to be answered
    /// with ``answer(_:to:at:into:)``.
    public mutating func takeActions() -> [RuleEngine.Action] { rules?.takeActions() ?? [] }

    /// The answer to a rule action, at `time`.
    public mutating func answer(
        _ answer: ServerAnswer, to call: Int, at time: Timestamp, into outputs: inout [MonitorOutput]
    ) {
        rules?.answer(answer, to: call, at: time, into: &outputs)
    }

    /// Keeps what a step's outputs change in `store`, with the outbox messages of `sinks`, in one
    /// transaction; then hands each output to `output` and the step to every sink; empties
    /// `outputs`. Returns how many there were. The one delivery of every shell: an output is seen
    /// only once its state is kept. With no outputs, still removes what the sinks settled.
    @discardableResult
    public mutating func deliver(
        _ outputs: inout [MonitorOutput],
        store: StateStore,
        output: (MonitorOutput) throws -> Void = { _ in },
        sinks: [any OutputSink] = []
    ) throws -> Int {
        var batch = StepBatch()
        stage(&outputs, into: &batch, sinks: sinks)
        return try batch.commit(store: store, output: output, sinks: sinks)
    }

    /// Adds a step's outputs to `batch` (emptying `outputs`) with where the user is after it, to
    /// be committed with the steps around it: a group commit, when input is waiting. A step with
    /// no outputs is staged only when it crosses a local midnight (the dwell shown changes).
    public mutating func stage(_ outputs: inout [MonitorOutput], into batch: inout StepBatch, sinks: [any OutputSink]) {
        let dwellShown = dwell.published(at: now)
        guard !outputs.isEmpty || !dwellShown.isEmpty else { return }
        let changes = StateChanges(
            rules: rules?.takeChanges() ?? RuleState(), alerts: alerts?.takeChanges() ?? [:],
            dwell: dwell.takeChanges())
        batch.add(
            outputs, state: changes, sinks: sinks,
            whereabouts: Whereabouts(
                area: monitor.currentAreaName, zone: monitor.currentZoneName, nearest: monitor.nearestLocationID,
                dwell: dwellShown))
        outputs.removeAll(keepingCapacity: true)
    }
}

/// Where the user is after a step: the names (or canonical regions) of the current Area and Zone,
/// the nearest beacon, and the seconds inside today that `B/dwell/<region>` shows where the step
/// changes them other than by an exit (every kept region's at the start, the new day's after a
/// local midnight).
public struct Whereabouts: Sendable, Hashable {
    public var area: String?
    public var zone: String?
    /// The nearest beacon's Location ID; `nil` for none.
    public var nearest: String?
    /// Seconds inside today, by canonical region.
    public var dwell: [String: Double]

    public init(area: String?, zone: String?, nearest: String? = nil, dwell: [String: Double] = [:]) {
        self.area = area
        self.zone = zone
        self.nearest = nearest
        self.dwell = dwell
    }
}

/// Steps staged to be committed in one transaction, each delivered afterwards as its own step.
///
/// One step per event when input comes one event at a time; when it is backed up (a file, a
/// burst), up to ``limit`` steps share a transaction, which is what makes high rates possible.
/// Nothing is handed to a sink or `output` before the transaction holding it is committed.
public struct StepBatch: Sendable {
    /// Steps in one transaction, at most.
    public static let limit = 64

    private var outputs: [MonitorOutput] = []
    private var messages: [OutboxMessage] = []
    private var state = StateChanges()
    /// Each step: where its outputs end, where its messages for each sink end, where the user is.
    private var steps: [(outputs: Int, messages: [Int], whereabouts: Whereabouts)] = []

    public init() {}

    public var count: Int { steps.count }
    public var isFull: Bool { steps.count >= Self.limit }

    mutating func add(
        _ step: [MonitorOutput], state changes: StateChanges, sinks: [any OutputSink], whereabouts: Whereabouts
    ) {
        outputs += step
        if !changes.isEmpty { state.merge(changes) }
        var ends: [Int] = []
        ends.reserveCapacity(sinks.count)
        for sink in sinks {
            messages += sink.outbox(for: step)
            ends.append(messages.count)
        }
        steps.append((outputs.count, ends, whereabouts))
    }

    /// Commits the staged steps (with what the sinks settled) in one transaction, then delivers
    /// each step in order to `output` and the sinks; empties the batch. Returns how many outputs
    /// there were.
    @discardableResult
    public mutating func commit(
        store: StateStore,
        output: (MonitorOutput) throws -> Void = { _ in },
        sinks: [any OutputSink] = []
    ) throws -> Int {
        var settled: [Int64] = []
        for sink in sinks { settled += sink.takeSettled() }
        guard !steps.isEmpty else {
            try store.settle(settled)
            return 0
        }
        defer {
            outputs.removeAll(keepingCapacity: true)
            messages.removeAll(keepingCapacity: true)
            steps.removeAll(keepingCapacity: true)
            state = StateChanges()
        }
        let entries = try store.record(outputs, outbox: messages, settled: settled, changes: state)
        var outputStart = 0
        var messageStart = 0
        for step in steps {
            let slice = outputs[outputStart..<step.outputs]
            for item in slice { try output(item) }
            for (sink, end) in zip(sinks, step.messages) {
                try sink.deliver(slice, entries: entries[messageStart..<end], whereabouts: step.whereabouts)
                messageStart = end
            }
            outputStart = step.outputs
        }
        return outputs.count
    }
}

extension Engine {
    /// Carries out one of ``EngineControl``'s orders at `time`. A new configuration replaces the
    /// engine as a restart does: from the classes last reported in `store`, keeping the identity
    /// and the counts. Deliver the outputs before the next order.
    public mutating func obey(
        _ order: EngineControl.Order, at time: Timestamp, store: StateStore, into outputs: inout [MonitorOutput]
    )
        throws
    {
        switch order {
        case .mode(let mode):
            handle(.mode(time, mode), into: &outputs)
        case .command(let command):
            handle(.command(time, command), into: &outputs)
        case .answer(let answer, let call):
            self.answer(answer, to: call, at: time, into: &outputs)
        case .reconfigure(let configuration, let rules):
            // Presence, the rules' view of it, counts, alert statuses and dwell carry over: a
            // reload says nothing about regions that stay inside (no `none`, no exit, no enter).
            let restored = try store.lastReported()
            var next = Engine(
                configuration: configuration, identity: monitor.identity, restored: restored,
                rules: rules, ruleSettings: RuleSettings.resolve(configuration),
                ruleState: try self.rules?.state ?? store.ruleState(), alertRecords: alerts?.records ?? [:],
                dwell: dwell.totals, nearest: monitor.nearestLocationID)
            next.monitor = Monitor(
                reloading: monitor, hierarchy: configuration.hierarchy, settings: configuration.monitor,
                identity: monitor.identity, restored: restored, restoredNearest: monitor.nearestLocationID)
            next.monitor.recordsClassChanges = next.rules?.proximityRules == true || next.alerts != nil
            if next.dwell.timeZone == dwell.timeZone { next.dwell = dwell }
            next.rules?.numberActions(after: self.rules)
            next.rules?.assumePresence(inside: monitor.insideRegions, classesOf: self.rules)
            next.sightings = sightings
            next.unconfiguredSightings = unconfiguredSightings
            next.ignoredCommands = ignoredCommands
            let mode = monitor.mode
            self = next
            start(at: time, into: &outputs)
            // The mode was the app's to set (`cmd/mode`), not the file's.
            if monitor.mode != mode { handle(.mode(time, mode), into: &outputs) }
        case .rules(let regions):
            // A fetched rules document: the monitor goes on, the rules take the new regions.
            rules = rules?.replacingRegions(with: regions, hierarchy: monitor.hierarchy)
        }
    }
}
