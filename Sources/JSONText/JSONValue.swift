import Foundation

/// A JSON value, as trace lines, command payloads and rules documents hold it; `true` and `1`
/// are kept apart. Read by ``JSONReader``; `Decodable` too, for documents read with `JSONDecoder`.
package enum JSONValue: Sendable, Hashable, Decodable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    package init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// Parses a whole document (``JSONReader``).
    package static func parse(_ bytes: some Sequence<UInt8>) -> JSONValue? { JSONReader.parse(bytes) }

    /// Parses a document that must be an object, straight into its fields (``JSONReader``).
    package static func object(_ bytes: some Sequence<UInt8>) -> [String: JSONValue]? { JSONReader.object(bytes) }

    /// The document as `JSONDecoder` reads it: the reference ``JSONReader`` is held equal to
    /// (tests and the `json` fuzz target).
    package static func decodedByFoundation(_ bytes: some Sequence<UInt8>) -> JSONValue? {
        try? JSONDecoder().decode(JSONValue.self, from: Data(bytes))
    }

    package subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { object[key] } else { nil }
    }

    /// A whole number within `range`; `nil` for anything else (a string of digits included).
    package func integer(in range: ClosedRange<Int>) -> Int? {
        guard case .number(let value) = self, value.rounded() == value, value >= Double(range.lowerBound),
            value <= Double(range.upperBound)
        else { return nil }
        return Int(value)
    }

    /// A finite number within `range`.
    package func number(in range: ClosedRange<Double>) -> Double? {
        guard case .number(let value) = self, value.isFinite, range.contains(value) else { return nil }
        return value
    }

    /// The string, or `nil` for any other kind of value.
    package var string: String? {
        guard case .string(let text) = self else { return nil }
        return text
    }

    /// A number without a needless `.0`.
    package static func numberText(_ value: Double) -> String {
        value.rounded() == value && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    /// The value as a command argument: strings as they are, booleans as `true`/`false`,
    /// numbers without a needless `.0`; `nil` for null, lists and objects.
    package var argument: String? {
        switch self {
        case .string(let text): text
        case .bool(let value): value ? "true" : "false"
        case .number(let value): Self.numberText(value)
        case .null, .array, .object: nil
        }
    }
}

extension JSONValue {
    /// The value as JSON text, object keys sorted (so the same value always reads the same).
    package var jsonText: String {
        var out: [UInt8] = []
        write(to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    private func write(to out: inout [UInt8]) {
        switch self {
        case .null: out += Array("null".utf8)
        case .bool(let value): out += Array((value ? "true" : "false").utf8)
        case .number(let value): out += Array((value.isFinite ? Self.numberText(value) : "null").utf8)
        case .string(let text): JSONObjectWriter.appendString(text, to: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                item.write(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let fields):
            out.append(UInt8(ascii: "{"))
            for (index, key) in fields.keys.sorted().enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                JSONObjectWriter.appendString(key, to: &out)
                out.append(UInt8(ascii: ":"))
                fields[key]!.write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }
}
