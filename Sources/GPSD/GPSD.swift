import BeaconCore
import JSONText

/// gpsd's JSON protocol, the part beaconwatch speaks (docs/behaviour.md §17): the `?WATCH` that asks for
/// reports, and the TPV reports that carry fixes. Pure: the shell owns the socket.
package enum GPSD {
    /// Sent once connected: every report, as JSON.
    package static let watch = #"?WATCH={"enable":true,"json":true};"# + "\n"

    /// The longest report line read; a longer one is garbage.
    package static let maximumLineLength = 1 << 16

    /// What one line from gpsd says.
    package enum Report: Sendable, Hashable {
        /// A TPV with a 2D or 3D fix (`mode` ≥ 2): `acc` is `eph`, else the larger of `epx`/`epy`.
        case fix(Position)
        /// A TPV without a fix (`mode` 0 or 1): nothing to do.
        case noFix
        /// Another class (VERSION, DEVICES, WATCH, SKY …): nothing to do but say so.
        case other(String)
    }

    /// Parses one line; a malformed one gives a message for one log line.
    package static func parse(_ line: some Collection<UInt8>) -> Result<Report, TraceLineError> {
        guard line.count <= maximumLineLength else { return .failure(TraceLineError("a report over 64 KiB")) }
        guard case .object(let fields)? = JSONValue.parse(line) else {
            return .failure(TraceLineError("not a JSON object; gpsd sends {\"class\": …}"))
        }
        guard case .string(let kind)? = fields["class"] else {
            return .failure(TraceLineError("no \"class\"; gpsd sends {\"class\": …}"))
        }
        guard kind == "TPV" else { return .success(.other(kind)) }
        guard let mode = fields["mode"]?.integer(in: 0...3) else {
            return .failure(TraceLineError("TPV: \"mode\" must be 0 to 3"))
        }
        guard mode >= 2 else { return .success(.noFix) }
        guard let latitude = fields["lat"]?.number(in: -90...90),
            let longitude = fields["lon"]?.number(in: -180...180)
        else {
            return .failure(TraceLineError("TPV with a fix: \"lat\" and \"lon\" must be degrees"))
        }
        let limit = 0...Position.accuracyLimit
        func metres(_ key: String) -> Double?? {
            guard let value = fields[key], value != .null else { return .some(nil) }
            return value.number(in: limit).map { .some($0) } ?? nil
        }
        guard let eph = metres("eph"), let epx = metres("epx"), let epy = metres("epy") else {
            return .failure(TraceLineError("TPV: \"eph\", \"epx\" and \"epy\" must be metres"))
        }
        var accuracy = eph
        if accuracy == nil, epx != nil || epy != nil { accuracy = max(epx ?? 0, epy ?? 0) }
        return .success(.fix(Position(latitude: latitude, longitude: longitude, accuracy: accuracy)))
    }
}

extension GPSD {
    /// Splits what arrives from gpsd into lines: bytes in, complete lines out, a line longer than
    /// ``GPSD/maximumLineLength`` given as `nil` (skipped up to its end).
    package struct LineBuffer: Sendable {
        private var pending: [UInt8] = []
        private var overlong = false

        package init() {}

        /// Appends `bytes` and calls `body` with each line they complete (without `\n` or `\r`);
        /// `nil` for one too long.
        package mutating func append(_ bytes: some Collection<UInt8>, _ body: ([UInt8]?) -> Void) {
            for byte in bytes {
                if byte == 0x0A {
                    if overlong {
                        body(nil)
                    } else {
                        if pending.last == 0x0D { pending.removeLast() }
                        body(pending)
                    }
                    pending.removeAll(keepingCapacity: true)
                    overlong = false
                } else if !overlong {
                    pending.append(byte)
                    if pending.count > GPSD.maximumLineLength {
                        overlong = true
                        pending.removeAll(keepingCapacity: false)
                    }
                }
            }
        }
    }
}
