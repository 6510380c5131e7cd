import BeaconCore
import JSONText

/// Why an accepted rule event did not fire (docs/behaviour.md §7.4 and 7.5): the first failing condition.
public enum RuleReason: String, Sendable, Hashable, CaseIterable {
    case dailyCap = "daily_cap"
    case beforeStart = "before_start"
    case afterEnd = "after_end"
    case scheduleClosed = "schedule_closed"
    case minEvents = "min_events"
    case maxEvents = "max_events"
    case minGroupEvents = "min_group_events"
    case maxGroupEvents = "max_group_events"
    case serverDisabled = "server_disabled"
    case serverError = "server_error"
    case declined
}

/// A `rule` output: one accepted event of a rule's trigger, and whether it fired.
public struct RuleEvaluation: Sendable, Hashable {
    /// The rule region's `id` in the rules document.
    public var region: String
    public var rule: String
    /// `on_entry` or `on_exit`.
    public var trigger: String
    public var fired: Bool
    /// Set when not fired.
    public var reason: RuleReason?
    /// What failed, for `server_error` and `declined` (a status, a timeout, an exit status).
    public var detail: String?
    /// The rule's event count, this event included.
    public var count: Int
    /// The group's count for the trigger, when the region has a group.
    public var groupCount: Int?
    /// The rule region is a geofence (docs/behaviour.md §17): the JSON says `"kind": "geofence"`.
    public var geofence = false

    public init(
        region: String, rule: String, trigger: String, fired: Bool, reason: RuleReason? = nil, detail: String? = nil,
        count: Int, groupCount: Int? = nil
    ) {
        self.region = region
        self.rule = rule
        self.trigger = trigger
        self.fired = fired
        self.reason = reason
        self.detail = detail
        self.count = count
        self.groupCount = groupCount
    }
}

/// A `server` output: the `notify_server` URL a rule would call, published instead of called
/// (`Rules.autoServerNotify = false`).
public struct ServerNotice: Sendable, Hashable {
    public var region: String
    public var rule: String
    public var url: String
    /// The rule region is a geofence (docs/behaviour.md §17).
    public var geofence = false

    public init(region: String, rule: String, url: String) {
        self.region = region
        self.rule = rule
        self.url = url
    }
}

/// A `notification` output (docs/behaviour.md §7.6): what to show the user.
public struct UserNotification: Sendable, Hashable {
    /// Who shows it: beaconwatch's own delivery (`Script.notification`, MQTT), or the
    /// application alone (`Rules.autoUserNotify = false`).
    public enum Delivery: String, Sendable, Hashable {
        case automatic, application
    }

    public var region: String
    public var rule: String
    /// The rule region's name.
    public var title: String?
    public var body: String
    public var payload: JSONValue?
    /// From `open_url`; when set, `pbk` is not.
    public var url: String?
    /// From `open_pbk`, when there is no `open_url`.
    public var pbk: String?
    public var delivery: Delivery
    /// The rule region is a geofence (docs/behaviour.md §17).
    public var geofence = false

    public init(
        region: String, rule: String, title: String?, body: String, payload: JSONValue?, url: String?, pbk: String?,
        delivery: Delivery
    ) {
        self.region = region
        self.rule = rule
        self.title = title
        self.body = body
        self.payload = payload
        self.url = url
        self.pbk = pbk
        self.delivery = delivery
    }
}
