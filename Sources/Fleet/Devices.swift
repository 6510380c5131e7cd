import BeaconCore
import BeaconConfiguration
import Engine
import Floorplan
import RegionMonitor
import Rules

/// Every device the daemon tracks, in one table: the daemon's own radio (``DeviceID/own``, source
/// ``FleetSource/radio``) and the fleet's phones, trackers, nodes and tags (docs/fleet.md), each
/// with its own ``Engine`` on the shared hierarchy, settings and rules, and each kept the same
/// way (a ``Record`` with its presence, with the step that changed it).
///
/// Pure, as the engine is: one ``Input`` at an instant in, each device's engine actions out,
/// with the `setWaypoints` commands that keep an OwnTracks phone's regions equal to its monitored
/// set. Inputs for the daemon as a whole (a reload, a rules document) reach every device; the
/// own radio's sightings and commands reach it alone; a fleet message reaches its device at the
/// daemon's clock. One device's step comes out whole: its outputs, then any command and record,
/// then its persist, with nothing of another device in between.
///
/// What sets the own radio apart is its source's: its engine's clock is the daemon's (every
/// call moves it); every other device wakes only when its next timer is due, from one
/// ``DeadlineQueue`` of wake-ups.
package struct Devices {
    /// One input for the table, at an instant (the daemon's clock).
    package enum Input: Sendable {
        /// For the daemon as a whole: the own radio's (a sighting, `B/cmd/mode`, a position fix);
        /// a reload or a rules document reaches every device, the own radio first.
        case daemon(EngineInput)
        /// A fleet device's message (docs/behaviour.md §15).
        case message(FleetMessage)
        /// A fixed scanner's report of a tag (docs/behaviour.md §19).
        case report(ScannerReport)
        /// What a scanner says of itself: `online` or not (ESPresense's `rooms/<id>/status`).
        case scannerStatus(String, online: Bool)
        /// The answer to device `device`'s server call `call`.
        case answer(device: DeviceID, ServerAnswer, call: Int)
        /// An input for one device alone (the web API's `cmd/mode`, `cmd/alert`).
        case device(DeviceID, EngineInput)
        /// Train, stop or forget a room (docs/behaviour.md §22: `B/cmd/learn`, the HTTP API).
        case learn(LearnCommand)

        /// The fleet device a refusal is about: the message's or the report's tag.
        package var device: String? {
            switch self {
            case .message(let message): message.device
            case .report(let report): report.tag
            case .answer(let device, _, _), .device(let device, _): device.fleetID
            case .learn(let command): command.device.isEmpty ? nil : command.device
            case .daemon, .scannerStatus: nil
            }
        }

        /// A message, a report or a presence sensor's message: what a full queue may drop (an
        /// answer or a command never), so that a flood cannot grow it without bound.
        package var isObservation: Bool {
            switch self {
            case .message, .report, .daemon(.sensor): true
            default: false
            }
        }
    }

    /// What the shell does for a device.
    package enum Action: Sendable {
        /// One of the device's engine actions, in order (outputs, steps to persist, requests).
        case engine(device: DeviceID, EngineAction)
        /// Publish `payload` to the OwnTracks phone `device` on `topic` (QoS 1, through the
        /// outbox): a `setWaypoints` or a `waypoints` request. Comes before the device's step is
        /// persisted, so it is kept with it.
        case command(device: DeviceID, topic: String, payload: String)
        /// What the daemon knows of the device beyond its engine's state, to keep with its next
        /// step (comes before it).
        case record(device: DeviceID, Record)
        /// One line for the log about the device (a phone that does not take its waypoints).
        case notice(device: DeviceID, String)
        /// The scanners' calibration settled anew: its levels, to keep (with the next commit).
        case calibration([ScannerLevel])
        /// A room's fingerprints replaced (`nil`: forgotten; room `*`: every room forgotten), to
        /// keep with the next commit (docs/behaviour.md §22).
        case fingerprints(room: String, Fingerprints.Room?)
    }

    /// What the daemon knows of a device beyond its engine's state (kept per device, the own
    /// radio's too).
    package struct Record: Sendable, Hashable {
        package var source: FleetSource
        /// Where its commands go (OwnTracks).
        package var commandTopic: String?
        /// The regions its phone holds as beaconwatch's waypoints (OwnTracks).
        package var waypoints: [Region]
        /// Regions its phone may still hold as waypoints of the form before docs/behaviour.md §15.1's
        /// (`desc` `bw:<region>`): deleted by the next command.
        package var legacy: [Region]
        /// How many of the phone's own waypoints iOS monitors (its user's regions), from its
        /// latest answer to `action: waypoints`; `nil` before any.
        package var ownWaypoints: Int?
        /// Where the device is, when it changed.
        package var presence: MonitorPresence?

        package init(
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
    package enum Refusal: Sendable, Hashable {
        /// Another daemon's device (`Fleet.shard`): ignored without a word.
        case otherShard
        /// Not declared, and `Fleet.autoAdd` is off.
        case unknownDevice
        /// `Fleet.maxDevices` are tracked already.
        case tooManyDevices
        /// Every observation was older than `Fleet.maxAge` at its arrival (how many).
        case stale(Int)
        /// A report of a scanner that no `LocationScanner` places (docs/behaviour.md §19).
        case unplacedScanner(String)
        /// A report of something that is none of the tags (not declared, not auto-added).
        case unknownTag
        /// A learn command that was refused, and why (docs/behaviour.md §22).
        case learn(String)
    }

    /// What the daemon knows of one device (its engine is kept apart: reading this copies no
    /// engine state).
    package struct Device: Sendable {
        package var declaration: DeviceDeclaration?
        /// The source it reports through (the first message's; the own radio's is ``FleetSource/radio``).
        package var source: FleetSource
        /// Where its commands go (OwnTracks), from its latest message.
        package var commandTopic: String?
        /// The regions its phone was last told to monitor (OwnTracks).
        package var waypoints: [Region] = []
        /// Waypoints of the earlier form its phone may hold, to delete with the next command.
        package var legacy: [Region] = []
        /// The phone's own monitored waypoints (OwnTracks), from its latest answer.
        package var ownWaypoints: Int?
        /// Its last `lwt`, until it reports again.
        package var offline = false
        /// Observations dropped as older than `Fleet.maxAge`.
        package var stale = 0
        /// The phone was asked for its waypoints since it was added or came back (OwnTracks).
        var asked = false
        /// What the phone had been sent when it was asked: its answer should hold all of it.
        var askedHolding: Set<Region>?
        /// A phone that does not take its waypoints was said (once).
        var refusalSaid = false
        /// The engine's presence count when it was last recorded; sightings since (kept at the end).
        var recordedPresence: UInt64 = 0
        var sightedSinceRecord = false
        /// The engine's presence count when the occupancy was last told where it is.
        var placedPresence: UInt64?
    }

    /// The configuration fleet devices run under; `nil` when the daemon has no fleet (a file run).
    package private(set) var configuration: Configuration? {
        didSet { positionSettings = Self.positionSettings(for: configuration) }
    }
    /// The position estimator's settings every tag on a floor plan shares (docs/behaviour.md §20):
    /// made once a configuration, not once a tag (its likelihood tables are 15 KiB).
    var positionSettings: PositionSettings?
    package private(set) var settings: FleetSettings
    let identity: MonitorIdentity
    private(set) var rules: [RuleRegion]?
    private(set) var ruleSettings: RuleSettings
    /// Each region's waypoint name and `rid` (docs/owntracks-app.md).
    package private(set) var names: WaypointNames
    /// Every device's id, in the order it was added (the own radio first).
    package internal(set) var ids: [DeviceID]
    var index: [DeviceID: Int]
    /// What the daemon knows of each device, by position in ``ids``.
    var known: [Device]
    /// Each device's engine, by position in ``ids``, changed in place only (never copied: a copy
    /// of every array of a large hierarchy per message).
    var engines: [Engine]
    let declared: [String: DeviceDeclaration]
    /// Which tag a scanner's report is of; `nil` without scanners (docs/behaviour.md §19).
    var tags: TagDirectory?
    /// Each placed scanner's reports and what it said of itself, by id (docs/behaviour.md §19).
    package internal(set) var scanners: [String: ScannerHealth] = [:]
    /// `Monitor.scanner`: the scanner the own radio is.
    let ownScanner: String?
    /// `Scanners.calibrate = auto`: the receivers' offsets learned from what the scanners hear of
    /// each other; `nil` when off or with fewer than two scanners.
    package internal(set) var calibration: ScannerCalibration?
    /// The building's radio, learned from its scanners on floor plans (docs/behaviour.md §20).
    package internal(set) var radio = RadioModel()
    /// The building's training (docs/behaviour.md §22), and the model every tag reads of it.
    package internal(set) var fingerprints = Fingerprints()
    package internal(set) var fingerprintModel: RoomFingerprints?
    /// The scanners by their `Scanner.<id>.address`.
    var scannerAddresses: [BluetoothAddress: String] = [:]
    /// Each fleet device's next wake-up, earliest first; an entry is stale when the device's own
    /// ``scheduled`` differs.
    private var wakeups = DeadlineQueue<Int>()
    var scheduled: [Int64?]
    /// The actions of one engine call, before they are named by their device (storage reused).
    var scratch: [EngineAction] = []
    /// Devices whose regions the occupancy is to be told (docs/behaviour.md §23), in order.
    var placements: [(device: String, regions: [Region], time: Timestamp)] = []
    /// The occupancy is being told: a placement's own step does not start another round.
    var placing = false

    /// The table of a daemon whose own radio is `own` (not started: ``start(at:into:)``), with a
    /// fleet when `configuration` has one: fleet devices get their own engines on it, with the
    /// own radio's identity (each event carries its device's userid), `rules` and
    /// `ruleSettings`, and the devices of an earlier run (`kept`) resume at the start.
    package init(
        own: Engine, configuration: Configuration? = nil, rules: [RuleRegion]? = nil,
        ruleSettings: RuleSettings = RuleSettings(), kept: [String: Kept] = [:]
    ) {
        self.configuration = configuration?.fleet == nil && configuration?.scanners == nil ? nil : configuration
        positionSettings = Self.positionSettings(for: self.configuration)
        self.settings = configuration?.fleet ?? FleetSettings()
        self.identity = own.monitor.identity
        self.rules = rules
        self.ruleSettings = ruleSettings
        names = WaypointNames(own.monitor.hierarchy)
        let tagDeclarations = (configuration?.scanners?.tags ?? []).map { tag in
            DeviceDeclaration(id: tag.id, name: tag.name ?? tag.id, userid: tag.userid, line: tag.line)
        }
        declared = Dictionary((settings.devices + tagDeclarations).map { ($0.id, $0) }) { first, _ in first }
        tags = configuration?.scanners.map { TagDirectory($0, hierarchy: own.monitor.hierarchy) }
        for scanner in configuration?.scanners?.scanners ?? [] { scanners[scanner.id] = ScannerHealth() }
        ownScanner = configuration?.scanners?.own
        (calibration, scannerAddresses) = Self.calibration(for: configuration?.scanners, from: nil)
        self.kept = self.configuration == nil ? [:] : kept
        ids = []
        index = [:]
        known = []
        engines = []
        scheduled = []
        insert(.own, Device(declaration: nil, source: .radio), engine: own)
    }

    /// The name the occupancy counts device `id` by: its fleet id, or the own radio's userid.
    func occupantName(_ id: DeviceID) -> String { id.fleetID ?? identity.userid }

    /// A table for `configuration` (whose ``Configuration/fleet`` is set), its own radio an engine
    /// for it with `identity`.
    package init(
        configuration: Configuration, identity: MonitorIdentity, rules: [RuleRegion]? = nil,
        ruleSettings: RuleSettings = RuleSettings(), kept: [String: Kept] = [:]
    ) {
        self.init(
            own: Engine(
                configuration: configuration, identity: identity, rules: rules, ruleSettings: ruleSettings,
                occupancy: true),
            configuration: configuration, rules: rules, ruleSettings: ruleSettings, kept: kept)
    }

    /// Adds device `id` with its engine at the end of the table (nothing when it is there).
    mutating func insert(_ id: DeviceID, _ device: Device, engine: Engine) {
        guard index[id] == nil else { return }
        index[id] = ids.count
        ids.append(id)
        known.append(device)
        engines.append(engine)
        scheduled.append(nil)
    }

    /// The own radio's engine.
    package var own: Engine {
        guard let position = index[.own] else { preconditionFailure("a table of devices is made with its own radio") }
        return engines[position]
    }

    /// The daemon's clock: the own radio's.
    package var now: Timestamp { own.now }

    /// What the daemon knows of device `id`.
    package subscript(device id: DeviceID) -> Device? { index[id].map { known[$0] } }

    /// What the daemon knows of fleet device `id`.
    package subscript(id: String) -> Device? { self[device: .fleet(id)] }

    /// Device `id`'s engine.
    package func engine(_ id: DeviceID) -> Engine? { index[id].map { engines[$0] } }

    /// Fleet device `id`'s engine.
    package func engine(_ id: String) -> Engine? { engine(.fleet(id)) }

    /// Every fleet device, by id (the own radio is not one).
    package var fleet: [String: Device] {
        var devices: [String: Device] = [:]
        for (position, id) in ids.enumerated() {
            if let id = id.fleetID { devices[id] = known[position] }
        }
        return devices
    }

    /// How many devices the table holds, the own radio included.
    package var count: Int { ids.count }

    /// How many fleet devices the table holds (`Fleet.maxDevices` caps them).
    var fleetCount: Int { ids.count - (index[.own] == nil ? 0 : 1) }

    /// Sightings handed to every device's engine.
    package var sightings: Int { engines.reduce(0) { $0 + $1.sightings } }

    /// The fleet devices' ids, sorted: the order a change for all of them goes in.
    private var fleetIDs: [String] { ids.compactMap(\.fleetID).sorted() }

    /// What the daemon knows of fleet device `id`, changed in place.
    subscript(known id: String) -> Device? {
        get { self[known: .fleet(id)] }
        set { self[known: .fleet(id)] = newValue }
    }

    /// What the daemon knows of device `id`, changed in place.
    subscript(known id: DeviceID) -> Device? {
        get { index[id].map { known[$0] } }
        set {
            guard let position = index[id], let newValue else { return }
            known[position] = newValue
        }
    }

    /// What a restart goes on from for one device: its engine's kept state (with its presence),
    /// and what the daemon knew of it.
    package struct Kept: Sendable {
        package var state: KeptState
        package var source: FleetSource
        package var commandTopic: String?
        package var waypoints: [Region]
        package var legacy: [Region]
        package var ownWaypoints: Int?

        package init(
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
    /// Microseconds the kept state was moved at ``start(at:)`` because it was later than the
    /// clock (negative); `nil` when it was not.
    package private(set) var keptShift: Int64?

    /// Starts the own radio's engine, then resumes every fleet device of an earlier run
    /// (docs/fleet.md, "Restarts"): its engine goes on from its kept
    /// state and presence, so a restart by itself sends no command and repeats no `enter`; a
    /// phone whose regions differ from its monitored set (a changed configuration, waypoints of
    /// the earlier form to delete) is told at once.
    ///
    /// Kept state later than `time` says the wall clock was set back while the daemon was stopped
    /// (nothing else puts a sighting after the clock): every device's kept instants move back by
    /// the difference, as if it had stopped just now, so that its silences and timers keep their
    /// lengths instead of waiting for the clock to catch up (``keptShift``).
    package mutating func start(at time: Timestamp, into actions: inout [Action]) {
        let latest = ([own.keptLatest] + kept.values.map { $0.state.presence?.latest }).compactMap {
            $0
        }.max()
        if let latest, latest > time.microseconds,
            case (let delta, false) = time.microseconds.subtractingReportingOverflow(latest)
        {
            keptShift = delta
            update(.own) { $0.shiftClock(by: delta) }
            for id in kept.keys { kept[id]?.state.shiftClock(by: delta) }
        }
        step(.own, into: &actions) { $0.start(at: time, into: &$1) }
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
    package var nextWake: Timestamp? {
        guard let fleetWake = wakeups.nextDue else { return own.nextWake }
        let wake = own.nextWake?.microseconds ?? fleetWake
        return Timestamp(microseconds: min(wake, fleetWake))
    }

    /// One input at `time` (the daemon's clock). Returns why it changed nothing, if so (a
    /// message or report the table refused).
    @discardableResult
    package mutating func handle(_ input: Input, at time: Timestamp, into actions: inout [Action]) -> Refusal? {
        switch input {
        case .daemon(let input): handle(input, at: time, into: &actions)
        case .message(let message): return handle(message, at: time, into: &actions)
        case .report(let report): return handle(report, at: time, into: &actions)
        case .scannerStatus(let scanner, let online): scannerStatus(scanner, online: online)
        case .answer(let device, let answer, let call):
            handle(.answer(answer, call: call), for: device, at: time, into: &actions)
        case .device(let device, let input): handle(input, for: device, at: time, into: &actions)
        case .learn(let command):
            tick(to: time, into: &actions)
            return learn(command, at: time, into: &actions).map(Refusal.learn)
        }
        return nil
    }

    /// A parsed message at its arrival: each fresh observation goes to its device's engine, at
    /// `arrival` (the daemon's clock). Returns why nothing happened, if so.
    @discardableResult
    mutating func handle(_ message: FleetMessage, at arrival: Timestamp, into actions: inout [Action])
        -> Refusal?
    {
        guard configuration != nil else { return nil }
        // An empty id names no device (the state database keeps the own radio under it).
        guard !message.device.isEmpty else { return .unknownDevice }
        guard settings.shard.owns(message.device) else { return .otherShard }
        let oldest = arrival.microseconds - Int64((settings.maxAge * 1_000_000).rounded())
        let fresh = message.observations.filter { observation in
            settings.maxAge <= 0 || observation.time.map { $0.microseconds >= oldest } ?? true
        }
        let stale = message.observations.count - fresh.count
        // A phone flushing its queue after an outage does not replay the past as now.
        if stale > 0, fresh.isEmpty {
            self[known: message.device]?.stale += stale
            return .stale(stale)
        }
        // Every device's timers due before the message fire first (those at its instant after it,
        // as a sighting at an exit deadline keeps the region inside: docs/behaviour.md §5.1).
        wake(upTo: arrival.microseconds - 1, into: &actions)
        let id = message.device
        if index[.fleet(id)] == nil {
            let declaration = declared[id]
            guard declaration != nil || settings.autoAdd else { return .unknownDevice }
            guard fleetCount < settings.maxDevices else { return .tooManyDevices }
            add(
                id, Device(declaration: declaration, source: message.source, commandTopic: message.commandTopic),
                state: KeptState(), isNew: true, at: arrival, into: &actions)
        } else if let topic = message.commandTopic, self[known: id]?.commandTopic != topic {
            self[known: id]?.commandTopic = topic
            record(.fleet(id), into: &actions)
        }
        for observation in fresh { feed(observation.kind, to: id, at: arrival, into: &actions) }
        if stale > 0 { self[known: id]?.stale += stale }
        askForWaypoints(id, into: &actions)
        return nil
    }

    /// An input for one device's engine (an answer to its server call, a command), at `time`.
    mutating func handle(
        _ input: EngineInput, for id: DeviceID, at time: Timestamp, into actions: inout [Action]
    ) {
        step(id, into: &actions) { $0.handle(input, at: time, into: &$1) }
    }

    /// One call of device `id`'s engine, its actions handed on (``finish(_:into:)``).
    private mutating func step(
        _ id: DeviceID, into actions: inout [Action], _ call: (inout Engine, inout [EngineAction]) -> Void
    ) {
        guard let position = index[id] else { return }
        call(&engines[position], &scratch)
        finish(position, into: &actions)
    }

    /// Changes device `id`'s engine in place, with no actions.
    private mutating func update(_ id: DeviceID, _ change: (inout Engine) -> Void) {
        guard let position = index[id] else { return }
        change(&engines[position])
    }

    /// An input for the daemon as a whole at `time`: the own radio's (a sighting, `B/cmd/mode`, a
    /// position fix); a reload or a rules document reaches every device, the own radio first.
    mutating func handle(_ input: EngineInput, at time: Timestamp, into actions: inout [Action]) {
        if case .advertisement(let advertisement) = input, heardAsScanner(advertisement, at: time, into: &actions) {
            return
        }
        handle(input, for: .own, at: time, into: &actions)
        switch input {
        case .reconfigure, .rules, .geofences: reconfigure(input, at: time, into: &actions)
        default: return
        }
    }

    /// A source event of the own radio's file at its own time; a scanner's report goes to its tag.
    package mutating func handle(_ event: SourceEvent, into actions: inout [Action]) {
        switch event {
        case .report(let time, let report):
            tick(to: time, into: &actions)
            handle(report, at: time, into: &actions)
            return
        case .learn(let time, let command):
            tick(to: time, into: &actions)
            learn(command, at: time, into: &actions)
            return
        case .sensor(let time, _):
            // The fleet's timers before it fire first: the occupancy sees them at their instants.
            tick(to: time, into: &actions)
        case .advertisement(let time, let advertisement):
            if heardAsScanner(advertisement, at: time, into: &actions) { return }
        default:
            break
        }
        step(.own, into: &actions) { $0.handle(event, into: &$1) }
    }

    /// An advertisement the own radio heard at `time`: with `Monitor.scanner` (the own radio is one
    /// of the scanners) a report of a tag, handled as one (true); else a sighting for the own
    /// radio's engine, noted (false: the caller hands it on).
    private mutating func heardAsScanner(
        _ advertisement: Advertisement, at time: Timestamp, into actions: inout [Action]
    ) -> Bool {
        if ownScanner != nil, let report = ownReport(advertisement) {
            tick(to: time, into: &actions)
            handle(report, at: time, into: &actions)
            return true
        }
        self[known: .own]?.sightedSinceRecord = true
        return false
    }

    /// Moves the daemon's clock (the own radio's engine) to `time`, firing its timers on the way.
    private mutating func tick(to time: Timestamp, into actions: inout [Action]) {
        if let own = index[.own], engines[own].occupancy != nil {
            // The occupancy hears of a device's exit at its instant (docs/behaviour.md §23): the
            // fleet's timers before `time` fire in time order with the own radio's, not after its
            // clock has moved on (an instant's own timers first).
            while let due = wakeups.nextDue, due < time.microseconds {
                if let mine = engines[own].nextDeadline?.microseconds, mine <= due {
                    step(.own, into: &actions) { $0.advance(to: Timestamp(microseconds: mine), into: &$1) }
                } else {
                    wake(upTo: due, into: &actions)
                }
            }
        }
        step(.own, into: &actions) { $0.advance(to: time, into: &$1) }
    }

    /// A reloaded configuration or a fetched rules document, for every fleet device: devices go
    /// on under it, and new devices start with it. The fleet's sources stay those of the start.
    private mutating func reconfigure(_ input: EngineInput, at time: Timestamp, into actions: inout [Action]) {
        guard self.configuration != nil else { return }
        switch input {
        case .reconfigure(let configuration, let rules, let settings):
            let sources = self.settings
            self.configuration = configuration
            self.rules = rules
            ruleSettings = settings
            (calibration, scannerAddresses) = Self.calibration(for: configuration.scanners, from: calibration)
            names = WaypointNames(configuration.hierarchy)
            refreshFingerprints()
            var fleet = configuration.fleet ?? sources
            (fleet.owntracks, fleet.theengs, fleet.forward) = (sources.owntracks, sources.theengs, sources.forward)
            self.settings = fleet
            // Each device under its own cap (a phone's own waypoints taken off).
            for id in fleetIDs {
                handle(
                    .reconfigure(deviceConfiguration(id) ?? configuration, rules: rules, settings: settings),
                    for: .fleet(id), at: time, into: &actions)
            }
            return
        case .rules(let regions):
            rules = regions.filter { $0.geofence == nil } + (rules ?? []).filter { $0.geofence != nil }
        case .geofences(let regions):
            rules = (rules ?? []).filter { $0.geofence == nil } + regions
        default:
            return
        }
        for id in fleetIDs { handle(input, for: .fleet(id), at: time, into: &actions) }
    }

    /// Moves the own radio's clock to `time`, firing its timers on the way, then fires every fleet
    /// device's timers up to `time`, earliest first.
    package mutating func advance(to time: Timestamp, into actions: inout [Action]) {
        tick(to: time, into: &actions)
        wake(upTo: time.microseconds, into: &actions)
    }

    /// Fires the fleet devices' timers due at or before `time` (microseconds), earliest first.
    mutating func wake(upTo time: Int64, into actions: inout [Action]) {
        while let (due, position) = wakeups.popDue(atOrBefore: time) {
            guard scheduled[position] == due else { continue }
            engines[position].advance(to: Timestamp(microseconds: due), into: &scratch)
            finish(position, into: &actions)
        }
    }

    /// Fires the earliest timer of any device that can cause an output, if it falls at or before
    /// `limit` (any, when `nil`); returns whether one fired. A replay drains its clock with this
    /// at the end of its input (``Engine/advanceToNextDeadline(notAfter:into:)``): the own radio's
    /// first at an instant, then its tags' in the order they came (docs/behaviour.md §19).
    package mutating func drain(notAfter limit: Timestamp?, into actions: inout [Action]) -> Bool {
        var earliest: (due: Timestamp, position: Int)?
        for position in engines.indices {
            guard let due = engines[position].nextOutputDeadline, earliest.map({ due < $0.due }) ?? true else {
                continue
            }
            earliest = (due, position)
        }
        guard let (due, position) = earliest, limit.map({ due <= $0 }) ?? true else { return false }
        if ids[position] != .own {
            // The daemon's clock goes first to that instant, as a live run's does.
            tick(to: Timestamp(microseconds: due.microseconds - 1), into: &actions)
        }
        let fired = engines[position].advanceToNextDeadline(notAfter: limit, into: &scratch)
        finish(position, into: &actions)
        return fired
    }

    /// The wall clock was stepped by `delta` microseconds: every device's instants move with it
    /// (``Engine/shiftClock(by:)``), so nothing fires or waits because of the step.
    package mutating func shiftClock(by delta: Int64) {
        guard delta != 0 else { return }
        for position in engines.indices { engines[position].shiftClock(by: delta) }
        wakeups.shiftClock(by: delta)
        for position in scheduled.indices { scheduled[position] = scheduled[position]?.shifted(by: delta) }
        for id in scanners.keys { scanners[id]?.shiftClock(by: delta) }
    }

    /// The end of a run: each device whose beacons were sighted since its presence was last kept
    /// has it kept now (the own radio first), so that the next start resumes every exit deadline
    /// (docs/behaviour.md §15, §12).
    package mutating func close(into actions: inout [Action]) {
        for id in [.own] + fleetIDs.map(DeviceID.fleet) where self[known: id]?.sightedSinceRecord == true {
            record(id, presence: true, into: &actions)
            flush(id, into: &actions)
        }
    }

    /// Hands the actions of the device's engine call (in ``scratch``) on, named by the device,
    /// with the `setWaypoints` its monitored set calls for and what the daemon keeps of it before
    /// the step's persist, and schedules its next wake-up (a fleet device's).
    mutating func finish(_ position: Int, into actions: inout [Action]) {
        defer {
            scratch.removeAll(keepingCapacity: true)
            takeLearned(position, into: &actions)
            place(position, into: &actions)
        }
        let id = ids[position]
        let device = known[position]
        var regions: [Region]?
        if device.source == .owntracks, device.commandTopic != nil {
            regions = engines[position].monitor.monitoredRegions
        }
        let wake = engines[position].nextWake?.microseconds
        let presenceChanges = engines[position].monitor.presenceChanges
        var before: [Action] = []
        if let topic = device.commandTopic, let regions, regions != device.waypoints || !device.legacy.isEmpty,
            let command = Waypoints.command(
                from: Set(device.waypoints), to: regions, names: names, legacy: device.legacy)
        {
            known[position].waypoints = regions
            known[position].legacy = []
            before.append(.command(device: id, topic: topic, payload: command))
        }
        let changed = presenceChanges != device.recordedPresence
        if !before.isEmpty || changed {
            record(id, presence: changed, into: &before)
        }
        // The command and the record go with the step that changed them: before its persist.
        var body = scratch[...]
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
        // The own radio's clock is the daemon's, moved on every call: it is never on the queue.
        guard ids[position] != .own, scheduled[position] != wake else { return }
        scheduled[position] = wake
        if let wake { wakeups.schedule(position, at: wake) }
    }

    /// Tells the occupancy (the own radio's engine: docs/behaviour.md §23) where device
    /// `position` is when its presence changed, and passes on the own engine's log lines.
    mutating func place(_ position: Int, into actions: inout [Action]) {
        // The own radio is the table's first device (``init(own:configuration:rules:ruleSettings:kept:)``):
        // no lookup on every sighting.
        let own = 0
        guard ids.first == .own else { return }
        // The own radio's engine places the own radio itself, at its instant.
        if position != own, engines[own].occupancy != nil {
            let changes = engines[position].monitor.presenceChanges
            if known[position].placedPresence != changes {
                known[position].placedPresence = changes
                placements.append(
                    (occupantName(ids[position]), engines[position].monitor.occupiedRegions, engines[position].now))
            }
        }
        if !engines[own].notices.isEmpty {
            for line in engines[own].takeNotices() { actions.append(.notice(device: .own, line)) }
        }
        guard !placing, !placements.isEmpty else { return }
        placing = true
        defer { placing = false }
        while !placements.isEmpty {
            let (device, regions, time) = placements.removeFirst()
            step(.own, into: &actions) { $0.handle(.occupants(device: device, regions: regions), at: time, into: &$1) }
        }
    }
}
