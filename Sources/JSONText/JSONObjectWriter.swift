/// Writes one JSON object with its keys in the order given.
///
/// Outputs promise a field order (LocationBeaconEvent's six HSYCO fields first, `t` and `type`
/// leading every output), which `JSONEncoder` does not; this writer also skips its reflection cost
/// on the event path.
package struct JSONObjectWriter: Sendable {
    private var bytes: [UInt8] = [UInt8(ascii: "{")]
    private var empty = true

    package init() {}

    package mutating func add(_ key: String, _ value: String?) {
        self.key(key)
        if let value { Self.appendString(value, to: &bytes) } else { bytes += Self.null }
    }

    package mutating func add(_ key: String, _ value: Int?) {
        self.key(key)
        if let value { bytes += Array(String(value).utf8) } else { bytes += Self.null }
    }

    package mutating func add(_ key: String, _ value: Double?) {
        self.key(key)
        if let value, value.isFinite { bytes += Array(value.description.utf8) } else { bytes += Self.null }
    }

    package mutating func add(_ key: String, _ value: Bool?) {
        self.key(key)
        if let value { bytes += Array((value ? "true" : "false").utf8) } else { bytes += Self.null }
    }

    /// Adds a value that is already JSON text (a nested object or array written elsewhere).
    package mutating func add(_ key: String, rawJSON: String) {
        self.key(key)
        bytes += Array(rawJSON.utf8)
    }

    /// The object's text.
    package var text: String {
        var out = bytes
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }

    private static let null = Array("null".utf8)

    private mutating func key(_ key: String) {
        if !empty { bytes.append(UInt8(ascii: ",")) }
        empty = false
        Self.appendString(key, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
    }

    /// A JSON string literal: quotes, backslashes and control characters escaped.
    package static func appendString(_ string: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Most strings need no escape: copied in one go.
        if string.utf8.allSatisfy({ $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) {
            out.append(contentsOf: string.utf8)
            out.append(UInt8(ascii: "\""))
            return
        }
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0x0A: out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0..<0x20:
                out += Array("\\u00".utf8)
                out.append(HexDigits.lower[Int(byte >> 4)])
                out.append(HexDigits.lower[Int(byte & 0xF)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
