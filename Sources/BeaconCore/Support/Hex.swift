import Foundation
import JSONText

/// Hexadecimal text ↔ bytes.
package enum Hex {
    /// Decodes an even number of hex digits (either case). `nil` for anything else.
    package static func decode(_ text: some StringProtocol) -> [UInt8]? {
        let utf8 = text.utf8
        guard utf8.count % 2 == 0 else { return nil }
        var bytes = [UInt8]()
        bytes.reserveCapacity(utf8.count / 2)
        var high: UInt8?
        for character in utf8 {
            guard let nibble = value(of: character) else { return nil }
            if let h = high {
                bytes.append(h << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        return bytes
    }

    /// Lower-case hex digits of `bytes`.
    package static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var out = [UInt8]()
        for byte in bytes {
            out.append(HexDigits.lower[Int(byte >> 4)])
            out.append(HexDigits.lower[Int(byte & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    @inline(__always)
    static func value(of character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): character - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension UUID {
    /// `uuidString` (upper case, dashed), written here: Foundation's goes through `snprintf`,
    /// which showed in the fleet profile (every output names its region's UUID).
    package var text: String {
        var out = [UInt8]()
        out.reserveCapacity(36)
        appendText(to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// ``text`` appended to `out`.
    package func appendText(to out: inout [UInt8]) {
        TextCursor.appending(to: &out, atMost: 36) { writeText(to: &$0) }
    }

    /// ``text`` (36 bytes) through `cursor`.
    package func writeText(to cursor: inout TextCursor) {
        withUnsafeBytes(of: uuid) { bytes in
            for position in 0..<16 {
                if position == 4 || position == 6 || position == 8 || position == 10 { cursor.put(UInt8(ascii: "-")) }
                cursor.putHex(bytes[position])
            }
        }
    }
}
