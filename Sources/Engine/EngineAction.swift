import BeaconCore
import BeaconConfiguration
import RegionMonitor
import Rules

/// What the shell hands a running engine besides the clock: a source's events, the app's
/// commands, the answers to the engine's requests, and a new configuration or rules document.
package enum EngineInput: Sendable {
    /// One received advertisement.
    case advertisement(Advertisement)
    /// Switch between foreground and background ranging (a trace line, `B/cmd/mode`).
    case mode(RangingMode)
    /// A command as a trace states it (`alert/done`, `alert/decline`), or from `B/cmd/alert`.
    case command(TraceCommand)
    /// The answer to a ``EngineAction/request(_:)`` (a server call, a `Script.server` run).
    indirect case answer(ServerAnswer, call: Int)
    /// A configuration that was read and checked, with the regions of its `Rules.source` (`nil`
    /// without one) and the rule settings it resolves to: the engine goes on under it, carrying
    /// presence, counts and statuses over.
    /// (Boxed: a configuration is large, and every sighting's input would copy its size.)
    indirect case reconfigure(Configuration, rules: [RuleRegion]?, settings: RuleSettings)
    /// A fetched rules document replaces the one in force.
    indirect case rules([RuleRegion])
    /// A fetched geofences document (docs/behaviour.md §17) replaces the one in force.
    indirect case geofences([RuleRegion])
    /// A position fix (docs/behaviour.md §17).
    case position(Position)
    /// The device's own monitoring entered or left a region (an OwnTracks phone, docs/behaviour.md §15.1).
    case deviceTransition(Region, entered: Bool)
    /// An advertisement a phone ranged, with the class its own ranging gave (OwnTracks `prox`).
    case phoneSighting(Advertisement, proximity: Proximity)
    /// A tag's training session in a Zone for that many seconds (docs/behaviour.md §22).
    case learn(Region, seconds: Double)
    /// Ends the tag's training session now.
    case stopLearning
    /// A presence sensor's message (docs/behaviour.md §23), for the occupancy.
    case sensor(SensorMessage)
    /// Device `device` is now inside `regions` (docs/behaviour.md §23: the table of devices
    /// tells the own radio's engine, which keeps the building's occupancy).
    case occupants(device: String, regions: [Region])

    /// The input a source event stands for, and its time; `nil` for a scanner's report, which
    /// is its tag's, not the own radio's (docs/behaviour.md §19: the table of devices takes it).
    package init?(_ event: SourceEvent) {
        switch event {
        case .advertisement(_, let advertisement): self = .advertisement(advertisement)
        case .mode(_, let mode): self = .mode(mode)
        case .command(_, let command): self = .command(command)
        case .position(_, let position): self = .position(position)
        case .sensor(_, let message): self = .sensor(message)
        case .report, .learn: return nil
        }
    }
}

/// What the engine asks of its shell, in order: outputs, then the step they belong to (kept in
/// one transaction with them before anyone sees them), then requests that need the outside
/// world. The shell performs them in this order.
package enum EngineAction: Sendable {
    /// An output of docs/behaviour.md §10, in causal order.
    case output(MonitorOutput)
    /// Closes a step: keep its state changes with the outputs since the previous step, then
    /// deliver those outputs; ``EngineStep/whereabouts`` is where the user is after it.
    case persist(EngineStep)
    /// A server call or a `Script.server` run for a rule; answer with ``EngineInput/answer(_:call:)``.
    case request(RuleEngine.Action)
}

/// One step of the engine: an instant's outputs belong together, and the state after them.
package struct EngineStep: Sendable, Hashable {
    /// What the step changed beyond the last reported classes: rule counts, alert statuses, dwell.
    package var changes: StateChanges
    /// Where the user is after the step.
    package var whereabouts: Whereabouts

    package init(changes: StateChanges = StateChanges(), whereabouts: Whereabouts) {
        self.changes = changes
        self.whereabouts = whereabouts
    }
}

/// Where the user is after a step: the names (or canonical regions) of the current Area and Zone,
/// the nearest beacon, and the seconds inside today that `B/dwell/<region>` shows where the step
/// changes them other than by an exit (every kept region's at the start, the new day's after a
/// local midnight).
package struct Whereabouts: Sendable, Hashable {
    package var area: String?
    package var zone: String?
    /// The nearest beacon's Location ID; `nil` for none.
    package var nearest: String?
    /// Seconds inside today, by canonical region.
    package var dwell: [String: Double]
    /// The labels of the geofences inside (`B/geofence`, docs/behaviour.md §17); `nil` without geofences.
    package var geofences: [String]?

    package init(
        area: String?, zone: String?, nearest: String? = nil, dwell: [String: Double] = [:],
        geofences: [String]? = nil
    ) {
        self.area = area
        self.zone = zone
        self.nearest = nearest
        self.dwell = dwell
        self.geofences = geofences
    }
}

extension Array where Element == EngineAction {
    /// The outputs among the actions, in order.
    package var outputs: [MonitorOutput] {
        compactMap { if case .output(let output) = $0 { output } else { nil } }
    }
}
