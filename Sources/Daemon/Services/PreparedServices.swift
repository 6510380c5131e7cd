import Foundation
import Logging
import Persistence
import ServiceLifecycle
import Syscalls

/// What a service prepared off the pool (a daemon's or a node's): its services, and the state
/// database it opened, closed on the worker pool when the services end.
struct PreparedServices: Sendable {
    var services: [ServiceGroupConfiguration.ServiceConfiguration]
    var store: StateStore
    var statePath: String

    /// Runs the services as one group that shuts down in reverse order on SIGTERM and SIGINT, then
    /// closes the database (docs/behaviour.md §12: a clean stop leaves no -wal or -shm beside it).
    ///
    /// Inside another service (a cluster's active, ClusterService) the group takes no signals
    /// (`signals` false: the enclosing group's graceful shutdown reaches it) and shuts down
    /// gracefully, too, when `until` returns.
    func run(logger: Logger, signals: Bool = true, until: (@Sendable () async -> Void)? = nil) async throws {
        var quiet = logger
        quiet.logLevel = max(logger.logLevel, .notice)
        let group = ServiceGroup(
            configuration: .init(
                services: services, gracefulShutdownSignals: signals ? [.sigterm, .sigint] : [], logger: quiet))
        do {
            if let until {
                try await withThrowingTaskGroup(of: Bool.self) { tasks in
                    tasks.addTask {
                        try await group.run()
                        return true
                    }
                    tasks.addTask {
                        await until()
                        await group.triggerGracefulShutdown()
                        return false
                    }
                    // The group ended (the wait is cancelled), or was told to and ends now.
                    while let groupEnded = try await tasks.next() {
                        if groupEnded { tasks.cancelAll() }
                    }
                }
            } else {
                try await group.run()
            }
        } catch {
            await close(logger: logger)
            throw error
        }
        await close(logger: logger)
    }

    func close(logger: Logger) async {
        let (store, statePath) = (store, statePath)
        if let problem = try? await WorkerPool.shared.run({ store.close() }) {
            logger.warning("state database \(statePath) not closed cleanly: \(problem)")
        }
    }
}
