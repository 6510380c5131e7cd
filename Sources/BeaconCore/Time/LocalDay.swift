import Foundation

/// A day of the week, as Ubudu spells it (`mon` … `sun`).
package enum Weekday: String, Sendable, Hashable, CaseIterable {
    case mon, tue, wed, thu, fri, sat, sun

    /// From `Calendar`'s weekday number (1 = Sunday).
    package init(calendarWeekday: Int) {
        self = [.sun, .mon, .tue, .wed, .thu, .fri, .sat][((calendarWeekday - 1) % 7 + 7) % 7]
    }
}

/// A local calendar date, `YYYY-MM-DD`.
package struct LocalDate: Sendable, Hashable, Comparable, CustomStringConvertible {
    package var year: Int
    package var month: Int
    package var day: Int

    package init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// `YYYY-MM-DD`, or `nil`.
    package init?(_ text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
            (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        self.init(year: year, month: month, day: day)
    }

    package var description: String {
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(year)-\(two(month))-\(two(day))"
    }

    package static func < (lhs: LocalDate, rhs: LocalDate) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }
}

/// One local day in a time zone: its date, weekday, midnight and length in seconds.
package struct LocalDay: Sendable {
    package let zone: TimeZone
    package let date: LocalDate
    package let weekday: Weekday
    package let midnight: Timestamp
    /// Seconds: 86400, or 82800 and 90000 on the days the clocks change.
    package let length: Int

    private static func calendar(_ zone: TimeZone) -> Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        return calendar
    }

    /// The local day `time` falls in.
    package init(containing time: Timestamp, in zone: TimeZone) {
        let calendar = Self.calendar(zone)
        let start = calendar.startOfDay(for: time.date)
        self.init(start: start, calendar: calendar)
    }

    /// Calendar arithmetic that has no answer (an instant the calendar cannot place) gives the
    /// Unix epoch's day fields rather than a trap: callers bound their times (docs/behaviour.md §3.3), and a
    /// day that slipped through must not take the daemon down.
    private init(start: Date, calendar: Calendar) {
        zone = calendar.timeZone
        let parts = calendar.dateComponents([.year, .month, .day, .weekday], from: start)
        date = LocalDate(year: parts.year ?? 1970, month: parts.month ?? 1, day: parts.day ?? 1)
        weekday = Weekday(calendarWeekday: parts.weekday ?? 5)
        midnight = Timestamp(start) ?? Timestamp(microseconds: 0)
        let following = calendar.date(byAdding: .day, value: 1, to: start).map { calendar.startOfDay(for: $0) }
        let seconds = following.map { $0.timeIntervalSince(start).rounded() } ?? 86400
        // A day is 23 to 25 hours (a few zones once moved by more; none by a day).
        length = seconds.isFinite && seconds >= 3600 && seconds <= 172_800 ? Int(seconds) : 86400
    }

    /// Whole seconds since this day's midnight (negative before it).
    package func elapsed(at time: Timestamp) -> Int {
        let (difference, overflow) = time.microseconds.subtractingReportingOverflow(midnight.microseconds)
        guard !overflow else { return time.microseconds < midnight.microseconds ? Int.min / 2 : Int.max / 2 }
        return Int(difference.floorDivided(by: 1_000_000))
    }

    package var next: LocalDay {
        let calendar = Self.calendar(zone)
        return LocalDay(start: midnight.date.addingTimeInterval(Double(length)), calendar: calendar)
    }

    package var previous: LocalDay {
        let calendar = Self.calendar(zone)
        // An hour before midnight is in the previous day, whatever its length.
        let start = calendar.startOfDay(for: midnight.date.addingTimeInterval(-3600))
        return LocalDay(start: start, calendar: calendar)
    }
}

extension Int64 {
    fileprivate func floorDivided(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}
