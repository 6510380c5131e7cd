import ArgumentParser
import BeaconCore
import BlueZ
import Configuration
import Daemon
import Logging
import Persistence

/// `beaconwatch run`: the daemon.
struct Run: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the monitor: sightings in; outputs to MQTT, scripts and --events.",
        discussion: """
            A file source (btsnoop:PATH, trace:PATH) runs on the virtual clock as fast as it can \
            and exits at its end, keeping the state as a stopping daemon does: beacons still \
            reported are reported off at the next start unless seen again within exitTimeout. \
            --realtime paces it by its timestamps instead. The state database is State.database, \
            else $STATE_DIRECTORY/beaconwatch.sqlite under systemd, else \
            ~/.local/state/beaconwatch/beaconwatch.sqlite.
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

    func run() throws {
        let level = logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "beaconwatch")
        let configuration = try Configuration.load(contentsOf: config).get()
        for warning in configuration.warnings { logger.warning("\(warning)") }
        let source = source ?? configuration.monitor.source
        if configuration.mqtt != nil, !noMqtt {
            throw RuntimeFailure(
                "MQTT.host is set, but this build cannot publish to MQTT yet; pass --no-mqtt and read the outputs with --events FILE"
            )
        }
        let statePath = StateLocation.resolve(configured: configuration.stateDatabase)
        let store = try StateStore(path: statePath)
        let sink = try events.map { $0 == "-" ? LineWriter() : try LineWriter(appendingTo: $0) }
        logger.info(
            "starting",
            metadata: [
                "config": "\(config)", "source": "\(source.displayName)", "state": "\(statePath)",
                "beacons": "\(configuration.hierarchy.beacons.count)",
            ]
        )
        if case .adapter(let name) = source {
            let scanner = try LiveScanner(
                adapter: name,
                scan: .init(active: active),
                say: { logger.warning("\($0)") }
            )
            logger.info("scanning", metadata: ["adapter": "\(name)", "mode": "\(scanner.mode?.rawValue ?? "?")"])
            StopRequest.install()
            try LiveRun(configuration: configuration).run(
                source: scanner,
                store: store,
                output: { sink?.write(line: $0.json) },
                shouldStop: {
                    sink?.flush()
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
            output: { sink?.write(line: $0.json) },
            warn: { logger.warning("\($0)") }
        )
        sink?.flush()
        logger.info(
            "end of input",
            metadata: [
                "sightings": "\(summary.sightings)", "unconfigured": "\(summary.unconfiguredSightings)",
                "outputs": "\(summary.outputs)", "skippedLines": "\(summary.read.skippedLines)",
            ]
        )
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
