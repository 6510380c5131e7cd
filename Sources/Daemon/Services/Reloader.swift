import BeaconConfiguration
import Foundation
import Logging
import BeaconCore
import Persistence
import RegionMonitor
import Rules
import ServiceLifecycle
import Synchronization
import Syscalls
import UnixSignals

/// Re-reads the configuration on SIGHUP and on request (`cmd/reload`): a good file goes to the
/// engine (and the sinks that take one); a bad one is reported and the one in force stays.
package final class Reloader: Service, Sendable {
    let path: String
    let identity: MonitorIdentity
    let running: Configuration
    let control: EngineControl
    let sinks: [any OutputSink]
    /// The broker connection whose input follows a reload's sensor topics (docs/behaviour.md §23).
    let broker: BrokerConnection?
    let store: StateStore
    let logger: Logger
    /// Read when the rules are loaded (a kept copy's age).
    let clock: DaemonClock
    /// Whether this reloader owns SIGHUP (a daemon alone); in a cluster ``ClusterService`` does,
    /// and requests reloads of the active life's reloader.
    private let trapsSignals: Bool
    private let requests: AsyncStream<String>
    private let continuation: AsyncStream<String>.Continuation

    /// Reloads `path` for an engine started on `running`, keeping `identity`; `broker`'s input
    /// follows the presence sensors' topics.
    package init(
        path: String, running: Configuration, identity: MonitorIdentity, control: EngineControl,
        sinks: [any OutputSink], broker: BrokerConnection? = nil, store: StateStore, logger: Logger,
        clock: DaemonClock = .system, trapsSignals: Bool = true
    ) {
        self.broker = broker
        self.trapsSignals = trapsSignals
        self.path = path
        self.clock = clock
        self.store = store
        self.running = running
        self.identity = identity
        self.control = control
        self.sinks = sinks
        self.logger = logger
        (requests, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Asks for a reload; `reason` is logged.
    package func request(_ reason: String) { continuation.yield(reason) }

    package func run() async {
        let signals = trapsSignals ? await UnixSignalsSequence(trapping: .sighup) : nil
        await withTaskGroup(of: Void.self) { group in
            // A child task: SIGHUP, beside the requests, until the graceful shutdown.
            if let signals {
                group.addTask { [self] in
                    for await _ in signals.cancelOnGracefulShutdown() { request("SIGHUP") }
                }
            }
            // Reading the file and the rules (a fetch, SQLite) blocks: a thread of its own.
            for await reason in requests.cancelOnGracefulShutdown() {
                _ = try? await WorkerPool.shared.run { [self] in reload(reason) }
            }
            group.cancelAll()
        }
    }

    /// Reads and checks the file now; returns whether the new configuration was taken.
    @discardableResult
    package func reload(_ reason: String) -> Bool {
        let loaded: Configuration
        switch Configuration.load(contentsOf: path) {
        case .failure(let errors):
            for error in errors.errors {
                logger.error("reload (\(reason)): \(error); the configuration in force stays until the file is fixed")
            }
            return false
        case .success(let configuration):
            loaded = configuration.adopting(identity)
        }
        for warning in loaded.warnings { logger.warning("\(warning)") }
        if loaded.mqtt != running.mqtt || loaded.stateDatabase != running.stateDatabase {
            logger.warning("reload (\(reason)): MQTT.* and State.database changes take effect at the next start")
        }
        let rules: [RuleRegion]?
        do {
            rules = try RulesSource.loadAll(
                configuration: loaded, store: store, now: clock.now(), logger: logger
            ).regions
        } catch {
            logger.error("reload (\(reason)): \(error); the configuration in force stays until the file is fixed")
            return false
        }
        control.post(.reconfigure(loaded, rules: rules, settings: .resolve(loaded)))
        for sink in sinks { sink.reconfigure(loaded) }
        broker?.reconfigure(loaded, logger: logger)
        logger.info(
            "configuration reloaded", metadata: ["reason": "\(reason)", "beacons": "\(loaded.hierarchy.beacons.count)"])
        return true
    }
}

extension Configuration {
    /// This configuration reporting as `identity` (the userid, session and address the daemon
    /// resolved at its start), so a reload keeps the topics and the session.
    package func adopting(_ identity: MonitorIdentity) -> Configuration {
        var configuration = self
        configuration.monitor.userid = identity.userid
        configuration.monitor.session = identity.session
        configuration.monitor.address = identity.address
        return configuration
    }
}
