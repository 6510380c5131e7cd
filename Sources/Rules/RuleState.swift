/// A persistent count of accepted events (docs/behaviour.md §7.3) and the fingerprint of the limits it was
/// counted under: when the limits change, the count starts again.
package struct RuleCounter: Sendable, Hashable {
    package var count: Int
    package var fingerprint: String

    package init(count: Int, fingerprint: String) {
        self.count = count
        self.fingerprint = fingerprint
    }
}

/// A rule, by its region's and its own `id`.
package struct RuleKey: Sendable, Hashable {
    package var region: String
    package var rule: String

    package init(region: String, rule: String) {
        self.region = region
        self.rule = rule
    }
}

/// A group's count is per trigger.
package struct GroupKey: Sendable, Hashable {
    package var group: String
    package var trigger: String

    package init(group: String, trigger: String) {
        self.group = group
        self.trigger = trigger
    }
}

/// The notifications of one local day (in `Monitor.timezone`), for `Rules.maxNotificationsPerDay`.
package struct DayCount: Sendable, Hashable {
    /// `YYYY-MM-DD`.
    package var date: String
    package var count: Int

    package init(date: String, count: Int) {
        self.date = date
        self.count = count
    }
}

/// What the rule engine keeps across restarts (docs/behaviour.md §12): the whole of it when restored, or what
/// one step changed, to be written with that step's outputs.
package struct RuleState: Sendable, Hashable {
    package var rules: [RuleKey: RuleCounter]
    package var groups: [GroupKey: RuleCounter]
    package var day: DayCount?

    package init(rules: [RuleKey: RuleCounter] = [:], groups: [GroupKey: RuleCounter] = [:], day: DayCount? = nil) {
        self.rules = rules
        self.groups = groups
        self.day = day
    }

    package var isEmpty: Bool { rules.isEmpty && groups.isEmpty && day == nil }
}

extension RuleState {
    /// Takes `other`'s entries over this one's: the later change wins.
    package mutating func merge(_ other: RuleState) {
        rules.merge(other.rules) { $1 }
        groups.merge(other.groups) { $1 }
        if let day = other.day { self.day = day }
    }
}
