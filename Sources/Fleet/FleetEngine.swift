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
        /// Publish `payload` to the OwnTracks phone `device` on `topic` (QoS 1, through the
        /// outbox): a `setWaypoints` or a `waypoints` request. Comes before the device's step is
        /// persisted, so it is kept with it.
        case command(device: String, topic: String, payload: String)
        /// What the daemon knows of the device beyond its engine's state, to keep with its next
        /// step (comes before it).
        case record(device: String, Record)
        /// One line for the log about the device (a phone that does not take its waypoints).
        case notice(device: String, String)
    }

    /// What the daemon knows of a device beyond its engine's state (kept per device, SPEC 15).
    public struct Record: Sendable, Hashable {
        public var source: FleetSource
        /// Where its commands go (OwnTracks).
        public var commandTopic: String?
        /// The regions its phone holds as beaconwatch's waypoints (OwnTracks).
        public var waypoints: [Region]
        /// Regions its phone may still hold as waypoints of the form before SPEC 15.1's
        /// (`desc` `bw:<region>`): deleted by the next command.
        public var legacy: [Region]
        /// How many of the phone's own waypoints iOS monitors (its user's regions), from its
        /// latest answer to `action: waypoints`; `nil` before any.
        public var ownWaypoints: Int?
        /// Where the device is, when it changed.
        public var presence: MonitorPresence?

        public init(
            source: FleetSource, commandTopic: String?, waypoints: [Region], legacy: [Region] = [],
            ownWaypoints: Int? = nil, presence: MonitorPresence? = nil
        ) {
            self.source = source
            self.commandTopic = commandTopic
            self.waypoints = waypoints
            self.legacy = legacy
            self.ownWaypoints = ownWaypoints
            self.presence = presence
        }
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
        /// Waypoints of the earlier form its phone may hold, to delete with the next command.
        public var legacy: [Region] = []
        /// The phone's own monitored waypoints (OwnTracks), from its latest answer.
        public var ownWaypoints: Int?
        /// Its last `lwt`, until it reports again.
        public var offline = false
        /// Observations dropped as older than `Fleet.maxAge`.
        public var stale = 0
        /// The phone was asked for its waypoints since it was added or came back (OwnTracks).
        var asked = false
        /// What the phone had been sent when it was asked: its answer should hold all of it.
        var askedHolding: Set<Region>?
        /// A phone that does not take its waypoints was said (once).
        var refusalSaid = false
        /// The engine's presence count when it was last recorded; sightings since (kept at the end).
        var recordedPresence: UInt64 = 0
        var sightedSinceRecord = false
    }

    public private(set) var configuration: Configuration
    public private(set) var settings: FleetSettings
    let identity: MonitorIdentity
    private(set) var rules: [RuleRegion]?
    private(set) var ruleSettings: RuleSettings
    /// Each region's waypoint name and `rid` (SPEC 15.1).
    public private(set) var names: WaypointNames
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
        names = WaypointNames(configuration.hierarchy)
        declared = Dictionary(settings.devices.map { ($0.id, $0) }) { first, _ in first }
        self.kept = kept
    }

    /// What a restart goes on from for one device: its engine's kept state (with its presence),
    /// and what the daemon knew of it.
    public struct Kept: Sendable {
        public var state: KeptState
        public var source: FleetSource
        public var commandTopic: String?
        public var waypoints: [Region]
        public var legacy: [Region]
        public var ownWaypoints: Int?

        public init(
            state: KeptState, source: FleetSource, commandTopic: String?, waypoints: [Region], legacy: [Region] = [],
            ownWaypoints: Int? = nil
        ) {
            self.state = state
            self.source = source
            self.commandTopic = commandTopic
            self.waypoints = waypoints
            self.legacy = legacy
            self.ownWaypoints = ownWaypoints
        }
    }

    /// The devices of an earlier run, resumed at ``start(at:)``.
    private var kept: [String: Kept]

    /// Resumes every device of an earlier run (SPEC 15, 12): its engine goes on from its kept
    /// state and presence, so a restart by itself sends no command and repeats no `enter`; a
    /// phone whose regions differ from its monitored set (a changed configuration, waypoints of
    /// the earlier form to delete) is told at once.
    public mutating func start(at time: Timestamp, into actions: inout [Action]) {
        let resumed = kept
        kept = [:]
        for (id, device) in resumed.sorted(by: { $0.key < $1.key }) where settings.shard.owns(id) {
            var record = Device(declaration: declared[id], source: device.source, commandTopic: device.commandTopic)
            record.waypoints = device.waypoints
            record.legacy = device.legacy
            record.ownWaypoints = device.ownWaypoints
            // Asked in an earlier run: its answer is kept; it is asked again when it comes back.
            record.asked = device.ownWaypoints != nil
            add(id, record, state: device.state, isNew: false, at: time, into: &actions)
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
        let id = message.device
        if devices[id] == nil {
            let declaration = declared[id]
            guard declaration != nil || settings.autoAdd else { return .unknownDevice }
            guard devices.count < settings.maxDevices else { return .tooManyDevices }
            add(
                id, Device(declaration: declaration, source: message.source, commandTopic: message.commandTopic),
                state: KeptState(), isNew: true, at: arrival, into: &actions)
        } else if let topic = message.commandTopic, devices[id]?.commandTopic != topic {
            devices[id]?.commandTopic = topic
            record(id, into: &actions)
        }
        for observation in fresh { feed(observation.kind, to: id, at: arrival, into: &actions) }
        if stale > 0 { devices[id]?.stale += stale }
        askForWaypoints(id, into: &actions)
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
            names = WaypointNames(configuration.hierarchy)
            var fleet = configuration.fleet ?? sources
            (fleet.owntracks, fleet.theengs, fleet.forward) = (sources.owntracks, sources.theengs, sources.forward)
            self.settings = fleet
            // Each device under its own cap (a phone's own waypoints taken off).
            for id in devices.keys.sorted() {
                handle(
                    .reconfigure(deviceConfiguration(id), rules: rules, settings: settings), for: id, at: time,
                    into: &actions)
            }
            return
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

    /// The end of a run: each device whose beacons were sighted since its presence was last kept
    /// has it kept now, so that the next start resumes every exit deadline (SPEC 15, 12).
    public mutating func close(into actions: inout [Action]) {
        for id in devices.keys.sorted() where devices[id]?.sightedSinceRecord == true {
            record(id, presence: true, into: &actions)
            flush(id, into: &actions)
        }
    }

    // MARK: - Devices

    /// The configuration device `id`'s engine runs under: the daemon's, with a phone's own
    /// monitored waypoints taken off `Monitor.maxRegions` (SPEC 15.1; at least 1 region is left).
    func deviceConfiguration(_ id: String) -> Configuration {
        guard let own = devices[id]?.ownWaypoints, own > 0 else { return configuration }
        var adjusted = configuration
        adjusted.monitor.maxRegions = max(1, configuration.monitor.maxRegions - own)
        return adjusted
    }

    /// The cap the daemon manages on device `id`'s phone.
    public func cap(of id: String) -> Int { deviceConfiguration(id).monitor.maxRegions }

    private mutating func add(
        _ id: String, _ device: Device, state: KeptState, isNew: Bool, at time: Timestamp,
        into actions: inout [Action]
    ) {
        let userid = device.declaration?.userid ?? id
        let deviceIdentity = MonitorIdentity(session: identity.session, address: identity.address, userid: userid)
        devices[id] = device
        var engine = Engine(
            configuration: deviceConfiguration(id), identity: deviceIdentity, kept: state, rules: rules,
            ruleSettings: ruleSettings)
        var engineActions: [EngineAction] = []
        engine.start(at: time, into: &engineActions)
        // A start that only announces the set it resumed changes nothing to keep; one that exits
        // a region whose sightings ran out meanwhile is kept (a second start must not exit it again).
        let moved = engineActions.contains {
            if case .output(.transition) = $0 { true } else { false }
        }
        if !moved { devices[id]?.recordedPresence = engine.monitor.presenceChanges }
        engines[id] = engine
        // A device new to the daemon is kept at once; a resumed one as it changes.
        if isNew { record(id, into: &actions) }
        finish(id, engineActions, into: &actions)
    }

    private mutating func feed(
        _ kind: FleetObservation.Kind, to id: String, at time: Timestamp, into actions: inout [Action]
    ) {
        var engineActions: [EngineAction] = []
        switch kind {
        case .sighting, .transition, .position, .waypoints, .waypointChanged:
            if devices[id]?.offline == true {
                devices[id]?.offline = false
                // Back after its `lwt`: what it holds is asked again.
                devices[id]?.asked = false
            }
        case .offline: devices[id]?.offline = true
        case .hci: break
        }
        switch kind {
        case .waypoints(let list):
            takeWaypoints(list, of: id, at: time, into: &actions)
            return
        case .waypointChanged:
            devices[id]?.asked = false
            return
        case .sighting, .hci:
            devices[id]?.sightedSinceRecord = true
        default:
            break
        }
        let names = names
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
            case .transition(let transition):
                // By `rid`, else by `desc`; a region that is none of ours is the user's own.
                guard let region = names.region(rid: transition.rid, desc: transition.desc) else { return }
                engine.handle(.deviceTransition(region, entered: transition.entered), at: time, into: &engineActions)
            case .position(let position):
                engine.handle(.position(position), at: time, into: &engineActions)
            case .offline, .waypoints, .waypointChanged:
                break
            }
        }
        guard found else { return }
        finish(id, engineActions, into: &actions)
    }

    /// The phone's answer to `action: waypoints`: its own monitored waypoints come off the cap
    /// (SPEC 15.1), and an answer that lacks what the daemon had sent says the phone does not
    /// take its commands.
    private mutating func takeWaypoints(
        _ list: [PhoneWaypoint], of id: String, at time: Timestamp, into actions: inout [Action]
    ) {
        guard let device = devices[id] else { return }
        let own = list.filter { waypoint in
            waypoint.monitored && !(waypoint.rid.map { names.isOurs(rid: $0) } ?? false)
                && waypoint.name != Waypoints.legacyName
        }.count
        if let holding = device.askedHolding {
            devices[id]?.askedHolding = nil
            let present = Set(list.compactMap(\.rid))
            let missing = holding.filter { !present.contains(names.rid(of: $0)) }.count
            if missing > 0, !device.refusalSaid {
                devices[id]?.refusalSaid = true
                actions.append(
                    .notice(
                        device: id,
                        "fleet: phone \(id) lacks \(missing) of the \(holding.count) regions beaconwatch sent it "
                            + "(its answer to action waypoints): it does not take remote commands; in the OwnTracks "
                            + "app turn on Settings > Remote configuration (and cmd), then reconnect it"))
            }
        }
        guard own != device.ownWaypoints else { return }
        devices[id]?.ownWaypoints = own
        record(id, into: &actions)
        // The engine's start under its new cap closes a step, which keeps the record.
        handle(
            .reconfigure(deviceConfiguration(id), rules: rules, settings: ruleSettings), for: id, at: time,
            into: &actions)
    }

    /// Asks an OwnTracks phone for its waypoints when it was not since it came (SPEC 15.1).
    private mutating func askForWaypoints(_ id: String, into actions: inout [Action]) {
        guard let device = devices[id], device.source == .owntracks, !device.asked,
            let topic = device.commandTopic
        else { return }
        devices[id]?.asked = true
        devices[id]?.askedHolding = Set(device.waypoints)
        actions.append(.command(device: id, topic: topic, payload: Waypoints.request))
        flush(id, into: &actions)
    }

    /// Closes a step of device `id` with nothing of its engine in it, for what was added outside
    /// one (a command, a record): they are kept and delivered with it.
    private mutating func flush(_ id: String, into actions: inout [Action]) {
        guard let engine = engines[id] else { return }
        actions.append(.engine(device: id, .persist(EngineStep(whereabouts: engine.whereabouts()))))
    }

    /// Keeps what the daemon knows of device `id` (with its presence when `presence`).
    private mutating func record(_ id: String, presence: Bool = false, into actions: inout [Action]) {
        guard let device = devices[id] else { return }
        var snapshot: MonitorPresence?
        if presence, let engine = engines[id] {
            snapshot = engine.monitor.presence
            devices[id]?.recordedPresence = engine.monitor.presenceChanges
            devices[id]?.sightedSinceRecord = false
        }
        actions.append(
            .record(
                device: id,
                Record(
                    source: device.source, commandTopic: device.commandTopic, waypoints: device.waypoints,
                    legacy: device.legacy, ownWaypoints: device.ownWaypoints, presence: snapshot)))
    }

    /// Hands the device's engine actions on, with the `setWaypoints` its monitored set calls for
    /// and what the daemon keeps of it before the step's persist, and schedules its next wake-up.
    private mutating func finish(_ id: String, _ engineActions: [EngineAction], into actions: inout [Action]) {
        guard let index = devices.index(forKey: id) else { return }
        let (source, commandTopic) = (devices.values[index].source, devices.values[index].commandTopic)
        var regions: [Region]?
        var wake: Int64?
        var presenceChanges: UInt64 = 0
        _ = withEngine(id) { engine in
            if source == .owntracks, commandTopic != nil { regions = engine.monitor.monitoredRegions }
            wake = engine.nextWake?.microseconds
            presenceChanges = engine.monitor.presenceChanges
        }
        var before: [Action] = []
        let device = devices.values[index]
        if let topic = commandTopic, let regions, regions != device.waypoints || !device.legacy.isEmpty,
            let command = Waypoints.command(
                from: Set(device.waypoints), to: regions, names: names, legacy: device.legacy)
        {
            devices.values[index].waypoints = regions
            devices.values[index].legacy = []
            before.append(.command(device: id, topic: topic, payload: command))
        }
        let changed = presenceChanges != device.recordedPresence
        if !before.isEmpty || changed {
            record(id, presence: changed, into: &before)
        }
        // The command and the record go with the step that changed them: before its persist.
        var body = engineActions[...]
        if !before.isEmpty, case .persist? = body.last {
            let persist = body.removeLast()
            for action in body { actions.append(.engine(device: id, action)) }
            actions += before
            actions.append(.engine(device: id, persist))
        } else {
            for action in body { actions.append(.engine(device: id, action)) }
            if !before.isEmpty {
                actions += before
                flush(id, into: &actions)
            }
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
