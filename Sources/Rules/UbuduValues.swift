import BeaconCore
import Foundation
import JSONText

/// Why part of a rules document was rejected, in one line naming where.
package struct RulesError: Error, Sendable, Hashable, CustomStringConvertible {
    package var message: String
    package init(_ message: String) { self.message = message }
    /// The message, control characters escaped (messages quote input through `excerpt`).
    package var description: String { message.printable }

    /// The message without the leading `name: ` that names the document: for an ``InputError``,
    /// which names the file itself.
    package func detail(after name: String) -> String {
        message.hasPrefix(name + ": ") ? String(message.dropFirst(name.count + 2)) : message
    }
}

extension JSONValue {
    /// Reading the values of real Ubudu exports (docs/behaviour.md §7.1), which are untidy: numbers may come
    /// as strings, and empty strings and nulls mean "nothing".
    var isNothing: Bool {
        switch self {
        case .null: true
        case .string(let text): text.trimmingCharacters(in: .whitespaces).isEmpty
        default: false
        }
    }

    /// A whole number, given as a number or as a string; `nil` for nothing or garbage.
    var integer: Int? {
        switch self {
        case .number(let value): value.rounded() == value && abs(value) < 1e15 ? Int(value) : nil
        case .string(let text): Int(text.trimmingCharacters(in: .whitespaces))
        default: nil
        }
    }

    /// A string as it is, or a whole number written as one; `nil` for nothing.
    var text: String? {
        guard !isNothing else { return nil }
        switch self {
        case .string(let text): return text
        case .number: return integer.map(String.init)
        default: return nil
        }
    }
}

extension Optional where Wrapped == JSONValue {
    var isNothing: Bool { self?.isNothing ?? true }
}

extension Schedule {
    /// The latest second of a day's hours. docs/behaviour.md §8 says 0–90000 (25 hours), but its own
    /// conformance vectors close a Friday at 93600 (Saturday 02:00); hours may run into the next
    /// day, and no further: 48 hours.
    package static let latest = 172_800

    /// Reads a u_beacons `schedule` (docs/behaviour.md §8) the way real exports write it: `null`, `""` or `{}`
    /// is the empty (always open) schedule; `specific_days` may be null; a weekday spelled `thi`
    /// is Thursday (said through `warn`). Garbage is rejected naming `path`.
    package init(ubudu value: JSONValue?, path: String = "schedule", warn: (String) -> Void = { _ in })
        throws(RulesError)
    {
        self.init()
        if value.isNothing { return }
        guard case .object(let object)? = value else {
            throw RulesError("\(path) must be an object with week, breaks and specific_days")
        }
        if !object["week"].isNothing {
            week = try Self.days(object["week"], path: "\(path).week", warn: warn)
        }
        if !object["breaks"].isNothing {
            breaks = try Self.days(object["breaks"], path: "\(path).breaks", warn: warn)
        }
        if !object["specific_days"].isNothing {
            guard case .object(let days)? = object["specific_days"] else {
                throw RulesError("\(path).specific_days must be an object of \"YYYY-MM-DD\": {open, close}")
            }
            for (key, value) in days {
                guard let date = LocalDate(key) else {
                    throw RulesError("\(path).specific_days: \"\(key.excerpt)\" is not a date YYYY-MM-DD")
                }
                specificDays[date] = try Self.hours(value, path: "\(path).specific_days.\(key.excerpt)")
            }
        }
    }

    static func days(_ value: JSONValue?, path: String, warn: (String) -> Void) throws(RulesError) -> [Weekday: Hours] {
        guard case .object(let object)? = value else {
            throw RulesError("\(path) must be an object of weekday (mon…sun): {open, close}")
        }
        var days: [Weekday: Hours] = [:]
        for (key, value) in object {
            let name = key.lowercased()
            let day: Weekday
            if let known = Weekday(rawValue: name) {
                day = known
            } else if name == "thi" {
                warn("\(path).thi is read as thu (Thursday)")
                day = .thu
            } else {
                throw RulesError(
                    "\(path): \"\(key.excerpt)\" is not a weekday; use mon, tue, wed, thu, fri, sat or sun")
            }
            days[day] = try hours(value, path: "\(path).\(key.excerpt)")
        }
        return days
    }

    static func hours(_ value: JSONValue, path: String) throws(RulesError) -> Hours {
        guard case .object(let object) = value else { throw RulesError("\(path) must be {\"open\": s, \"close\": s}") }
        let range = 0...latest
        guard let open = object["open"]?.integer ?? (object["open"].isNothing ? 0 : nil),
            let close = object["close"]?.integer ?? (object["close"].isNothing ? 0 : nil),
            range.contains(open), range.contains(close)
        else {
            throw RulesError("\(path): open and close must be seconds after local midnight, 0 to \(latest)")
        }
        return Hours(open: open, close: close)
    }
}

/// A rule region's time zone (docs/behaviour.md §7.1): `zone` an Olson name or an ISO designator (`Z`,
/// `+02:00`, `-1000`, `+03`), with `offset` seconds as the fallback.
package enum RegionTimeZone {
    /// The zone a u_beacons `timezone` object names; `nil` when neither `zone` nor `offset` does.
    package static func resolve(_ value: JSONValue?) -> TimeZone? {
        guard case .object(let object)? = value else { return nil }
        if let name = object["zone"]?.text, let zone = zone(named: name) { return zone }
        return object["offset"]?.integer.flatMap { TimeZone(secondsFromGMT: $0) }
    }

    /// An Olson name or an ISO 8601 designator.
    package static func zone(named name: String) -> TimeZone? {
        if let seconds = designator(name) { return TimeZone(secondsFromGMT: seconds) }
        guard name.contains("/") || name == "UTC" || name == "GMT" else { return nil }
        return TimeZone(identifier: name)
    }

    /// `Z`, `±hh`, `±hhmm`, `±hh:mm` as seconds east of UTC.
    static func designator(_ text: String) -> Int? {
        if text == "Z" || text == "z" { return 0 }
        guard let sign = text.first, sign == "+" || sign == "-" else { return nil }
        let digits = text.dropFirst().filter { $0 != ":" }
        guard digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber), digits.count == 2 || digits.count == 4,
            text.dropFirst().count == digits.count || (text.count == 6 && text.dropFirst(3).first == ":")
        else { return nil }
        let hours = Int(digits.prefix(2))!
        let minutes = digits.count == 4 ? Int(digits.suffix(2))! : 0
        guard hours <= 14, minutes < 60 else { return nil }
        return (sign == "-" ? -1 : 1) * (hours * 3600 + minutes * 60)
    }
}
