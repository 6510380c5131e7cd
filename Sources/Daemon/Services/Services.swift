import BeaconConfiguration
import Foundation
import Logging
import BeaconCore
import Persistence
import RegionMonitor
import Rules
import ServiceLifecycle
import Synchronization
import UnixSignals

/// The engine's run loop as a service: it runs on its own thread until its input ends or a
/// graceful shutdown (SIGTERM, SIGINT) asks it to stop after the current event.
///
/// Run it with `.gracefullyShutdownGroup` on success and failure, so that the sinks after it
/// flush what it committed.
public struct EngineService: Service {
    let control: EngineControl
    let body: @Sendable (EngineControl) throws -> Void

    public init(control: EngineControl, body: @escaping @Sendable (EngineControl) throws -> Void) {
        self.control = control
        self.body = body
    }

    public func run() async throws {
        let control = control
        let body = body
        try await withGracefulShutdownHandler {
            // The loop blocks (file reads, the radio's poll, SQLite commits): a thread of its own.
            try await onDedicatedThread {
                // Whatever way the loop ends, nobody waits for it to answer a query again.
                defer { control.endQueries() }
                try body(control)
            }
        } onGracefulShutdown: {
            control.stop()
        }
    }
}

/// Runs blocking work (a radio loop, a file) as the one service of a group that turns SIGTERM and
/// SIGINT into a graceful shutdown: `body` sees ``EngineControl/isStopping`` turn true, and a wait
/// on ``EngineControl/wakeDescriptor`` ends then. The command line's live loops (`decode hci0`,
/// `advertise`, `calibrate`) stop this way, as the daemon does: signals go through the service
/// group only.
public func runUntilStopped<T: Sendable>(
    logger: Logger, _ body: @escaping @Sendable (EngineControl) throws -> T
) async throws -> T {
    let result = Mutex<Result<T, any Error>?>(nil)
    let service = EngineService(control: EngineControl()) { control in
        let outcome = Result { try body(control) }
        result.withLock { $0 = outcome }
    }
    var quiet = logger
    quiet.logLevel = max(logger.logLevel, .notice)
    let group = ServiceGroup(
        configuration: .init(
            services: [.init(service: service, successTerminationBehavior: .gracefullyShutdownGroup)],
            gracefulShutdownSignals: [.sigterm, .sigint], logger: quiet))
    try await group.run()
    guard let outcome = result.withLock({ $0 }) else { throw CancellationError() }
    return try outcome.get()
}

/// A value that is not `Sendable` (a radio's handle, a writer), handed to the one thread that uses
/// it until its work is done: the hand-over itself is the synchronisation.
public struct Handed<Value>: @unchecked Sendable {
    public let value: Value
    public init(_ value: Value) { self.value = value }
}

/// The broker connection as a service: handles the client's events (what comes in goes to the
/// sink's ``MQTTInput``), and at shutdown publishes `offline` after flushing the outbox for up to
/// ``flushLimit``.
public struct MQTTService: Service {
    /// How long a stopping daemon waits for the broker to acknowledge what is in flight (docs/behaviour.md §13).
    public static let flushLimit = Duration.seconds(5)

    let sink: MQTTSink
    let logger: Logger
    let endpoint: String

    public init(sink: MQTTSink, endpoint: String, logger: Logger) {
        self.sink = sink
        self.endpoint = endpoint
        self.logger = logger
    }

    public func run() async {
        let (sink, logger, endpoint) = (sink, logger, endpoint)
        await withTaskGroup(of: Void.self) { group in
            // A child task: the client's events, until the flush below shuts the client down.
            group.addTask { await sink.run(logger: logger) }
            let message =
                "MQTT broker \(endpoint) is not reachable yet (not running, or its name does not resolve); "
                + "events wait for it in the outbox"
            // Said once the first connection is 5 s late, then again when it comes (a lost
            // connection is said by the sink, with its own "reachable again"); until the stop.
            let said = Mutex(false)
            async let announcing: Void = cancelWhenGracefulShutdown {
                guard !(await sink.waitConnected(within: .seconds(5))), !Task.isCancelled else { return }
                logger.warning("\(message)")
                said.withLock { $0 = true }
                while !Task.isCancelled {
                    // Woken by the connection itself; the long limit only bounds one wait.
                    guard await sink.waitConnected(within: .seconds(3600)) else { continue }
                    logger.warning("MQTT broker \(endpoint) reachable; retained state and the outbox go out now")
                    return
                }
            }
            try? await gracefulShutdown()
            _ = await announcing
            if !said.withLock({ $0 }), !(await sink.waitConnected(within: .zero)) { logger.warning("\(message)") }
            let left = await sink.finish(within: Self.flushLimit)
            if left > 0 {
                logger.warning("\(left) MQTT messages were not acknowledged before stopping; sent at the next start")
            }
            group.cancelAll()
        }
    }
}

/// The script runner as a service: at shutdown, waiting runs get up to ``MQTTService/flushLimit``
/// to finish; the rest are dropped, and said so.
public struct ScriptService: Service {
    let sink: ScriptSink

    public init(sink: ScriptSink) { self.sink = sink }

    public func run() async {
        try? await gracefulShutdown()
        await sink.finish(within: MQTTService.flushLimit)
    }
}

/// Re-reads the configuration on SIGHUP and on request (`cmd/reload`): a good file goes to the
/// engine (and the sinks that take one); a bad one is reported and the one in force stays.
public final class Reloader: Service, Sendable {
    let path: String
    let identity: MonitorIdentity
    let running: Configuration
    let control: EngineControl
    let sinks: [any OutputSink]
    let store: StateStore
    let logger: Logger
    private let requests: AsyncStream<String>
    private let continuation: AsyncStream<String>.Continuation

    /// Reloads `path` for an engine started on `running`, keeping `identity`.
    public init(
        path: String, running: Configuration, identity: MonitorIdentity, control: EngineControl,
        sinks: [any OutputSink], store: StateStore, logger: Logger
    ) {
        self.path = path
        self.store = store
        self.running = running
        self.identity = identity
        self.control = control
        self.sinks = sinks
        self.logger = logger
        (requests, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Asks for a reload; `reason` is logged.
    public func request(_ reason: String) { continuation.yield(reason) }

    public func run() async {
        let signals = await UnixSignalsSequence(trapping: .sighup)
        await withTaskGroup(of: Void.self) { group in
            // A child task: SIGHUP, beside the requests, until the graceful shutdown.
            group.addTask { [self] in
                for await _ in signals.cancelOnGracefulShutdown() { request("SIGHUP") }
            }
            // Reading the file and the rules (a fetch, SQLite) blocks: a thread of its own.
            for await reason in requests.cancelOnGracefulShutdown() {
                _ = try? await onDedicatedThread { [self] in reload(reason) }
            }
            group.cancelAll()
        }
    }

    /// Reads and checks the file now; returns whether the new configuration was taken.
    @discardableResult
    public func reload(_ reason: String) -> Bool {
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
                configuration: loaded, store: store, now: Timestamp(.now)!, warn: { logger.warning("\($0)") }
            ).regions
        } catch {
            logger.error("reload (\(reason)): \(error); the configuration in force stays until the file is fixed")
            return false
        }
        control.post(.reconfigure(loaded, rules: rules, settings: .resolve(loaded)))
        for sink in sinks { sink.reconfigure(loaded) }
        logger.info(
            "configuration reloaded", metadata: ["reason": "\(reason)", "beacons": "\(loaded.hierarchy.beacons.count)"])
        return true
    }
}

/// Fetches a URL `Rules.source` (or `Rules.geofences`) again when its document expires (`valid_until`, else
/// `Rules.refresh`), and hands a good new one to the engine; a failed fetch keeps the one in
/// force, said once per failure.
public struct RulesRefresher: Service {
    let source: RulesSource
    let store: StateStore
    let control: EngineControl
    let logger: Logger
    let firstExpiry: Timestamp

    public init(source: RulesSource, store: StateStore, control: EngineControl, expires: Timestamp, logger: Logger) {
        self.source = source
        self.store = store
        self.control = control
        self.logger = logger
        firstExpiry = expires
    }

    public func run() async throws {
        var expires = firstExpiry
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            let wait = max(0, Double(expires.microseconds - Timestamp(.now)!.microseconds) / 1e6)
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(wait)) }
            guard !Task.isCancelled, !Task.isShuttingDownGracefully else { return }
            // The fetch waits up to its timeout, and the kept copy is SQLite: a thread of its own.
            let (source, store, logger) = (source, store, logger)
            let loaded = try? await onDedicatedThread {
                try source.loadWarning(
                    store: store, now: Timestamp(.now)!, fetchKeptCopy: true, warn: { logger.warning("\($0)") })
            }
            guard let loaded else {
                expires = Timestamp(.now)!.adding(seconds: RulesSource.shortestRefresh)
                continue
            }
            if loaded.origin == "fetched" {
                logger.info(
                    source.kind == .beacons ? "rules fetched" : "geofences fetched",
                    metadata: ["regions": "\(loaded.regions.count)"])
                control.post(source.input(loaded.regions))
            }
            expires = loaded.expires ?? Timestamp(.now)!.adding(seconds: RulesSource.shortestRefresh)
        }
    }
}

extension Configuration {
    /// This configuration reporting as `identity` (the userid, session and address the daemon
    /// resolved at its start), so a reload keeps the topics and the session.
    public func adopting(_ identity: MonitorIdentity) -> Configuration {
        var configuration = self
        configuration.monitor.userid = identity.userid
        configuration.monitor.session = identity.session
        configuration.monitor.address = identity.address
        return configuration
    }
}
