import BeaconCore
import JSONText

/// What one message of a presence sensor says (docs/behaviour.md §23).
package enum SensorReading: Sendable, Hashable {
    /// A motion sensor saw movement (`true`) or not; a presence sensor says someone is there or not.
    case detected(Bool)
    /// A count sensor's number of people.
    case count(Int)
    /// The sensor says it does not know (`null`, `nan`, `None`, an empty payload): it counts for
    /// nothing until it knows again.
    case unknown
}

/// Reads a sensor's payload as the usual firmwares send them (docs/presence-sensors.md):
/// zigbee2mqtt's JSON objects (`{"occupancy": true, "battery": 100}`), ESPHome's and Tasmota's
/// plain `ON`/`OFF`/numbers, JSON values, and nested JSON read through a path.
package enum SensorPayload {
    /// The outcome of one message.
    package enum Parsed: Sendable, Hashable {
        case reading(SensorReading)
        /// A JSON object without the field: zigbee2mqtt sends a device's whole state on every
        /// report (a battery level, a heartbeat), and with `cache_state: false` only what changed.
        /// The sensor is alive; its state is unchanged.
        case heartbeat
        /// Not what the kind expects, and why (said once an hour per sensor; nothing changes).
        case garbage(String)
    }

    /// The largest payload read; a longer one is garbage.
    package static let maximumBytes = 65_536
    /// The largest count taken (an LD2450 tracks 3; a people counter at a door a few hundred).
    package static let maximumCount = 10_000

    /// What `payload` says for a sensor of `kind` whose JSON objects hold the reading at `path`.
    package static func parse(_ payload: [UInt8], kind: SensorKind, path: String) -> Parsed {
        guard payload.count <= maximumBytes else { return .garbage("a payload of \(payload.count) bytes") }
        var start = payload.startIndex
        var end = payload.endIndex
        while start < end, isSpace(payload[start]) { start += 1 }
        while end > start, isSpace(payload[end - 1]) { end -= 1 }
        let trimmed = payload[start..<end]
        guard let first = trimmed.first else { return .reading(.unknown) }
        if first == UInt8(ascii: "{") || first == UInt8(ascii: "[") {
            guard let value = JSONValue.parse(trimmed) else { return .garbage("JSON that does not parse") }
            switch locate(path, in: value) {
            case .found(let field): return interpret(field, kind: kind, path: path)
            case .missing: return .heartbeat
            case .mismatch(let why): return .garbage(why)
            }
        }
        if let value = JSONValue.parse(trimmed) { return interpret(value, kind: kind, path: nil) }
        return interpret(text: String(decoding: trimmed, as: UTF8.self), kind: kind)
    }

    /// ``parse(_:kind:path:)`` of a text payload.
    package static func parse(_ payload: String, kind: SensorKind, path: String) -> Parsed {
        parse(Array(payload.utf8), kind: kind, path: path)
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    private enum Located {
        case found(JSONValue)
        case missing
        case mismatch(String)
    }

    /// The value at `path` (`a.b`, `a[0].b`, `[1]`) in `value`.
    private static func locate(_ path: String, in value: JSONValue) -> Located {
        var current = value
        for step in steps(path) {
            switch (step, current) {
            case (.key(let key), .object(let object)):
                guard let next = object[key] else { return .missing }
                current = next
            case (.index(let index), .array(let items)):
                guard index < items.count else { return .missing }
                current = items[index]
            case (.key(let key), _):
                return .mismatch(
                    "\"\(key.excerpt)\" of \(path.excerpt) is looked for in something that is not an object")
            case (.index(let index), _):
                return .mismatch("[\(index)] of \(path.excerpt) is looked for in something that is not an array")
            }
        }
        return .found(current)
    }

    private enum Step {
        case key(String)
        case index(Int)
    }

    /// `LD2410.Energy[0]` → key LD2410, key Energy, index 0. A malformed index is read as a key
    /// (the configuration checks paths: ``isValidPath(_:)``).
    private static func steps(_ path: String) -> [Step] {
        var steps: [Step] = []
        for segment in path.split(separator: ".", omittingEmptySubsequences: false) {
            var rest = Substring(segment)
            if let open = rest.firstIndex(of: "[") {
                let key = rest[..<open]
                if !key.isEmpty { steps.append(.key(String(key))) }
                rest = rest[open...]
                while rest.hasPrefix("["), let close = rest.firstIndex(of: "]"),
                    let index = Int(rest[rest.index(after: rest.startIndex)..<close]), index >= 0
                {
                    steps.append(.index(index))
                    rest = rest[rest.index(after: close)...]
                }
                if !rest.isEmpty { steps.append(.key(String(rest))) }
            } else {
                steps.append(.key(String(rest)))
            }
        }
        return steps
    }

    /// Whether `path` is a field path ``parse(_:kind:path:)`` reads as written: keys separated by
    /// dots, each with optional `[n]` indexes.
    package static func isValidPath(_ path: String) -> Bool {
        guard !path.isEmpty else { return false }
        for segment in path.split(separator: ".", omittingEmptySubsequences: false) {
            guard !segment.isEmpty else { return false }
            var rest = Substring(segment)
            if let open = rest.firstIndex(of: "[") {
                rest = rest[open...]
                while !rest.isEmpty {
                    guard rest.hasPrefix("["), let close = rest.firstIndex(of: "]"),
                        let index = Int(rest[rest.index(after: rest.startIndex)..<close]), index >= 0
                    else { return false }
                    rest = rest[rest.index(after: close)...]
                }
            } else if segment.contains("]") {
                return false
            }
        }
        return true
    }

    private static func interpret(_ value: JSONValue, kind: SensorKind, path: String?) -> Parsed {
        switch value {
        case .null: return .reading(.unknown)
        case .bool(let detected):
            guard kind != .count else { return .garbage("\(detected) where a count sensor expects a number") }
            return .reading(.detected(detected))
        case .number(let number): return interpret(number: number, kind: kind)
        case .string(let text): return interpret(text: text, kind: kind)
        case .array, .object:
            return .garbage(
                "\(path.map { "\"\($0.excerpt)\" is" } ?? "the payload is") \(value.isArray ? "an array" : "an object")"
            )
        }
    }

    /// A number: ESPHome's `nan` is "unknown"; an infinity (`1e999`) or a negative number
    /// (ESPHome 2025.7's target count of -1) is garbage for every kind; a motion or presence
    /// sensor's other numbers say whether it detects (an LD2410's energy, Tasmota's `1`/`0`).
    private static func interpret(number: Double, kind: SensorKind) -> Parsed {
        guard !number.isNaN else { return .reading(.unknown) }
        guard number.isFinite else { return .garbage("\(number < 0 ? "-" : "")infinity is not a reading") }
        guard number >= 0 else {
            return .garbage(
                "\(kind == .count ? "a negative count" : "a negative reading"), \(JSONValue.numberText(number))")
        }
        guard kind == .count else { return .reading(.detected(number != 0)) }
        guard number == number.rounded(), number <= Double(maximumCount) else {
            return .garbage("\(JSONValue.numberText(number)) is not a count of people")
        }
        return .reading(.count(Int(number)))
    }

    private static let unknownWords: Set<String> = ["", "null", "none", "nan", "unknown", "unavailable"]
    private static let trueWords: Set<String> = [
        "on", "true", "yes", "1", "occupied", "detected", "present", "motion", "active",
    ]
    private static let falseWords: Set<String> = [
        "off", "false", "no", "0", "unoccupied", "clear", "absent", "vacant", "inactive", "none_detected",
    ]

    private static func interpret(text: String, kind: SensorKind) -> Parsed {
        let word = text.trimmingSpaces.lowercased()
        if unknownWords.contains(word) { return .reading(.unknown) }
        if let number = Double(word) { return interpret(number: number, kind: kind) }
        if kind == .door, word == "closed" || word == "open" { return .reading(.detected(word == "closed")) }
        if kind != .count {
            if trueWords.contains(word) { return .reading(.detected(true)) }
            if falseWords.contains(word) { return .reading(.detected(false)) }
            return .garbage("\"\(excerpt(text))\" is neither on nor off")
        }
        return .garbage("\"\(excerpt(text))\" is not a count")
    }

    /// At most 40 characters of `text`, control characters escaped: a notice is one clean line
    /// on a terminal whatever a sensor sent (a CR, an ESC sequence).
    private static func excerpt(_ text: String) -> String {
        text.count <= 40 ? text.printable : text.prefix(40).printable + "…"
    }
}

extension JSONValue {
    fileprivate var isArray: Bool {
        if case .array = self { true } else { false }
    }
}

extension String {
    fileprivate var trimmingSpaces: Substring {
        var text = Substring(self)
        while let first = text.first, first.isWhitespace { text = text.dropFirst() }
        while let last = text.last, last.isWhitespace { text = text.dropLast() }
        return text
    }
}
