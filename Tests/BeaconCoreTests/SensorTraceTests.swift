import BeaconCore
import JSONText
import Testing

/// docs/behaviour.md §23: a trace line `{"t", "sensor": "<id>", "payload": <as received>}` feeds
/// a presence sensor in `replay`, and ``SensorMessage/traceLine(at:)`` writes one a replay reads
/// back as the same message.
@Suite struct SensorTraceTests {
    static func parse(_ line: String) -> Result<(Timestamp, TraceRecord)?, TraceLineError> {
        var parser = TraceParser()
        return parser.parse(Array(line.utf8), number: 1)
    }

    static func message(_ line: String) throws -> (Timestamp, SensorMessage) {
        let (time, record) = try #require(try parse(line).get())
        guard case .sensor(let message) = record else {
            Issue.record("not a sensor line: \(record)")
            throw TraceLineError("not a sensor line")
        }
        return (time, message)
    }

    static func text(_ message: SensorMessage) -> String { String(decoding: message.payload, as: UTF8.self) }

    @Test func aStringPayloadIsTheMessageAsReceived() throws {
        let (time, message) = try Self.message(#"{"t": 1700000000.5, "sensor": "lab-radar", "payload": "ON"}"#)
        #expect(time == Timestamp(microseconds: 1_700_000_000_500_000))
        #expect(message == SensorMessage(sensor: "lab-radar", payload: Array("ON".utf8)))
        let (_, spaced) = try Self.message(#"{"t": 1700000000, "sensor": "s", "payload": " nan\n"}"#)
        #expect(Self.text(spaced) == " nan\n")
        let (_, empty) = try Self.message(#"{"t": 1700000000, "sensor": "s", "payload": ""}"#)
        #expect(empty.payload.isEmpty)
    }

    /// A JSON payload is written as its value in the line, and read as that value's JSON text.
    @Test func aJSONPayloadIsItsJSONText() throws {
        let (_, object) = try Self.message(
            #"{"t": "2023-11-14T22:13:20Z", "sensor": "lab-pir", "payload": {"battery": 100, "occupancy": true}}"#)
        #expect(object.sensor == "lab-pir")
        let value = try #require(JSONValue.parse(object.payload))
        #expect(value == .object(["battery": .number(100), "occupancy": .bool(true)]))
        let (_, number) = try Self.message(#"{"t": 1700000000, "sensor": "count", "payload": 3}"#)
        #expect(Self.text(number) == "3")
        let (_, null) = try Self.message(#"{"t": 1700000000, "sensor": "fp1", "payload": null}"#)
        #expect(Self.text(null) == "null")
        let (_, flag) = try Self.message(#"{"t": 1700000000, "sensor": "pir", "payload": false}"#)
        #expect(Self.text(flag) == "false")
        let (_, nested) = try Self.message(
            #"{"t": 1700000000, "sensor": "sw", "payload": {"Switch1": {"Action": "ON"}}}"#)
        #expect(JSONValue.parse(nested.payload) == .object(["Switch1": .object(["Action": .string("ON")])]))
    }

    @Test(arguments: [
        (#"{"t": 1700000000, "sensor": "pir"}"#, #"needs "payload""#),
        (#"{"t": 1700000000, "sensor": "", "payload": "ON"}"#, #""sensor" must be a sensor's id"#),
        (#"{"t": 1700000000, "sensor": 7, "payload": "ON"}"#, #""sensor" must be a sensor's id"#),
        (#"{"t": 1700000000, "sensor": "pir", "mode": "foreground", "payload": "ON"}"#, "sensor"),
        (#"{"t": 1700000000, "payload": "ON"}"#, #""sensor"; give one"#),
    ])
    func aBadSensorLineIsAnError(line: String, fragment: String) {
        guard case .failure(let error) = Self.parse(line) else {
            Issue.record("\(line) was taken")
            return
        }
        #expect(error.description.contains(fragment), "\(error)")
        #expect(!error.description.contains("\n"))
    }

    /// Payloads as docs/presence-sensors.md §6 lists them, and the awkward ones: each written as a
    /// trace line and read back is the same message, at the same instant.
    @Test(arguments: [
        "ON", "OFF", "nan", "None", "-1", "0", "3", "true", "", "  ON  ", "Online", "1.5e3x", #"he said "hi"\n"#,
        "{\"battery\":100,\"device_temperature\":24,\"illuminance\":52,\"linkquality\":87,\"occupancy\":true,\"power_outage_count\":3,\"voltage\":3005}",
        #"{"linkquality":204,"presence":null,"presence_event":"leave"}"#, #"{"Switch1":{"Action":"ON"}}"#,
        #"{"LD2410":{"Distance":[200,181,144],"Energy":[13,100]},"Time":"2024-11-09T12:52:46"}"#, "null", "[1,2]",
        "{", "\u{1B}[2J\r", "é ü 中",
    ])
    func aTraceLineReadsBackAsTheSameMessage(payload: String) throws {
        let time = Timestamp(microseconds: 1_700_000_000_250_000)
        let message = SensorMessage(sensor: "lab-sensor", payload: Array(payload.utf8))
        let line = message.traceLine(at: time)
        #expect(!line.contains("\n"), "one line: \(line)")
        let (readTime, read) = try Self.message(line)
        #expect(readTime == time)
        #expect(read == message, "\(line)")
    }

    /// A firmware's status message (docs/occupancy.md, "Liveness") is a `status` line, and reads
    /// back as one: replay equals run for a sensor going offline too.
    @Test(arguments: ["offline", "Online", #"{"state":"online"}"#])
    func aStatusMessageIsAStatusLine(payload: String) throws {
        let time = Timestamp(microseconds: 1_700_000_000_250_000)
        let message = SensorMessage(sensor: "lab-radar", payload: Array(payload.utf8), status: true)
        let line = message.traceLine(at: time)
        #expect(line.contains(#""status":"#) && !line.contains(#""payload""#), "\(line)")
        let (_, read) = try Self.message(line)
        #expect(read == message, "\(line)")
    }

    /// JSON written with other spacing, or a number in another spelling, reads back as the same
    /// value: what a sensor's reading is made of.
    @Test(arguments: [#"{ "occupancy" : true }"#, "1.0", #"  {"a":[1, 2]}"#, #""ON""#])
    func aJSONPayloadReadsBackAsTheSameValue(payload: String) throws {
        let message = SensorMessage(sensor: "s", payload: Array(payload.utf8))
        let (_, read) = try Self.message(message.traceLine(at: Timestamp(microseconds: 0)))
        let original = try #require(JSONValue.parse(message.payload))
        if case .string(let text) = original {
            #expect(Self.text(read) == text)
        } else {
            #expect(JSONValue.parse(read.payload) == original)
        }
    }

    /// Bytes that are not UTF-8 are written as text with replacement characters: the line stays
    /// valid JSON and reads back as one message.
    @Test func invalidUTF8StaysOneReadableLine() throws {
        let message = SensorMessage(sensor: "s", payload: [0x4F, 0xFF, 0x4E, 0xC3])
        let (_, read) = try Self.message(message.traceLine(at: Timestamp(microseconds: 0)))
        #expect(Self.text(read) == "O\u{FFFD}N\u{FFFD}")
    }
}
