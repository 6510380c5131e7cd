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

/// The engine's run loop as a service: it runs on its own thread until its input ends or a
/// graceful shutdown (SIGTERM, SIGINT) asks it to stop after the current event.
///
/// Run it with `.gracefullyShutdownGroup` on success and failure, so that the sinks after it
/// flush what it committed.
package struct EngineService: Service {
    let control: EngineControl
    let body: @Sendable (EngineControl) throws -> Void

    package init(control: EngineControl, body: @escaping @Sendable (EngineControl) throws -> Void) {
        self.control = control
        self.body = body
    }

    package func run() async throws {
        let control = control
        let body = body
        try await withGracefulShutdownHandler {
            // The loop blocks (file reads, the radio's poll, SQLite commits): a thread of its own.
            try await runOnThreadOfItsOwn(named: "beaconwatch engine") {
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
package func runUntilStopped<T: Sendable>(
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
package struct Handed<Value>: @unchecked Sendable {
    package let value: Value
    package init(_ value: Value) { self.value = value }
}
