import BeaconCore
import BeaconConfiguration
import Fleet
import Logging
import MQTT
import Persistence
import RegionMonitor
import ServiceLifecycle

/// `beaconwatch forward` as a service group: the broker connection and the forwarding loop; on
/// SIGTERM or SIGINT (or at the end of a file) the loop stops first, then what it queued is
/// flushed to the broker for up to ``MQTTService/flushLimit``.
public struct ForwardService: Service {
    public struct Options: Sendable {
        /// The hsyco.ini: `MQTT.*`, `Monitor.userid` (the node's name), `State.*`.
        public var config: String
        /// Overrides `Monitor.source`.
        public var source: SourceSpec?
        public var skipBadLines = false

        public init(config: String) { self.config = config }
    }

    public let options: Options
    public let logger: Logger

    public init(options: Options, logger: Logger) {
        self.options = options
        self.logger = logger
    }

    public func run() async throws {
        let configuration = try Configuration.load(contentsOf: options.config, needsBuilding: false).get()
        for warning in configuration.warnings { logger.warning("\(warning)") }
        guard var settings = configuration.mqtt else {
            throw InputError(
                file: options.config, message: "forward publishes to a broker: set MQTT.host (and MQTT.port)")
        }
        // A node publishes sightings and its status; the beacons' state is the fleet daemon's.
        settings.homeAssistant = false
        let identity = MonitorIdentity.resolve(configuration.monitor)
        let source = options.source ?? configuration.monitor.source
        let statePath = StateLocation.resolve(configured: configuration.stateDatabase)
        let store = try StateStore(path: statePath, keepDays: configuration.keepDays)
        defer {
            if let problem = store.close() {
                logger.warning("state database \(statePath) not closed cleanly: \(problem)")
            }
        }
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
            let summary = try run.run(control: control) { logger.warning("\($0)") }
            logger.info(
                control.isStopping ? "stopped" : "end of input",
                metadata: ["sightings": "\(summary.sightings)", "messages": "\(summary.messages)"])
        }
        let broker = MQTTService(sink: sink, endpoint: "\(settings.host):\(settings.port)", logger: logger)
        var quiet = logger
        quiet.logLevel = max(logger.logLevel, .notice)
        let group = ServiceGroup(
            configuration: .init(
                services: [
                    .init(service: broker, successTerminationBehavior: .gracefullyShutdownGroup),
                    .init(
                        service: forwarding, successTerminationBehavior: .gracefullyShutdownGroup,
                        failureTerminationBehavior: .gracefullyShutdownGroup),
                ],
                gracefulShutdownSignals: [.sigterm, .sigint], logger: quiet))
        try await group.run()
    }
}
