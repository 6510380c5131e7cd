import BeaconCore
import Foundation

/// Opening hours of one day: seconds elapsed since local midnight, `open` ≤ s < `close`. Hours
/// past 86400 run into the next day; `open == close` is closed.
package struct Hours: Sendable, Hashable {
    package var open: Int
    package var close: Int

    package init(open: Int, close: Int) {
        self.open = open
        self.close = close
    }

    package var isClosed: Bool { close <= open }

    func contains(_ seconds: Int) -> Bool { open <= seconds && seconds < close }
}

/// An opening-hours schedule (docs/behaviour.md §8): weekly hours, weekly breaks, and specific days.
///
/// Pure: the time zone is given, and the answer for an instant depends on nothing else. The time
/// of day is the *elapsed* seconds since local midnight, so on a 23- or 25-hour day the hours move
/// with the clock change.
package struct Schedule: Sendable, Hashable {
    /// `nil` or empty: every weekday open all day. Otherwise a missing weekday is closed.
    package var week: [Weekday: Hours]?
    package var breaks: [Weekday: Hours]
    package var specificDays: [LocalDate: Hours]

    package init(week: [Weekday: Hours]? = nil, breaks: [Weekday: Hours] = [:], specificDays: [LocalDate: Hours] = [:])
    {
        self.week = week
        self.breaks = breaks
        self.specificDays = specificDays
    }

    /// An absent or empty schedule: always open.
    package var isEmpty: Bool { (week ?? [:]).isEmpty && breaks.isEmpty && specificDays.isEmpty }

    /// The hours of local date `date` (of weekday `weekday`): its specific day, else its weekday's.
    func hours(of date: LocalDate, weekday: Weekday) -> Hours {
        if let specific = specificDays[date] { return specific }
        guard let week, !week.isEmpty else { return Hours(open: 0, close: 86400) }
        return week[weekday] ?? Hours(open: 0, close: 0)
    }

    /// Whether a day with these hours and this break is open `seconds` after its midnight.
    func open(_ hours: Hours, break pause: Hours?, at seconds: Int) -> Bool {
        guard hours.contains(seconds) else { return false }
        if let pause, pause.contains(seconds) { return false }
        return true
    }

    /// Whether the schedule is open at `time` in `zone`.
    package func isOpen(at time: Timestamp, in zone: TimeZone) -> Bool {
        if isEmpty { return true }
        let day = LocalDay(containing: time, in: zone)
        let elapsed = day.elapsed(at: time)
        if open(hours(of: day.date, weekday: day.weekday), break: breaks[day.weekday], at: elapsed) { return true }
        // The previous day's hours past 86400.
        let before = day.previous
        let spill = hours(of: before.date, weekday: before.weekday)
        return spill.close > 86400 && open(spill, break: breaks[before.weekday], at: elapsed + 86400)
    }

    /// The first instant after `time` at which ``isOpen(at:in:)`` changes, within `horizon`
    /// days; `nil` when it never does (an empty schedule, or one closed every day).
    package func nextChange(after time: Timestamp, in zone: TimeZone, horizon: Int = 400) -> Timestamp? {
        if isEmpty { return nil }
        let now = isOpen(at: time, in: zone)
        var day = LocalDay(containing: time, in: zone)
        for _ in 0..<horizon {
            // Every instant at which the answer may change that day, in order.
            var offsets: Set<Int> = [0]
            for hours in [hours(of: day.date, weekday: day.weekday), breaks[day.weekday]].compactMap({ $0 }) {
                offsets.insert(hours.open)
                offsets.insert(hours.close)
            }
            let before = day.previous
            for hours in [hours(of: before.date, weekday: before.weekday), breaks[before.weekday]].compactMap({ $0 }) {
                offsets.insert(hours.open - 86400)
                offsets.insert(hours.close - 86400)
            }
            for offset in offsets.sorted() where offset >= 0 && offset < day.length {
                let instant = Timestamp(microseconds: day.midnight.microseconds + Int64(offset) * 1_000_000)
                if instant > time, isOpen(at: instant, in: zone) != now { return instant }
            }
            day = day.next
        }
        return nil
    }
}
