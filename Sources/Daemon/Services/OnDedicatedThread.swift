import Foundation
import Logging
import Persistence
import ServiceLifecycle

/// Runs blocking work (file reading, a radio, stopping libmosquitto's thread) on its own thread,
/// off the cooperative pool.
public func onDedicatedThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        // Blocking work must not hold a thread of the cooperative pool.
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

/// What a service prepared off the pool (a daemon's or a node's): its services, and the state
/// database it opened, closed on a dedicated thread when the services end.
struct PreparedServices: Sendable {
    var services: [ServiceGroupConfiguration.ServiceConfiguration]
    var store: StateStore
    var statePath: String

    /// Runs the services as one group that shuts down in reverse order on SIGTERM and SIGINT, then
    /// closes the database (docs/behaviour.md §12: a clean stop leaves no -wal or -shm beside it).
    func run(logger: Logger) async throws {
        var quiet = logger
        quiet.logLevel = max(logger.logLevel, .notice)
        let group = ServiceGroup(
            configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: quiet))
        do {
            try await group.run()
        } catch {
            await close(logger: logger)
            throw error
        }
        await close(logger: logger)
    }

    func close(logger: Logger) async {
        let (store, statePath) = (store, statePath)
        if let problem = try? await onDedicatedThread({ store.close() }) {
            logger.warning("state database \(statePath) not closed cleanly: \(problem)")
        }
    }
}
