import Foundation
import JSONText

/// Foreground ranges continuously; background ranges in windows after transitions (docs/behaviour.md §6).
package enum RangingMode: String, Sendable, Hashable, CaseIterable {
    case foreground
    case background
}

/// A command carried by a trace line, as if it had arrived over MQTT (`{"command": "alert/done",
/// "id": "17081"}`): its name and its other fields as text.
package struct TraceCommand: Sendable, Hashable {
    package var name: String
    package var arguments: [String: String]

    package init(name: String, arguments: [String: String] = [:]) {
        self.name = name
        self.arguments = arguments
    }
}

/// What one trace line says (docs/behaviour.md §3.3).
package enum TraceRecord: Sendable, Hashable {
    /// A sighting written out field by field.
    case sighting(Advertisement)
    /// A raw HCI event, from the event code on; it goes through the same decoder as live events.
    case hci([UInt8])
    /// Switch between foreground and background ranging.
    case mode(RangingMode)
    /// A command, as if received over MQTT.
    case command(TraceCommand)
    /// A position fix (`{"t", "lat", "lng", "acc"}`, docs/behaviour.md §17).
    case position(Position)
    /// A fixed scanner heard a tag (`{"t", "scanner", "tag", "rssi", "power"}`, docs/behaviour.md §19).
    case report(ScannerReport)
    /// Train, stop or forget a room (`{"t", "learn": {"device", "room", "seconds"}}`, docs/behaviour.md §22).
    case learn(LearnCommand)
    /// A presence sensor's message (`{"t", "sensor": "<id>", "payload": <as received>}`,
    /// docs/behaviour.md §23), or its firmware's status (`{"t", "sensor", "status": "offline"}`).
    case sensor(SensorMessage)
}

/// A presence sensor's message (docs/behaviour.md §23): the sensor's `Sensor.<id>` id and the
/// payload as received (a trace line's JSON value other than a string is its JSON text).
package struct SensorMessage: Sendable, Hashable {
    package var sensor: String
    package var payload: [UInt8]
    /// The message came on the sensor's status topic (its firmware's `online`/`offline`), not
    /// its state topic.
    package var status: Bool

    package init(sensor: String, payload: [UInt8], status: Bool = false) {
        self.sensor = sensor
        self.payload = payload
        self.status = status
    }

    /// The trace line that feeds this message in a replay: the payload as its JSON value when it
    /// is JSON, else as a string.
    package func traceLine(at time: Timestamp) -> String {
        var object = JSONObjectWriter()
        object.add("t", time.iso8601)
        object.add("sensor", sensor)
        let key = status ? "status" : "payload"
        if let value = JSONValue.parse(payload) {
            object.add(key, rawJSON: value.jsonText)
        } else {
            object.add(key, String(decoding: payload, as: UTF8.self))
        }
        return object.text
    }
}

/// Which `Scanners.*` filter a report came through (docs/behaviour.md §19).
package enum ScannerSource: String, Sendable, Hashable, CaseIterable {
    case espresense, theengs, forward
}

/// "Scanner S heard tag T at RSSI r" (docs/behaviour.md §19): from a trace line, an ESPresense node, a
/// gateway or a `forward` node placed as a scanner. The tag is named as its source names it
/// (an identity such as `ibeacon:UUID:major:minor`, `mac:…`, an ESPresense id, or a `Tag.<id>`
/// id); the fleet resolves it.
package struct ScannerReport: Sendable, Hashable {
    package var scanner: String
    package var tag: String
    /// dBm; a node's filtered estimate may be fractional.
    package var rssi: Double
    /// The tag's measured power at 1 m when the report says (an iBeacon's, ESPresense's `rssi@1m`).
    package var power: Int8?
    /// The advertiser's address when the report says (a private one resolves by IRK).
    package var address: BluetoothAddress?
    /// The `Scanners.*` source it came through (a trace line's `"via"`); `nil` for a trace line
    /// without one and the daemon's own radio.
    package var via: ScannerSource?

    package init(
        scanner: String, tag: String, rssi: Double, power: Int8? = nil, address: BluetoothAddress? = nil,
        via: ScannerSource? = nil
    ) {
        self.scanner = scanner
        self.tag = tag
        self.rssi = rssi
        self.power = power
        self.address = address
        self.via = via
    }

    /// Whether `text` can name a scanner or a tag: 1 to 128 printable ASCII characters.
    package static func isValidName(_ text: String) -> Bool {
        (1...128).contains(text.utf8.count) && text.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }
}

/// Parses the JSON-lines trace format one line at a time, checking time order (docs/behaviour.md §3.3).
///
/// Pure: the caller reads the lines and decides what a bad line does (stop with status 2, or skip
/// and count it with `--skip-bad-lines`). A rejected line does not move the time-order check.
package struct TraceParser {
    /// The default measured power of a sighting line without `power`.
    package static let defaultPower: Int8 = -59
    /// The longest line read, in bytes (docs/behaviour.md §3.3); a longer one is malformed.
    package static let maximumLineLength = 1 << 16

    /// The message for a line longer than ``maximumLineLength``.
    package static let overlongLine = TraceLineError(
        "the line is longer than 64 KiB; a trace line is one short JSON object: split or fix the line")

    private var lastTime: Timestamp?
    private var lastTimeLine = 0

    package init() {}

    /// Parses line `number` (1-based). Blank lines give `nil`; a bad line gives a message without
    /// the file and line, which the caller adds.
    package mutating func parse(_ line: some Collection<UInt8>, number: Int) -> Result<
        (Timestamp, TraceRecord)?, TraceLineError
    > {
        guard line.count <= Self.maximumLineLength else { return .failure(Self.overlongLine) }
        if let quick = line.withContiguousStorageIfAvailable({ Self.quickRecord($0) }) ?? nil {
            return ordered(quick, number: number)
        }
        if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return .success(nil) }
        guard let fields = JSONReader.object(line) else {
            return .failure(
                TraceLineError("not a JSON object; each line is one object such as {\"t\": 1700000000.0, \"uuid\": …}"))
        }
        switch Self.record(from: fields) {
        case .failure(let error):
            return .failure(error)
        case .success(let parsed):
            return ordered(parsed, number: number)
        }
    }

    /// `parsed` when it is not earlier than the last line's time (which it then becomes).
    private mutating func ordered(_ parsed: (Timestamp, TraceRecord), number: Int) -> Result<
        (Timestamp, TraceRecord)?, TraceLineError
    > {
        let time = parsed.0
        if let lastTime, time < lastTime {
            return .failure(
                TraceLineError(
                    "t \(time.iso8601) is earlier than line \(lastTimeLine)'s \(lastTime.iso8601); "
                        + "a trace must be in time order: sort it by t"
                )
            )
        }
        lastTime = time
        lastTimeLine = number
        return .success(parsed)
    }

    static func record(from fields: [String: JSONValue]) -> Result<(Timestamp, TraceRecord), TraceLineError> {
        let time: Timestamp
        switch fields["t"] {
        case .number(let seconds)?:
            guard let t = Timestamp(secondsSinceEpoch: seconds), Timestamp.traceRange.contains(t) else {
                return .failure(TraceLineError(Self.outOfRange("t \(seconds)")))
            }
            time = t
        case .string(let text)?:
            guard let t = Timestamp(iso8601: text) else {
                return .failure(
                    TraceLineError(
                        "t \"\(text.excerpt)\" is not an ISO-8601 time with an offset, such as 2023-11-14T22:13:20.25Z")
                )
            }
            guard Timestamp.traceRange.contains(t) else {
                return .failure(TraceLineError(Self.outOfRange("t \"\(text.excerpt)\"")))
            }
            time = t
        case nil:
            return .failure(TraceLineError("missing \"t\": give seconds since the Unix epoch or an ISO-8601 time"))
        default:
            return .failure(TraceLineError("\"t\" must be a number of seconds or an ISO-8601 string"))
        }
        let kinds = ["uuid", "hci", "mode", "command", "lat", "scanner", "learn", "sensor"].filter { fields[$0] != nil }
        guard kinds.count == 1, let kind = kinds.first else {
            if kinds.isEmpty {
                return .failure(
                    TraceLineError(
                        "the line has none of \"uuid\", \"hci\", \"mode\", \"command\", \"lat\", \"scanner\", \"learn\", \"sensor\"; give one"
                    )
                )
            }
            return .failure(
                TraceLineError("the line has \(kinds.map { "\"\($0)\"" }.joined(separator: " and ")); give only one"))
        }
        let record: Result<TraceRecord, TraceLineError>
        switch kind {
        case "uuid": record = sighting(from: fields)
        case "hci": record = hci(from: fields)
        case "mode": record = mode(from: fields)
        case "lat": record = position(from: fields)
        case "scanner": record = report(from: fields)
        case "learn": record = learn(from: fields)
        case "sensor": record = sensor(from: fields)
        default: record = command(from: fields)
        }
        return record.map { (time, $0) }
    }

    static func outOfRange(_ given: String) -> String {
        "\(given) is not a time from 1970-01-01 to 2100-01-01; give seconds since the Unix epoch such as 1700000000"
    }

    static func sighting(from fields: [String: JSONValue]) -> Result<TraceRecord, TraceLineError> {
        guard case .string(let text)? = fields["uuid"], let uuid = UUID(uuidString: text) else {
            return .failure(TraceLineError("\"uuid\" must be a UUID such as \"ACFD165E-C0C0-11E3-9BBE-1A514932AC01\""))
        }
        guard let major = fields["major"]?.integer(in: 0...65535) else {
            return .failure(TraceLineError("\"major\" must be an integer from 0 to 65535"))
        }
        guard let minor = fields["minor"]?.integer(in: 0...65535) else {
            return .failure(TraceLineError("\"minor\" must be an integer from 0 to 65535"))
        }
        guard let rssi = fields["rssi"]?.integer(in: -128...126) else {
            return .failure(TraceLineError("\"rssi\" must be an integer dBm from -128 to 126"))
        }
        var power = Int(defaultPower)
        if let value = fields["power"], value != .null {
            guard let p = value.integer(in: -128...127) else {
                return .failure(TraceLineError("\"power\" must be an integer dBm from -128 to 127 (or left out: -59)"))
            }
            power = p
        }
        var address: BluetoothAddress?
        if let value = fields["address"], value != .null {
            guard case .string(let text) = value, let parsed = BluetoothAddress(text) else {
                return .failure(TraceLineError("\"address\" must be a Bluetooth address such as \"0A:0B:0C:0D:0E:0F\""))
            }
            address = parsed
        }
        var format = BeaconFormat.ibeacon
        if let value = fields["format"], value != .null {
            guard case .string(let text) = value, let parsed = BeaconFormat(rawValue: text) else {
                return .failure(TraceLineError("\"format\" must be \"ibeacon\" or \"altbeacon\""))
            }
            format = parsed
        }
        let beacon = BeaconID(uuid: uuid, major: UInt16(major), minor: UInt16(minor))
        return .success(
            .sighting(
                Advertisement(format: format, beacon: beacon, power: Int8(power), rssi: Int8(rssi), address: address)
            )
        )
    }

    static func hci(from fields: [String: JSONValue]) -> Result<TraceRecord, TraceLineError> {
        guard case .string(let text)? = fields["hci"], let bytes = Hex.decode(text), bytes.count >= 2 else {
            return .failure(
                TraceLineError("\"hci\" must be an HCI event in hex from the event code on, such as \"3e2a02…\""))
        }
        return .success(.hci(bytes))
    }

    static func mode(from fields: [String: JSONValue]) -> Result<TraceRecord, TraceLineError> {
        guard case .string(let text)? = fields["mode"], let mode = RangingMode(rawValue: text) else {
            return .failure(TraceLineError("\"mode\" must be \"foreground\" or \"background\""))
        }
        return .success(.mode(mode))
    }

    static func position(from fields: [String: JSONValue]) -> Result<TraceRecord, TraceLineError> {
        guard let latitude = fields["lat"]?.number(in: -90...90) else {
            return .failure(TraceLineError("\"lat\" must be degrees north from -90 to 90"))
        }
        guard let longitude = fields["lng"]?.number(in: -180...180) else {
            return .failure(TraceLineError("\"lng\" must be degrees east from -180 to 180"))
        }
        var accuracy: Double?
        if let value = fields["acc"], value != .null {
            guard let metres = value.number(in: 0...Position.accuracyLimit) else {
                return .failure(TraceLineError("\"acc\" must be metres from 0 to 10000000 (or left out)"))
            }
            accuracy = metres
        }
        return .success(.position(Position(latitude: latitude, longitude: longitude, accuracy: accuracy)))
    }

    static func report(from fields: [String: JSONValue]) -> Result<TraceRecord, TraceLineError> {
        guard case .string(let scanner)? = fields["scanner"], ScannerReport.isValidName(scanner) else {
            return .failure(TraceLineError("\"scanner\" must be a scanner id such as \"kitchen\""))
        }
        guard case .string(let tag)? = fields["tag"], ScannerReport.isValidName(tag) else {
            return .failure(
                TraceLineError("\"tag\" must be a tag's identity such as \"ibeacon:UUID:major:minor\" or a Tag.<id> id")
            )
        }
        guard let rssi = fields["rssi"]?.number(in: -128...126) else {
            return .failure(TraceLineError("\"rssi\" must be dBm from -128 to 126"))
        }
        var power: Int8?
        if let value = fields["power"], value != .null {
            guard let p = value.integer(in: -128...127) else {
                return .failure(TraceLineError("\"power\" must be an integer dBm from -128 to 127 (or left out)"))
            }
            power = Int8(p)
        }
        var address: BluetoothAddress?
        if let value = fields["address"], value != .null {
            guard case .string(let text) = value, let parsed = BluetoothAddress(text) else {
                return .failure(TraceLineError("\"address\" must be a Bluetooth address such as \"0A:0B:0C:0D:0E:0F\""))
            }
            address = parsed
        }
        var via: ScannerSource?
        if let value = fields["via"], value != .null {
            guard case .string(let text) = value, let source = ScannerSource(rawValue: text) else {
                return .failure(
                    TraceLineError("\"via\" must be \"espresense\", \"theengs\" or \"forward\" (or left out)"))
            }
            via = source
        }
        return .success(
            .report(ScannerReport(scanner: scanner, tag: tag, rssi: rssi, power: power, address: address, via: via)))
    }

    static func learn(from fields: [String: JSONValue]) -> Result<TraceRecord, TraceLineError> {
        guard case .object(let object)? = fields["learn"] else {
            return .failure(
                TraceLineError("\"learn\" must be an object such as {\"device\": \"badge\", \"room\": \"Kitchen\"}"))
        }
        switch LearnCommand.parse(object) {
        case .success(let command): return .success(.learn(command))
        case .failure(let error): return .failure(TraceLineError(error.message))
        }
    }

    static func sensor(from fields: [String: JSONValue]) -> Result<TraceRecord, TraceLineError> {
        guard case .string(let id)? = fields["sensor"], !id.isEmpty else {
            return .failure(TraceLineError("\"sensor\" must be a sensor's id, as in its Sensor.<id> key"))
        }
        let status = fields["payload"] == nil && fields["status"] != nil
        guard let payload = fields["payload"] ?? fields["status"] else {
            return .failure(
                TraceLineError(
                    "a sensor line needs \"payload\": the message as received, such as {\"occupancy\": true} or \"ON\" (or \"status\": \"offline\")"
                )
            )
        }
        let bytes: [UInt8]
        if case .string(let text) = payload { bytes = Array(text.utf8) } else { bytes = Array(payload.jsonText.utf8) }
        return .success(.sensor(SensorMessage(sensor: id, payload: bytes, status: status)))
    }

    static func command(from fields: [String: JSONValue]) -> Result<TraceRecord, TraceLineError> {
        guard case .string(let name)? = fields["command"], !name.isEmpty else {
            return .failure(TraceLineError("\"command\" must be a command name such as \"alert/done\""))
        }
        var arguments: [String: String] = [:]
        for (key, value) in fields where key != "t" && key != "command" {
            if let text = value.argument { arguments[key] = text }
        }
        return .success(.command(TraceCommand(name: name, arguments: arguments)))
    }
}

/// Why a trace line was rejected, without the file and line (the reader knows those).
package struct TraceLineError: Error, Sendable, Hashable, CustomStringConvertible {
    package var message: String
    package init(_ message: String) { self.message = message }
    /// The message, control characters escaped (messages quote input through `excerpt`).
    package var description: String { message.printable }
}
