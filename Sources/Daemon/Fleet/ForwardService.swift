import BeaconCore
import BeaconConfiguration
import Fleet
import Logging
import MQTT
import Persistence
import RegionMonitor
import ServiceLifecycle
import Syscalls

/// `beaconwatch forward` as a service group: the broker connection and the forwarding loop; on
/// SIGTERM or SIGINT (or at the end of a file) the loop stops first, then what it queued is
/// flushed to the broker for up to ``MQTTService/flushLimit``.
package struct ForwardService: Service {
    package struct Options: Sendable {
        /// The hsyco.ini: `MQTT.*`, `Monitor.userid` (the node's name), `State.*`.
        package var config: String
        /// Overrides `Monitor.source`.
        package var source: SourceSpec?
        package var skipBadLines = false

        package init(config: String) { self.config = config }
    }

    package let options: Options
    package let logger: Logger

    package init(options: Options, logger: Logger) {
        self.options = options
        self.logger = logger
    }

    /// Loads the configuration and opens the database on a dedicated thread (both block), then
    /// runs the broker connection and the forwarding; the database is closed on one too.
    package func run() async throws {
        let prepared = try await WorkerPool.shared.run { [self] in try prepare() }
        try await prepared.run(logger: logger)
    }

    private func prepare() throws -> PreparedServices {
        let configuration = try Configuration.load(contentsOf: options.config, needsBuilding: false).get()
        for warning in configuration.warnings { logger.warning("\(warning)") }
        guard var settings = configuration.mqtt else {
            throw InputError(
                file: options.config, message: "forward publishes to a broker: set MQTT.host (and MQTT.port)")
        }
        // A node publishes sightings and its status; the beacons' state is the fleet daemon's.
        settings.homeAssistant = false
        let statePath = StateLocation.resolve(configured: configuration.stateDatabase)
        let store = try StateStore(path: statePath, keepDays: configuration.keepDays)
        do {
            return PreparedServices(
                services: try services(
                    configuration: configuration, settings: settings, store: store, statePath: statePath),
                store: store, statePath: statePath)
        } catch {
            if let problem = store.close() {
                logger.warning("state database \(statePath) not closed cleanly: \(problem)")
            }
            throw error
        }
    }

    private func services(
        configuration: Configuration, settings: MQTTSettings, store: StateStore, statePath: String
    ) throws -> [ServiceGroupConfiguration.ServiceConfiguration] {
        let identity = MonitorIdentity.resolve(configuration.monitor)
        let source = options.source ?? configuration.monitor.source
        let sink = try MQTTSink(settings: settings, userid: identity.userid, hierarchy: Hierarchy(), store: store)
        let topic = "\(settings.topic)/\(identity.userid)/sightings"
        logger.info(
            "forwarding",
            metadata: [
                "source": "\(source.displayName)", "topic": "\(topic)", "broker": "\(settings.host):\(settings.port)",
                "state": "\(statePath)",
            ])
        try sink.start()
        let control = EngineControl()
        var run = ForwardRun(source: source, store: store, sink: sink, topic: topic, qos: Int32(settings.qos))
        run.skipBadLines = options.skipBadLines
        let logger = logger
        let forwarding = EngineService(control: control) { [run] control in
            let summary = try run.run(control: control, logger: logger)
            logger.info(
                control.isStopping ? "stopped" : "end of input",
                metadata: ["sightings": "\(summary.sightings)", "messages": "\(summary.messages)"])
        }
        let broker = MQTTService(sink: sink, endpoint: "\(settings.host):\(settings.port)", logger: logger)
        return [
            .init(service: broker, successTerminationBehavior: .gracefullyShutdownGroup),
            .init(
                service: forwarding, successTerminationBehavior: .gracefullyShutdownGroup,
                failureTerminationBehavior: .gracefullyShutdownGroup),
        ]
    }
}
