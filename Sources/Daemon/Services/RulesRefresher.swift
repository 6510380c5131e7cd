import BeaconConfiguration
import Foundation
import Logging
import BeaconCore
import Persistence
import RegionMonitor
import Rules
import Syscalls
import ServiceLifecycle
import Synchronization
import UnixSignals

/// Fetches a URL `Rules.source` (or `Rules.geofences`) again when its document expires (`valid_until`, else
/// `Rules.refresh`), and hands a good new one to the engine; a failed fetch keeps the one in
/// force, said once per failure.
package struct RulesRefresher: Service {
    let source: RulesSource
    let store: StateStore
    let control: EngineControl
    let logger: Logger
    let firstExpiry: Timestamp
    /// When documents expire, and the sleep until then.
    let timers: ShellTimers

    package init(
        source: RulesSource, store: StateStore, control: EngineControl, expires: Timestamp, logger: Logger,
        timers: ShellTimers = .shared
    ) {
        self.timers = timers
        self.source = source
        self.store = store
        self.control = control
        self.logger = logger
        firstExpiry = expires
    }

    package func run() async throws {
        var expires = firstExpiry
        let clock = timers.clock
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            let wait = max(0, Double(expires.microseconds - clock.now().microseconds) / 1e6)
            try? await cancelWhenGracefulShutdown { try await timers.sleep(for: .seconds(wait)) }
            guard !Task.isCancelled, !Task.isShuttingDownGracefully else { return }
            // The fetch waits up to its timeout, and the kept copy is SQLite: a thread of its own.
            let (source, store, logger, clock) = (source, store, logger, clock)
            let loaded = try? await WorkerPool.shared.run {
                try source.loadWarning(
                    store: store, now: clock.now(), fetchKeptCopy: true, logger: logger)
            }
            guard let loaded else {
                expires = clock.now().adding(seconds: RulesSource.shortestRefresh)
                continue
            }
            if loaded.origin == "fetched" {
                logger.info(
                    source.kind == .beacons ? "rules fetched" : "geofences fetched",
                    metadata: ["regions": "\(loaded.regions.count)"])
                control.post(source.input(loaded.regions))
            }
            expires = loaded.expires ?? clock.now().adding(seconds: RulesSource.shortestRefresh)
        }
    }
}
