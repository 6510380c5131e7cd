import BeaconCore
import BeaconConfiguration
import Engine
import Floorplan
import RegionMonitor
import Rules

/// The fleet's devices (docs/behaviour.md §15): adding one, feeding it its observations, the
/// waypoints a phone is told to monitor, and what the daemon keeps of each.
extension Devices {
    /// The position settings of `configuration`'s tags: `nil` unless its floors have plans and
    /// its tags' rooms are `position`.
    static func positionSettings(for configuration: Configuration?) -> PositionSettings? {
        guard let configuration, configuration.scanners?.effectiveRooms == .position, !configuration.floors.isEmpty
        else { return nil }
        let confidence = configuration.floorPlan?.minConfidence ?? 0.6
        let buildings = configuration.buildings
        if var tuning = configuration.scanners?.positionTuning {
            tuning.place(buildings)
            tuning.minConfidence = confidence
            return tuning
        }
        return configuration.scanners?.reportsAreFiltered == true
            ? .filteredReports(floors: configuration.floors, minConfidence: confidence, buildings: buildings)
            : PositionSettings(floors: configuration.floors, minConfidence: confidence, buildings: buildings)
    }

    /// The configuration device `id`'s engine runs under: the daemon's, with a phone's own
    /// monitored waypoints taken off `Monitor.maxRegions` (docs/behaviour.md §15.1; at least 1 region is left).
    func deviceConfiguration(_ id: String) -> Configuration? {
        self[known: id].flatMap { deviceConfiguration(id, $0) }
    }

    /// The configuration fleet device `id` (what the daemon knows of it: `device`) runs under.
    func deviceConfiguration(_ id: String, _ device: Device) -> Configuration? {
        guard let configuration else { return nil }
        if device.source == .scanners {
            // A tag: its sightings are of its scanners' locations, at its own power, in one room
            // at a time unless `Tags.rooms = heard` (docs/behaviour.md §19).
            var tagged = configuration
            tagged.monitor.powerFromSighting = true
            // Scanners hear it all the time: ranging never waits for a window (docs/behaviour.md §6).
            tagged.monitor.mode = .foreground
            // ESPresense nodes report their own filtered estimates: not filtered again (19).
            // A phone or watch (its address rotates) may stop advertising for a while (§19).
            if case .irk? = tags?.declaration(id)?.identity { tagged.monitor.quietTransmitter = true }
            if configuration.scanners?.reportsAreFiltered == true {
                tagged.monitor.rssiFilter = .none
                tagged.monitor.reportPeriod = ScannerSettings.espresenseReportPeriod
            }
            tagged.monitor.rooms =
                configuration.scanners?.effectiveRooms == .heard
                ? nil : (configuration.scanners?.effectiveRoomRule ?? RoomRule())
            // Where the floors have plans, rooms follow from positions (docs/behaviour.md §20).
            if let positionSettings { tagged.monitor.floorPlans = positionSettings }
            // `Tags.exitTimeout`, `auto` unless a number (README decisions; docs/behaviour.md §19).
            if let seconds = configuration.scanners?.exitTimeout {
                tagged.monitor.exitTimeout = seconds
                tagged.monitor.adaptiveExit = false
            } else {
                tagged.monitor.adaptiveExit = true
                tagged.monitor.exitTimeoutMin = configuration.scanners?.exitTimeoutMin ?? 3
            }
            return tagged
        }
        guard let own = device.ownWaypoints, own > 0 else { return configuration }
        var adjusted = configuration
        adjusted.monitor.maxRegions = max(1, configuration.monitor.maxRegions - own)
        return adjusted
    }

    /// The cap the daemon manages on device `id`'s phone.
    package func cap(of id: String) -> Int {
        deviceConfiguration(id)?.monitor.maxRegions ?? own.monitor.settings.maxRegions
    }

    mutating func add(
        _ id: String, _ device: Device, state: KeptState, isNew: Bool, at time: Timestamp,
        into actions: inout [Action]
    ) {
        guard index[.fleet(id)] == nil, let configuration else { return }
        let userid = device.declaration?.userid ?? id
        let deviceIdentity = MonitorIdentity(session: identity.session, address: identity.address, userid: userid)
        var device = device
        var engine = Engine(
            configuration: deviceConfiguration(id, device) ?? configuration, identity: deviceIdentity, kept: state,
            rules: rules, ruleSettings: ruleSettings)
        engine.start(at: time, into: &scratch)
        // A start that only announces the set it resumed changes nothing to keep; one that exits
        // a region whose sightings ran out meanwhile is kept (a second start must not exit it again).
        let moved = scratch.contains {
            if case .output(.transition) = $0 { true } else { false }
        }
        if !moved { device.recordedPresence = engine.monitor.presenceChanges }
        insert(.fleet(id), device, engine: engine)
        // A device new to the daemon is kept at once; a resumed one as it changes.
        if isNew { record(.fleet(id), into: &actions) }
        guard let position = index[.fleet(id)] else { return }
        finish(position, into: &actions)
    }

    mutating func feed(
        _ kind: FleetObservation.Kind, to id: String, at time: Timestamp, into actions: inout [Action]
    ) {
        switch kind {
        case .sighting, .transition, .position, .waypoints, .waypointChanged:
            if self[known: id]?.offline == true {
                self[known: id]?.offline = false
                // Back after its `lwt`: what it holds is asked again.
                self[known: id]?.asked = false
            }
        case .offline: self[known: id]?.offline = true
        case .hci: break
        }
        switch kind {
        case .waypoints(let list):
            takeWaypoints(list, of: id, at: time, into: &actions)
            return
        case .waypointChanged:
            self[known: id]?.asked = false
            return
        case .sighting, .hci:
            self[known: id]?.sightedSinceRecord = true
        default:
            break
        }
        guard let position = index[.fleet(id)] else { return }
        switch kind {
        case .sighting(let advertisement, let phone):
            let input: EngineInput =
                phone.map { .phoneSighting(advertisement, proximity: $0) } ?? .advertisement(advertisement)
            engines[position].handle(input, at: time, into: &scratch)
        case .hci(let event):
            var decoder = AdvertisingReportDecoder()
            decoder.decode(event: event) { advertisement in
                engines[position].handle(.advertisement(advertisement), at: time, into: &scratch)
            }
        case .transition(let transition):
            // By `rid`, else by `desc`; a region that is none of ours is the user's own.
            guard let region = names.region(rid: transition.rid, desc: transition.desc) else { break }
            engines[position].handle(.deviceTransition(region, entered: transition.entered), at: time, into: &scratch)
        case .position(let fix):
            engines[position].handle(.position(fix), at: time, into: &scratch)
        case .offline, .waypoints, .waypointChanged:
            break
        }
        finish(position, into: &actions)
    }

    /// The phone's answer to `action: waypoints`: its own monitored waypoints come off the cap
    /// (docs/behaviour.md §15.1), and an answer that lacks what the daemon had sent says the phone does not
    /// take its commands.
    mutating func takeWaypoints(
        _ list: [PhoneWaypoint], of id: String, at time: Timestamp, into actions: inout [Action]
    ) {
        guard let device = self[known: id] else { return }
        let own = list.filter { waypoint in
            waypoint.monitored && !(waypoint.rid.map { names.isOurs(rid: $0) } ?? false)
                && waypoint.name != Waypoints.legacyName
        }.count
        if let holding = device.askedHolding {
            self[known: id]?.askedHolding = nil
            let present = Set(list.compactMap(\.rid))
            let missing = holding.filter { !present.contains(names.rid(of: $0)) }.count
            if missing > 0, !device.refusalSaid {
                self[known: id]?.refusalSaid = true
                actions.append(
                    .notice(
                        device: .fleet(id),
                        "fleet: phone \(id) lacks \(missing) of the \(holding.count) regions beaconwatch sent it "
                            + "(its answer to action waypoints): it does not take remote commands; in the OwnTracks "
                            + "app turn on Settings > Remote configuration (and cmd), then reconnect it"))
            }
        }
        guard own != device.ownWaypoints else { return }
        let capBefore = cap(of: id)
        self[known: id]?.ownWaypoints = own
        record(.fleet(id), into: &actions)
        // A cap that stays (a first answer with none of its own: until then it was the whole cap,
        // docs/behaviour.md §15.1) leaves the engine as it is: a restart would forget what the
        // phone ranged, and the nearest would hand over on its next message as after a reload.
        guard cap(of: id) != capBefore, let adjusted = deviceConfiguration(id) else {
            flush(.fleet(id), into: &actions)
            return
        }
        // The engine's start under its new cap closes a step, which keeps the record.
        handle(
            .reconfigure(adjusted, rules: rules, settings: ruleSettings), for: .fleet(id), at: time, into: &actions)
    }

    /// Asks an OwnTracks phone for its waypoints when it was not since it came (docs/behaviour.md §15.1).
    mutating func askForWaypoints(_ id: String, into actions: inout [Action]) {
        guard let device = self[known: id], device.source == .owntracks, !device.asked,
            let topic = device.commandTopic
        else { return }
        self[known: id]?.asked = true
        self[known: id]?.askedHolding = Set(device.waypoints)
        actions.append(.command(device: .fleet(id), topic: topic, payload: Waypoints.request))
        flush(.fleet(id), into: &actions)
    }

    /// Closes a step of device `id` with nothing of its engine in it, for what was added outside
    /// one (a command, a record): they are kept and delivered with it.
    mutating func flush(_ id: DeviceID, into actions: inout [Action]) {
        guard let position = index[id] else { return }
        actions.append(.engine(device: id, .persist(EngineStep(whereabouts: engines[position].whereabouts()))))
    }

    /// Keeps what the daemon knows of device `id` (with its presence when `presence`).
    mutating func record(_ id: DeviceID, presence: Bool = false, into actions: inout [Action]) {
        guard let position = index[id] else { return }
        let source = known[position].source
        let device = known[position]
        var snapshot: MonitorPresence?
        if presence {
            snapshot = engines[position].monitor.presence
            known[position].recordedPresence = engines[position].monitor.presenceChanges
            known[position].sightedSinceRecord = false
        }
        actions.append(
            .record(
                device: id,
                Record(
                    source: source, commandTopic: device.commandTopic, waypoints: device.waypoints,
                    legacy: device.legacy, ownWaypoints: device.ownWaypoints, presence: snapshot)))
    }
}
