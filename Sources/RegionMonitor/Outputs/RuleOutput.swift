import BeaconCore
import JSONText

/// Why an accepted rule event did not fire (docs/behaviour.md §7.4 and 7.5): the first failing condition.
package enum RuleReason: String, Sendable, Hashable, CaseIterable {
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
package struct RuleEvaluation: Sendable, Hashable {
    /// The rule region's `id` in the rules document.
    package var region: String
    package var rule: String
    /// `on_entry` or `on_exit`.
    package var trigger: String
    package var fired: Bool
    /// Set when not fired.
    package var reason: RuleReason?
    /// What failed, for `server_error` and `declined` (a status, a timeout, an exit status).
    package var detail: String?
    /// The rule's event count, this event included.
    package var count: Int
    /// The group's count for the trigger, when the region has a group.
    package var groupCount: Int?
    /// The rule region is a geofence (docs/behaviour.md §17): the JSON says `"kind": "geofence"`.
    package var geofence = false

    package init(
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
package struct ServerNotice: Sendable, Hashable {
    package var region: String
    package var rule: String
    package var url: String
    /// The rule region is a geofence (docs/behaviour.md §17).
    package var geofence = false

    package init(region: String, rule: String, url: String) {
        self.region = region
        self.rule = rule
        self.url = url
    }
}

/// A `notification` output (docs/behaviour.md §7.6): what to show the user.
package struct UserNotification: Sendable, Hashable {
    /// Who shows it: beaconwatch's own delivery (`Script.notification`, MQTT), or the
    /// application alone (`Rules.autoUserNotify = false`).
    package enum Delivery: String, Sendable, Hashable {
        case automatic, application
    }

    package var region: String
    package var rule: String
    /// The rule region's name.
    package var title: String?
    package var body: String
    package var payload: JSONValue?
    /// From `open_url`; when set, `pbk` is not.
    package var url: String?
    /// From `open_pbk`, when there is no `open_url`.
    package var pbk: String?
    package var delivery: Delivery
    /// The rule region is a geofence (docs/behaviour.md §17).
    package var geofence = false

    package init(
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
