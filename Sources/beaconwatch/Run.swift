import ArgumentParser
import BeaconCore
import BlueZ
import BeaconConfiguration
import Daemon
import Logging
import MQTT
import Persistence
import RegionMonitor
import Rules
import ServiceLifecycle

/// `beaconwatch run`: the daemon.
struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the monitor: sightings in; outputs to MQTT and --events.",
        discussion: """
            A file source (btsnoop:PATH, trace:PATH) runs on the virtual clock as fast as it can \
            and exits at its end, keeping the state as a stopping daemon does: beacons still \
            reported are reported off at the next start unless seen again within exitTimeout. \
            --realtime paces it by its timestamps instead. An adapter (hciN) scans until SIGINT or \
            SIGTERM. With MQTT.host set, outputs go to the broker (docs/mqtt.md); at the end (or on \
            SIGTERM/SIGINT), 'offline' is published and acknowledgements are awaited for up to \
            5 s. SIGHUP or B/cmd/reload re-reads the configuration; a bad file is reported and the \
            one in force stays. The state \
            database is State.database, else $STATE_DIRECTORY/beaconwatch.sqlite under systemd, \
            else ~/.local/state/beaconwatch/beaconwatch.sqlite.
            """
    )

    @Option(help: "The hsyco.ini file.")
    var config = "etc/hsyco.ini"

    @Option(
        help:
            "Where sightings come from, overriding Monitor.source: hciN, uart:DEVICE[@BAUD], h4tcp:HOST:PORT, btsnoop:PATH, trace:PATH, trace:-.",
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

    @Option(help: "Serve the web view and HTTP API on HOST:PORT, overriding Web.listen; empty for none.")
    var webListen: String?

    @Option(help: "After a file source ends, keep the daemon up (web view, broker) for SECONDS more.")
    var linger: Double = 0

    func run() async throws {
        bootstrapLogging(level: logLevel)
        var options = BeaconwatchService.Options(config: config)
        options.source = source
        options.events = events
        options.noMQTT = noMqtt
        options.active = active
        options.realtime = realtime
        options.skipBadLines = skipBadLines
        options.webListen = webListen
        guard linger.isFinite, (0...86_400).contains(linger) else {
            throw ValidationError("--linger takes seconds from 0 to 86400")
        }
        options.linger = .milliseconds(Int64((linger * 1000).rounded()))
        try await BeaconwatchService(options: options, logger: Logger(label: "beaconwatch")).run()
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

/// Log lines to standard error at `level` and above: the daemons' (`run`, `forward`) logging.
func bootstrapLogging(level: Logger.Level) {
    LoggingSystem.bootstrap { label in
        var handler = StreamLogHandler.standardError(label: label)
        handler.logLevel = level
        return handler
    }
}
