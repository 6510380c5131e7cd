import ArgumentParser
import BeaconCore
import Configuration
import Daemon

/// `beaconwatch replay CONFIG SOURCE`.
struct Replay: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a capture or trace through the monitor on the virtual clock; print the outputs as JSON lines.",
        discussion: """
            Time comes from the input's timestamps, never the wall clock, so every run of the same \
            input prints the same lines. At the end of input the clock runs on until no timer is \
            pending (every region exits, every beacon goes off). No MQTT.
            """
    )

    @Argument(help: "The hsyco.ini file.")
    var config: String

    @Argument(help: "btsnoop:PATH, trace:PATH or trace:-.", transform: parseSource)
    var source: SourceSpec

    @Flag(help: "Skip malformed trace lines (counted, and each reported on stderr) instead of stopping.")
    var skipBadLines = false

    func run() throws {
        let configuration = try Configuration.load(contentsOf: config).get()
        let output = LineWriter()
        defer { output.flush() }
        try ReplayJob(configuration: configuration, source: source, skipBadLines: skipBadLines).run(
            output: { output.write(line: $0.json) },
            warn: { printError("beaconwatch: warning: \($0)") }
        )
    }
}
