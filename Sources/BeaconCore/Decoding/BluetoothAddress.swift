import JSONText

/// A 48-bit Bluetooth device address.
///
/// HCI carries addresses least significant byte first; the text form is the usual most
/// significant first, upper-case, colon-separated (`0A:0B:0C:0D:0E:0F`).
package struct BluetoothAddress: Hashable, Sendable, CustomStringConvertible {
    /// The address as a 48-bit integer, most significant byte in bits 40–47.
    package var value: UInt64

    package init(value: UInt64) {
        self.value = value & 0xFFFF_FFFF_FFFF
    }

    /// Parses `AA:BB:CC:DD:EE:FF` (either case, `:` or `-` between bytes).
    package init?(_ text: String) {
        let parts = text.split(omittingEmptySubsequences: false) { $0 == ":" || $0 == "-" }
        guard parts.count == 6 else { return nil }
        var value: UInt64 = 0
        for part in parts {
            guard part.count == 2, let byte = UInt8(part, radix: 16) else { return nil }
            value = value << 8 | UInt64(byte)
        }
        self.value = value
    }

    package var description: String {
        var out = [UInt8]()
        out.reserveCapacity(17)
        appendDescription(to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// ``description`` appended to `out`.
    package func appendDescription(to out: inout [UInt8]) {
        TextCursor.appending(to: &out, atMost: 17) { writeDescription(to: &$0) }
    }

    /// ``description`` (17 bytes) through `cursor`.
    package func writeDescription(to cursor: inout TextCursor) {
        for index in stride(from: 5, through: 0, by: -1) {
            cursor.putHex(UInt8(truncatingIfNeeded: value >> (UInt64(index) * 8)))
            if index > 0 { cursor.put(UInt8(ascii: ":")) }
        }
    }

}
