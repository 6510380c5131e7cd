import BeaconCore
import BlueZ
import BeaconConfiguration
import Engine
import Logging
import MQTT
import Persistence
import RegionMonitor
import Rules
import ServiceLifecycle
import Syscalls

/// The daemon as one service that owns the others: the engine loop, the broker connection, the
/// script runner, reloading and the rules refresh, run as one service group that shuts down in
/// reverse order on SIGTERM and SIGINT (the engine stops first; the sinks then flush what it
/// committed). `beaconwatch run` is this and its options; tests run it in-process, so the wiring
/// is tested without the command line.
package struct BeaconwatchService: Service {
    /// What `run` is told on its command line.
    package struct Options: Sendable {
        /// The hsyco.ini file.
        package var config: String
        /// Where sightings come from, overriding `Monitor.source`.
        package var source: SourceSpec?
        /// Also write every output as a JSON line to this file (appended), `-` for standard output.
        package var events: String?
        package var noMQTT = false
        package var active = false
        package var realtime = false
        package var skipBadLines = false
        /// Overrides `Web.listen`: `HOST:PORT`, or empty for no web view.
        package var webListen: String?
        /// After a file source ends, keep serving (web view, broker) this long.
        package var linger = Duration.zero
        /// Told the web view's port once it listens (tests ask for port 0).
        package var webBound: (@Sendable (Int) -> Void)?

        package init(config: String) { self.config = config }
    }

    package let options: Options
    package let logger: Logger
    /// The daemon's one clock and timer mechanism, handed to every part that reads the time or
    /// waits (the machine's unless a test gives its own).
    package let timers: ShellTimers

    package init(options: Options, logger: Logger, timers: ShellTimers = .shared) {
        self.options = options
        self.logger = logger
        self.timers = timers
    }

    /// Loads the configuration, opens and migrates the database, recovers the `--events` journal
    /// and fetches the rules on a dedicated thread (each blocks: files, SQLite, HTTP with a 30 s
    /// timeout a source), then runs the services; the database is closed on one too.
    ///
    /// With `Cluster.name` (and MQTT) the daemon is one of a cluster (docs/behaviour.md §21,
    /// ClusterService): these services run while it is the active; as a standby it follows the
    /// active's state.
    package func run() async throws {
        let loaded = try await WorkerPool.shared.run { [self] in try load() }
        // One identity for the engine and the topics, kept across reloads.
        let identity = MonitorIdentity.resolve(loaded.monitor)
        let configuration = loaded.adopting(identity)
        if let cluster = configuration.cluster, let mqtt = configuration.mqtt, !options.noMQTT {
            let service = try ClusterService(
                settings: cluster, mqtt: mqtt, web: configuration.web,
                statePath: StateLocation.resolve(configured: configuration.stateDatabase),
                keepDays: configuration.keepDays, logger: logger, timers: timers, webBound: options.webBound
            ) { [self] link in
                // The file as it is when this daemon becomes the active (a standby may wait for
                // months, and SIGHUP reloads only an active's); as at start when it no longer loads.
                var current = configuration
                do { current = try load().adopting(identity) } catch {
                    logger.error("\(error); the configuration read at start is used")
                }
                return try prepare(current, identity: identity, cluster: link)
            }
            try await service.runAsDaemon(logger: logger)
            return
        }
        let prepared = try await WorkerPool.shared.run { [self] in try prepare(configuration, identity: identity) }
        try await prepared.run(logger: logger)
    }

    /// The configuration, its warnings logged.
    private func load() throws -> Configuration {
        var configuration = try Configuration.load(contentsOf: options.config).get()
        for warning in configuration.warnings { logger.warning("\(warning)") }
        if !options.noMQTT, let problem = configuration.scannersWithoutBroker { throw problem }
        // Presence sensors are heard from the broker alone (docs/behaviour.md §23); a trace's
        // sensor lines still feed them.
        if configuration.mqtt == nil || options.noMQTT, let first = configuration.occupancy?.sensors.first {
            let message =
                options.noMQTT
                ? "Sensor.\(first.id): sensors are heard from the broker, and with --no-mqtt none is; run without --no-mqtt"
                : "Sensor.\(first.id): sensors are heard from the broker, and without MQTT.host none is; set MQTT.host (and MQTT.port) to the broker they publish to"
            logger.warning("\(InputError(file: configuration.path, line: first.line, message: message))")
        }
        if let listen = options.webListen {
            configuration.web = try Self.web(listen, token: configuration.web?.token ?? configuration.webToken)
        }
        return configuration
    }

    /// Everything that blocks before the services start; the database it opened is closed again
    /// when it fails. In a cluster, the store ships its steps through `cluster`, which answers
    /// snapshot requests from it, and the web view says the role.
    func prepare(
        _ configuration: Configuration, identity: MonitorIdentity, cluster: ClusterLink? = nil
    ) throws -> PreparedServices {
        let source = options.source ?? configuration.monitor.source
        let statePath = StateLocation.resolve(configured: configuration.stateDatabase)
        let store = try StateStore(path: statePath, keepDays: configuration.keepDays)
        do {
            if let cluster, let epoch = cluster.epoch {
                try store.startShipping(epoch: epoch, ship: { cluster.ship($0) }, acknowledger: cluster)
                cluster.serve(store)
            }
            let services = try services(
                configuration: configuration, identity: identity, source: source, store: store,
                statePath: statePath, cluster: cluster)
            return PreparedServices(services: services, store: store, statePath: statePath)
        } catch {
            if let problem = store.close() {
                logger.warning("state database \(statePath) not closed cleanly: \(problem)")
            }
            throw error
        }
    }

    /// The daemon's services on an open database, in the order they start (they stop in reverse).
    private func services(
        configuration: Configuration, identity: MonitorIdentity, source: SourceSpec, store: StateStore,
        statePath: String, cluster: ClusterLink?
    ) throws -> [ServiceGroupConfiguration.ServiceConfiguration] {
        let (config, noMqtt, active, realtime, skipBadLines, events) = (
            options.config, options.noMQTT, options.active, options.realtime, options.skipBadLines, options.events
        )
        // Completed from the journal first: what a crash left out goes before anything new.
        let eventsFile = try events.map {
            $0 == "-" ? EventsFile() : try EventsFile(path: $0, store: store, logger: logger)
        }
        let mqttSettings = noMqtt ? nil : configuration.mqtt
        let clock = timers.clock
        let control = EngineControl(timers: timers)
        // Outputs waiting for the broker to hold their steps go out when the loop looks again.
        // Weak: the link outlives this active's life.
        cluster?.whenShippingProgresses { [weak control] in control?.wake() }
        let refusals = Refusals(
            maxDevices: configuration.fleet?.maxDevices ?? 0, maxAge: configuration.fleet?.maxAge ?? 30)
        let input = mqttSettings.map {
            MQTTInput(
                settings: $0, userid: identity.userid, fleet: configuration.fleet, scanners: configuration.scanners,
                occupancy: configuration.occupancy, control: control, refusals: refusals, logger: logger, clock: clock)
        }
        // One connection to the broker, shared by what comes in and what goes out.
        var broker: BrokerConnection?
        let mqtt = try mqttSettings.map { settings in
            let connection = try BrokerConnection(
                settings: settings, will: MQTTSink.will(settings: settings, userid: identity.userid), timers: timers)
            if let input { connection.attach(input) }
            broker = connection
            return MQTTSink(
                settings: settings, userid: identity.userid, hierarchy: configuration.hierarchy, store: store,
                connection: connection, ownRadio: source != .none, cluster: configuration.cluster?.name,
                timers: timers)
        }
        logger.info(
            "starting",
            metadata: [
                "config": "\(config)", "source": "\(source.displayName)", "state": "\(statePath)",
                "beacons": "\(configuration.hierarchy.beacons.count)",
                "mqtt": "\(configuration.mqtt.map { noMqtt ? "off (--no-mqtt)" : "\($0.host):\($0.port)" } ?? "off")",
            ]
        )
        let rules = try RulesSource.loadAll(
            configuration: configuration, store: store, now: clock.now(), logger: logger)
        for (source, loaded) in rules.sources {
            logger.info(
                source.kind == .beacons ? "rules" : "geofences",
                metadata: ["source": "\(loaded.origin)", "regions": "\(loaded.regions.count)"])
        }
        try mqtt?.start()
        let scripts = ScriptSink(
            scripts: configuration.scripts, timeout: configuration.scriptTimeout, logger: logger,
            runs: ScriptRuns(timers: timers))
        var sinks: [any OutputSink] = [scripts]
        var web: WebService?
        if var settings = configuration.web {
            if let problem = WebService.bindProblem(settings) {
                guard !settings.explicit else {
                    throw RuntimeFailure(
                        "Web.listen \(settings.authority) cannot be listened on: \(problem); free the port or set another Web.listen (empty turns the web view off)"
                    )
                }
                logger.warning(
                    "web view not started: \(settings.authority) \(problem); set Web.listen to another address (empty turns it off)"
                )
                settings.port = -1
            }
            if settings.port >= 0 {
                let state = WebState(
                    configuration: configuration, ownID: identity.userid, control: control, timers: timers)
                sinks.append(state)
                let bound = options.webBound ?? { _ in }
                web = WebService(
                    settings: settings,
                    responder: WebResponder(
                        state: state, token: settings.token, mqtt: mqtt, scripts: scripts, cluster: cluster),
                    logger: logger, bound: bound)
            }
        }
        if let mqtt { sinks.insert(mqtt, at: 0) }
        if let eventsFile { sinks.insert(eventsFile, at: 0) }
        // SIGHUP has one owner: the reloader of a daemon alone, the cluster's service in a cluster
        // (which hands it to the active life's reloader through the link).
        let reloader = Reloader(
            path: config, running: configuration, identity: identity, control: control, sinks: sinks, broker: broker,
            store: store, logger: logger, clock: clock, trapsSignals: cluster == nil)
        cluster?.onReload { [weak reloader] in reloader?.request($0) }
        // Weak: the reloader holds the sinks, the MQTT sink the connection, and the connection
        // the input; a strong capture made a cycle that kept every active life of a cluster
        // daemon (its `--events` file open, its sinks) after it stepped down.
        input?.onReload { [weak reloader] in reloader?.request($0) }
        let job = Job(
            configuration: configuration, source: source, store: store, sinks: sinks, logger: logger,
            active: active, realtime: realtime, skipBadLines: skipBadLines, rules: rules.regions, scripts: scripts,
            linger: options.linger, refusals: refusals, clock: clock)
        // Shut down in reverse: the engine stops first, then the sinks flush what it committed.
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: reloader, successTerminationBehavior: .ignore, failureTerminationBehavior: .ignore)
        ]
        services.append(
            .init(service: ScriptService(sink: scripts), successTerminationBehavior: .gracefullyShutdownGroup))
        for (source, loaded) in rules.sources {
            guard let expires = loaded.expires else { continue }
            let refresher = RulesRefresher(
                source: source, store: store, control: control, expires: expires, logger: logger, timers: timers)
            services.append(.init(service: refresher, successTerminationBehavior: .ignore))
        }
        if let endpoint = configuration.monitor.position, source.isAdapter || source == .none {
            let feed = GPSDFeed(endpoint: endpoint, logger: logger, timers: timers) { control.post(.position($0)) }
            services.append(.init(service: feed, successTerminationBehavior: .ignore))
        }
        if let web {
            services.append(
                .init(
                    service: web, successTerminationBehavior: .ignore,
                    failureTerminationBehavior: .gracefullyShutdownGroup))
        }
        if let mqtt, let settings = mqttSettings {
            let service = MQTTService(sink: mqtt, endpoint: "\(settings.host):\(settings.port)", logger: logger)
            services.append(.init(service: service, successTerminationBehavior: .gracefullyShutdownGroup))
        }
        services.append(
            .init(
                service: EngineService(control: control) { control in
                    do {
                        try job.run(control: control)
                    } catch let error where error is BluetoothUnavailable || error is ScanSetupFailure {
                        // Exit 3: the daemon never ran; what its start published for it goes.
                        mqtt?.withdraw()
                        throw error
                    }
                },
                successTerminationBehavior: .gracefullyShutdownGroup,
                failureTerminationBehavior: .gracefullyShutdownGroup))
        return services
    }

    /// `--web-listen`: an address (the token stays the configuration's), or empty for none.
    static func web(_ listen: String, token: String?) throws -> WebSettings? {
        guard !listen.isEmpty else { return nil }
        switch WebSettings.listening(on: listen, token: token) {
        case .failure(let problem):
            throw InputError(
                file: "--web-listen",
                message: problem.reachable ? "\(listen) \(problem.reason)" : "'\(listen)': \(problem.reason)")
        case .success(let settings): return settings
        }
    }

    /// The blocking part, run on its own thread.
    struct Job: Sendable {
        var configuration: Configuration
        var source: SourceSpec
        var store: StateStore
        var sinks: [any OutputSink]
        var logger: Logger
        var active: Bool
        var realtime: Bool
        var skipBadLines: Bool
        var rules: [RuleRegion]?
        var scripts: ScriptSink
        var linger: Duration
        var refusals: Refusals
        var clock: DaemonClock

        var hook: ServerHook {
            ServerHook(configuration: configuration, logger: logger, runs: scripts.runs)
        }

        func run(control: EngineControl) throws {
            if source == .none {
                // No radio: the fleet's devices only (docs/behaviour.md §15).
                logger.info("no radio of its own (Monitor.source = none): tracking the fleet only")
                var live = LiveRun(configuration: configuration, now: clock.now, elapsed: clock.elapsed)
                live.rules = rules
                live.hook = hook
                live.refusals = refusals
                try live.run(
                    source: nil, store: store, output: { _ in }, sinks: sinks, control: control,
                    logger: logger)
                logger.info("stopped")
                return
            }
            if configuration.fleet != nil, !source.isAdapter {
                logger.warning(
                    "a file source runs on its own clock: the fleet's messages are not taken; use Monitor.source = hciN or none for a fleet"
                )
            }
            if case .adapter(let name) = source {
                // The adapter is opened now (a missing one fails before anything is built); its
                // scan is enabled once the run is ready to read (`LiveRun.run`).
                let scanner = try LiveScanner(
                    adapter: name, scan: .init(active: active), logger: logger, scanning: false, uptime: clock.elapsed)
                var live = LiveRun(configuration: configuration, now: clock.now, elapsed: clock.elapsed)
                live.rules = rules
                live.hook = hook
                live.refusals = refusals
                try live.run(
                    source: scanner,
                    store: store,
                    output: { _ in },
                    sinks: sinks,
                    control: control,
                    logger: logger
                )
                scanner.stop()
                logger.info("stopped")
                return
            }
            var job = FileRun(configuration: configuration, source: source)
            job.skipBadLines = skipBadLines
            job.drainAtEnd = false
            job.realtime = realtime
            job.linger = linger
            job.clock = clock
            job.atEnd = { [logger] in
                logger.notice("end of input; the daemon stays up \(linger) (--linger), then stops")
            }
            job.rules = rules
            job.hook = hook
            let summary = try job.run(
                store: store,
                output: { _ in },
                sinks: sinks,
                control: control,
                logger: logger
            )
            logger.info(
                summary.stopped ? "stopped" : "end of input",
                metadata: [
                    "sightings": "\(summary.sightings)", "unconfigured": "\(summary.unconfiguredSightings)",
                    "outputs": "\(summary.outputs)", "skippedLines": "\(summary.read.skippedLines)",
                    "skippedRecords": "\(summary.read.skippedRecords)",
                ]
            )
        }
    }
}
