import Foundation
import JSONText

/// The quick path of ``TraceParser``: the lines `simulate` and `decode` write, read straight from
/// their bytes (issue 19: the dictionary of every line, Foundation's UUID and ISO-8601 parsers
/// were nine tenths of `replay`).
///
/// It gives a record only for a line it is sure of: one object of known keys with numbers, plain
/// ASCII strings and `null`, each key once, a UUID in its 36-character form, a time in seconds or
/// `YYYY-MM-DDTHH:MM:SS[.ffffff]Z`, values within their ranges. Any other line, right or wrong,
/// goes the general way (``JSONReader`` and ``TraceParser/record(from:)``), which keeps every
/// message: both read a line the quick path takes the same (`TraceQuickPathTests`, and the
/// `trace` fuzz target compares them on every input).
extension TraceParser {
    /// The known keys' values, without an allocation per line.
    private struct Fields {
        var t, uuid, major, minor, rssi, power, address, format, hci, mode: JSONReader.FlatValue?

        /// Takes `value` for the key whose bytes are `key` in `line`; `false` for an unknown or
        /// repeated key. A key of up to eight bytes is compared as one number.
        mutating func take(_ line: UnsafeBufferPointer<UInt8>, _ key: Range<Int>, _ value: JSONReader.FlatValue) -> Bool
        {
            guard key.count <= 8 else { return false }
            var packed: UInt64 = 0
            for (shift, position) in key.enumerated() { packed |= UInt64(line[position]) << (8 * UInt64(shift)) }
            func put(_ slot: inout JSONReader.FlatValue?) -> Bool {
                guard slot == nil else { return false }
                slot = value
                return true
            }
            switch packed {
            case 0x74: return put(&t)  // "t"
            case 0x6469_7575: return put(&uuid)
            case 0x72_6f6a_616d: return put(&major)
            case 0x72_6f6e_696d: return put(&minor)
            case 0x6973_7372: return put(&rssi)
            case 0x72_6577_6f70: return put(&power)
            case 0x73_7365_7264_6461: return put(&address)
            case 0x7461_6d72_6f66: return put(&format)
            case 0x69_6368: return put(&hci)
            case 0x6564_6f6d: return put(&mode)
            default: return false
            }
        }
    }

    /// The line's record by the general way alone, `nil` for any error: what the quick path must
    /// agree with (tests and the fuzz target compare the two).
    package static func generalRecord(_ line: some Collection<UInt8>) -> (Timestamp, TraceRecord)? {
        guard let fields = JSONReader.object(line), case .success(let parsed) = record(from: fields) else { return nil }
        return parsed
    }

    /// The line's record by the quick path; `nil` when it is not a line the quick path is sure of.
    package static func quickRecord(_ line: UnsafeBufferPointer<UInt8>) -> (Timestamp, TraceRecord)? {
        var fields = Fields()
        guard JSONReader.flatObject(line, { fields.take(line, $0, $1) }) else { return nil }
        func string(_ range: Range<Int>) -> String {
            String(decoding: UnsafeBufferPointer(rebasing: line[range]), as: UTF8.self)
        }
        func integer(_ field: JSONReader.FlatValue?, _ range: ClosedRange<Int>) -> Int? {
            guard case .number(let number)? = field else { return nil }
            return JSONValue.number(number).integer(in: range)
        }

        let time: Timestamp
        switch fields.t {
        case .number(let seconds)?:
            guard let t = Timestamp(secondsSinceEpoch: seconds) else { return nil }
            time = t
        case .text(let range)?:
            guard let t = Timestamp.quickISO8601(UnsafeBufferPointer(rebasing: line[range])) else { return nil }
            time = t
        default: return nil
        }
        guard Timestamp.traceRange.contains(time) else { return nil }

        let kinds = (fields.uuid != nil ? 1 : 0) + (fields.hci != nil ? 1 : 0) + (fields.mode != nil ? 1 : 0)
        guard kinds == 1 else { return nil }
        if fields.uuid != nil {
            guard case .text(let text)? = fields.uuid,
                let uuid = UUID.quick(UnsafeBufferPointer(rebasing: line[text])),
                let major = integer(fields.major, 0...65535), let minor = integer(fields.minor, 0...65535),
                let rssi = integer(fields.rssi, -128...126)
            else { return nil }
            var power = Int(defaultPower)
            switch fields.power {
            case nil, .null?: break
            case .number?:
                guard let p = integer(fields.power, -128...127) else { return nil }
                power = p
            case .text?: return nil
            }
            var address: BluetoothAddress?
            switch fields.address {
            case nil, .null?: break
            case .text(let text)?:
                guard let parsed = BluetoothAddress(string(text))
                else { return nil }
                address = parsed
            case .number?: return nil
            }
            var format = BeaconFormat.ibeacon
            switch fields.format {
            case nil, .null?: break
            case .text(let text)?:
                if Self.same(line, text, "ibeacon") {
                    format = .ibeacon
                } else if Self.same(line, text, "altbeacon") {
                    format = .altbeacon
                } else {
                    return nil
                }
            case .number?: return nil
            }
            let beacon = BeaconID(uuid: uuid, major: UInt16(major), minor: UInt16(minor))
            return (
                time,
                .sighting(
                    Advertisement(
                        format: format, beacon: beacon, power: Int8(power), rssi: Int8(rssi), address: address))
            )
        } else if fields.hci != nil {
            guard case .text(let text)? = fields.hci,
                let bytes = Hex.decode(string(text)),
                bytes.count >= 2
            else { return nil }
            return (time, .hci(bytes))
        } else {
            guard case .text(let text)? = fields.mode,
                let mode = RangingMode(rawValue: string(text))
            else { return nil }
            return (time, .mode(mode))
        }
    }

    /// Whether the bytes of `line` at `range` are `name`.
    private static func same(_ line: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ name: StaticString) -> Bool {
        let count = name.utf8CodeUnitCount
        guard range.count == count else { return false }
        let text = name.utf8Start
        for offset in 0..<count where line[range.lowerBound + offset] != text[offset] { return false }
        return true
    }

}

extension UUID {
    /// The canonical 36-character form (`8-4-4-4-12` hexadecimal digits, either case), as
    /// `UUID(uuidString:)` reads it; `nil` for anything else.
    static func quick(_ text: UnsafeBufferPointer<UInt8>) -> UUID? {
        guard text.count == 36 else { return nil }
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let complete = withUnsafeMutableBytes(of: &bytes) { out -> Bool in
            var position = 0
            for index in 0..<16 {
                if index == 4 || index == 6 || index == 8 || index == 10 {
                    guard text[position] == UInt8(ascii: "-") else { return false }
                    position += 1
                }
                guard let high = Hex.value(of: text[position]), let low = Hex.value(of: text[position + 1]) else {
                    return false
                }
                out[index] = high << 4 | low
                position += 2
            }
            return true
        }
        return complete ? UUID(uuid: bytes) : nil
    }
}
