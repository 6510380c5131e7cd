import Logging
import BeaconCore
import BeaconConfiguration
import Syscalls
import Engine
import Fleet
import Foundation
import Persistence
import RegionMonitor
import Rules

/// Drives an ``Engine`` with a file source: the loop `replay` and `run` share.
///
/// Each event's outputs are written to the state database in one transaction, then handed to
/// `output`; so an output is only ever seen once its state is kept.
package struct FileRun {
    package var configuration: Configuration
    package var source: SourceSpec
    package var skipBadLines = false
    /// At the end of input, run the clock on until no deadline is pending (`replay`), or stop
    /// there as a daemon stops (`run`), leaving the state as it was.
    package var drainAtEnd = true
    /// Pace events by their timestamps on the real clock (`run --realtime`).
    package var realtime = false
    /// After the end of input, go on taking the shell's orders and queries (the web view) for
    /// this long before returning (`run --linger`); a stop ends it.
    package var linger = Duration.zero
    /// The clock `--realtime` paces by and `linger` waits on (``DaemonClock/system`` unless set).
    package var clock = DaemonClock.system
    /// Called at the end of input, before lingering.
    package var atEnd: () -> Void = {}
    /// Bytes of the input read so far and its size (``FileSource/progress``).
    package var progress: (_ read: Int, _ size: Int?) -> Void = { _, _ in }
    /// The regions of `Rules.source` (``RulesSource``); `nil` without one.
    package var rules: [RuleRegion]?
    /// Carries out the rules' server calls and `Script.server` runs; the run waits for each, on
    /// its virtual clock, so a replay is the same every time the server answers the same.
    package var hook: ServerHook

    /// What a run did, for its summary.
    package struct Summary: Sendable {
        package var read = FileSource.Report()
        package var outputs = 0
        package var sightings = 0
        package var unconfiguredSightings = 0
        package var ignoredCommands = 0
        /// The shell stopped the run before the end of its input.
        package var stopped = false
    }

    package init(configuration: Configuration, source: SourceSpec) {
        self.configuration = configuration
        self.source = source
        hook = ServerHook(configuration: configuration, logger: .silent)
    }

    /// Runs the source through a fresh engine that starts from `store`'s kept state.
    ///
    /// Throws ``InputError`` (status 2) or ``StateStoreError`` (status 1).
    @discardableResult
    package func run(
        store: StateStore,
        output: (MonitorOutput) throws -> Void,
        sinks: [any OutputSink] = [],
        control: EngineControl? = nil,
        logger: Logger
    ) throws -> Summary {
        if case .adapter(let name) = source {
            throw InputError(file: name, message: "is a live adapter; this command reads btsnoop:PATH or trace:PATH")
        }
        let engine = try Engine.resuming(configuration, from: store, rules: rules)
        return try withoutActuallyEscaping(output) { output in
            // A building of scanners: each tag is a device of the table, on the file's clock
            // (docs/behaviour.md §19); without scanners, the own radio alone.
            var devices =
                configuration.scanners == nil
                ? Devices(own: engine)
                : Devices(
                    own: engine, configuration: configuration, rules: rules, ruleSettings: .resolve(configuration),
                    kept: try store.keptFleet())
            // As a live run: the calibration and the building's fingerprints go on from what
            // was kept (`replay --state`, `run` of a file; docs/behaviour.md §19, §22).
            if configuration.scanners != nil {
                devices.resumeCalibration(from: try store.keptCalibration())
                devices.resumeFingerprints(try store.keptFingerprints())
            }
            var driver = EngineDriver(
                devices: devices, store: store, sinks: sinks, requests: .inline(hook), output: output)
            driver.logger = logger
            driver.elapsed = clock.elapsed
            var summary = Summary()
            var pace: (first: Timestamp, wall: Duration)?
            var file = FileSource(spec: source, skipBadLines: skipBadLines, logger: logger)
            file.progress = progress
            file.wake = control?.wakeDescriptor
            // Steps a full disk held back are tried again while a quiet pipe gives no input.
            file.idleTimeout = { driver.failing == nil ? nil : EngineDriver.retryInterval }
            var inputClock: Timestamp?
            // Between events: the shell's orders, at the input's time, each committed at once.
            func obey() throws {
                guard let control else { return }
                if control.isStopping { throw Stopped() }
                // A file runs on its own clock: the daemon's orders and learn commands wait for its
                // first event and are taken at the input's time (a session then runs on the file's
                // clock, as a trace's learn line does: docs/behaviour.md §22); the fleet's messages
                // (said at the start) and orders for one device are not taken.
                if let time = inputClock {
                    let orders = control.take()
                    if !orders.isEmpty {
                        try driver.commit()
                        var answers: [(reply: @Sendable (EngineControl.Answer) -> Void, answer: EngineControl.Answer)] =
                            []
                        for posted in orders {
                            switch posted.order {
                            case .daemon, .learn: break
                            default:
                                posted.reply?(.dropped)
                                continue
                            }
                            let refusal = try driver.handle(posted.order, at: time)
                            if let reply = posted.reply {
                                answers.append((reply, refusal.map(EngineControl.Answer.refused) ?? .taken))
                            } else if let problem = refusal?.learnProblem {
                                logger.warning("\(problem)")
                            }
                        }
                        try driver.commit()
                        for (reply, answer) in answers { reply(answer) }
                    }
                }
                // After the orders: a query posted after a command sees what it did.
                control.answerQueries(driver)
            }
            do {
                // Steps are committed in groups while input is waiting, and at once when it is not
                // (before input would block: a quiet pipe).
                summary.read = try file.read(idle: {
                    try driver.commit()
                    try obey()
                }) { event in
                    try obey()
                    if realtime {
                        if let (first, wall) = pace {
                            let offset = Duration.microseconds(event.time.microseconds - first.microseconds)
                            let delay = wall + offset - clock.elapsed()
                            if delay > .zero {
                                try driver.commit()
                                // `--realtime` paces a file by its timestamps: waiting is the point;
                                // the shell's orders and queries are taken meanwhile.
                                let due = clock.elapsed() + delay
                                while let wake = control?.wakeDescriptor {
                                    let left = due - clock.elapsed()
                                    guard left > .zero else { break }
                                    _ = try? Syscall.waitReadable([wake], timeout: left)
                                    try obey()
                                }
                                if control?.wakeDescriptor == nil { Syscall.sleep(delay) }
                            }
                        } else {
                            pace = (event.time, clock.elapsed())
                        }
                    }
                    try driver.handle(event)
                    inputClock = event.time
                }
            } catch is Stopped {
                summary.stopped = true
                summary.read.lastTime = inputClock
            }
            // The input's clock ends at its last record, beacon or not: what fell due by then
            // happened. Draining runs the clock on until nothing is pending.
            if drainAtEnd || summary.read.lastTime != nil {
                try driver.drain(notAfter: drainAtEnd ? nil : summary.read.lastTime)
            }
            try driver.finish()
            if linger > .zero, let wake = control?.wakeDescriptor, !summary.stopped {
                atEnd()
                let due = clock.elapsed() + linger
                do {
                    while true {
                        let left = due - clock.elapsed()
                        guard left > .zero else { break }
                        _ = try? Syscall.waitReadable([wake], timeout: left)
                        try obey()
                    }
                } catch is Stopped {}
                try driver.finish()
            }
            summary.outputs = driver.delivered
            summary.sightings = driver.engine.sightings
            summary.unconfiguredSightings = driver.engine.unconfiguredSightings
            summary.ignoredCommands = driver.engine.ignoredCommands
            return summary
        }
    }

    private struct Stopped: Error {}
}

/// Where the state database lives when `State.database` is not set (docs/behaviour.md §2.4).
package enum StateLocation {
    /// `$STATE_DIRECTORY/beaconwatch.sqlite` under systemd (its first folder), else
    /// `~/.local/state/beaconwatch/beaconwatch.sqlite`.
    package static func resolve(
        configured: String?, environment: [String: String] = ProcessInfo.processInfo.environment
    )
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
