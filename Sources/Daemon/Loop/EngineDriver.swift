import BeaconCore
import BeaconConfiguration
import Engine
import Fleet
import Persistence
import RegionMonitor
import Rules

extension Engine {
    /// An engine for `configuration` that goes on from what `store` kept (a restart), with its
    /// identity and rule settings resolved from the machine (host name, address, machine-id).
    public static func resuming(_ configuration: Configuration, from store: StateStore, rules: [RuleRegion]?) throws
        -> Engine
    {
        Engine(
            configuration: configuration, identity: .resolve(configuration.monitor), kept: try store.kept(),
            rules: rules, ruleSettings: .resolve(configuration))
    }
}

/// Performs an ``Engine``'s actions: the one shell between the pure engine and the world, used
/// by file runs, live runs, benchmarks and tests.
///
/// Each step the engine closes (``EngineAction/persist(_:)``) is staged with the outbox messages
/// its sinks want kept; ``commit()`` writes the staged steps in one transaction and only then
/// hands each step's outputs to `output` and the sinks. Steps are staged until ``commit()``, or
/// until ``StepBatch/limit`` of them wait: the caller commits when its input would wait (a
/// group commit while input is backed up). Requests (server calls, `Script.server`) are carried
/// out by the ``Requests`` way given.
public struct EngineDriver {
    /// How the rules' requests are answered.
    public enum Requests {
        /// Each in turn, waiting for the answer, which is given at the engine's clock: a file
        /// run's way, whose virtual clock waits too, so a replay is the same every time.
        case inline(ServerHook)
        /// Each on a thread of its own; `answered` hands the answer back to whoever feeds the
        /// engine (a live run, which goes on with sightings while a server thinks).
        case background(ServerHook, answered: @Sendable (ServerAnswer, Int) -> Void)
    }

    public private(set) var engine: Engine
    public let store: StateStore
    public let sinks: [any OutputSink]
    let requests: Requests
    let output: (MonitorOutput) throws -> Void
    private var actions: [EngineAction] = []
    private var stepOutputs: [MonitorOutput] = []
    /// The fleet's devices (SPEC 15), when `Fleet.*` is set: each device's steps are staged and
    /// committed like the engine's own, named by their device.
    public var fleet: FleetEngine?
    private var fleetActions: [FleetEngine.Action] = []
    private var deviceOutputs: [String: [MonitorOutput]] = [:]
    private var deviceCommands: [String: [OutboxMessage]] = [:]
    /// What the store must keep of each device with its next step (its source, command topic and
    /// phone regions), when it changed.
    private var deviceRecords: [String: FleetDeviceRecord] = [:]
    /// Where a fleet device's server call answers go when calls run in the background (a live
    /// run): back to whoever feeds the engine, to come in through ``answer(_:call:for:)``.
    public var deviceAnswered: (@Sendable (String, ServerAnswer, Int) -> Void)?
    private var batch = StepBatch()
    /// Outputs delivered so far.
    public private(set) var delivered = 0
    /// Advertisements handed to the engine so far (every decoded report of the radio or file).
    public private(set) var reports = 0
    /// Why the last commit failed, while commits fail: the staged steps wait in memory (the
    /// engine goes on) and ``commit()`` tries again at most every ``retryInterval``.
    public private(set) var failing: StateStoreError?
    private var lastTry = ContinuousClock.now
    /// Says, once each, that commits fail and that they succeed again.
    public var warn: (String) -> Void = { _ in }
    public static let retryInterval = Duration.seconds(1)

    public init(
        engine: Engine, store: StateStore, sinks: [any OutputSink] = [], requests: Requests,
        output: @escaping (MonitorOutput) throws -> Void = { _ in }
    ) {
        self.engine = engine
        self.store = store
        self.sinks = sinks
        self.requests = requests
        self.output = output
    }

    /// Starts the engine's clock at `time`.
    public mutating func start(at time: Timestamp) throws {
        engine.start(at: time, into: &actions)
        try perform()
    }

    /// One input at `time`.
    public mutating func handle(_ input: EngineInput, at time: Timestamp) throws {
        if case .advertisement = input { reports &+= 1 }
        engine.handle(input, at: time, into: &actions)
        try perform()
        // A reload or new rules reach every fleet device too.
        switch input {
        case .reconfigure, .rules, .geofences:
            guard fleet != nil else { return }
            fleet?.reconfigure(input, at: time, into: &fleetActions)
            try performFleet()
        default:
            return
        }
    }

    /// One source event at its own time.
    public mutating func handle(_ event: SourceEvent) throws {
        if case .advertisement = event { reports &+= 1 }
        engine.handle(event, into: &actions)
        try perform()
    }

    /// A fleet message at its arrival (the daemon's clock); returns why it changed nothing, if so.
    @discardableResult
    public mutating func handle(_ message: FleetMessage, at time: Timestamp) throws -> FleetEngine.Refusal? {
        let refusal = fleet?.handle(message, at: time, into: &fleetActions)
        try performFleet()
        return refusal
    }

    /// The answer to fleet device `device`'s server call `call`, at the engine's clock.
    public mutating func answer(_ answer: ServerAnswer, call: Int, for device: String) throws {
        fleet?.handle(.answer(answer, call: call), for: device, at: engine.now, into: &fleetActions)
        try performFleet()
    }

    /// An input for fleet device `device` (a command), at the engine's clock.
    public mutating func handle(_ input: EngineInput, for device: String) throws {
        fleet?.handle(input, for: device, at: engine.now, into: &fleetActions)
        try performFleet()
    }

    /// Resumes the fleet's devices of an earlier run (``FleetEngine/start(at:)``).
    public mutating func startFleet(at time: Timestamp) throws {
        fleet?.start(at: time, into: &fleetActions)
        try performFleet()
    }

    /// When a live shell must wake: the engine's next wake-up or any fleet device's.
    public var nextWake: Timestamp? {
        guard let fleetWake = fleet?.nextWake else { return engine.nextWake }
        return engine.nextWake.map { min($0, fleetWake) } ?? fleetWake
    }

    /// The wall clock was stepped by `delta` microseconds (``Engine/shiftClock(by:)``).
    public mutating func shiftClock(by delta: Int64) {
        engine.shiftClock(by: delta)
    }

    /// Fires the engine's timers up to `time`, and the fleet's.
    public mutating func advance(to time: Timestamp) throws {
        engine.advance(to: time, into: &actions)
        try perform()
        guard fleet != nil else { return }
        fleet?.advance(to: time, into: &fleetActions)
        try performFleet()
    }

    /// Fires timers one instant at a time until none is left at or before `limit` (or none at
    /// all: `nil`, a replay's end, where the clock runs on until nothing is pending).
    public mutating func drain(notAfter limit: Timestamp?) throws {
        while engine.advanceToNextDeadline(notAfter: limit, into: &actions) { try perform() }
    }

    /// Commits the staged steps (with what the sinks settled) in one transaction, then delivers
    /// them. With nothing staged, still removes what the sinks settled.
    ///
    /// A database that cannot be written (a full disk) stops nothing: the steps stay staged, in
    /// order, undelivered, and the next call at least ``retryInterval`` later tries again; the
    /// first failure and the recovery are said through ``warn``. ``finish()`` throws instead.
    public mutating func commit() throws {
        if failing != nil, ContinuousClock.now - lastTry < Self.retryInterval { return }
        let waiting = batch.outputCount
        lastTry = .now
        do {
            delivered += try batch.commit(store: store, output: output, sinks: sinks)
        } catch let error as StateStoreError {
            if failing == nil {
                warn("\(error) (outputs wait in memory, in order, and go out once it can be written)")
            }
            failing = error
            return
        }
        if failing != nil {
            warn("state database \(store.path) is written again; the \(waiting) outputs that waited went out")
            failing = nil
        }
    }

    /// The last commit of a run: what cannot be written now is an error (exit status 1), since
    /// the outputs that waited would be lost with the process.
    public mutating func finish() throws {
        // Each fleet device's presence as it is now: the next start resumes its deadlines.
        if fleet != nil {
            fleet?.close(into: &fleetActions)
            try performFleet()
        }
        lastTry = .now - Self.retryInterval
        try commit()
        if let failing {
            throw StateStoreError(
                path: failing.path, problem: failing.problem + "; \(batch.outputCount) outputs could not be kept")
        }
    }

    /// Carries out the fleet's actions in order: each device's outputs staged with its step, its
    /// `setWaypoints` with the step that changed its monitored set; its server calls made as the
    /// engine's own are.
    private mutating func performFleet() throws {
        while !fleetActions.isEmpty {
            let taken = fleetActions
            fleetActions.removeAll(keepingCapacity: true)
            for action in taken {
                switch action {
                case .engine(let id, .output(let item)):
                    deviceOutputs[id, default: []].append(item)
                case .engine(let id, .persist(let step)):
                    let device = fleet?.devices[id]
                    let userid = device?.declaration?.userid ?? id
                    batch.add(
                        deviceOutputs.removeValue(forKey: id) ?? [], state: step.changes, sinks: sinks,
                        whereabouts: step.whereabouts,
                        device: FleetDevice(id: id, userid: userid, name: device?.declaration?.name),
                        commands: deviceCommands.removeValue(forKey: id) ?? [],
                        record: deviceRecords.removeValue(forKey: id))
                    if batch.isFull { try commit() }
                case .engine(let id, .request(let request)):
                    // As the engine's own: inline (a file run's virtual clock waits), or in the
                    // background with the answer routed back to the device.
                    switch requests {
                    case .background(let hook, _) where deviceAnswered != nil:
                        let answered = deviceAnswered
                        hook.performInBackground(request, device: id) { call, answer in answered?(id, answer, call) }
                    case .inline(let hook), .background(let hook, _):
                        let (call, answer) = hook.perform(request, device: id)
                        fleet?.handle(.answer(answer, call: call), for: id, at: engine.now, into: &fleetActions)
                    }
                case .command(let id, let topic, let payload):
                    deviceCommands[id, default: []].append(OutboxMessage(topic: topic, payload: payload, qos: 1))
                case .record(let id, let record):
                    // The latest record wins; a presence taken earlier in the step stays with it.
                    let presence = record.presence.map(\.text) ?? deviceRecords[id]?.presence
                    deviceRecords[id] = FleetDeviceRecord(
                        source: record.source.rawValue, commandTopic: record.commandTopic,
                        waypoints: record.waypoints.map(\.description), legacy: record.legacy.map(\.description),
                        ownWaypoints: record.ownWaypoints, presence: presence)
                case .notice(_, let line):
                    warn(line)
                }
            }
        }
    }

    /// Carries out the engine's actions in order; inline answers go back in at the engine's
    /// clock, and their actions are carried out in turn.
    private mutating func perform() throws {
        while !actions.isEmpty {
            var answers: [(call: Int, answer: ServerAnswer)] = []
            for action in actions {
                switch action {
                case .output(let item):
                    stepOutputs.append(item)
                case .persist(let step):
                    batch.add(stepOutputs, state: step.changes, sinks: sinks, whereabouts: step.whereabouts)
                    stepOutputs.removeAll(keepingCapacity: true)
                    if batch.isFull { try commit() }
                case .request(let request):
                    switch requests {
                    case .inline(let hook):
                        answers.append(hook.perform(request))
                    case .background(let hook, let answered):
                        hook.performInBackground(request) { call, answer in answered(answer, call) }
                    }
                }
            }
            actions.removeAll(keepingCapacity: true)
            for (call, answer) in answers {
                engine.handle(.answer(answer, call: call), at: engine.now, into: &actions)
            }
        }
    }
}
