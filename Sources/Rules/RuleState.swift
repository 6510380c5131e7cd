/// A persistent count of accepted events (docs/behaviour.md §7.3) and the fingerprint of the limits it was
/// counted under: when the limits change, the count starts again.
public struct RuleCounter: Sendable, Hashable {
    public var count: Int
    public var fingerprint: String

    public init(count: Int, fingerprint: String) {
        self.count = count
        self.fingerprint = fingerprint
    }
}

/// A rule, by its region's and its own `id`.
public struct RuleKey: Sendable, Hashable {
    public var region: String
    public var rule: String

    public init(region: String, rule: String) {
        self.region = region
        self.rule = rule
    }
}

/// A group's count is per trigger.
public struct GroupKey: Sendable, Hashable {
    public var group: String
    public var trigger: String

    public init(group: String, trigger: String) {
        self.group = group
        self.trigger = trigger
    }
}

/// The notifications of one local day (in `Monitor.timezone`), for `Rules.maxNotificationsPerDay`.
public struct DayCount: Sendable, Hashable {
    /// `YYYY-MM-DD`.
    public var date: String
    public var count: Int

    public init(date: String, count: Int) {
        self.date = date
        self.count = count
    }
}

/// What the rule engine keeps across restarts (docs/behaviour.md §12): the whole of it when restored, or what
/// one step changed, to be written with that step's outputs.
public struct RuleState: Sendable, Hashable {
    public var rules: [RuleKey: RuleCounter]
    public var groups: [GroupKey: RuleCounter]
    public var day: DayCount?

    public init(rules: [RuleKey: RuleCounter] = [:], groups: [GroupKey: RuleCounter] = [:], day: DayCount? = nil) {
        self.rules = rules
        self.groups = groups
        self.day = day
    }

    public var isEmpty: Bool { rules.isEmpty && groups.isEmpty && day == nil }
}

extension RuleState {
    /// Takes `other`'s entries over this one's: the later change wins.
    public mutating func merge(_ other: RuleState) {
        rules.merge(other.rules) { $1 }
        groups.merge(other.groups) { $1 }
        if let day = other.day { self.day = day }
    }
}
