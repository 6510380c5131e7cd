import BeaconConfiguration
import Cluster
import Logging
import Persistence
import ServiceLifecycle
import Synchronization
import Syscalls
import UnixSignals

/// A daemon of a cluster (docs/behaviour.md §21, docs/failover.md): its cluster connection
/// (``ClusterLink``) for the whole run, and by turns the two roles.
///
/// - **Standby**: its database open, every step the active ships applied to it in order (a
///   snapshot when one does not apply); no input taken, no output published; the web view
///   answers `/healthz` (`standby`, healthy) and `/metrics` only.
/// - **Active**: the daemon's services, as a daemon alone runs them (they read the state the
///   standby kept, as a restart does), with every committed step shipped. When another daemon's
///   record is heard it steps down: the services stop as at SIGTERM (the sinks publish what was
///   committed) and it follows again.
///
/// SIGTERM ends whichever role runs, then the link, whose stop hands the cluster over at once.
struct ClusterService: Service {
    let link: ClusterLink
    let statePath: String
    let keepDays: Int
    let web: WebSettings?
    let logger: Logger
    let webBound: (@Sendable (Int) -> Void)?
    /// The active's services, on its database, shipping through the link.
    let prepare: @Sendable (ClusterLink) throws -> PreparedServices
    private let stopping = StopFlag()

    init(
        settings: ClusterSettings, mqtt: MQTTSettings, web: WebSettings?, statePath: String, keepDays: Int,
        logger: Logger, timers: ShellTimers, webBound: (@Sendable (Int) -> Void)?,
        prepare: @escaping @Sendable (ClusterLink) throws -> PreparedServices
    ) throws {
        link = try ClusterLink(
            settings: mqtt, name: settings.name, keepalive: settings.keepalive, member: settings.member,
            timers: timers, logger: logger)
        self.statePath = statePath
        self.keepDays = keepDays
        self.web = web
        self.logger = logger
        self.webBound = webBound
        self.prepare = prepare
    }

    /// Runs as the process's one service group, which SIGTERM and SIGINT stop gracefully.
    func runAsDaemon(logger: Logger) async throws {
        var quiet = logger
        quiet.logLevel = max(logger.logLevel, .notice)
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: self)], gracefulShutdownSignals: [.sigterm, .sigint], logger: quiet))
        try await group.run()
    }

    func run() async throws {
        logger.notice(
            "cluster \(link.topic): member \(link.member); a standby until the election says otherwise")
        let link = link
        // The database is followed before the link connects: the steps the broker kept for this
        // daemon's session while it was away come as soon as it does.
        var store: StateStore? = try await openStandbyStore()
        try link.start()
        // SIGHUP (`systemctl reload`) is taken here for the whole run, its one owner in a cluster
        // daemon: an active's reloader reads the file; a standby, which would otherwise die of
        // it, reads it when it becomes the active.
        let reloads = await UnixSignalsSequence(trapping: .sighup)
        let logger = logger
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { await link.run() }
            tasks.addTask {
                for await _ in reloads.cancelOnGracefulShutdown() where !link.requestReload("SIGHUP") {
                    logger.notice("SIGHUP: a standby reads the configuration when it becomes the active")
                }
            }
            do {
                try await withGracefulShutdownHandler {
                    while !isStopping {
                        try await standby(store)
                        store = nil
                        if isStopping { return }
                        try await active()
                    }
                } onGracefulShutdown: { [stopping] in
                    stopping.set()
                    link.poke()
                }
            } catch {
                link.stop()
                throw error
            }
            link.stop()
            tasks.cancelAll()
            try await tasks.waitForAll()
        }
    }

    private var isStopping: Bool { stopping.isSet }

    /// The database opened for following, and followed.
    ///
    /// A daemon back after it was the active publishes nothing as a standby: every output it
    /// published waited for the broker to hold its step, so it is in the new active's state; what
    /// it committed that the broker never held was never published, and the new active's state
    /// replaces it (docs/failover.md, "Outputs wait for the broker").
    private func openStandbyStore() async throws -> StateStore {
        let (path, keepDays) = (statePath, keepDays)
        let store = try await WorkerPool.shared.run { try StateStore(path: path, keepDays: keepDays) }
        link.follow(store)
        return store
    }

    /// Follows the active's state (in `opened`, or the database opened now) until this daemon is
    /// the active (or stops).
    private func standby(_ opened: StateStore?) async throws {
        let path = statePath
        let store: StateStore
        if let opened { store = opened } else { store = try await openStandbyStore() }
        let position = (try? store.position()).map { "\($0)" } ?? "position unreadable"
        logger.notice("cluster: standby, following the active's state (\(position))")
        if let web {
            let standbyWeb = StandbyWeb(settings: web, link: link, logger: logger, bound: webBound ?? { _ in })
            await standbyWeb.run { await until { $0.isActive } }
        } else {
            await until { $0.isActive }
        }
        await link.unfollow()
        if let problem = try? await WorkerPool.shared.run({ store.close() }) {
            logger.warning("state database \(path) not closed cleanly: \(problem)")
        }
    }

    /// Runs the daemon's services until another daemon is heard as the active (or it stops).
    private func active() async throws {
        let (link, prepare) = (link, prepare)
        let prepared = try await WorkerPool.shared.run { try prepare(link) }
        logger.notice("cluster: active (\(link.election.mine.map { "\($0)" } ?? "")), taking the inputs")
        try await prepared.run(logger: logger, signals: false) {
            await until { $0.role == .standby }
            if !isStopping { logger.notice("cluster: another daemon is the active; stepping down") }
        }
        await link.unserve()
    }

    /// Waits until `condition` holds of the election, or the daemon stops, or the task is cancelled.
    private func until(_ condition: @escaping @Sendable (ClusterElection) -> Bool) async {
        let stopping = stopping
        while !Task.isCancelled, !stopping.isSet {
            if await link.wait(within: .seconds(60), until: { condition($0) || stopping.isSet }) {
                return
            }
        }
    }
}

/// Set once, read from any thread.
final class StopFlag: Sendable {
    private let value = Atomic<Bool>(false)
    var isSet: Bool { value.load(ordering: .relaxed) }
    func set() { value.store(true, ordering: .relaxed) }
}
