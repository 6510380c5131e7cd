import BeaconConfiguration
import Foundation
import Logging
import RegionMonitor
import Rules
import Syscalls

extension Logger {
    /// A logger that says nothing: the default of components whose caller gives none.
    package static let silent = Logger(label: "beaconwatch.silent") { _ in SwiftLogNoOpLogHandler() }
}

/// Carries out the rule engine's actions (docs/behaviour.md §7.5): the `notify_server` GET, or a
/// `Script.server` run whose exit status decides. The I/O shell of ``RuleEngine``.
package struct ServerHook: Sendable {
    /// `Script.server`, when set.
    package var serverScript: String?
    package var scriptTimeout: Double
    package var logger: Logger
    /// Where its `Script.server` runs are kept while they go: the daemon's, so that its stop
    /// stops them.
    package var runs: ScriptRuns

    package init(serverScript: String?, scriptTimeout: Double, logger: Logger, runs: ScriptRuns = ScriptRuns()) {
        self.serverScript = serverScript
        self.scriptTimeout = scriptTimeout
        self.logger = logger
        self.runs = runs
    }

    /// The hook for `configuration`'s `Script.server` and `Script.timeout`.
    package init(configuration: Configuration, logger: Logger, runs: ScriptRuns = ScriptRuns()) {
        self.init(
            serverScript: configuration.scripts[.server], scriptTimeout: configuration.scriptTimeout, logger: logger,
            runs: runs)
    }

    /// Does `action` and waits for its answer; `device` is the fleet device whose rule it is
    /// (`BW_DEVICE` and `"device"` for `Script.server`).
    package func perform(_ action: RuleEngine.Action, device: String? = nil) -> (call: Int, answer: ServerAnswer) {
        switch action {
        case .fetch(let call, let text, let timeout):
            guard let url = URL(string: text) else { return (call, .failed("not a valid URL: \(text)")) }
            switch HTTPFetch.get(url, timeout: timeout, limit: ServerAnswer.replyLimit) {
            case .success(let reply):
                let answer = ServerAnswer.reply(status: reply.status, body: reply.body)
                if case .failed(let why) = answer { logger.info("server hook \(text): \(why)") }
                return (call, answer)
            case .failure(let failure):
                logger.info("server hook \(text): \(failure)")
                return (call, .failed(failure.description))
            }
        case .runServerScript(let call, let output):
            guard let path = serverScript, let invocation = ScriptInvocation(for: output, device: device) else {
                return (call, .enable)
            }
            let name = "script \(path) (server)"
            do {
                let timeout = Duration.milliseconds(Int64(scriptTimeout * 1000))
                let result = try ScriptProcess.run(
                    path: path, invocation: invocation, timeout: timeout, grace: ScriptSink.killGrace, runs: runs)
                // A non-zero status is the script's "no", not a failure of it: said at info.
                if let (level, line) = result.logLine(name, timeout: timeout) {
                    if case .exited = result.ending {
                        logger.info("\(line)")
                    } else {
                        logger.log(level: level, "\(line)")
                    }
                }
                switch result.ending {
                case .exited(0): return (call, .enable)
                case .exited(let status): return (call, .declined("Script.server exited with status \(status)"))
                case .signalled(let signal): return (call, .declined("Script.server was killed by signal \(signal)"))
                case .timedOut: return (call, .declined("Script.server ran past Script.timeout"))
                case .stopped: return (call, .declined("Script.server was stopped with beaconwatch"))
                }
            } catch {
                logger.error("\(name) could not start: \(error); check the path and that it is executable")
                return (call, .declined("Script.server could not start"))
            }
        }
    }

    /// Does `action` on a thread of the shared ``WorkerPool`` and hands the answer to `then`:
    /// the live daemon's way, so that the engine goes on with sightings while a server thinks.
    package func performInBackground(
        _ action: RuleEngine.Action, device: String? = nil, then: @escaping @Sendable (Int, ServerAnswer) -> Void
    ) {
        // A server call or a script blocks until its answer (at most its timeout): off the engine's thread.
        WorkerPool.shared.submit { [self] in
            let (call, answer) = perform(action, device: device)
            then(call, answer)
        }
    }
}
