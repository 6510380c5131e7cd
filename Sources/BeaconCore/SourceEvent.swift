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
        var object = JSONObjectWriter()
        object.add("t", time.iso8601)
        object.add("format", format.rawValue)
        object.add("uuid", beacon.uuid.text)
        object.add("major", Int(beacon.major))
        object.add("minor", Int(beacon.minor))
        object.add("power", Int(power))
        object.add("rssi", Int(rssi))
        object.add("address", address?.description)
        return object.text
    }
}
