import RegionMonitor
import Rules

/// What one step changed beyond the last reported classes (which its `location` outputs say):
/// written in the transaction of the step's outputs.
package struct StateChanges: Sendable, Hashable {
    package var rules: RuleState
    package var alerts: [String: AlertRecord]
    /// Seconds of dwell added, per region and day.
    package var dwell: [DwellKey: Double]

    package init(rules: RuleState = RuleState(), alerts: [String: AlertRecord] = [:], dwell: [DwellKey: Double] = [:]) {
        self.rules = rules
        self.alerts = alerts
        self.dwell = dwell
    }

    package var isEmpty: Bool { rules.isEmpty && alerts.isEmpty && dwell.isEmpty }

    /// Takes `other`'s entries over this one's (the later change wins); dwell additions add up.
    package mutating func merge(_ other: StateChanges) {
        rules.merge(other.rules)
        alerts.merge(other.alerts) { $1 }
        dwell.merge(other.dwell, uniquingKeysWith: +)
    }
}

/// The kept state a restart starts from.
package struct KeptState: Sendable, Hashable {
    package var classes: [String: Proximity] = [:]
    package var rules = RuleState()
    package var alerts: [String: AlertRecord] = [:]
    /// The latest kept day's dwell totals.
    package var dwell: [DwellKey: Double] = [:]
    /// Every region with kept dwell, on any day.
    package var dwellRegions: Set<String> = []
    /// The Location ID of the last reported nearest beacon; `nil` for none.
    package var nearest: String?
    /// Where the device was (a fleet device's presence and its phone's held regions, docs/behaviour.md §15):
    /// a restart goes on from it without a repeated `enter`. `nil`: start outside.
    package var presence: MonitorPresence?

    package init() {}

    /// Every instant re-expressed `delta` microseconds later (the wall clock was stepped while
    /// the daemon was stopped): presence, and when each alert resets.
    package mutating func shiftClock(by delta: Int64) {
        presence?.shiftClock(by: delta)
        for (id, record) in alerts { alerts[id]?.resetAt = record.resetAt?.adding(microseconds: delta) }
    }
}
