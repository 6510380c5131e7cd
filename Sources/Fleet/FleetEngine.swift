import BeaconCore
import BeaconConfiguration
import Engine
import RegionMonitor
import Rules

/// Many devices in one daemon (SPEC 15): one ``Engine`` per device, sharing the hierarchy,
/// settings and rules, each fed the observations of its fleet messages at the daemon's clock.
/// Pure, as the engine is: messages and instants in, each device's engine actions out, with the
/// `setWaypoints` commands that keep an OwnTracks phone's regions equal to its monitored set.
public struct FleetEngine {
    /// What the shell does for a device.
    public enum Action: Sendable {
        /// One of the device's engine actions, in order (outputs, steps to persist, requests).
        case engine(device: String, EngineAction)
        /// Publish `command` (a `setWaypoints`) to the OwnTracks phone `device` on `topic` (QoS 1,
        /// through the outbox): its regions become `regions`. Comes before the device's step is
        /// persisted, so it is kept with it.
        case waypoints(device: String, topic: String, command: String, regions: [Region])
    }

    /// Why a message changed nothing.
    public enum Refusal: Sendable, Hashable {
        /// Another daemon's device (`Fleet.shard`): ignored without a word.
        case otherShard
        /// Not declared, and `Fleet.autoAdd` is off.
        case unknownDevice
        /// `Fleet.maxDevices` are tracked already.
        case tooManyDevices
        /// Every observation was older than `Fleet.maxAge` at its arrival (how many).
        case stale(Int)
    }

    /// What the daemon knows of one device (its engine is in ``engines``, apart: reading this
    /// copies no engine state).
    public struct Device: Sendable {
        public var declaration: DeviceDeclaration?
        /// The source it reports through (the first message's).
        public var source: FleetSource
        /// Where its commands go (OwnTracks), from its latest message.
        public var commandTopic: String?
        /// The regions its phone was last told to monitor (OwnTracks).
        public var waypoints: [Region] = []
        /// Its last `lwt`, until it reports again.
        public var offline = false
        /// Observations dropped as older than `Fleet.maxAge`.
        public var stale = 0
    }

    public private(set) var configuration: Configuration
    public private(set) var settings: FleetSettings
    let identity: MonitorIdentity
    private(set) var rules: [RuleRegion]?
    private(set) var ruleSettings: RuleSettings
    public private(set) var devices: [String: Device] = [:]
    /// Each device's engine, changed in place only (``withEngine(_:_:)``).
    public private(set) var engines: [String: Engine] = [:]
    private let declared: [String: DeviceDeclaration]
    /// Each device's next wake-up, earliest first; an entry is stale when the device's own
    /// ``scheduled`` differs.
    private var wakeups = MinHeap()
    private var scheduled: [String: Int64] = [:]

    /// A fleet for `configuration` (whose ``Configuration/fleet`` is set), with the daemon's
    /// `identity` (the devices' events carry their own userid) and rules.
    public init(
        configuration: Configuration, identity: MonitorIdentity, rules: [RuleRegion]? = nil,
        ruleSettings: RuleSettings = RuleSettings(), kept: [String: Kept] = [:]
    ) {
        self.configuration = configuration
        self.settings = configuration.fleet ?? FleetSettings()
        self.identity = identity
        self.rules = rules
        self.ruleSettings = ruleSettings
        declared = Dictionary(settings.devices.map { ($0.id, $0) }) { first, _ in first }
        self.kept = kept
    }

    /// What a restart goes on from for one device: its engine's kept state, and what the daemon
    /// knew of it (its source, where its commands go, the regions its phone holds).
    public struct Kept: Sendable {
        public var state: KeptState
        public var source: FleetSource
        public var commandTopic: String?
        public var waypoints: [Region]

        public init(state: KeptState, source: FleetSource, commandTopic: String?, waypoints: [Region]) {
            self.state = state
            self.source = source
            self.commandTopic = commandTopic
            self.waypoints = waypoints
        }
    }

    /// The devices of an earlier run, resumed at ``start(at:)``.
    private var kept: [String: Kept]

    /// Resumes every device of an earlier run (SPEC 15, 12): its engine goes on from its kept
    /// state, and a phone whose regions differ from its monitored set is told at once.
    public mutating func start(at time: Timestamp, into actions: inout [Action]) {
        let resumed = kept
        kept = [:]
        for (id, device) in resumed.sorted(by: { $0.key < $1.key }) where settings.shard.owns(id) {
            add(
                id, declaration: declared[id], source: device.source, commandTopic: device.commandTopic,
                state: device.state, waypoints: device.waypoints, at: time, into: &actions)
        }
    }

    /// The earliest instant a device's timer is due (an exit, an `off`, a latch, a local midnight).
    public var nextWake: Timestamp? { wakeups.peek.map { Timestamp(microseconds: $0.time) } }

    /// A parsed message at its arrival: each fresh observation goes to its device's engine, at
    /// `arrival` (the daemon's clock). Returns why nothing happened, if so.
    @discardableResult
    public mutating func handle(_ message: FleetMessage, at arrival: Timestamp, into actions: inout [Action])
        -> Refusal?
    {
        guard settings.shard.owns(message.device) else { return .otherShard }
        let oldest = arrival.microseconds - Int64((settings.maxAge * 1_000_000).rounded())
        let fresh = message.observations.filter { observation in
            settings.maxAge <= 0 || observation.time.map { $0.microseconds >= oldest } ?? true
        }
        let stale = message.observations.count - fresh.count
        // A phone flushing its queue after an outage does not replay the past as now.
        if stale > 0, fresh.isEmpty {
            devices[message.device]?.stale += stale
            return .stale(stale)
        }
        // Every device's timers due before the message fire first (those at its instant after it,
        // as a sighting at an exit deadline keeps the region inside: SPEC 5.1).
        advance(to: Timestamp(microseconds: arrival.microseconds - 1), into: &actions)
        if devices[message.device] == nil {
            let declaration = declared[message.device]
            guard declaration != nil || settings.autoAdd else { return .unknownDevice }
            guard devices.count < settings.maxDevices else { return .tooManyDevices }
            add(
                message.device, declaration: declaration, source: message.source, commandTopic: message.commandTopic,
                state: KeptState(), waypoints: [], at: arrival, into: &actions)
        } else if let topic = message.commandTopic {
            devices[message.device]?.commandTopic = topic
        }
        for observation in fresh { feed(observation.kind, to: message.device, at: arrival, into: &actions) }
        if stale > 0 { devices[message.device]?.stale += stale }
        return nil
    }

    /// An input for one device's engine (an answer to its server call, a command), at `time`.
    public mutating func handle(
        _ input: EngineInput, for id: String, at time: Timestamp, into actions: inout [Action]
    ) {
        var engineActions: [EngineAction] = []
        guard withEngine(id, { $0.handle(input, at: time, into: &engineActions) }) else { return }
        finish(id, engineActions, into: &actions)
    }

    /// Runs `body` on device `id`'s engine where it is kept: changed in place, never copied (a
    /// copy of every array of a large hierarchy per message). Returns whether it exists.
    private mutating func withEngine(_ id: String, _ body: (inout Engine) -> Void) -> Bool {
        guard let index = engines.index(forKey: id) else { return false }
        body(&engines.values[index])
        return true
    }

    /// A reloaded configuration or a fetched rules document, for every device (the daemon's own
    /// engine takes it too): devices go on under it, and new devices start with it. The fleet's
    /// sources stay those of the start.
    public mutating func reconfigure(_ input: EngineInput, at time: Timestamp, into actions: inout [Action]) {
        switch input {
        case .reconfigure(let configuration, let rules, let settings):
            let sources = self.settings
            self.configuration = configuration
            self.rules = rules
            ruleSettings = settings
            var fleet = configuration.fleet ?? sources
            (fleet.owntracks, fleet.theengs, fleet.forward) = (sources.owntracks, sources.theengs, sources.forward)
            self.settings = fleet
        case .rules(let regions):
            rules = regions.filter { $0.geofence == nil } + (rules ?? []).filter { $0.geofence != nil }
        case .geofences(let regions):
            rules = (rules ?? []).filter { $0.geofence == nil } + regions
        default:
            return
        }
        for id in devices.keys.sorted() { handle(input, for: id, at: time, into: &actions) }
    }

    /// Fires every device's timers up to `time`, earliest first.
    public mutating func advance(to time: Timestamp, into actions: inout [Action]) {
        while let next = wakeups.peek, next.time <= time.microseconds {
            wakeups.pop()
            guard scheduled[next.device] == next.time else { continue }
            var engineActions: [EngineAction] = []
            let due = Timestamp(microseconds: next.time)
            guard withEngine(next.device, { $0.advance(to: due, into: &engineActions) }) else { continue }
            finish(next.device, engineActions, into: &actions)
        }
    }

    // MARK: - Devices

    private mutating func add(
        _ id: String, declaration: DeviceDeclaration?, source: FleetSource, commandTopic: String?, state: KeptState,
        waypoints: [Region], at time: Timestamp, into actions: inout [Action]
    ) {
        let userid = declaration?.userid ?? id
        let deviceIdentity = MonitorIdentity(session: identity.session, address: identity.address, userid: userid)
        var engine = Engine(
            configuration: configuration, identity: deviceIdentity, kept: state, rules: rules,
            ruleSettings: ruleSettings)
        var engineActions: [EngineAction] = []
        engine.start(at: time, into: &engineActions)
        devices[id] = Device(declaration: declaration, source: source, commandTopic: commandTopic, waypoints: waypoints)
        engines[id] = engine
        finish(id, engineActions, into: &actions)
    }

    private mutating func feed(
        _ kind: FleetObservation.Kind, to id: String, at time: Timestamp, into actions: inout [Action]
    ) {
        var engineActions: [EngineAction] = []
        switch kind {
        case .sighting, .transition, .position: devices[id]?.offline = false
        case .offline: devices[id]?.offline = true
        case .hci: break
        }
        let found = withEngine(id) { engine in
            switch kind {
            case .sighting(let advertisement, let phone):
                let input: EngineInput =
                    phone.map { .phoneSighting(advertisement, proximity: $0) } ?? .advertisement(advertisement)
                engine.handle(input, at: time, into: &engineActions)
            case .hci(let event):
                var decoder = AdvertisingReportDecoder()
                decoder.decode(event: event) { advertisement in
                    engine.handle(.advertisement(advertisement), at: time, into: &engineActions)
                }
            case .transition(let region, let entered):
                engine.handle(.deviceTransition(region, entered: entered), at: time, into: &engineActions)
            case .position(let position):
                engine.handle(.position(position), at: time, into: &engineActions)
            case .offline:
                break
            }
        }
        guard found else { return }
        finish(id, engineActions, into: &actions)
    }

    /// Hands the device's engine actions on, then the `setWaypoints` its monitored set calls for,
    /// and schedules its next wake-up.
    private mutating func finish(_ id: String, _ engineActions: [EngineAction], into actions: inout [Action]) {
        guard let index = devices.index(forKey: id) else { return }
        let (source, commandTopic) = (devices.values[index].source, devices.values[index].commandTopic)
        var regions: [Region]?
        var wake: Int64?
        _ = withEngine(id) { engine in
            if source == .owntracks, commandTopic != nil { regions = engine.monitor.monitoredRegions }
            wake = engine.nextWake?.microseconds
        }
        var waypoints: Action?
        if let topic = commandTopic, let regions, regions != devices.values[index].waypoints,
            let command = Waypoints.command(from: Set(devices.values[index].waypoints), to: regions)
        {
            devices.values[index].waypoints = regions
            waypoints = .waypoints(device: id, topic: topic, command: command, regions: regions)
        }
        // The command goes with the step that changed the set: before its persist.
        var persist: EngineAction?
        var body = engineActions[...]
        if let waypoints, case .persist? = body.last {
            persist = body.removeLast()
            for action in body { actions.append(.engine(device: id, action)) }
            actions.append(waypoints)
            if let persist { actions.append(.engine(device: id, persist)) }
        } else {
            for action in body { actions.append(.engine(device: id, action)) }
            if let waypoints { actions.append(waypoints) }
        }
        guard scheduled[id] != wake else { return }
        scheduled[id] = wake
        if let wake { wakeups.push(time: wake, device: id) }
    }
}

/// A binary min-heap of (instant, device): the fleet's wake-ups.
struct MinHeap: Sendable {
    private var items: [(time: Int64, device: String)] = []

    var peek: (time: Int64, device: String)? { items.first }

    mutating func push(time: Int64, device: String) {
        items.append((time, device))
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard items[child].time < items[parent].time else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    mutating func pop() {
        guard !items.isEmpty else { return }
        items.swapAt(0, items.count - 1)
        items.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < items.count, items[left].time < items[smallest].time { smallest = left }
            if right < items.count, items[right].time < items[smallest].time { smallest = right }
            guard smallest != parent else { return }
            items.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
