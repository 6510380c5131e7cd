import JSONText

/// One thing a source delivers, stamped with its time: the engine's input, from files and radios
/// alike.
package enum SourceEvent: Sendable, Hashable {
    case advertisement(Timestamp, Advertisement)
    case mode(Timestamp, RangingMode)
    case command(Timestamp, TraceCommand)
    /// A position fix (a trace position line, gpsd), for geofences (docs/behaviour.md §17).
    case position(Timestamp, Position)
    /// A fixed scanner's report of a tag (docs/behaviour.md §19), for the tag's own engine.
    case report(Timestamp, ScannerReport)
    /// Train, stop or forget a room (docs/behaviour.md §22), for the table of devices.
    case learn(Timestamp, LearnCommand)
    /// A presence sensor's message (docs/behaviour.md §23), for the occupancy.
    case sensor(Timestamp, SensorMessage)

    package var time: Timestamp {
        switch self {
        case .advertisement(let time, _), .mode(let time, _), .command(let time, _), .position(let time, _),
            .report(let time, _), .learn(let time, _), .sensor(let time, _):
            time
        }
    }
}

extension Advertisement {
    /// The `decode` output line: `t`, `format`, `uuid`, `major`, `minor`, `power`, `rssi`, `address`.
    package func jsonLine(at time: Timestamp) -> String {
        var out = [UInt8]()
        out.reserveCapacity(160)
        appendJSONLine(at: time, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// ``jsonLine(at:)``'s text appended to `out` in one piece: `decode` writes hundreds of
    /// thousands a second into one buffer. Every field but the address is ASCII that needs no
    /// escaping (a time, a format name, a UUID, numbers), and the whole has at most 200 bytes.
    package func appendJSONLine(at time: Timestamp, to out: inout [UInt8]) {
        TextCursor.appending(to: &out, atMost: 200) { line in
            line.put(#"{"t":""#)
            time.writeISO8601(to: &line)
            line.put(#"","format":""#)
            switch format {
            case .ibeacon: line.put("ibeacon")
            case .altbeacon: line.put("altbeacon")
            }
            line.put(#"","uuid":""#)
            beacon.uuid.writeText(to: &line)
            line.put(#"","major":"#)
            line.put(Int(beacon.major))
            line.put(#","minor":"#)
            line.put(Int(beacon.minor))
            line.put(#","power":"#)
            line.put(Int(power))
            line.put(#","rssi":"#)
            line.put(Int(rssi))
            line.put(#","address":"#)
            if let address {
                line.put(UInt8(ascii: "\""))
                address.writeDescription(to: &line)
                line.put(UInt8(ascii: "\""))
            } else {
                line.put("null")
            }
            line.put(UInt8(ascii: "}"))
        }
    }
}
