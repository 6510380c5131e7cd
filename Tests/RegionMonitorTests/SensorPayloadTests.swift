import BeaconCore
import RegionMonitor
import Testing

/// A presence sensor's payload as zigbee2mqtt, ESPHome and Tasmota really publish it
/// (docs/presence-sensors.md §6, the strings verbatim), read as its kind says (docs/behaviour.md §23).
@Suite struct SensorPayloadTests {
    typealias Parsed = SensorPayload.Parsed

    static func read(_ payload: String, _ kind: SensorKind, _ path: String = "occupancy") -> Parsed {
        SensorPayload.parse(payload, kind: kind, path: path)
    }

    static func isGarbage(_ parsed: Parsed) -> Bool {
        if case .garbage = parsed { true } else { false }
    }

    // MARK: - zigbee2mqtt

    static let pir2x =
        #"{"battery":100,"device_temperature":24,"illuminance":52,"linkquality":87,"occupancy":true,"power_outage_count":3,"voltage":3005}"#
    static let pir1x =
        #"{"battery":100,"voltage":3025,"illuminance":1515,"illuminance_lux":15,"linkquality":0,"occupancy":false,"last_seen":"2020-07-16T20:33:17+01:00"}"#
    static let fp1 =
        #"{"approach_distance":"medium","linkquality":204,"monitoring_mode":"undirected","power_outage_count":1,"presence":true,"presence_event":"approach","temperature":24,"update":{"state":"idle"},"update_available":false}"#

    @Test func zigbee2mqttMessagesOfBothGenerationsAreRead() {
        #expect(Self.read(Self.pir2x, .motion) == .reading(.detected(true)))
        #expect(Self.read(Self.pir1x, .motion) == .reading(.detected(false)))
        // 1.x keys unsorted, the issue #270 and #2818 captures.
        #expect(Self.read(#"{"illuminance":126,"occupancy":true}"#, .motion) == .reading(.detected(true)))
        #expect(
            Self.read(
                #"{"occupancy":true,"tamper":false,"battery_low":false,"linkquality":78,"last_seen":"2020-01-25T10:20:47+01:00","battery":100}"#,
                .motion) == .reading(.detected(true)))
        #expect(
            Self.read(#"{"battery":100,"no_occupancy_since":60,"occupancy":false,"voltage":3005}"#, .motion)
                == .reading(.detected(false)))
        // The attribute output: `zigbee2mqtt/lab/pir/occupancy` = `true`, and `null` as the empty string.
        #expect(Self.read("true", .motion) == .reading(.detected(true)))
        #expect(Self.read("", .presence) == .reading(.unknown))
    }

    @Test func anAqaraFP1SaysPresentAndItsNullIsUnknown() {
        #expect(Self.read(Self.fp1, .presence, "presence") == .reading(.detected(true)))
        #expect(
            Self.read(#"{"linkquality":204,"presence":null,"presence_event":"leave"}"#, .presence, "presence")
                == .reading(.unknown))
    }

    /// A message without the field keeps the sensor alive and says nothing of its state: a
    /// battery report with `cache_state: false`, a Tuya radar's flood of distances, a PIR read
    /// through the wrong key.
    @Test func aMessageWithoutTheFieldIsAHeartbeat() {
        #expect(Self.read(#"{"battery":97,"linkquality":60}"#, .motion) == .heartbeat)
        #expect(
            Self.read(#"{"illuminance":40,"linkquality":120,"target_distance":1.32}"#, .presence, "presence")
                == .heartbeat)
        #expect(Self.read(Self.pir2x, .presence, "presence") == .heartbeat)
        #expect(Self.read(#"{"LD2410":{"Distance":[1,2,3]}}"#, .presence, "LD2410.Energy[0]") == .heartbeat)
        #expect(Self.read(#"{"LD2410":{"Energy":[]}}"#, .presence, "LD2410.Energy[0]") == .heartbeat)
    }

    // MARK: - ESPHome

    @Test func esphomeBinarySensorsSayOnAndOff() {
        #expect(Self.read("ON", .presence) == .reading(.detected(true)))
        #expect(Self.read("OFF", .presence) == .reading(.detected(false)))
        #expect(Self.read("ON", .motion) == .reading(.detected(true)))
        #expect(Self.read(" OFF\n", .motion) == .reading(.detected(false)))
    }

    @Test(arguments: [
        ("0", Parsed.reading(.count(0))), ("1", .reading(.count(1))), ("3", .reading(.count(3))),
        ("1.0", .reading(.count(1))), ("nan", .reading(.unknown)), ("None", .reading(.unknown)),
        // glibc's printf writes a NaN with its sign bit set as `-nan`.
        ("-nan", .reading(.unknown)),
        ("", .reading(.unknown)), ("null", .reading(.unknown)),
    ])
    func esphomeCountsAreCountsAndNanIsUnknown(payload: String, expected: Parsed) {
        #expect(Self.read(payload, .count) == expected)
    }

    @Test(arguments: ["-1", "1.5", "-0.5", "ON", "true", "Online", "3 people", "10001", "inf", "1e400"])
    func whatIsNotACountIsGarbageForACountSensor(payload: String) {
        #expect(Self.isGarbage(Self.read(payload, .count)), "\(Self.read(payload, .count))")
    }

    @Test func aNegativeCountIsGarbageAndSaysSo() {
        guard case .garbage(let why) = Self.read("-1", .count) else {
            Issue.record("-1 was taken")
            return
        }
        #expect(why.contains("negative") && why.contains("-1"), "\(why)")
        guard case .garbage(let half) = Self.read("1.5", .count) else { return }
        #expect(half.contains("1.5"), "\(half)")
    }

    // MARK: - Tasmota

    @Test func tasmotaSwitchesAreReadThroughTheirField() {
        #expect(Self.read(#"{"Switch1":{"Action":"ON"}}"#, .motion, "Switch1.Action") == .reading(.detected(true)))
        #expect(Self.read(#"{"Switch1":{"Action":"OFF"}}"#, .motion, "Switch1.Action") == .reading(.detected(false)))
        #expect(
            Self.read(#"{"Time":"2024-11-09T12:52:46","Switch1":"ON"}"#, .motion, "Switch1")
                == .reading(.detected(true)))
        #expect(
            Self.read(#"{"Time":"2024-11-09T12:52:46","Switch1":"OFF"}"#, .presence, "Switch1")
                == .reading(.detected(false)))
        // The rule recipe's `stat/<topic>/PIR1 ON` and `MOTION 1`/`0`.
        #expect(Self.read("ON", .motion, "Switch1") == .reading(.detected(true)))
        #expect(Self.read("1", .motion) == .reading(.detected(true)))
        #expect(Self.read("0", .motion) == .reading(.detected(false)))
        // The nested shape read as a whole is not a reading.
        #expect(Self.isGarbage(Self.read(#"{"Switch1":{"Action":"ON"}}"#, .motion, "Switch1")))
    }

    @Test func anLD2410sEnergiesSayWhetherItSeesSomeone() {
        let sensor =
            #"{"Time":"2024-11-09T12:52:46","LD2410":{"Distance":[200.0,181.0,144.0],"Energy":[13,100]}}"#
        #expect(Self.read(sensor, .presence, "LD2410.Energy[0]") == .reading(.detected(true)))
        #expect(Self.read(sensor, .presence, "LD2410.Energy[1]") == .reading(.detected(true)))
        #expect(
            Self.read(#"{"LD2410":{"Distance":[0,0,0],"Energy":[0,0]}}"#, .presence, "LD2410.Energy[0]")
                == .reading(.detected(false)))
        // The whole SENSOR message of a switch and an LD2410 together.
        let both =
            #"{"Time":"2024-11-09T12:52:46","Switch1":"ON","LD2410":{"Distance":[200.0,181.0,144.0],"Energy":[13,100]}}"#
        #expect(Self.read(both, .motion, "Switch1") == .reading(.detected(true)))
        #expect(Self.read(both, .count, "LD2410.Energy[0]") == .reading(.count(13)))
    }

    @Test func zigbee2TasmotaIsReadThroughItsNestedPath() {
        let message = #"{"ZbReceived":{"0x5ADF":{"Occupancy":1,"Device":"0x5ADF","LinkQuality":66}}}"#
        #expect(Self.read(message, .motion, "ZbReceived.0x5ADF.Occupancy") == .reading(.detected(true)))
        #expect(
            Self.read(#"{"ZbReceived":{"0x5ADF":{"Occupancy":0}}}"#, .motion, "ZbReceived.0x5ADF.Occupancy")
                == .reading(.detected(false)))
        // Another device's report on the same topic.
        #expect(
            Self.read(#"{"ZbReceived":{"0x1234":{"Occupancy":1}}}"#, .motion, "ZbReceived.0x5ADF.Occupancy")
                == .heartbeat)
    }

    // MARK: - Words and garbage

    @Test func theUsualWordsAreReadWhateverTheirCase() {
        for word in ["on", "On", "TRUE", "yes", "occupied", "detected", "present", "motion", "active"] {
            #expect(Self.read(word, .presence) == .reading(.detected(true)), "\(word)")
        }
        for word in ["off", "False", "no", "unoccupied", "clear", "absent", "vacant", "inactive"] {
            #expect(Self.read(word, .presence) == .reading(.detected(false)), "\(word)")
        }
        for word in ["unknown", "unavailable", "NaN", "none"] {
            #expect(Self.read(word, .presence) == .reading(.unknown), "\(word)")
        }
        // JSON strings are read as their text.
        #expect(Self.read(#""ON""#, .presence) == .reading(.detected(true)))
        #expect(Self.read(#"{"occupancy":"OFF"}"#, .presence) == .reading(.detected(false)))
    }

    /// An availability topic's text, an object where a value is expected, a path into a value
    /// that is not an object: garbage, and the reason names what was wrong.
    @Test func whatIsNeitherOnNorOffIsGarbage() {
        for payload in [
            "Online", "offline", #"{"state":"offline"}"#, "[1,2]", #"{"occupancy":[true]}"#, "{", "-1", "inf",
        ] {
            let parsed = Self.read(payload, .presence, payload == #"{"state":"offline"}"# ? "state" : "occupancy")
            #expect(Self.isGarbage(parsed), "\(payload): \(parsed)")
        }
        guard case .garbage(let why) = Self.read(#"{"occupancy":{"x":1}}"#, .motion, "occupancy.x.y") else {
            Issue.record("a path through a number was taken")
            return
        }
        #expect(why.contains("not an object"), "\(why)")
    }

    /// What a garbage reason quotes of the payload is short and has no control character: the
    /// shell logs it as one line.
    @Test func garbageQuotesThePayloadAsAShortCleanExcerpt() {
        let hostile = "a\r\u{1B}[2J" + String(repeating: "x", count: 5000)
        guard case .garbage(let why) = Self.read(hostile, .presence) else {
            Issue.record("taken")
            return
        }
        #expect(!why.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }, "\(why)")
        #expect(why.contains(#"a\r\u001b[2J"#) && why.count < 120, "\(why)")
        // A field path is quoted the same way (the configuration takes any character in a key).
        let path = "a\u{1B}[2J" + String(repeating: "k", count: 500)
        guard case .garbage(let mismatch) = SensorPayload.parse("[1]", kind: .presence, path: path) else {
            Issue.record("a path into an array was taken")
            return
        }
        #expect(!mismatch.unicodeScalars.contains { $0.value < 0x20 }, "\(mismatch)")
        #expect(mismatch.contains(#"a\u001b[2J"#) && mismatch.count < 300, "\(mismatch)")
    }

    @Test func aPayloadTooLargeIsGarbage() {
        let large = #"{"occupancy":true,"pad":""# + String(repeating: "x", count: SensorPayload.maximumBytes) + "\"}"
        #expect(Self.isGarbage(Self.read(large, .motion)))
    }

    /// Random bytes, deep JSON, huge numbers, nothing, blanks, invalid UTF-8: an outcome for
    /// each, never a crash, and a count is always a count of people.
    @Test func aSweepOfGarbageNeverCrashes() {
        var inputs: [[UInt8]] = [
            [], Array("   ".utf8), Array("\t\r\n".utf8), [0xFF, 0xFE, 0x00], [0xC3, 0x28], [0xED, 0xA0, 0x80],
            Array(String(repeating: "[", count: 100_000).utf8),
            Array((String(repeating: #"{"a":"#, count: 600) + "1" + String(repeating: "}", count: 600)).utf8),
            Array((String(repeating: "[", count: 400) + String(repeating: "]", count: 400)).utf8),
            Array("1e308".utf8), Array("1e309".utf8), Array("-1e309".utf8),
            Array("123456789012345678901234567890".utf8),
            Array(#"{"occupancy":1e400}"#.utf8), Array(#"{"occupancy":99999999999999999999}"#.utf8),
            Array("9223372036854775808".utf8), Array("0x10".utf8), Array(#"{"occupancy":-0}"#.utf8),
            Array(#"{"occupancy":true"#.utf8), Array(#"{"occupancy":true}}"#.utf8), Array("\u{0}".utf8),
            Array(#"{"occupancy":"\ud800"}"#.utf8), Array("ON\u{0}OFF".utf8),
        ]
        var generator = SeededGenerator(seed: 23)
        for length in [1, 2, 7, 64, 512, 4096] {
            for _ in 0..<50 { inputs.append((0..<length).map { _ in UInt8(truncatingIfNeeded: generator.next()) }) }
        }
        let paths = ["occupancy", "presence", "Switch1.Action", "LD2410.Energy[0]", "a[0][1].b", "[0]"]
        for input in inputs {
            for kind in SensorKind.allCases {
                for path in paths {
                    switch SensorPayload.parse(input, kind: kind, path: path) {
                    case .reading(.count(let count)):
                        #expect(kind == .count && (0...SensorPayload.maximumCount).contains(count))
                    case .reading(.detected):
                        #expect(kind != .count)
                    case .garbage(let why):
                        #expect(!why.isEmpty && why.count < 200 && !why.contains("\n"))
                    case .reading(.unknown), .heartbeat:
                        break
                    }
                }
            }
        }
    }

    @Test func fieldPathsAreCheckedAsTheConfigurationTakesThem() {
        for path in ["occupancy", "Switch1.Action", "LD2410.Energy[0]", "ZbReceived.0x5ADF.Occupancy", "a[0][12].b"] {
            #expect(SensorPayload.isValidPath(path), "\(path)")
        }
        for path in ["", ".", "a.", ".a", "a..b", "a[", "a[x]", "a[-1]", "a]", "a[0]b", "a[99999999999999999999]"] {
            #expect(!SensorPayload.isValidPath(path), "\(path)")
        }
    }
}
