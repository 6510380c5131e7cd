import BeaconCore
import Configuration
import Foundation
import Persistence
import RegionMonitor
import Rules

/// Drives an ``Engine`` with a file source: the loop `replay` and `run` share.
///
/// Each event's outputs are written to the state database in one transaction, then handed to
/// `output`; so an output is only ever seen once its state is kept.
public struct FileRun {
    public var configuration: Configuration
    public var source: SourceSpec
    public var skipBadLines = false
    /// At the end of input, run the clock on until no deadline is pending (`replay`), or stop
    /// there as a daemon stops (`run`), leaving the state as it was.
    public var drainAtEnd = true
    /// Pace events by their timestamps on the real clock (`run --realtime`).
    public var realtime = false
    /// The regions of `Rules.source` (``RulesSource``); `nil` without one.
    public var rules: [RuleRegion]?
    /// Carries out the rules' server calls and `Script.server` runs; the run waits for each, on
    /// its virtual clock, so a replay is the same every time the server answers the same.
    public var hook: ServerHook

    /// What a run did, for its summary.
    public struct Summary: Sendable {
        public var read = FileSource.Report()
        public var outputs = 0
        public var sightings = 0
        public var unconfiguredSightings = 0
        public var ignoredCommands = 0
        /// The shell stopped the run before the end of its input.
        public var stopped = false
    }

    public init(configuration: Configuration, source: SourceSpec) {
        self.configuration = configuration
        self.source = source
        hook = ServerHook(configuration: configuration) { _, _ in }
    }

    /// Runs the source through a fresh engine that starts from `store`'s kept state.
    ///
    /// Throws ``InputError`` (status 2) or ``StateStoreError`` (status 1).
    @discardableResult
    public func run(
        store: StateStore,
        output: (MonitorOutput) throws -> Void,
        sinks: [any OutputSink] = [],
        control: EngineControl? = nil,
        warn: @escaping (String) -> Void
    ) throws -> Summary {
        if case .adapter(let name) = source {
            throw InputError(file: name, message: "is a live adapter; this command reads btsnoop:PATH or trace:PATH")
        }
        var engine = Engine(
            configuration: configuration,
            identity: .resolve(configuration.monitor),
            kept: try store.kept(),
            rules: rules,
            ruleSettings: .resolve(configuration)
        )
        var outputs: [MonitorOutput] = []
        var summary = Summary()
        // Steps are committed in groups while input is waiting, and at once when it is not.
        var batch = StepBatch()
        func commit() throws {
            summary.outputs += try batch.commit(store: store, output: output, sinks: sinks)
        }
        func step() throws {
            engine.settleActions(with: hook, into: &outputs)
            engine.stage(&outputs, into: &batch, sinks: sinks)
            if batch.isFull { try commit() }
        }
        var pace: (first: Timestamp, wall: ContinuousClock.Instant)?
        let file = FileSource(spec: source, skipBadLines: skipBadLines, warn: warn)
        var clock: Timestamp?
        // Between events: the shell's orders, at the input's time.
        func obey() throws {
            guard let control else { return }
            if control.isStopping { throw Stopped() }
            guard let time = clock else { return }
            for order in control.take() {
                try commit()
                try engine.obey(order, at: time, store: store, into: &outputs)
                try step()
                try commit()
            }
        }
        do {
            // Before input would block (a quiet pipe): what is staged is committed first.
            summary.read = try file.read(idle: {
                try commit(); try obey()
            }) { event in
                try obey()
                if realtime {
                    if let (first, wall) = pace {
                        let offset = Duration.microseconds(event.time.microseconds - first.microseconds)
                        let delay = wall.advanced(by: offset) - ContinuousClock.now
                        if delay > .zero {
                            try commit()
                            Thread.sleep(forTimeInterval: Self.seconds(delay))
                        }
                    } else {
                        pace = (event.time, ContinuousClock.now)
                    }
                }
                while engine.advanceToNextDeadline(notAfter: Engine.deadlinesBefore(event), into: &outputs) {
                    try step()
                }
                clock = event.time
                engine.handle(event, into: &outputs)
                try step()
            }
        } catch is Stopped {
            summary.stopped = true
            summary.read.lastTime = clock
        }
        // The input's clock ends at its last record, beacon or not: what fell due by then happened.
        // Draining runs the clock on until nothing is pending.
        if drainAtEnd || summary.read.lastTime != nil {
            let end = drainAtEnd ? nil : summary.read.lastTime
            while engine.advanceToNextDeadline(notAfter: end, into: &outputs) { try step() }
        }
        try commit()
        summary.sightings = engine.sightings
        summary.unconfiguredSightings = engine.unconfiguredSightings
        summary.ignoredCommands = engine.ignoredCommands
        return summary
    }

    private struct Stopped: Error {}

    static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

/// Where the state database lives when `State.database` is not set (SPEC 2.4).
public enum StateLocation {
    /// `$STATE_DIRECTORY/beaconwatch.sqlite` under systemd (its first folder), else
    /// `~/.local/state/beaconwatch/beaconwatch.sqlite`.
    public static func resolve(configured: String?, environment: [String: String] = ProcessInfo.processInfo.environment)
        -> String
    {
        if let configured { return configured }
        if let folders = environment["STATE_DIRECTORY"], let first = folders.split(separator: ":").first {
            return "\(first)/beaconwatch.sqlite"
        }
        let home = environment["HOME"] ?? FileManager.default.homeDirectoryForCurrentUser.path
        return "\(home)/.local/state/beaconwatch/beaconwatch.sqlite"
    }
}
