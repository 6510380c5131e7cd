/// One thing a source delivers, stamped with its time: the engine's input, from files and radios
/// alike.
public enum SourceEvent: Sendable, Hashable {
    case advertisement(Timestamp, Advertisement)
    case mode(Timestamp, RangingMode)
    case command(Timestamp, TraceCommand)

    public var time: Timestamp {
        switch self {
        case .advertisement(let time, _), .mode(let time, _), .command(let time, _): time
        }
    }
}

extension Advertisement {
    /// The `decode` output line: `t`, `format`, `uuid`, `major`, `minor`, `power`, `rssi`, `address`.
    public func jsonLine(at time: Timestamp) -> String {
        var out = [UInt8]()
        out.reserveCapacity(160)
        appendJSONLine(at: time, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// ``jsonLine(at:)``'s text appended to `out`, with no allocation of its own: `decode` writes
    /// hundreds of thousands a second into one buffer. Every field but the address is ASCII that
    /// needs no escaping (a time, a format name, a UUID, numbers).
    public func appendJSONLine(at time: Timestamp, to out: inout [UInt8]) {
        JSONBytes.append(#"{"t":""#, to: &out)
        time.appendISO8601(to: &out)
        JSONBytes.append(#"","format":""#, to: &out)
        switch format {
        case .ibeacon: JSONBytes.append("ibeacon", to: &out)
        case .altbeacon: JSONBytes.append("altbeacon", to: &out)
        }
        JSONBytes.append(#"","uuid":""#, to: &out)
        beacon.uuid.appendText(to: &out)
        JSONBytes.append(#"","major":"#, to: &out)
        JSONBytes.append(Int(beacon.major), to: &out)
        JSONBytes.append(#","minor":"#, to: &out)
        JSONBytes.append(Int(beacon.minor), to: &out)
        JSONBytes.append(#","power":"#, to: &out)
        JSONBytes.append(Int(power), to: &out)
        JSONBytes.append(#","rssi":"#, to: &out)
        JSONBytes.append(Int(rssi), to: &out)
        JSONBytes.append(#","address":"#, to: &out)
        if let address {
            out.append(UInt8(ascii: "\""))
            address.appendDescription(to: &out)
            out.append(UInt8(ascii: "\""))
        } else {
            JSONBytes.append("null", to: &out)
        }
        out.append(UInt8(ascii: "}"))
    }
}

/// Pieces of JSON text appended to a byte buffer, formatted by hand as `String` would.
public enum JSONBytes {
    /// Literal text.
    @inlinable
    public static func append(_ text: StaticString, to out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// A whole number in decimal, as `String(value)` writes it.
    public static func append(_ value: Int, to out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits:
            (
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
            ) =
                (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            for index in stride(from: count - 1, through: 0, by: -1) { out.append(buffer[index]) }
        }
    }
}
