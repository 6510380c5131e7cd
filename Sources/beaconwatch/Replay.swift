import Logging
import ArgumentParser
import BeaconCore
import BeaconConfiguration
import Daemon
import Persistence
import Rules

/// `beaconwatch replay [--config] CONFIG SOURCE`.
struct Replay: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a capture or trace through the monitor on the virtual clock; print the outputs as JSON lines.",
        discussion: """
            Time comes from the input's timestamps, never the wall clock, so every run of the same \
            input prints the same lines (but for a random session when Monitor.session is not set). \
            At the end of input the clock runs on until no timer is pending: every region exits and \
            every beacon goes off. No MQTT. The state (last reported classes) lives in memory unless \
            --state keeps it in a file between runs.
            """
    )

    /// `replay --config FILE SOURCE`, as every command takes the configuration, or the first form
    /// `replay CONFIG SOURCE`, kept working (docs/behaviour.md §11).
    @Argument(
        help: ArgumentHelp(
            "[CONFIG] SOURCE: btsnoop:PATH, trace:PATH or trace:-, after the hsyco.ini file unless --config gives it.",
            valueName: "config-or-source"))
    var arguments: [String] = []

    @Option(name: .customLong("config"), help: "The hsyco.ini file (default etc/hsyco.ini), as for the other commands.")
    var configOption: String?

    /// The configuration's path and the source, from either form.
    func inputs() throws -> (config: String, source: SourceSpec) {
        switch (arguments.count, configOption) {
        case (1, let given): return (given ?? "etc/hsyco.ini", try parseSource(arguments[0]))
        case (2, nil): return (arguments[0], try parseSource(arguments[1]))
        case (2, .some):
            throw ValidationError("the configuration is given twice: give SOURCE alone after --config FILE")
        default: throw ValidationError("give the source to replay: beaconwatch replay --config FILE SOURCE")
        }
    }

    func validate() throws { _ = try inputs() }

    @Option(help: "A state database to start from and keep (created when missing).")
    var state: String?

    @Flag(help: "Skip malformed trace lines (counted, and each reported on stderr) instead of stopping.")
    var skipBadLines = false

    func run() throws {
        let (config, source) = try inputs()
        let configuration = try Configuration.load(contentsOf: config).get()
        let store =
            try state.map { try StateStore(path: $0, keepDays: configuration.keepDays) }
            ?? StateStore(keepDays: configuration.keepDays)
        defer { store.close() }
        let output = LineWriter()
        defer { output.flush() }
        var job = FileRun(configuration: configuration, source: source)
        job.skipBadLines = skipBadLines
        let progress = TerminalProgress.make(label: "replay \(source.displayName)", unit: .bytes)
        defer { progress?.clear() }
        if let progress { job.progress = { progress.update(done: $0, total: $1) } }
        let logger = WarningLines.logger { progress?.clear() }
        job.rules = try RulesSource.loadAll(
            configuration: configuration, store: store, now: DaemonClock.system.now(), logger: logger
        ).regions
        job.hook = ServerHook(configuration: configuration, logger: WarningLines.logger)
        // A building of scanners: every tag's outputs carry their `"device"`, as the events file's
        // lines do (docs/behaviour.md §19); the own radio's are the same either way.
        if configuration.scanners != nil {
            try job.run(store: store, output: { _ in }, sinks: [EventsFile()], logger: logger)
            return
        }
        try job.run(
            store: store,
            output: { output.write(line: $0.json) },
            logger: logger
        )
    }
}
