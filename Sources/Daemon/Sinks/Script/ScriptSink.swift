import BeaconConfiguration
import Engine
import Foundation
import Logging
import Persistence
import RegionMonitor
import Synchronization
import Syscalls

#if canImport(Glibc)
    import Glibc
#endif

/// One run of a `Script.<type>` program for one output: what it is given (docs/behaviour.md §10.2).
///
/// Pure: the values are data. The program gets them as its environment and standard input, never
/// as a command line, so a name such as `$(touch /tmp/pwned); x` is only ever text.
package struct ScriptInvocation: Sendable, Hashable {
    package var event: ScriptEvent
    /// `BW_TYPE` and the output's other `BW_*` variables.
    package var environment: [String: String]
    /// The output's JSON, the same object as on MQTT and `--events`.
    package var input: String

    /// The run `output` asks for, if its type is one scripts hang on; a fleet device's outputs
    /// carry `BW_DEVICE` and `"device"` (docs/behaviour.md §15).
    package init?(for output: MonitorOutput, device: String? = nil) {
        guard let event = ScriptEvent(rawValue: output.type) else { return nil }
        self.event = event
        input = output.json(device: device)
        var environment = ["BW_TYPE": output.type]
        if let device { environment["BW_DEVICE"] = device }
        switch output {
        case .location(_, let location):
            environment["BW_SESSION"] = location.session
            environment["BW_ADDRESS"] = location.address
            environment["BW_USERID"] = location.userid
            environment["BW_ZONE"] = location.zone
            environment["BW_DISTANCE"] = location.distance.rawValue
            environment["BW_BACKGROUND"] = location.background ? "true" : "false"
        case .transition(_, let transition):
            environment["BW_REGION"] = transition.region.description
            environment["BW_KIND"] = transition.region.kind.rawValue
            environment["BW_NAME"] = transition.name ?? ""
        case .geofence(_, let transition):
            environment["BW_REGION"] = transition.id
            environment["BW_KIND"] = "geofence"
            environment["BW_NAME"] = transition.name ?? ""
        case .rule(_, let evaluation):
            environment["BW_REGION"] = evaluation.region
            environment["BW_RULE"] = evaluation.rule
        case .server(_, let notice):
            environment["BW_REGION"] = notice.region
            environment["BW_RULE"] = notice.rule
            environment["BW_URL"] = notice.url
        case .notification(_, let notification):
            environment["BW_REGION"] = notification.region
            environment["BW_RULE"] = notification.rule
        case .alert(_, let change):
            environment["BW_ZONE"] = change.locationID
            environment["BW_ACTION"] = change.action.rawValue
        case .nearest(_, let change):
            environment["BW_ZONE"] = change.locationID ?? ""
        case .learned(_, let report):
            environment["BW_REGION"] = report.room.description
            environment["BW_NAME"] = report.name
        case .occupancy(_, let change):
            environment["BW_REGION"] = change.region.description
            environment["BW_KIND"] = change.region.kind.rawValue
            environment["BW_NAME"] = change.name ?? ""
            environment["BW_OCCUPIED"] = change.occupied ? "true" : "false"
            environment["BW_COUNT"] = String(change.count)
        case .monitoring, .position:
            break
        }
        self.environment = environment
    }
}

/// Runs `Script.<type>` programs on outputs (docs/behaviour.md §10.2): started directly (no shell), the
/// output's JSON on standard input, `BW_*` in the environment; runs of one script one after the
/// other in output order; each stopped after `Script.timeout` (SIGTERM, then SIGKILL
/// ``killGrace`` later); exit status and standard error logged. More than ``queueLimit`` runs
/// waiting for one script drops the oldest, and says so. A script's failure never stops the daemon.
package final class ScriptSink: OutputSink {
    /// Runs waiting for one script beyond which the oldest is dropped.
    package static let queueLimit = 1000
    /// Between SIGTERM and SIGKILL for a script past its timeout.
    package static let killGrace = Duration.seconds(2)

    /// A line for the log.

    private struct Settings {
        var scripts: [ScriptEvent: String]
        var timeout: Duration
    }

    private let settings: Mutex<Settings>
    private let runners = Mutex<[String: ScriptRunner]>([:])
    /// Told whenever a runner finished a run: what ``finish(within:)`` waits on.
    private let idle: Awaitable
    private let logger: Logger
    /// The runs going now: what ``finish(within:)`` stops at last.
    package let runs: ScriptRuns

    /// Runs `scripts`, each stopped after `seconds`; says what happens through `logger`. `runs`
    /// may be shared with the server hook, so that a stop stops its scripts too.
    package init(
        scripts: [ScriptEvent: String], timeout seconds: Double, logger: Logger, runs: ScriptRuns = ScriptRuns()
    ) {
        settings = Mutex(Settings(scripts: scripts, timeout: .milliseconds(Int64(seconds * 1000))))
        self.logger = logger
        self.runs = runs
        idle = Awaitable(timers: runs.timers)
    }

    /// A sink for `configuration`'s scripts, or `nil` when it has none.
    package convenience init?(configuration: Configuration, logger: Logger) {
        guard !configuration.scripts.isEmpty else { return nil }
        self.init(scripts: configuration.scripts, timeout: configuration.scriptTimeout, logger: logger)
    }

    package func deliver(
        _ outputs: ArraySlice<MonitorOutput>, entries: ArraySlice<OutboxEntry>, context: StepContext
    )
        throws
    {
        let (scripts, timeout) = settings.withLock { ($0.scripts, $0.timeout) }
        guard !scripts.isEmpty else { return }
        for output in outputs where Self.runs(for: output) {
            guard let event = ScriptEvent(rawValue: output.type), let path = scripts[event],
                let invocation = ScriptInvocation(for: output, device: context.device?.id)
            else { continue }
            runner(for: path).enqueue(invocation, timeout: timeout)
        }
    }

    /// Whether this sink runs a script for `output`: not for `server` (`Script.server` decides a
    /// rule and is run by the rule's server hook), nor for a notification the application
    /// delivers itself (`Rules.autoUserNotify = false`).
    static func runs(for output: MonitorOutput) -> Bool {
        switch output {
        case .server: false
        case .notification(_, let notification): notification.delivery == .automatic
        default: true
        }
    }

    package func reconfigure(_ configuration: Configuration) {
        settings.withLock {
            $0 = Settings(
                scripts: configuration.scripts, timeout: .milliseconds(Int64(configuration.scriptTimeout * 1000)))
        }
    }

    private func runner(for path: String) -> ScriptRunner {
        runners.withLock { runners in
            if let runner = runners[path] { return runner }
            let runner = ScriptRunner(path: path, logger: logger, idle: idle, runs: runs)
            runners[path] = runner
            return runner
        }
    }

    /// Waits until no run is going or waiting, or `timeout` passes; returns whether none is.
    package func waitUntilIdle(within timeout: Duration) async -> Bool {
        await idle.wait(within: timeout) { [self] in pending == 0 }
    }

    /// Runs and waiting runs, over every script.
    package var pending: Int { runners.withLock { $0.values.reduce(0) { $0 + $1.pending } } }

    /// The runs kept in memory over every script: bounded by about twice ``queueLimit`` a script,
    /// however long one hangs.
    package var storedRuns: Int { runners.withLock { $0.values.reduce(0) { $0 + $1.stored } } }

    /// Lets waiting runs finish for up to `limit`, then drops the rest (saying how many) and
    /// stops the runs still going (and the server hook's, when it shares ``runs``): SIGTERM to
    /// each one's process group, SIGKILL ``killGrace`` later. Returns how many were dropped.
    @discardableResult
    package func finish(within limit: Duration) async -> Int {
        // Woken as each runner goes idle.
        _ = await idle.wait(within: limit) { [self] in pending == 0 }
        let dropped = runners.withLock { $0.values.reduce(0) { $0 + $1.close() } }
        idle.changed()
        if dropped > 0 { logger.warning("stopping: \(dropped) script runs were still waiting and are dropped") }
        await runs.stopAll(grace: Self.killGrace)
        return dropped
    }
}

/// The serial queue of one script: its invocations run one at a time, each on a thread of the
/// shared ``WorkerPool`` (a script that hangs holds one thread, until its timeout).
final class ScriptRunner: Sendable {
    private struct Job {
        var invocation: ScriptInvocation
        var timeout: Duration
    }

    private struct Queue {
        var jobs: [Job] = []
        var start = 0
        var running = false
        /// A drain of this queue is with the pool (waiting or going).
        var draining = false
        var dropped = 0
        var closed = false
        var waiting: Int { jobs.count - start }

        /// Frees the runs before ``start`` (taken, or dropped as the oldest) once they are more
        /// than 1024 and half of what is kept: a script that hangs must not keep every run it
        /// dropped (issue 38 measured 150 bytes an output).
        mutating func compact() {
            guard start > 1024, start * 2 > jobs.count else { return }
            jobs.removeFirst(start)
            start = 0
        }
    }

    let path: String
    private let logger: Logger
    private let queue = Mutex(Queue())
    /// Told whenever this runner finished a run.
    private let idle: Awaitable
    private let runs: ScriptRuns

    init(path: String, logger: Logger, idle: Awaitable, runs: ScriptRuns) {
        self.path = path
        self.logger = logger
        self.idle = idle
        self.runs = runs
    }

    var pending: Int { queue.withLock { $0.waiting + ($0.running ? 1 : 0) } }

    /// The runs kept in memory, waiting or not yet freed.
    var stored: Int { queue.withLock { $0.jobs.count } }

    func enqueue(_ invocation: ScriptInvocation, timeout: Duration) {
        let (dropped, drain) = queue.withLock { queue -> (Int?, Bool) in
            guard !queue.closed else { return (nil, false) }
            queue.jobs.append(Job(invocation: invocation, timeout: timeout))
            let drain = !queue.draining
            queue.draining = true
            guard queue.waiting > ScriptSink.queueLimit else { return (nil, drain) }
            queue.start += 1
            queue.dropped += 1
            queue.compact()
            return (queue.dropped, drain)
        }
        // Script runs block (a process and its deadline): on the pool, off the engine's thread.
        if drain { WorkerPool.shared.submit { [self] in work() } }
        // Once when it starts, then every thousandth, so a flood does not flood the log too.
        if let dropped, dropped == 1 || dropped % 1000 == 0 {
            logger.warning(
                "script \(path): more than \(ScriptSink.queueLimit) runs waiting; dropped the oldest (\(dropped) so far); the script is slower than its events"
            )
        }
    }

    /// Stops taking runs; returns how many were waiting.
    func close() -> Int {
        queue.withLock { queue in
            queue.closed = true
            defer {
                queue.jobs.removeAll()
                queue.start = 0
            }
            return queue.waiting
        }
    }

    /// Runs the waiting invocations in order until none is left (or the runner is closed).
    private func work() {
        while true {
            let next = queue.withLock { queue -> Job? in
                guard !queue.closed, queue.start < queue.jobs.count else {
                    queue.draining = false
                    return nil
                }
                let job = queue.jobs[queue.start]
                queue.start += 1
                queue.compact()
                queue.running = true
                return job
            }
            guard let job = next else { return }
            run(job)
            queue.withLock { $0.running = false }
            idle.changed()
        }
    }

    private func run(_ job: Job) {
        let name = "script \(path) (\(job.invocation.event.rawValue))"
        let result: ScriptProcess.Outcome
        do {
            result = try ScriptProcess.run(
                path: path, invocation: job.invocation, timeout: job.timeout, grace: ScriptSink.killGrace, runs: runs)
        } catch {
            logger.error("\(name) could not start: \(error); check the path and that it is executable")
            return
        }
        if let (level, line) = result.logLine(name, timeout: job.timeout) { logger.log(level: level, "\(line)") }
    }
}

/// The script runs going now, by pid, of one daemon (its scripts and its server hook): what its
/// stop stops.
package final class ScriptRuns: Sendable {
    private let running = Mutex<[Int32: ScriptProcess.Run]>([:])
    /// Told whenever a run ends.
    private let ended: Awaitable
    /// Where the runs' timeouts and SIGKILL graces are timed.
    let timers: ShellTimers

    package init(timers: ShellTimers = .shared) {
        self.timers = timers
        ended = Awaitable(timers: timers)
    }

    /// Runs going now.
    package var count: Int { running.withLock { $0.count } }

    func add(_ run: ScriptProcess.Run) { running.withLock { $0[run.child.pid] = run } }

    func remove(_ run: ScriptProcess.Run) {
        _ = running.withLock { $0.removeValue(forKey: run.child.pid) }
        ended.changed()
    }

    /// Stops every run going now (SIGTERM to its group, SIGKILL `grace` later) and waits until all
    /// have ended (at most `grace` and a second); returns how many there were.
    @discardableResult
    package func stopAll(grace: Duration = ScriptSink.killGrace) async -> Int {
        let runs = running.withLock { Array($0.values) }
        for run in runs { run.stop(.daemon, grace: grace, timers: timers) }
        _ = await ended.wait(within: grace + .seconds(1)) { running.withLock { $0.isEmpty } }
        return runs.count
    }
}

/// Starting one script process and waiting for it with a deadline: the only place scripts touch
/// the operating system.
///
/// Each run is a ``ChildProcess`` in a process group of its own: a stop (the timeout, or the
/// daemon stopping: ``ScriptRuns/stopAll(grace:)``) sends SIGTERM to the whole group, then SIGKILL
/// ``ScriptSink/killGrace`` later if the script is still there, and once the script has ended
/// after a stop, SIGKILL to whatever of its group is left. So nothing a script started outlives
/// its stop. What a script that ended by itself left running in the background is its own.
enum ScriptProcess {
    enum Ending: Sendable, Hashable {
        case exited(Int32)
        case signalled(Int32)
        /// Past the timeout; `killed` when SIGTERM was not enough.
        case timedOut(killed: Bool)
        /// Stopped because the daemon stops; `killed` when SIGTERM was not enough.
        case stopped(killed: Bool)
    }

    struct Outcome: Sendable {
        var ending: Ending
        /// Standard error, trimmed, on one line, at most ``stderrLimit`` bytes.
        var stderr: String
    }

    static let stderrLimit = 2000

    /// Why a run was stopped.
    enum StopReason: Sendable { case timeout, daemon }

    /// One run going: its child and whether (and why) it was stopped, under one lock, so that no
    /// signal is sent once the child has been found ended (its pid could then be reused).
    final class Run: Sendable {
        private struct State {
            var over = false
            var stopped: StopReason?
            var killed = false
        }

        let child: ChildProcess
        private let state = Mutex(State())

        init(child: ChildProcess) { self.child = child }

        /// SIGTERM to the group now, SIGKILL `grace` later unless it ended; once per run.
        func stop(_ reason: StopReason, grace: Duration, timers: ShellTimers) {
            let first = state.withLock { state -> Bool in
                guard !state.over, state.stopped == nil else { return false }
                state.stopped = reason
                child.signalGroup(SIGTERM)
                return true
            }
            guard first else { return }
            timers.after(grace) { [self] in
                state.withLock { state in
                    guard !state.over else { return }
                    state.killed = true
                    child.signalGroup(SIGKILL)
                }
            }
        }

        /// The child ended (not yet reaped): no signal from now on, but a stopped run's group is
        /// killed whole first. Returns why it was stopped, if it was, and whether it took SIGKILL.
        func end() -> (StopReason?, killed: Bool) {
            state.withLock { state in
                state.over = true
                if state.stopped != nil { child.signalGroup(SIGKILL) }
                return (state.stopped, state.killed)
            }
        }
    }

    static func run(
        path: String, invocation: ScriptInvocation, timeout: Duration, grace: Duration, runs: ScriptRuns
    ) throws -> Outcome {
        // Standard input and error are files: nothing blocks on a pipe, whatever the script does.
        let folder = FileManager.default.temporaryDirectory
        let stem = "beaconwatch-script-\(UUID().uuidString)"
        let inputURL = folder.appendingPathComponent(stem + ".in")
        let errorURL = folder.appendingPathComponent(stem + ".err")
        defer {
            try? FileManager.default.removeItem(at: inputURL)
            try? FileManager.default.removeItem(at: errorURL)
        }
        try Data((invocation.input + "\n").utf8).write(to: inputURL)
        try Data().write(to: errorURL)
        let input = try FileHandle(forReadingFrom: inputURL)
        let errors = try FileHandle(forWritingTo: errorURL)
        let nothing = try FileHandle(forWritingTo: URL(fileURLWithPath: "/dev/null"))
        defer {
            try? input.close()
            try? errors.close()
            try? nothing.close()
        }

        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("BW_") }
        environment.merge(invocation.environment) { $1 }
        let child = try ChildProcess.spawn(
            path: path, environment: environment, input: input.fileDescriptor, output: nothing.fileDescriptor,
            error: errors.fileDescriptor)
        let run = Run(child: child)
        runs.add(run)
        defer { runs.remove(run) }
        runs.timers.after(timeout) { run.stop(.timeout, grace: grace, timers: runs.timers) }
        try child.waitUntilEnded()
        let (stopped, killed) = run.end()
        let termination = try child.reap()

        let ending: Ending =
            switch (stopped, termination) {
            case (.timeout?, _): .timedOut(killed: killed)
            case (.daemon?, _): .stopped(killed: killed)
            case (nil, .exited(let status)): .exited(status)
            case (nil, .signalled(let signal)): .signalled(signal)
            }
        let text = (try? String(contentsOf: errorURL, encoding: .utf8)) ?? ""
        let oneLine = text.split(whereSeparator: \.isNewline).joined(separator: " | ")
        let stderr = oneLine.count > stderrLimit ? String(oneLine.prefix(stderrLimit)) + "…" : oneLine
        return Outcome(ending: ending, stderr: stderr)
    }
}

extension ScriptProcess.Outcome {
    /// What the log says of a run of the script `name`: its exit status (a warning unless 0),
    /// signal or timeout, with its standard error; `nil` for a quiet success.
    func logLine(_ name: String, timeout: Duration) -> (Logger.Level, String)? {
        let errors = stderr.isEmpty ? "" : ": " + stderr
        switch ending {
        case .exited(0):
            return stderr.isEmpty ? nil : (.info, "\(name) exited 0\(errors)")
        case .exited(let status):
            return (.warning, "\(name) exited with status \(status)\(errors)")
        case .signalled(let signal):
            return (.warning, "\(name) was killed by signal \(signal)\(errors)")
        case .timedOut(let killed):
            return (
                .warning,
                "\(name) ran past Script.timeout (\(timeout)) and was stopped with \(killed ? "SIGKILL after SIGTERM" : "SIGTERM")\(errors)"
            )
        case .stopped(let killed):
            return (
                .warning,
                "\(name) was still running when beaconwatch stopped; stopped with \(killed ? "SIGKILL after SIGTERM" : "SIGTERM")\(errors)"
            )
        }
    }
}
