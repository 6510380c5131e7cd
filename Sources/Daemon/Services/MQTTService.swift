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

/// The broker connection as a service: handles the client's events (what comes in goes to the
/// sink's ``MQTTInput``), and at shutdown publishes `offline` after flushing the outbox for up to
/// ``flushLimit``.
package struct MQTTService: Service {
    /// How long a stopping daemon waits for the broker to acknowledge what is in flight (docs/behaviour.md §13).
    package static let flushLimit = Duration.seconds(5)

    let sink: MQTTSink
    let logger: Logger
    let endpoint: String

    package init(sink: MQTTSink, endpoint: String, logger: Logger) {
        self.sink = sink
        self.endpoint = endpoint
        self.logger = logger
    }

    package func run() async {
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
