import BeaconCore
import Configuration
import Foundation
import Persistence
import RegionMonitor

/// Drives an ``Engine`` from a live HCI event source on a clock: the loop of `run --source hciN`.
///
/// Between events it sleeps in the source until the next deadline (at most a second), so exits
/// fire on time with no advertisement at all. The clock is injected: the real one in the daemon,
/// a scripted one in tests.
public struct LiveRun {
    public var configuration: Configuration
    public var now: () -> Timestamp

    public init(configuration: Configuration, now: @escaping () -> Timestamp = { Timestamp(.now)! }) {
        self.configuration = configuration
        self.now = now
    }

    /// Runs until `shouldStop` says so (checked at least every second). Outputs are kept in
    /// `store` before they are handed to `output`.
    public func run(
        source: HCIEventSource,
        store: StateStore,
        output: (MonitorOutput) throws -> Void,
        sinks: [any OutputSink] = [],
        shouldStop: () -> Bool
    ) throws {
        var engine = Engine(
            configuration: configuration,
            identity: .resolve(configuration.monitor),
            restored: try store.lastReported()
        )
        var decoder = AdvertisingReportDecoder()
        var outputs: [MonitorOutput] = []
        func deliver() throws {
            try engine.deliver(&outputs, store: store, output: output, sinks: sinks)
        }
        engine.start(at: now(), into: &outputs)
        try deliver()
        while !shouldStop() {
            let current = now()
            engine.advance(to: current, into: &outputs)
            try deliver()
            var wait = Duration.seconds(1)
            if let due = engine.nextDeadline {
                wait = min(wait, .microseconds(max(0, due.microseconds - current.microseconds)))
            }
            guard let event = try source.nextEvent(timeout: wait) else { continue }
            let time = max(now(), current)
            decoder.decode(event: event) { engine.handle(.advertisement(time, $0), into: &outputs) }
            try deliver()
        }
    }
}
