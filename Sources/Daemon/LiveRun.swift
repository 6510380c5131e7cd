import BeaconCore
import Configuration
import Foundation
import Persistence
import RegionMonitor
import Rules

/// Drives an ``Engine`` from a live HCI event source on a clock: the loop of `run --source hciN`.
///
/// Between events it sleeps in the source until the next deadline (at most a second), so exits
/// fire on time with no advertisement at all. The clock is injected: the real one in the daemon,
/// a scripted one in tests.
public struct LiveRun {
    public var configuration: Configuration
    public var now: () -> Timestamp
    /// The regions of `Rules.source` (``RulesSource``); `nil` without one.
    public var rules: [RuleRegion]?
    /// Carries out the rules' server calls and `Script.server` runs, each on a thread of its own;
    /// the answer comes back through the control, so sightings go on meanwhile.
    public var hook: ServerHook

    public init(configuration: Configuration, now: @escaping () -> Timestamp = { Timestamp(.now)! }) {
        self.configuration = configuration
        self.now = now
        hook = ServerHook(configuration: configuration) { _, _ in }
    }

    /// Runs until `shouldStop` or `control` says so (checked at least every second), carrying
    /// out `control`'s orders as they come. Outputs are kept in `store` before they are handed to
    /// `output`.
    public func run(
        source: HCIEventSource,
        store: StateStore,
        output: (MonitorOutput) throws -> Void,
        sinks: [any OutputSink] = [],
        control: EngineControl? = nil,
        shouldStop: () -> Bool = { false }
    ) throws {
        var engine = Engine(
            configuration: configuration,
            identity: .resolve(configuration.monitor),
            kept: try store.kept(),
            rules: rules,
            ruleSettings: .resolve(configuration)
        )
        var decoder = AdvertisingReportDecoder()
        var outputs: [MonitorOutput] = []
        func deliver() throws {
            if let control {
                for action in engine.takeActions() {
                    hook.performInBackground(action) { call, answer in control.post(.answer(answer, call: call)) }
                }
            } else {
                engine.settleActions(with: hook, into: &outputs)
            }
            try engine.deliver(&outputs, store: store, output: output, sinks: sinks)
        }
        engine.start(at: now(), into: &outputs)
        try deliver()
        while !shouldStop(), control?.isStopping != true {
            let current = now()
            engine.advance(to: current, into: &outputs)
            try deliver()
            for order in control?.take() ?? [] {
                try engine.obey(order, at: current, store: store, into: &outputs)
                try deliver()
            }
            var wait = Duration.milliseconds(control == nil ? 1000 : 200)
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
