import BeaconCore
import BeaconConfiguration
import Foundation
import FuzzTargets
import Rules
import Testing

/// Every error path of the ini, trace, rules and command parsers, given input made to hurt a
/// terminal: a CR that would overwrite the `file:line:` prefix, an ESC sequence that would clear
/// the screen, and 70,000 more characters. Each message must stay one short, clean line.
@Suite struct MessageSafetyTests {
    /// Control characters, then a value far too long to quote whole.
    static let hostile = "a\r\u{1B}[2J\u{85}" + String(repeating: "x", count: 70_000)
    /// The same, as a JSON string literal.
    static let hostileJSON = #""a\r\u001b[2J\u0085"# + String(repeating: "x", count: 70_000) + "\""
    static let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"

    /// Whether `message` is one line of at most ``Message/lengthLimit`` characters with no control
    /// character, and quotes the hostile input as an escaped excerpt (when it quotes it at all).
    static func expectSafe(_ message: String, _ context: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(
            message.unicodeScalars.count <= Message.lengthLimit, "\(context): \(message.utf8.count) bytes",
            sourceLocation: sourceLocation)
        #expect(
            !message.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) },
            "\(context): \(message.prefix(200).debugDescription)", sourceLocation: sourceLocation)
        if message.contains("[2J") {
            #expect(message.contains(#"a\r\u001b[2J\u0085"#), "\(context)", sourceLocation: sourceLocation)
        }
    }

    /// One hostile line per file, beside one good beacon: every key the loader knows, every
    /// prefix, every field of a beacon and an alert, and lines that are not `key = value`.
    @Test func everyIniMessageIsOneShortCleanLine() {
        let h = Self.hostile
        var lines = Configuration.knownKeys.map { "\($0) = \(h)" }
        lines += Configuration.keyPrefixes.flatMap { ["\($0)1 = \(h)", "\($0)\(h) = 1"] }
        lines += [
            "LocationBaseBeacon.2 = \(Self.uuid),\(h),1", "LocationBaseBeacon.2 = \(Self.uuid),1,\(h)",
            "LocationBaseBeacon.2 = \(h),1,1", "LocationAlert.1 = near,\(h)", "LocationAlert.1 = \(h),<=",
            "LocationAreaName.\(h) = x", "LocationZoneName.\(h) = x", "Script.\(h) = /bin/true", h, "= \(h)",
            "\(h) = 1\n\(h) = 2", "Monitor.userid = \u{FF}\u{1B}",
        ]
        var refused = 0
        for line in lines {
            let text = "LocationBaseBeacon.1 = \(Self.uuid),1,1\n\(line)\n"
            switch Configuration.load(Array(text.utf8), path: "conf/hsyco.ini") {
            case .success(let configuration):
                for warning in configuration.warnings { Self.expectSafe(warning.description, line.excerpt) }
                if let mqtt = configuration.mqtt { Self.expectSafe(mqtt.description, line.excerpt) }
            case .failure(let errors):
                refused += 1
                for error in errors.errors { Self.expectSafe(error.description, line.excerpt) }
            }
        }
        #expect(refused > lines.count / 2, "\(refused) of \(lines.count) refused")
    }

    /// Every field of a sighting, an HCI, a mode and a command line, and lines that are no JSON.
    @Test func everyTraceMessageIsOneShortCleanLine() {
        let h = Self.hostileJSON
        let base = #""t": 1700000000, "uuid": "\#(Self.uuid)", "major": 1, "minor": 1, "rssi": -60"#
        var lines = ["t", "uuid", "major", "minor", "rssi", "power", "address", "format"].map {
            "{\(base), \"\($0)\": \(h)}".replacingOccurrences(of: "\"\($0)\": ", with: "\"\($0)\": \(h), \"_\($0)\": ")
        }
        lines += [
            #"{"t": \#(h), "uuid": "\#(Self.uuid)"}"#, #"{"t": 1700000000, "hci": \#(h)}"#,
            #"{"t": 1700000000, "mode": \#(h)}"#, #"{"t": 1700000000, "command": 5}"#,
            #"{"t": 1700000000, \#(h): 1}"#, String(Self.hostile.prefix(60_000)), "[\(h)]",
        ]
        var refused = 0
        for line in lines {
            var parser = TraceParser()
            if case .failure(let error) = parser.parse(Array(line.utf8), number: 1) {
                refused += 1
                Self.expectSafe(error.description, line.excerpt)
            }
        }
        #expect(refused == lines.count, "\(refused) of \(lines.count) refused")
    }

    /// Every field of a region, its schedule and its rules.
    @Test func everyRulesMessageIsOneShortCleanLine() {
        let h = Self.hostileJSON
        let rule = #"{"id": "11", "rule": {"trigger": "on_entry", "min_events": 1}, "action": {}}"#
        let region = #"{"id": "1", "proximity_uid": "\#(Self.uuid)", "major": 1, "rules_actions": [\#(rule)]}"#
        let replacements = [
            (#""id": "1""#, #""id": \#(h), "proximity_uid": 5"#),
            (#""proximity_uid": "\#(Self.uuid)""#, #""proximity_uid": \#(h)"#),
            (#""major": 1"#, #""major": \#(h)"#), (#""major": 1"#, #""major": 1, "start": \#(h)"#),
            (#""major": 1"#, #""major": 1, "schedule": {"week": {\#(h): {"open": 0, "close": 1}}}"#),
            (#""major": 1"#, #""major": 1, "schedule": {"specific_days": {\#(h): {"open": 0, "close": 1}}}"#),
            (#""major": 1"#, #""major": 1, "schedule": {"week": {"mon": {"open": \#(h), "close": 1}}}"#),
            (#""id": "11""#, #""id": \#(h), "rule": {"min_events": \#(h)}"#),
            (#""min_events": 1"#, #""min_events": \#(h)"#),
            (#""min_events": 1"#, #""maximum_proximity": \#(h)"#),
            (#""rules_actions": ["#, #""rules_actions": \#(h), "_": ["#),
        ]
        var documents = replacements.map { #"{"u_beacons": [\#(region.replacingOccurrences(of: $0.0, with: $0.1))]}"# }
        documents += [Self.hostile, #"{"u_beacons": \#(h)}"#, #"{"u_beacons": [\#(h)]}"#]
        var refused = 0
        for document in documents {
            if case .failure(let error) = RulesDocument.load(Array(document.utf8), name: "rules.json") {
                refused += 1
                Self.expectSafe(error.description, document.excerpt)
            }
        }
        #expect(refused == documents.count, "\(refused) of \(documents.count) refused")
    }

    /// Command names (a topic's end), mode words and alert payloads.
    @Test func everyCommandMessageIsOneShortCleanLine() {
        let h = Self.hostile
        let cases: [(String, String)] = [
            (h, ""), ("mode", String(h.prefix(4000))), ("mode", h), ("alert", String(h.prefix(4000))),
            ("alert", #"{"action": \#(Self.hostileJSON.prefix(3000))", "id": "1"}"#),
            ("alert", #"{"action": "done", "id": \#(Self.hostileJSON.prefix(3000))"}"#), ("alert", "\u{FF}"),
        ]
        for (name, payload) in cases {
            guard case .failure(let error) = DaemonCommand.parse(name: name, payload: Array(payload.utf8)) else {
                Issue.record("\(name.excerpt) \(payload.excerpt) was taken")
                continue
            }
            Self.expectSafe(error.description, "\(name.excerpt) \(payload.excerpt)")
        }
    }
}
