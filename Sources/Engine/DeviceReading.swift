import BeaconCore
import RegionMonitor
import Rules

/// What one device's engine knows now, read for a person (the web view and its API, docs/behaviour.md §16):
/// the monitor's reading, alerts, rule counts, pending latches, the day's notifications, dwell.
package struct DeviceReading: Sendable, Hashable {
    package var monitor: MonitorReading
    /// Each alerted beacon's status, by Location ID.
    package var alerts: [String: AlertStatus]
    /// Accepted events per rule (docs/behaviour.md §7.3), by region and rule id.
    package var ruleCounts: [RuleKey: Int]
    package var latches: [PendingLatch]
    /// Notifications sent on the engine's local day (the `Rules.maxNotificationsPerDay` count).
    package var notificationsToday: Int
    /// Seconds inside today per canonical region: finished visits plus the current one.
    package var dwellToday: [String: Double]
    /// The labels (name, else id) of the geofences inside, in document order; `nil` without
    /// geofences (docs/behaviour.md §17).
    package var geofences: [String]?

    package init(
        monitor: MonitorReading, alerts: [String: AlertStatus] = [:], ruleCounts: [RuleKey: Int] = [:],
        latches: [PendingLatch] = [], notificationsToday: Int = 0, dwellToday: [String: Double] = [:],
        geofences: [String]? = nil
    ) {
        self.geofences = geofences
        self.monitor = monitor
        self.alerts = alerts
        self.ruleCounts = ruleCounts
        self.latches = latches
        self.notificationsToday = notificationsToday
        self.dwellToday = dwellToday
    }
}

extension Engine {
    /// The engine now, read without changing it.
    package var reading: DeviceReading {
        let monitor = monitor.reading
        let now = monitor.time
        var dwellToday: [String: Double] = [:]
        for presence in monitor.inside where presence.region.kind != .beacon {
            let current = Double(max(0, now.microseconds &- presence.since.microseconds)) / 1_000_000
            dwellToday[presence.region.description] = dwell.today(presence.region, at: now) + current
        }
        let date = LocalDay(containing: now, in: dwell.timeZone).date.description
        for (key, seconds) in dwell.totals where key.date == date && dwellToday[key.region] == nil {
            dwellToday[key.region] = seconds
        }
        return DeviceReading(
            monitor: monitor, alerts: alerts?.statuses ?? [:],
            ruleCounts: rules?.state.rules.mapValues(\.count) ?? [:], latches: rules?.pendingLatches ?? [],
            notificationsToday: rules?.notificationCount(at: now) ?? 0, dwellToday: dwellToday,
            geofences: geofences?.insideLabels)
    }
}
