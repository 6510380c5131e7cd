import BeaconConfiguration
import BeaconCore
import Engine
import Fleet
import Floorplan
import Metrics
import Persistence
import Prometheus
import RegionMonitor
import Synchronization
import Syscalls
import WebView

/// The web view's side of the daemon: a sink that takes every output as it is delivered (the
/// latest transitions, server-sent events, counts), and the ``BuildingModel`` refreshed from
/// readings of the engines, taken on the engine's thread between two events.
package final class WebState: OutputSink, Sendable {
    package let hub = EventHub()
    package let metrics: WebMetrics
    let control: EngineControl
    /// The id the web view shows the daemon's own radio by (its userid; ``DeviceID/own`` in the
    /// table, no `"device"` in its outputs).
    let ownID: String
    private let model: Mutex<BuildingModel>
    /// Changes so far: outputs delivered (on the engine's thread) and commands posted; a reading
    /// older than the latest is refreshed before it is shown.
    private let delivered = Atomic<Int>(0)
    private let refreshing = Mutex<Refresh>(Refresh())
    /// Pages and documents rendered from the model, with the model version they show: many
    /// clients asking at once cost one rendering per change.
    private let rendered = Mutex<[String: (version: Int, text: String)]>([:])

    /// The trained rooms' status, with the training it was worked out from (the engine's thread).
    private let trainingStatus = Mutex<StatusCache?>(nil)

    private struct StatusCache {
        var version: Int
        var signature: Set<String>
        var rooms: [Fingerprints.Status]
    }

    /// Told when a reading ends: requests that found one under way wait on it.
    private let readingEnded: Awaitable
    /// The daemon's timers and clock: the readings' pace and age, the event latency.
    let timers: ShellTimers
    /// `Scanners.silence`: a scanner quiet this long is offline.
    let scannerSilence: Double

    private struct Refresh {
        var readAt: Duration?
        var readGeneration = -1
        /// A request is taking a reading now; the others wait for it.
        var reading = false
        var ended = false
        /// The last reading got no answer (a stuck engine): requests show the model as it is.
        var unanswered = false
        /// Advertisements and outputs counted at the last reading, and how many readings in a
        /// row found them unchanged.
        var activity = -1
        var quietReadings = 0
    }

    /// Readings in a row that found no advertisement and no output since the one before: the
    /// sampler then reads less often (an idle daemon stays idle).
    package var quietReadings: Int { refreshing.withLock { $0.quietReadings } }

    /// Readings at most this often, however many requests and outputs come.
    static let minimumInterval = Duration.milliseconds(40)

    package init(configuration: Configuration, ownID: String, control: EngineControl, timers: ShellTimers = .shared) {
        self.control = control
        self.timers = timers
        readingEnded = Awaitable(timers: timers)
        self.ownID = ownID
        scannerSilence = configuration.scanners?.silence ?? 60
        metrics = WebMetrics()
        var model = BuildingModel(hierarchy: configuration.hierarchy, maxRegions: configuration.monitor.maxRegions)
        model.declare(.init(id: ownID, name: nil, own: true))
        for declaration in configuration.fleet?.devices ?? [] {
            model.declare(.init(id: declaration.id, name: declaration.name))
        }
        for tag in configuration.scanners?.tags ?? [] { model.declare(.init(id: tag.id, name: tag.name)) }
        model.place(configuration.scanners?.scanners.map { ($0.id, $0.locationID) } ?? [])
        model.floors = Self.floors(of: configuration)
        // Known to have an occupancy before the engine's first reading says what it is.
        if configuration.occupancy != nil { model.occupancy = [] }
        model.sensorLiveness = Self.liveness(of: configuration)
        self.model = Mutex(model)
    }

    // MARK: - OutputSink (the engine's thread)

    package func deliver(_ outputs: ArraySlice<MonitorOutput>, entries: ArraySlice<OutboxEntry>, context: StepContext) {
        guard !outputs.isEmpty else { return }
        let device = context.device?.id ?? ownID
        let hasClients = hub.clientCount > 0
        var transitions = false
        for output in outputs {
            metrics.output(output.type)
            if case .transition = output { transitions = true }
        }
        if transitions {
            model.withLock { model in
                for output in outputs { model.record(output, device: device) }
            }
        }
        // Counted before any client hears of them: a request that follows an event is shown a
        // reading taken after it.
        delivered.add(outputs.count, ordering: .releasing)
        if hasClients {
            for output in outputs { hub.publish(json: output.json(device: context.device?.id), device: device) }
        }
        if let staged = context.staged { metrics.latency(timers.clock.elapsed() - staged) }
    }

    package func reconfigure(_ configuration: Configuration) {
        model.withLock { model in
            for declaration in configuration.fleet?.devices ?? [] {
                model.declare(.init(id: declaration.id, name: declaration.name))
            }
            for tag in configuration.scanners?.tags ?? [] { model.declare(.init(id: tag.id, name: tag.name)) }
            model.floors = Self.floors(of: configuration)
            model.sensorLiveness = Self.liveness(of: configuration)
        }
    }

    /// How each presence sensor is known to be alive (docs/occupancy.md, "Liveness"), by id.
    static func liveness(of configuration: Configuration) -> [String: String] {
        Dictionary((configuration.occupancy?.sensors ?? []).map { ($0.id, $0.liveness) }) { first, _ in first }
    }

    /// The floors with a plan, in the order of their Areas, each with its building (the floor
    /// picker groups by it).
    static func floors(of configuration: Configuration) -> [BuildingModel.Floor] {
        configuration.floors.sorted { $0.key < $1.key }.map {
            BuildingModel.Floor(
                map: $0.value, hierarchy: configuration.hierarchy, building: configuration.buildings[$0.key])
        }
    }

    // MARK: - Readings

    /// The model, refreshed first when outputs were delivered since its last reading or it is
    /// older than `maxAge` (at most every ``minimumInterval``); as it is when the engine does
    /// not answer.
    package func current(maxAge: Duration = .seconds(1)) async -> BuildingModel {
        await refresh(maxAge: maxAge)
        return model.withLock { $0 }
    }

    /// `render(model)` of the current model, rendered once per model version under `key`.
    package func rendered(_ key: String, maxAge: Duration = .seconds(1), _ render: (BuildingModel) -> String) async
        -> String
    {
        let model = await current(maxAge: maxAge)
        if let cached = rendered.withLock({ $0[key] }), cached.version == model.version { return cached.text }
        let text = render(model)
        rendered.withLock { $0[key] = (model.version, text) }
        return text
    }

    /// Whether the engine's loop has ended (a file source's end, a stop).
    package var engineEnded: Bool { refreshing.withLock { $0.ended } }

    /// What a request does about the model: nothing (it is fresh, or the engine has ended), wait
    /// for the reading another request is taking, or take one itself after `pause`.
    private enum Turn {
        case done
        case wait
        case read(pause: Duration)
    }

    /// Brings the model up to date for a request: one request at a time takes the reading (in its
    /// own task, at most every ``minimumInterval``); the others wait for it to end.
    func refresh(maxAge: Duration) async {
        while true {
            let wanted = delivered.load(ordering: .acquiring)
            let now = timers.clock.elapsed()
            let turn = refreshing.withLock { state -> Turn in
                if state.ended { return .done }
                if state.reading { return .wait }
                let fresh =
                    state.readGeneration >= wanted && state.readAt.map { now - $0 < maxAge } == true
                if fresh { return .done }
                state.reading = true
                return .read(pause: state.readAt.map { Self.minimumInterval - (now - $0) } ?? .zero)
            }
            switch turn {
            case .done:
                return
            case .wait:
                // The reader's wait for the engine is bounded (``EngineControl/read(within:_:)``).
                _ = await readingEnded.wait(within: .seconds(10)) { !refreshing.withLock { $0.reading } }
            case .read(let pause):
                if pause > .zero { try? await timers.sleep(for: pause) }
                await read()
            }
            // A reading that began before this request's outputs were delivered: once more; but
            // never again after one that got no answer (each waits for the engine's limit).
            if refreshing.withLock({ $0.ended || $0.unanswered || $0.readGeneration >= wanted }) { return }
        }
    }

    /// Reads every engine once (the engine's thread), then takes the readings into the model.
    private func read() async {
        let snapshot = await control.read { [self] driver -> Snapshot in
            let table = driver.devices
            var devices: [(id: String, name: String?, reading: DeviceReading)] = []
            devices.reserveCapacity(table.count)
            for id in table.ids {
                guard let engine = table.engine(id) else { continue }
                devices.append((webID(id), table[device: id]?.declaration?.name, engine.reading))
            }
            let silence = self.scannerSilence
            let scanners = table.scanners.sorted { $0.key < $1.key }.map { id, health in
                (id: id, health: health, online: health.isOnline(at: table.now, silence: silence))
            }
            var learned: [String: BuildingModel.Scanner.Learned] = [:]
            for entry in table.calibration?.corrections ?? [] {
                learned[entry.id] = .init(offset: entry.offset, pairs: entry.pairs)
            }
            var tags: Set<String> = []
            for id in table.ids where table[device: id]?.source == .scanners { tags.insert(webID(id)) }
            // A declared tag not heard yet has the control too: its command is refused, saying it
            // must be heard first (docs/behaviour.md §22).
            for tag in table.configuration?.scanners?.tags ?? [] { tags.insert(tag.id) }
            return Snapshot(
                generation: self.delivered.load(ordering: .acquiring), devices: devices, reports: driver.reports,
                sightings: table.sightings, failing: driver.failing.map { "\($0)" }, scanners: scanners,
                learned: learned, radio: table.configuration?.floors.isEmpty == false ? table.radio : nil,
                now: table.now, training: training(of: table), tags: tags,
                occupancy: table.engine(.own)?.occupancy?.current)
        }
        defer { readingEnded.changed() }
        refreshing.withLock { state in
            state.reading = false
            state.unanswered = snapshot == nil
            if let snapshot {
                state.readAt = timers.clock.elapsed()
                state.readGeneration = snapshot.generation
                let activity = snapshot.reports &+ snapshot.sightings &+ snapshot.generation
                state.quietReadings = activity == state.activity ? state.quietReadings + 1 : 0
                state.activity = activity
            } else if control.hasEnded {
                state.ended = true
            }
        }
        guard let snapshot else { return }
        metrics.take(snapshot)
        model.withLock { model in
            for device in snapshot.devices {
                if model.devices[device.id] == nil || device.name != nil {
                    model.declare(.init(id: device.id, name: device.name, own: device.id == ownID))
                }
                model.update(device.id, reading: device.reading)
            }
            if !snapshot.scanners.isEmpty {
                model.updateScanners(
                    snapshot.scanners.map { ($0.id, $0.online, $0.health.lastReport, $0.health.reports) },
                    at: snapshot.now, learned: snapshot.learned)
            }
            if model.radio != snapshot.radio { model.radio = snapshot.radio }
            if model.training != snapshot.training { model.training = snapshot.training }
            if model.tags != snapshot.tags { model.tags = snapshot.tags }
            if model.occupancy != snapshot.occupancy { model.occupancy = snapshot.occupancy }
        }
    }

    /// The building's training as the table of devices knows it (the engine's thread): each
    /// trained room's status, worked out again only when the training changed (its
    /// cross-validation is not free), and the sessions running.
    private func training(of table: Devices) -> Training {
        let prints = table.fingerprints
        let signature = Set(prints.rooms.map { "\($0.key)@\($0.value.trainedAt)#\($0.value.samples.count)" })
        let rooms = trainingStatus.withLock { cached in
            if let cached, cached.version == prints.version, cached.signature == signature { return cached.rooms }
            let rooms = table.fingerprintStatus
            cached = StatusCache(version: prints.version, signature: signature, rooms: rooms)
            return rooms
        }
        let sessions = table.learningSessions.map {
            Training.Session(
                device: $0.device, room: $0.room, started: Timestamp(microseconds: $0.started),
                until: Timestamp(microseconds: $0.until), samples: $0.samples)
        }
        return Training(rooms: rooms, sessions: sessions, now: table.now)
    }

    /// What one reading of the engines brings back.
    struct Snapshot: Sendable {
        var generation: Int
        var devices: [(id: String, name: String?, reading: DeviceReading)]
        var reports: Int
        var sightings: Int
        var failing: String?
        /// Every placed scanner, by id, and whether it is online now (docs/behaviour.md §19).
        var scanners: [(id: String, health: ScannerHealth, online: Bool)] = []
        /// What `Scanners.calibrate = auto` learned, by scanner.
        var learned: [String: BuildingModel.Scanner.Learned] = [:]
        /// The floors' radio as the scanners taught it (docs/behaviour.md §20); nil with no floor plan.
        var radio: RadioModel? = nil
        var now: Timestamp
        /// The building's training and the sessions running (docs/behaviour.md §22).
        var training = Training()
        /// The tags heard by scanners, by the web view's id.
        var tags: Set<String> = []
        /// Each announced region's occupancy (docs/behaviour.md §23); `nil` when the configuration has none.
        var occupancy: [OccupancyChange]? = nil
    }

    /// Hands `command` to device `id`'s engine; false once the engine's loop has ended.
    func post(_ command: DaemonCommand, device id: String) -> Bool {
        guard !control.hasEnded else { return false }
        // The next reading is taken after the command (the loop takes orders before queries):
        // a request that follows sees what it did, outputs or not.
        defer { delivered.add(1, ordering: .releasing) }
        let device: DeviceID = id == ownID ? .own : .fleet(id)
        switch command {
        case .mode(let mode): control.post(.device(device, .mode(mode)))
        case .alert: command.traceCommand.map { control.post(.device(device, .command($0))) }
        case .reload, .learn: return false
        }
        return true
    }

    /// Hands a learn command to the engine and waits for its answer (docs/behaviour.md §22): taken,
    /// refused (why, in one line: nothing changed), dropped (the engine has ended), or `nil` when
    /// the engine did not answer within `limit`. The daemon's own radio is no tag.
    func learn(_ command: LearnCommand, within limit: Duration = .seconds(2)) async -> EngineControl.Answer? {
        if command.device == ownID, command.action != .forget {
            return .refused(
                .learn(
                    "learn: \"\(ownID.excerpt)\" is this daemon's own radio, not a tag heard by scanners; train with a Tag.<id>"
                ))
        }
        // The next reading is taken after the command: a request that follows sees what it did.
        defer { delivered.add(1, ordering: .releasing) }
        return await control.ask(.learn(command), within: limit)
    }

    /// The id the web view shows a device of the table by: the own radio's is its userid.
    func webID(_ id: DeviceID) -> String { id.fleetID ?? ownID }

    /// Whether the engine runs and can keep what it does: `nil` when healthy, else why not.
    package func health(within limit: Duration = .seconds(2)) async -> String? {
        let answer = await control.read(within: limit) { driver in driver.failing.map { "\($0)" } }
        switch answer {
        case .some(nil): return nil
        case .some(let failing?): return "the state database cannot be written: \(failing)"
        case nil:
            return control.hasEnded
                ? "the engine has stopped (end of input or shutting down)"
                : "the engine did not answer within \(limit)"
        }
    }
}
