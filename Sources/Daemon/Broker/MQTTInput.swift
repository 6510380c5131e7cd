import BeaconConfiguration
import BeaconCore
import Engine
import Fleet
import Logging
import MQTT
import RegionMonitor
import Synchronization

/// What comes in over MQTT, as a source of the engine's inputs (docs/mqtt.md, "Commands";
/// docs/fleet.md; docs/occupancy.md): commands on `B/cmd/+`, the fleet's messages and the presence
/// sensors' (docs/behaviour.md §23), parsed where they arrive (the MQTT client's network thread: a
/// hop to another thread per message is what a fleet cannot afford) and posted to the
/// ``EngineControl``; garbage is counted and said through ``Refusals``. It reads nothing and
/// writes nothing: the engine's thread does that.
///
/// The daemon's one ``BrokerConnection`` (which the ``MQTTSink`` publishes over) subscribes to
/// ``subscriptions`` at every connect and hands every incoming message here unread.
package final class MQTTInput: Sendable {
    package let tree: TopicTree
    /// The fleet's sources and their topic filters, in the order they are tried.
    package let fleetSources: [(FleetSource, TopicFilter)]
    /// The fixed scanners' sources and their topic filters (docs/behaviour.md §19), tried after the fleet's.
    package let scannerSources: [(ScannerSource, TopicFilter)]
    /// ESPresense nodes' retained health, `<prefix>/rooms/+/status` beside `<prefix>/devices/+/+`.
    package let scannerStatus: TopicFilter?
    /// Each presence sensor's topic and the ids of the sensors on it (docs/behaviour.md §23), in
    /// the configuration's order: a reload may change them (``reconfigure(occupancy:)``).
    private let sensorTopics: Mutex<SensorTopics>
    let control: EngineControl
    package let refusals: Refusals
    let logger: Logger
    let clock: DaemonClock
    /// Where `cmd/reload` goes (the daemon's reloader, once there is one).
    private let reloader = Mutex<(@Sendable (String) -> Void)?>(nil)

    /// The input of a daemon reporting as `userid` under `settings`, with `fleet`'s sources and
    /// `occupancy`'s sensors, into `control`; garbage is counted by minutes of `clock`.
    package init(
        settings: MQTTSettings, userid: String, fleet: FleetSettings?, scanners: ScannerSettings? = nil,
        occupancy: OccupancySettings? = nil, control: EngineControl, refusals: Refusals, logger: Logger,
        clock: DaemonClock = .system
    ) {
        sensorTopics = Mutex(SensorTopics(occupancy))
        self.clock = clock
        tree = TopicTree(topic: settings.topic, userid: userid, qos: Int32(settings.qos))
        fleetSources = [
            (FleetSource.owntracks, fleet?.owntracks), (.theengs, fleet?.theengs), (.forward, fleet?.forward),
        ].compactMap { source, text in text.flatMap(TopicFilter.init).map { (source, $0) } }
        scannerSources = [
            (ScannerSource.espresense, scanners?.espresense), (.theengs, scanners?.theengs),
            (.forward, scanners?.forward),
        ].compactMap { source, text in text.flatMap(TopicFilter.init).map { (source, $0) } }
        scannerStatus = Self.statusFilter(espresense: scanners?.espresense.flatMap(TopicFilter.init))
        self.control = control
        self.refusals = refusals
        self.logger = logger
    }

    /// `cmd/reload` calls `body` from now on.
    package func onReload(_ body: @escaping @Sendable (String) -> Void) { reloader.withLock { $0 = body } }

    /// The topic filters to subscribe to at every connect, each with what is lost if it fails.
    package var subscriptions: [(filter: String, lost: String)] {
        [(tree.commandFilter, "commands are not taken")]
            + sensorTopics.withLock { $0 }.order.map(Self.sensorSubscription)
            + fleetSources.map { _, filter in
                (filter.withSubtopics, "the fleet's messages on \(filter) are not taken")
            }
            + scannerSources.map { _, filter in
                (filter.description, "the scanners' reports on \(filter) are not taken")
            }
            + (scannerStatus.map { [($0.description, "the ESPresense nodes' status on \($0) is not taken")] } ?? [])
    }

    /// `espresense/rooms/+/status` for `espresense/devices/+/+`: an ESPresense node's health
    /// beside its reports (docs/espresense.md); `nil` for a filter of another shape.
    package static func statusFilter(espresense filter: TopicFilter?) -> TopicFilter? {
        guard let filter, filter.levels.count >= 3, filter.levels[1] == "devices", !filter.levels[0].contains("+"),
            !filter.levels[0].contains("#")
        else { return nil }
        return TopicFilter("\(filter.levels[0])/rooms/+/status")
    }

    /// Each sensor topic with the ids of its sensors, and each status topic (docs/occupancy.md,
    /// "Liveness") with the ids of the sensors whose firmware speaks on it.
    struct SensorTopics {
        var ids: [String: [String]] = [:]
        var statusIDs: [String: [String]] = [:]
        /// The topics in the order of the configuration's `Sensor.<id>` lines, each sensor's
        /// status topic before its state topic: the order they are subscribed in, so that
        /// retained states arrive at a connect in that order, a firmware's `offline` first.
        var order: [(topic: String, ids: [String], status: Bool)] {
            topics.map { topic, status in (topic, (status ? statusIDs[topic] : ids[topic]) ?? [], status) }
        }
        private var topics: [(String, Bool)] = []

        init(_ occupancy: OccupancySettings?) {
            for sensor in occupancy?.sensors ?? [] {
                if let status = sensor.status?.topic {
                    if statusIDs[status] == nil, ids[status] == nil { topics.append((status, true)) }
                    statusIDs[status, default: []].append(sensor.id)
                }
                if ids[sensor.topic] == nil, statusIDs[sensor.topic] == nil { topics.append((sensor.topic, false)) }
                ids[sensor.topic, default: []].append(sensor.id)
            }
        }

        func isNew(_ topic: String) -> Bool { ids[topic] == nil && statusIDs[topic] == nil }
    }

    static func sensorSubscription(topic: String, ids: [String], status: Bool) -> (filter: String, lost: String) {
        let who = ids.count == 1 ? "sensor \(ids[0]) is" : "sensors \(ids.joined(separator: ", ")) are"
        return (
            topic,
            status
                ? "\(who) not known offline when \(ids.count == 1 ? "its" : "their") firmware says so"
                : "\(who) not heard"
        )
    }

    /// The sensors of a reloaded configuration from now on; returns the subscriptions of topics
    /// that are new (a topic no sensor has any more stays subscribed until the next connect, and
    /// what comes on it is ignored).
    package func reconfigure(occupancy: OccupancySettings?) -> [(filter: String, lost: String)] {
        let topics = SensorTopics(occupancy)
        let old = sensorTopics.withLock { current in
            defer { current = topics }
            return current
        }
        return topics.order.filter { old.isNew($0.topic) }.map(Self.sensorSubscription)
    }

    /// The sensors listening on `topic`, by id (none for a topic of no sensor).
    package func sensors(on topic: String) -> [String] { sensorTopics.withLock { $0.ids[topic] } ?? [] }

    /// The sensors whose firmware says on `topic` whether they are alive, by id.
    package func sensors(status topic: String) -> [String] {
        sensorTopics.withLock { $0.statusIDs[topic] } ?? []
    }

    /// An incoming message (the network thread): a sensor's, a command, a fleet message, or garbage.
    ///
    /// A sensor's message goes to the engine for every sensor on its topic, as received: retained
    /// or not (ESPHome's states are retained, and arrive again at each connect; zigbee2mqtt's are
    /// not), and whatever it holds (the engine reads it and says its garbage: docs/behaviour.md
    /// §23). A sensor's topic is exact, so it is looked at first: a message on it is no command
    /// and no fleet message.
    package func received(topic: String, payload: [UInt8], retained: Bool) {
        let sensors = sensors(on: topic)
        if !sensors.isEmpty {
            for sensor in sensors { control.post(EngineInput.sensor(SensorMessage(sensor: sensor, payload: payload))) }
            return
        }
        let watched = self.sensors(status: topic)
        if !watched.isEmpty {
            for sensor in watched {
                control.post(EngineInput.sensor(SensorMessage(sensor: sensor, payload: payload, status: true)))
            }
            return
        }
        switch Self.route(
            topic: topic, payload: payload, retained: retained, tree: tree, fleet: fleetSources,
            scanners: scannerSources, status: scannerStatus)
        {
        case .command(let command):
            logger.info("command", metadata: ["command": "\(command)"])
            if command == .reload {
                reloader.withLock { $0 }?("cmd/reload")
            } else {
                control.post(command)
            }
        case .fleet(let message): control.post(message)
        case .reports(let reports): for report in reports { control.post(report) }
        case .scannerStatus(let scanner, let online): control.post(.scannerStatus(scanner, online: online))
        case .garbage(let problem):
            if let line = refusals.garbage(problem, at: clock.elapsed()) { logger.warning("\(line)") }
        case .refusedCommand(let line): logger.warning("\(line)")
        case .ignored: break
        }
    }

    /// What an incoming message is.
    package enum Routed: Sendable {
        case command(DaemonCommand)
        case fleet(FleetMessage)
        /// A fixed scanner's reports (docs/behaviour.md §19).
        case reports([ScannerReport])
        /// What an ESPresense node says of itself.
        case scannerStatus(String, online: Bool)
        /// A fleet message that is malformed: why (said through ``Refusals``).
        case garbage(String)
        /// A command that cannot be taken: the line to log.
        case refusedCommand(String)
        case ignored
    }

    /// Routes a message on `topic`: a command on `B/cmd/...`, else the first fleet source whose
    /// parser takes it.
    package static func route(
        topic: String, payload: [UInt8], retained: Bool, tree: TopicTree, fleet: [(FleetSource, TopicFilter)],
        scanners: [(ScannerSource, TopicFilter)] = [], status: TopicFilter? = nil
    ) -> Routed {
        switch command(topic: topic, payload: payload, retained: retained, tree: tree) {
        case .success(let taken?): return .command(taken)
        case .success(nil):
            // Each source's parser matches the topic itself: the first that takes it decides.
            for (source, filter) in fleet {
                switch FleetMessage.parse(source: source, filter: filter, topic: topic, payload: payload) {
                case .success(let message?): return .fleet(message)
                case .success(nil): continue
                case .failure(let error): return .garbage(error.description)
                }
            }
            if let status, let (wildcards, rest) = status.match(topic), rest.isEmpty, let scanner = wildcards.first {
                switch String(decoding: payload, as: UTF8.self) {
                case "online": return .scannerStatus(scanner, online: true)
                case "offline": return .scannerStatus(scanner, online: false)
                default: return .garbage("ignored a message on \(topic.excerpt): expected online or offline")
                }
            }
            for (source, filter) in scanners {
                switch ScannerReports.parse(source: source, filter: filter, topic: topic, payload: payload) {
                case .success(let reports?): return reports.isEmpty ? .ignored : .reports(reports)
                case .success(nil): continue
                case .failure(let error): return .garbage(error.description)
                }
            }
            return .ignored
        case .failure(let error): return .refusedCommand("ignored a message on \(topic.printable): \(error)")
        }
    }

    /// The command a message on `B/cmd/...` carries. A retained `reload` or `alert` would act
    /// again on every connect, so those are ignored (a retained `mode` is a standing wish, and
    /// taken); other topics are `nil`.
    static func command(topic: String, payload: [UInt8], retained: Bool, tree: TopicTree) -> Result<
        DaemonCommand?, CommandError
    > {
        guard let name = tree.commandName(topic: topic) else { return .success(nil) }
        return DaemonCommand.parse(name: name, payload: payload).flatMap { command in
            if case .mode = command { return .success(command) }
            guard !retained else {
                return .failure(CommandError("\(name) was retained; publish this command without the retain flag"))
            }
            return .success(command)
        }
    }
}
