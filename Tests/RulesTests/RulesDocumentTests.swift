import BeaconCore
import Foundation
import JSONText
import RegionMonitor
import Rules
import TestSupport
import Testing

/// docs/behaviour.md §7.1: reading u_beacons.json as real Ubudu servers write it.
@Suite struct RulesDocumentTests {
    static func load(_ json: String) -> Result<RulesDocument, RulesError> {
        RulesDocument.load(Array(json.utf8), name: "rules.json")
    }

    /// `ubudu/expected-model.json`, field by field.
    @Test func theExampleLoadsAsTheExpectedModel() throws {
        let bytes = try Data(contentsOf: Conformance.url("ubudu/u_beacons-example.json"))
        let document = try RulesDocument.load(bytes, name: "u_beacons-example.json").get()
        let expected = try #require(
            JSONValue.parse(try Data(contentsOf: Conformance.url("ubudu/expected-model.json"))))
        guard case .array(let regions)? = expected["regions"] else { Issue.record("no regions"); return }
        #expect(document.regions.count == regions.count)
        #expect(document.validUntil == expected["valid_until"].flatMap(Self.text).flatMap(Timestamp.init(iso8601:)))
        for (region, want) in zip(document.regions, regions) {
            #expect(region.id == Self.text(want["id"]))
            #expect(region.group == Self.text(want["group"]))
            #expect(region.name == Self.text(want["name"]))
            #expect(region.pattern == Self.text(want["pattern"]))
            guard case .beacons(let uuid, let major, let minor) = region.place else {
                Issue.record("region \(region.id) is not a beacon region")
                continue
            }
            #expect(uuid.uuidString == Self.text(want["uuid"]))
            #expect(major.map(Int.init) == Self.number(want["major"]))
            #expect(minor.map(Int.init) == Self.number(want["minor"]))
            #expect(region.start == Self.text(want["start"]).flatMap(Timestamp.init(iso8601:)))
            #expect(region.end == Self.text(want["end"]).flatMap(Timestamp.init(iso8601:)))
            #expect(region.timeZone?.identifier == Self.text(want["timezone"]))
            guard case .array(let warnings)? = want["warnings"], case .array(let rules)? = want["rules"] else {
                Issue.record("no warnings or rules")
                continue
            }
            #expect(region.warnings == warnings.compactMap(Self.text))
            #expect(region.rules.count == rules.count)
            for (rule, want) in zip(region.rules, rules) {
                #expect(rule.id == Self.text(want["id"]))
                #expect(rule.trigger == Self.text(want["trigger"]))
                #expect(rule.minEvents == Self.number(want["min_events"]) ?? 0)
                #expect(rule.maxEvents == Self.number(want["max_events"]))
                #expect(rule.minGroupEvents == Self.number(want["min_group_events"]) ?? 0)
                #expect(rule.maxGroupEvents == Self.number(want["max_group_events"]))
                #expect(rule.latchTime == Self.number(want["latch_time"]) ?? 0)
                #expect(
                    rule.maximumProximity
                        == Self.number(want["maximum_proximity"]).map { [Proximity.immediate, .near, .far][$0] })
                #expect(rule.alertBody == Self.text(want["alert_body"]))
                #expect(rule.payload == Self.nonNull(want["payload"]))
                #expect(rule.notifyServer == Self.text(want["notify_server"]))
                #expect(rule.openURL == Self.text(want["open_url"]))
                #expect(rule.openPBK == Self.text(want["open_pbk"]))
            }
        }
    }

    static func text(_ value: JSONValue?) -> String? { if case .string(let text)? = value { text } else { nil } }
    static func number(_ value: JSONValue?) -> Int? { if case .number(let n)? = value { Int(n) } else { nil } }
    static func nonNull(_ value: JSONValue?) -> JSONValue? { if case .null? = value { nil } else { value } }

    @Test func untidyExportsLoad() throws {
        let json = """
            {"u_beacons": [{"id": 7, "group_id": "", "proximity_uid": "566c5595-6ec7-4f08-909f-c954bdca6cd3",
              "major": "3", "minor": null, "start": "", "end": null, "timezone": {"zone": "+02:00", "dst": "false"},
              "schedule": "", "rules_actions": [{"id": 71, "rule": {"trigger": "on_exit", "min_events": "-1",
              "max_events": "", "latch_time": "-5", "maximum_proximity": "1"},
              "action": {"notify_user": "{\\"alertBody\\": \\"Bye\\", \\"payload\\": {\\"k\\": 1}}", "open_pbk": ""}}]}]}
            """
        let region = try Self.load(json).get().regions[0]
        #expect(region.id == "7" && region.group == nil && region.pattern == "566C5595-6EC7-4F08-909F-C954BDCA6CD3:3")
        #expect(region.start == nil && region.end == nil && region.schedule.isEmpty)
        #expect(region.timeZone?.secondsFromGMT() == 7200)
        let rule = region.rules[0]
        #expect(rule.id == "71" && rule.trigger == "on_exit" && rule.minEvents == 0 && rule.maxEvents == nil)
        #expect(rule.latchTime == 0 && rule.maximumProximity == .near)
        #expect(rule.alertBody == "Bye" && rule.payload == .object(["k": .number(1)]) && rule.openPBK == nil)
    }

    @Test(arguments: [
        ("", "not JSON"),
        ("[]", "no \"u_beacons\" list"),
        (#"{"u_beacons": [5]}"#, "u_beacons[0] is not an object"),
        (#"{"u_beacons": [{"proximity_uid": "x"}]}"#, "has no \"id\""),
        (#"{"u_beacons": [{"id": 1, "proximity_uid": "nope"}]}"#, "\"proximity_uid\" must be a beacon UUID"),
        (
            #"{"u_beacons": [{"id": 1, "proximity_uid": "566C5595-6EC7-4F08-909F-C954BDCA6CD3", "major": 70000}]}"#,
            "\"major\" must be 0 to 65535"
        ),
        (
            #"{"u_beacons": [{"id": 1, "proximity_uid": "566C5595-6EC7-4F08-909F-C954BDCA6CD3", "start": "tuesday"}]}"#,
            "\"start\" must be an ISO-8601 time"
        ),
        (
            #"{"u_beacons": [{"id": 1, "proximity_uid": "566C5595-6EC7-4F08-909F-C954BDCA6CD3", "rules_actions": {}}]}"#,
            "must be a list"
        ),
        (
            #"{"u_beacons": [{"id": 1, "proximity_uid": "566C5595-6EC7-4F08-909F-C954BDCA6CD3", "rules_actions": [{"id": 2, "rule": {"maximum_proximity": 3}}]}]}"#,
            "\"maximum_proximity\" must be 0"
        ),
        (
            #"{"u_beacons": [{"id": 1, "proximity_uid": "566C5595-6EC7-4F08-909F-C954BDCA6CD3", "rules_actions": [{"id": 2, "rule": {"min_events": "x"}}]}]}"#,
            "\"min_events\" must be a whole number"
        ),
    ])
    func garbageIsRefusedNamingWhere(_ json: String, reason: String) {
        guard case .failure(let error) = Self.load(json) else {
            Issue.record("loaded \(json)")
            return
        }
        #expect(error.description.contains(reason), "\(error)")
        #expect(error.description.hasPrefix("rules.json"))
    }

    @Test func randomBytesNeverCrashTheLoader() {
        var random = SeededGenerator(seed: 0x7B)
        let example = Array((try? Data(contentsOf: Conformance.url("ubudu/u_beacons-example.json"))) ?? Data())
        var loaded = 0
        for _ in 0..<2000 {
            var bytes = example
            for _ in 0..<Int.random(in: 1...4, using: &random) where !bytes.isEmpty {
                bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            if case .success = RulesDocument.load(bytes, name: "fuzz") { loaded += 1 }
        }
        #expect(loaded > 0)
    }
}
