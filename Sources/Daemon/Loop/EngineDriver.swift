import Logging
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
    package static func resuming(_ configuration: Configuration, from store: StateStore, rules: [RuleRegion]?) throws
        -> Engine
    {
        Engine(
            configuration: configuration, identity: .resolve(configuration.monitor), kept: try store.kept(),
            rules: rules, ruleSettings: .resolve(configuration), occupancy: true)
    }
}

/// Performs the actions of the table of ``Devices``: the one shell between the pure engines and
/// the world, used by file runs, live runs, benchmarks and tests.
///
/// Each step a device's engine closes (``EngineAction/persist(_:)``) is staged with the outbox
/// messages its sinks want kept (and, for a fleet device, its commands and record); ``commit()``
/// writes the staged steps in one transaction and only then hands each step's outputs to
/// `output` and the sinks. Steps are staged until ``commit()``, or until ``StepBatch/limit`` of
/// them wait: the caller commits when its input would wait (a group commit while input is backed
/// up). Requests (server calls, `Script.server`) are carried out by the ``Requests`` way given.
package struct EngineDriver {
    /// How the rules' requests are answered.
    package enum Requests {
        /// Each in turn, waiting for the answer, which is given at the engine's clock: a file
        /// run's way, whose virtual clock waits too, so a replay is the same every time.
        case inline(ServerHook)
        /// Each on a thread of the hook's; `answered` hands the answer (with its device's id) back
        /// to whoever feeds the engine (a live run, which goes on with sightings while a server
        /// thinks), to come in through ``answer(_:call:for:)``.
        case background(ServerHook, answered: @Sendable (_ device: DeviceID, ServerAnswer, _ call: Int) -> Void)
    }

    /// Every device's engine: the own radio's and the fleet's.
    package private(set) var devices: Devices
    package let store: StateStore
    package let sinks: [any OutputSink]
    let requests: Requests
    let output: (MonitorOutput) throws -> Void
    private var actions: [Devices.Action] = []
    /// The actions being carried out (storage reused: ``actions`` fills while they are).
    private var taking: [Devices.Action] = []
    /// The outputs of the step being staged (one device's: a step comes out whole).
    private var stepOutputs: [MonitorOutput] = []
    private var deviceCommands: [DeviceID: [OutboxMessage]] = [:]
    /// What the store must keep of each device with its next step (its source, command topic,
    /// phone regions and presence), when it changed.
    private var deviceRecords: [DeviceID: Devices.Record] = [:]
    private var batch = StepBatch()
    /// In a cluster: commits whose outputs wait for the broker to hold their steps, in order.
    private var held: [CommittedSteps] = []
    /// Outputs withheld so far: this daemon stopped being the active before the broker held
    /// their steps (docs/failover.md, "Outputs wait for the broker").
    package private(set) var withheld = 0
    /// Outputs delivered so far.
    package private(set) var delivered = 0
    /// Advertisements handed to the own radio's engine so far (every decoded report of the radio or file).
    package private(set) var reports = 0
    /// Why the last commit failed, while commits fail: the staged steps wait in memory (the
    /// engine goes on) and ``commit()`` tries again at most every ``retryInterval``.
    package private(set) var failing: StateStoreError?
    private var lastTry: Duration
    /// The clock that only moves forward (``DaemonClock/elapsed``): the retry interval, and when
    /// a step was staged. The loop's own; the machine's unless set.
    package var elapsed: () -> Duration = DaemonClock.system.elapsed {
        didSet { lastTry = elapsed() }
    }
    /// Says, once each, that commits fail and that they succeed again; and the devices' notices.
    package var logger = Logger.silent
    package static let retryInterval = Duration.seconds(1)

    /// A driver of `devices`.
    package init(
        devices: Devices, store: StateStore, sinks: [any OutputSink] = [], requests: Requests,
        output: @escaping (MonitorOutput) throws -> Void = { _ in }
    ) {
        self.devices = devices
        self.store = store
        self.sinks = sinks
        self.requests = requests
        self.output = output
        lastTry = DaemonClock.system.elapsed()
    }

    /// A driver of a daemon with no fleet, its own radio `engine`.
    package init(
        engine: Engine, store: StateStore, sinks: [any OutputSink] = [], requests: Requests,
        output: @escaping (MonitorOutput) throws -> Void = { _ in }
    ) {
        self.init(devices: Devices(own: engine), store: store, sinks: sinks, requests: requests, output: output)
    }

    /// The own radio's engine.
    package var engine: Engine { devices.own }

    /// Starts the own radio's clock at `time` and resumes the fleet's devices of an earlier run.
    package mutating func start(at time: Timestamp) throws {
        devices.start(at: time, into: &actions)
        try perform()
    }

    /// One input at `time` (the daemon's clock): the daemon's, a device's message or report, a
    /// scanner's status, a server's answer, a command for one device. Returns why it changed
    /// nothing, if so (a refused message or report).
    @discardableResult
    package mutating func handle(_ input: Devices.Input, at time: Timestamp) throws -> Devices.Refusal? {
        if case .daemon(.advertisement) = input { reports &+= 1 }
        let refusal = devices.handle(input, at: time, into: &actions)
        try perform()
        return refusal
    }

    /// One source event of the own radio's file at its own time.
    package mutating func handle(_ event: SourceEvent) throws {
        if case .advertisement = event { reports &+= 1 }
        devices.handle(event, into: &actions)
        try perform()
    }

    /// When a live shell must wake: the earliest device's next wake-up.
    package var nextWake: Timestamp? { devices.nextWake }

    /// The wall clock was stepped by `delta` microseconds (``Devices/shiftClock(by:)``).
    package mutating func shiftClock(by delta: Int64) {
        devices.shiftClock(by: delta)
    }

    /// Moves the clock to `time`, firing every device's timers up to it.
    package mutating func advance(to time: Timestamp) throws {
        devices.advance(to: time, into: &actions)
        try perform()
    }

    /// Fires timers one instant at a time until none is left at or before `limit` (or none at
    /// all: `nil`, a replay's end, where the clock runs on until nothing is pending).
    package mutating func drain(notAfter limit: Timestamp?) throws {
        while devices.drain(notAfter: limit, into: &actions) { try perform() }
    }

    /// Commits the staged steps (with what the sinks settled) in one transaction, then delivers
    /// them. With nothing staged, still removes what the sinks settled.
    ///
    /// A database that cannot be written (a full disk) stops nothing: the steps stay staged, in
    /// order, undelivered, and the next call at least ``retryInterval`` later tries again; the
    /// first failure and the recovery are said through ``logger``. ``finish()`` throws instead.
    package mutating func commit() throws {
        if failing != nil, elapsed() - lastTry < Self.retryInterval { return }
        let waiting = batch.outputCount
        lastTry = elapsed()
        do {
            if held.isEmpty, store.shippedThrough == nil {
                delivered += try batch.commit(store: store, output: output, sinks: sinks)
            } else {
                let committed = try batch.take(store: store, sinks: sinks)
                if committed.outputCount > 0 { held.append(committed) }
                try release()
            }
        } catch let error as StateStoreError {
            if failing == nil {
                logger.warning("\(error) (outputs wait in memory, in order, and go out once it can be written)")
            }
            failing = error
            return
        }
        if failing != nil {
            logger.warning("state database \(store.path) is written again; the \(waiting) outputs that waited went out")
            failing = nil
        }
    }

    /// Whether outputs wait for the broker (a cluster's active: ``release()`` when it wakes).
    package var isHolding: Bool { !held.isEmpty }

    /// Delivers, in order, the held commits whose steps the broker now holds; drops them all
    /// when this daemon stopped being the active first (said once each time).
    package mutating func release() throws {
        while let first = held.first {
            switch store.verdict(through: first.through) {
            case .acknowledged:
                held.removeFirst()
                delivered += try first.deliver(output: output, sinks: sinks)
            case .waiting:
                return
            case .withheld:
                withhold()
            }
        }
    }

    /// The held outputs will never go out: the next active tells what happened from its state.
    private mutating func withhold() {
        let count = held.reduce(0) { $0 + $1.outputCount }
        held.removeAll()
        withheld += count
        logger.warning(
            "cluster: no longer the active, and the broker does not hold the steps of the last \(count) outputs: they are withheld; the active tells what happened from its own state"
        )
    }

    /// The last commit of a run: what cannot be written now is an error (exit status 1), since
    /// the outputs that waited would be lost with the process.
    package mutating func finish() throws {
        // Each device's presence as it is now, the own radio's with its last sightings: the next
        // start resumes its exit deadlines.
        devices.close(into: &actions)
        try perform()
        lastTry = elapsed() - Self.retryInterval
        try commit()
        if let failing {
            throw StateStoreError(
                path: failing.path, problem: failing.problem + "; \(batch.outputCount) outputs could not be kept")
        }
        // A cluster's last outputs wait for the broker a while (as the sinks flush theirs).
        if let last = held.last {
            if store.awaitVerdict(through: last.through, within: Self.finalWait) == .withheld { withhold() }
            try release()
            if !held.isEmpty {
                logger.warning(
                    "cluster: the broker does not hold the steps of the last \(held.reduce(0) { $0 + $1.outputCount }) outputs after \(Self.finalWait); they stay in the outbox, for this daemon if it is the active again"
                )
                held.removeAll()
            }
        }
    }

    /// How long the last commit of a cluster's active waits for the broker to hold its steps.
    package static let finalWait = Duration.seconds(5)

    /// The FleetDevice the sinks name device `id` by; `nil` for the own radio (its outputs carry
    /// no `"device"`, its topics are the daemon's).
    private func sinkName(of id: DeviceID) -> FleetDevice? {
        guard case .fleet(let name) = id else { return nil }
        let declaration = devices[device: id]?.declaration
        return FleetDevice(
            id: name, userid: declaration?.userid ?? name, name: declaration?.name,
            isTag: devices[device: id]?.source == .scanners,
            isPositioned: devices.engine(id)?.monitor.settings.floorPlans != nil)
    }

    /// Carries out the devices' actions in order: each step's outputs staged with it (with a
    /// fleet device's commands and record); server calls made inline, their answers going back
    /// in at the engine's clock (and their actions carried out in turn), or in the background.
    private mutating func perform() throws {
        while !actions.isEmpty {
            swap(&actions, &taking)
            defer { taking.removeAll(keepingCapacity: true) }
            for action in taking {
                switch action {
                case .engine(_, .output(let item)):
                    stepOutputs.append(item)
                case .engine(let id, .persist(let step)):
                    batch.add(
                        stepOutputs, state: step.changes, sinks: sinks, whereabouts: step.whereabouts,
                        device: sinkName(of: id),
                        commands: deviceCommands.isEmpty ? [] : deviceCommands.removeValue(forKey: id) ?? [],
                        record: deviceRecords.isEmpty
                            ? nil
                            : deviceRecords.removeValue(forKey: id)
                                .map(DeviceRow.init), staged: elapsed())
                    stepOutputs.removeAll(keepingCapacity: true)
                    if batch.isFull { try commit() }
                case .engine(let id, .request(let request)):
                    let device = id.fleetID
                    switch requests {
                    case .inline(let hook):
                        let (call, answer) = hook.perform(request, device: device)
                        devices.handle(.answer(device: id, answer, call: call), at: devices.now, into: &actions)
                    case .background(let hook, let answered):
                        hook.performInBackground(request, device: device) { call, answer in answered(id, answer, call) }
                    }
                case .command(let id, let topic, let payload):
                    deviceCommands[id, default: []].append(OutboxMessage(topic: topic, payload: payload, qos: 1))
                case .record(let id, let record):
                    // The latest record wins; a presence taken earlier in the step stays with it.
                    var latest = record
                    latest.presence = record.presence ?? deviceRecords[id]?.presence
                    deviceRecords[id] = latest
                case .notice(_, let line):
                    logger.warning("\(line)")
                case .calibration(let levels):
                    batch.keep(calibration: levels)
                case .fingerprints(let room, let training):
                    batch.keep(fingerprints: FingerprintChange(room: room, training: training))
                }
            }
        }
    }
}
