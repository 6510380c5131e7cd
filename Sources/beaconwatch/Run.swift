import ArgumentParser
import BeaconCore
import BlueZ
import Configuration
import Daemon
import Logging
import MQTT
import Persistence
import RegionMonitor

/// `beaconwatch run`: the daemon.
struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the monitor: sightings in; outputs to MQTT and --events.",
        discussion: """
            A file source (btsnoop:PATH, trace:PATH) runs on the virtual clock as fast as it can \
            and exits at its end, keeping the state as a stopping daemon does: beacons still \
            reported are reported off at the next start unless seen again within exitTimeout. \
            --realtime paces it by its timestamps instead. An adapter (hciN) scans until SIGINT or \
            SIGTERM. With MQTT.host set, outputs go to the broker (SPEC 10.1); at the end, \
            'offline' is published and acknowledgements are awaited for up to 5 s. The state \
            database is State.database, else $STATE_DIRECTORY/beaconwatch.sqlite under systemd, \
            else ~/.local/state/beaconwatch/beaconwatch.sqlite.
            """
    )

    @Option(help: "The hsyco.ini file.")
    var config = "etc/hsyco.ini"

    @Option(
        help: "Where sightings come from, overriding Monitor.source: hciN, btsnoop:PATH, trace:PATH, trace:-.",
        transform: parseSource)
    var source: SourceSpec?

    @Option(help: "Also write every output as a JSON line to FILE (appended), or to standard output with -.")
    var events: String?

    @Flag(help: "Do not connect to the MQTT broker, even when MQTT.host is set.")
    var noMqtt = false

    @Option(help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: Logger.Level = .info

    @Flag(help: "Scan actively (send scan requests) instead of passively.")
    var active = false

    @Flag(help: "Pace a file source by its timestamps on the real clock.")
    var realtime = false

    @Flag(help: "Skip malformed trace lines (counted, and each reported on stderr) instead of stopping.")
    var skipBadLines = false

    func run() async throws {
        let level = logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "beaconwatch")
        var configuration = try Configuration.load(contentsOf: config).get()
        for warning in configuration.warnings { logger.warning("\(warning)") }
        // One identity for the engine and the topics.
        let identity = MonitorIdentity.resolve(configuration.monitor)
        configuration.monitor.userid = identity.userid
        configuration.monitor.session = identity.session
        configuration.monitor.address = identity.address
        let source = source ?? configuration.monitor.source
        let statePath = StateLocation.resolve(configured: configuration.stateDatabase)
        let store = try StateStore(path: statePath)
        let sink = try events.map { $0 == "-" ? LineWriter() : try LineWriter(appendingTo: $0) }
        let mqtt = try configuration.mqtt.flatMap {
            noMqtt
                ? nil
                : try MQTTSink(
                    settings: $0, userid: identity.userid, hierarchy: configuration.hierarchy, store: store)
        }
        logger.info(
            "starting",
            metadata: [
                "config": "\(config)", "source": "\(source.displayName)", "state": "\(statePath)",
                "beacons": "\(configuration.hierarchy.beacons.count)",
                "mqtt": "\(configuration.mqtt.map { noMqtt ? "off (--no-mqtt)" : "\($0.host):\($0.port)" } ?? "off")",
            ]
        )
        try mqtt?.start()
        let settings = configuration
        let job = Job(
            configuration: settings, source: source, store: store, events: sink, mqtt: mqtt, logger: logger,
            active: active, realtime: realtime, skipBadLines: skipBadLines)
        try await withThrowingTaskGroup(of: Void.self) { group in
            if let mqtt {
                group.addTask { await mqtt.run(say: { logger.warning("\($0)") }) }
                if !(await mqtt.waitConnected(within: .seconds(5))) {
                    logger.warning(
                        "MQTT broker \(settings.mqtt!.host):\(settings.mqtt!.port) is not reachable yet; events wait for it"
                    )
                }
            }
            do {
                try await onDedicatedThread { try job.run() }
            } catch {
                await mqtt?.finish(within: .seconds(1))
                throw error
            }
            sink?.flush()
            if let mqtt {
                let left = await mqtt.finish(within: .seconds(5))
                if left > 0 { logger.warning("\(left) MQTT messages were not acknowledged before stopping") }
            }
            try await group.waitForAll()
        }
    }

    /// The blocking part, run on its own thread.
    struct Job: Sendable {
        var configuration: Configuration
        var source: SourceSpec
        var store: StateStore
        var events: LineWriter?
        var mqtt: MQTTSink?
        var logger: Logger
        var active: Bool
        var realtime: Bool
        var skipBadLines: Bool

        func run() throws {
            let sinks: [any OutputSink] = mqtt.map { [$0] } ?? []
            if case .adapter(let name) = source {
                let scanner = try LiveScanner(
                    adapter: name, scan: .init(active: active), say: { logger.warning("\($0)") })
                logger.info("scanning", metadata: ["adapter": "\(name)", "mode": "\(scanner.mode?.rawValue ?? "?")"])
                StopRequest.install()
                try LiveRun(configuration: configuration).run(
                    source: scanner,
                    store: store,
                    output: { events?.write(line: $0.json) },
                    sinks: sinks,
                    shouldStop: {
                        events?.flush()
                        return StopRequest.isRequested
                    }
                )
                scanner.stop()
                logger.info("stopped")
                return
            }
            var job = FileRun(configuration: configuration, source: source)
            job.skipBadLines = skipBadLines
            job.drainAtEnd = false
            job.realtime = realtime
            let summary = try job.run(
                store: store,
                output: { events?.write(line: $0.json) },
                sinks: sinks,
                warn: { logger.warning("\($0)") }
            )
            logger.info(
                "end of input",
                metadata: [
                    "sightings": "\(summary.sightings)", "unconfigured": "\(summary.unconfiguredSightings)",
                    "outputs": "\(summary.outputs)", "skippedLines": "\(summary.read.skippedLines)",
                ]
            )
        }
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
