import ArgumentParser
import BeaconCore
import Daemon
import Logging

/// `beaconwatch forward`: a scanner node for a fleet daemon (docs/behaviour.md §15).
struct Forward: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Publish decoded sightings to MQTT for a fleet daemon (a scanner node).",
        discussion: """
            Every sighting of the source goes, as a trace line, to MQTT.topic/<Monitor.userid>/sightings, \
            batched (at most 50 ms late, under 64 KiB a message) and kept in the state database's \
            outbox until the broker acknowledges it, so an outage loses nothing. A fleet daemon takes \
            them with Fleet.forward = MQTT.topic/+/sightings. A file source is read as fast as it \
            can be and the node exits at its end, after up to 5 s for the broker to acknowledge; an \
            adapter (hciN) scans until SIGINT or SIGTERM.
            """
    )

    @Option(help: "The hsyco.ini file: MQTT.*, Monitor.userid (the node's name), State.*.")
    var config = "etc/hsyco.ini"

    @Option(
        help:
            "Where sightings come from, overriding Monitor.source: hciN, uart:DEVICE[@BAUD], h4tcp:HOST:PORT, btsnoop:PATH, trace:PATH, trace:-.",
        transform: parseSource)
    var source: SourceSpec?

    @Option(help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: Logger.Level = .info

    @Flag(help: "Skip malformed trace lines (counted, and each reported on stderr) instead of stopping.")
    var skipBadLines = false

    func run() async throws {
        bootstrapLogging(level: logLevel)
        var options = ForwardService.Options(config: config)
        options.source = source
        options.skipBadLines = skipBadLines
        try await ForwardService(options: options, logger: Logger(label: "beaconwatch")).run()
    }
}
