import Foundation
import JSONText

/// An instant, in whole microseconds since the Unix epoch.
///
/// Integer microseconds keep timer arithmetic exact (an exit at last sighting + 10 s lands on the
/// microsecond, never a float step off) and order instants from every source the same way.
package struct Timestamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Microseconds since 1970-01-01T00:00:00Z.
    package var microseconds: Int64

    package init(microseconds: Int64) {
        self.microseconds = microseconds
    }

    /// The instant `seconds` after the Unix epoch, rounded to the microsecond.
    ///
    /// Returns `nil` for values that are not finite or lie outside years 0001–9999.
    package init?(secondsSinceEpoch seconds: Double) {
        guard seconds.isFinite, seconds >= Self.earliestSeconds, seconds <= Self.latestSeconds else { return nil }
        self.microseconds = Int64((seconds * 1_000_000).rounded())
    }

    /// The instant a `Date` stands for, rounded to the microsecond.
    package init?(_ date: Date) {
        self.init(secondsSinceEpoch: date.timeIntervalSince1970)
    }

    /// The instants a trace line may give: 1970-01-01 up to 2100-01-01 (docs/behaviour.md §3.3); a line outside
    /// is malformed. Checked where times come in, so that the calendar arithmetic of schedules and
    /// dwell days never meets a time it has nothing sensible to say about.
    package static let traceRange =
        Timestamp(microseconds: 0)...Timestamp(microseconds: 4_102_444_800_000_000)

    /// The instants a capture record may carry: 1900-01-01 up to 2100-01-01 (docs/behaviour.md §3.2). Phones
    /// whose clock was never set write captures dated around 1970, some of them just before it.
    package static let captureRange =
        Timestamp(microseconds: -2_208_988_800_000_000)...Timestamp(microseconds: 4_102_444_800_000_000)

    /// Seconds since the Unix epoch.
    package var secondsSinceEpoch: Double { Double(microseconds) / 1_000_000 }

    package var date: Date { Date(timeIntervalSince1970: secondsSinceEpoch) }

    package static func < (lhs: Timestamp, rhs: Timestamp) -> Bool { lhs.microseconds < rhs.microseconds }

    /// `self` moved by `seconds` (rounded to the microsecond), saturating at the ends of time
    /// rather than trapping: durations come from configuration and documents.
    package func adding(seconds: Double) -> Timestamp {
        let offset = (seconds * 1_000_000).rounded()
        guard offset.isFinite, offset > -9.2e18, offset < 9.2e18 else {
            return Timestamp(microseconds: offset.isNaN ? microseconds : (offset < 0 ? .min : .max))
        }
        let (sum, overflow) = microseconds.addingReportingOverflow(Int64(offset))
        return Timestamp(microseconds: overflow ? (offset < 0 ? .min : .max) : sum)
    }

    /// `self` moved by `microseconds`, saturating at the ends of time: the exact move a stepped
    /// clock makes (``adding(seconds:)`` rounds through a `Double`).
    package func adding(microseconds delta: Int64) -> Timestamp {
        let (sum, overflow) = microseconds.addingReportingOverflow(delta)
        return Timestamp(microseconds: overflow ? (delta < 0 ? .min : .max) : sum)
    }

    /// ISO-8601 in UTC with milliseconds, as every output carries it: `2023-11-14T22:13:20.250Z`.
    package var iso8601: String { Self.formatISO8601(microseconds) }

    package var description: String { iso8601 }

    // Year 0001 and 9999 bounds, so that formatting never sees a year it cannot write in 4 digits.
    static let earliestSeconds: Double = -62_135_596_800
    static let latestSeconds: Double = 253_402_300_799

    /// Formats without Foundation's formatters: outputs are written at event rates, and a civil-date
    /// conversion is a few integer divisions (H. Hinnant's days-from-civil inverse).
    /// Total: an instant outside years 0001–9999 is written as the nearest end of that span.
    static func formatISO8601(_ instant: Int64) -> String {
        var out = [UInt8]()
        out.reserveCapacity(24)
        appendISO8601(instant, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// ``iso8601``'s text appended to `out`.
    package func appendISO8601(to out: inout [UInt8]) { Self.appendISO8601(microseconds, to: &out) }

    static func appendISO8601(_ instant: Int64, to out: inout [UInt8]) {
        TextCursor.appending(to: &out, atMost: 24) { Timestamp(microseconds: instant).writeISO8601(to: &$0) }
    }

    /// ``iso8601``'s text (24 bytes) through `cursor`.
    package func writeISO8601(to cursor: inout TextCursor) {
        let micros = min(
            max(microseconds, Int64(Self.earliestSeconds) * 1_000_000), Int64(Self.latestSeconds) * 1_000_000 + 999_999)
        let millis = micros >= 0 ? micros / 1000 : (micros - 999) / 1000
        var days = millis >= 0 ? millis / 86_400_000 : (millis - 86_399_999) / 86_400_000
        let msOfDay = millis - days * 86_400_000
        days += 719_468
        let era = (days >= 0 ? days : days - 146_096) / 146_097
        let dayOfEra = days - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        cursor.put(year, width: 4)
        cursor.put(UInt8(ascii: "-"))
        cursor.put(month, width: 2)
        cursor.put(UInt8(ascii: "-"))
        cursor.put(day, width: 2)
        cursor.put(UInt8(ascii: "T"))
        cursor.put(msOfDay / 3_600_000, width: 2)
        cursor.put(UInt8(ascii: ":"))
        cursor.put(msOfDay / 60_000 % 60, width: 2)
        cursor.put(UInt8(ascii: ":"))
        cursor.put(msOfDay / 1000 % 60, width: 2)
        cursor.put(UInt8(ascii: "."))
        cursor.put(msOfDay % 1000, width: 3)
        cursor.put(UInt8(ascii: "Z"))
    }
}

extension Timestamp {
    /// Parses an ISO-8601 date-time that carries an offset (`Z`, `+01:00`), with or without
    /// fractional seconds. A time without an offset is ambiguous and is rejected.
    package init?(iso8601 text: String) {
        // The usual form exactly, by hand (Foundation's parser, through a `Date`, is a
        // microsecond off for some times: "2047-09-07T11:08:13.890Z" read as .890001).
        var text = text
        if let exact = text.withUTF8({ Self.quickISO8601($0) }) {
            self = exact
            return
        }
        if let date = try? Self.withFraction.parse(text) {
            self.init(date)
        } else if let date = try? Self.plain.parse(text) {
            self.init(date)
        } else {
            return nil
        }
    }

    // Made once: trace replay parses a time on every line.
    private static let withFraction = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
    private static let plain = Date.ISO8601FormatStyle()
}

extension Timestamp {
    /// `YYYY-MM-DDTHH:MM:SS`, up to six fractional digits, and `Z` or an offset `±HH:MM`, read
    /// exactly by hand; `nil` for any other form (which ``init(iso8601:)`` gives to Foundation).
    /// Also the quick path of trace lines (``TraceParser``), which takes the time's bytes as they are.
    static func quickISO8601(_ text: UnsafeBufferPointer<UInt8>) -> Timestamp? {
        guard text.count >= 20 else { return nil }
        func number(_ start: Int, _ count: Int) -> Int? {
            guard start + count <= text.count else { return nil }
            var value = 0
            for position in start..<(start + count) {
                let digit = Int(text[position]) - 48
                guard digit >= 0, digit <= 9 else { return nil }
                value = value * 10 + digit
            }
            return value
        }
        guard text[4] == UInt8(ascii: "-"), text[7] == UInt8(ascii: "-"), text[10] == UInt8(ascii: "T"),
            text[13] == UInt8(ascii: ":"), text[16] == UInt8(ascii: ":"),
            let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
            let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2),
            (1...12).contains(month), day >= 1, day <= Self.days(inMonth: month, of: year),
            hour < 24, minute < 60, second < 60
        else { return nil }
        var position = 19
        var micro = 0
        if text[position] == UInt8(ascii: ".") {
            position += 1
            var digits = 0
            while position < text.count, text[position] >= 48, text[position] <= 57 {
                digits += 1
                guard digits <= 6 else { return nil }
                micro = micro * 10 + Int(text[position] - 48)
                position += 1
            }
            guard digits >= 1 else { return nil }
            for _ in digits..<6 { micro *= 10 }
        }
        var offsetMinutes = 0
        guard position < text.count else { return nil }
        switch text[position] {
        case UInt8(ascii: "Z"):
            position += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard let hours = number(position + 1, 2), position + 3 < text.count,
                text[position + 3] == UInt8(ascii: ":"),
                let minutes = number(position + 4, 2), hours < 24, minutes < 60
            else { return nil }
            offsetMinutes = (hours * 60 + minutes) * (text[position] == UInt8(ascii: "-") ? -1 : 1)
            position += 6
        default:
            return nil
        }
        guard position == text.count else { return nil }
        // Days from 1970-01-01 of a proleptic Gregorian date (the inverse of civil-from-days).
        let y = month <= 2 ? year - 1 : year
        let era = y / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        let seconds = ((days * 24 + hour) * 60 + minute - offsetMinutes) * 60 + second
        return Timestamp(microseconds: Int64(seconds) * 1_000_000 + Int64(micro))
    }

    private static func days(inMonth month: Int, of year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}
