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

/// The script runner as a service: at shutdown, waiting runs get up to ``MQTTService/flushLimit``
/// to finish; the rest are dropped, and said so.
package struct ScriptService: Service {
    let sink: ScriptSink

    package init(sink: ScriptSink) { self.sink = sink }

    package func run() async {
        try? await gracefulShutdown()
        await sink.finish(within: MQTTService.flushLimit)
    }
}
