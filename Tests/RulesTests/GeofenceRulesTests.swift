import BeaconCore
import Foundation
import RegionMonitor
import Rules
import TestSupport
import Testing

/// docs/behaviour.md §17: u_geofences.json, and the rules of section 7 on geofence transitions.
@Suite struct GeofenceRulesTests {
    static func example(unit: GeofenceRadiusUnit) throws -> RulesDocument {
        let bytes = try Data(contentsOf: Conformance.url("ubudu/u_geofences-example.json"))
        return try GeofencesDocument.load(Array(bytes), name: "u_geofences-example.json", unit: unit).get()
    }

    @Test func theExampleExportLoadsWithItsRadiiInKilometres() throws {
        let document = try Self.example(unit: .km)
        #expect(document.regions.map(\.id) == ["52", "35"])
        let fences = document.regions.compactMap(\.geofence)
        #expect(fences.map(\.radius) == [100, 20])
        #expect(fences[0].latitude == 48.86821546 && fences[0].longitude == 2.3231598)
        #expect(fences[1].name == "demo-shop-2--10--rue-d-amsterdam")
        #expect(document.regions[0].rules.map(\.trigger) == ["on_exit", "on_entry"])
        #expect(document.regions[1].rules.map(\.minEvents) == [1, 1])
        #expect(document.regions[0].timeZone?.identifier == "Europe/Paris")
        #expect(document.regions.allSatisfy { $0.warnings.isEmpty })
        #expect(document.validUntil == Timestamp(iso8601: "2013-11-25T13:27:04+01:00"))
        #expect(document.regions[0].pattern == "geofence 52")
        #expect(document.regions[0].countKey == "geofence:52")
    }

    @Test func readInMetresTheExampleWarnsOfRadiiUnderTenMetres() throws {
        let document = try Self.example(unit: .m)
        #expect(document.regions.compactMap(\.geofence).map(\.radius) == [0.1, 0.02])
        for region in document.regions {
            #expect(region.warnings.count == 1)
            #expect(region.warnings.first?.contains("did you mean Rules.geofenceRadiusUnit = km?") == true)
        }
    }

    @Test func numbersMayComeAsStrings() throws {
        let text = #"{"u_geofences": [{"id": 7, "lat": "45.5", "lng": "9.25", "radius": "250"}]}"#
        let document = try GeofencesDocument.load(Array(text.utf8), name: "t", unit: .m).get()
        #expect(
            document.regions.first?.geofence
                == Geofence(id: "7", name: nil, latitude: 45.5, longitude: 9.25, radius: 250))
    }

    @Test(arguments: [
        ("nonsense", "not JSON"),
        (#"{"u_beacons": []}"#, "no \"u_geofences\" list"),
        (#"{"u_geofences": [3]}"#, "is not an object"),
        (#"{"u_geofences": [{"lat": 1, "lng": 1, "radius": 1}]}"#, "has no \"id\""),
        (#"{"u_geofences": [{"id": 1, "lng": 1, "radius": 1}]}"#, "\"lat\""),
        (#"{"u_geofences": [{"id": 1, "lat": 91, "lng": 1, "radius": 1}]}"#, "\"lat\""),
        (#"{"u_geofences": [{"id": 1, "lat": 1, "lng": "east", "radius": 1}]}"#, "\"lng\""),
        (#"{"u_geofences": [{"id": 1, "lat": 1, "lng": 1, "radius": -1}]}"#, "\"radius\""),
        (#"{"u_geofences": [{"id": 1, "lat": 1, "lng": 1, "radius": 1e300}]}"#, "\"radius\""),
        (#"{"u_geofences": [{"id": 1, "lat": 1, "lng": 1}]}"#, "\"radius\""),
        (
            #"{"u_geofences": [{"id": 1, "lat": 1, "lng": 1, "radius": 1}, {"id": "1", "lat": 1, "lng": 1, "radius": 1}]}"#,
            "repeats id"
        ),
        (#"{"u_geofences": [{"id": 1, "lat": 1, "lng": 1, "radius": 1, "rules_actions": 5}]}"#, "must be a list"),
    ])
    func garbageIsRefusedNamingTheGeofenceAndField(text: String, reason: String) {
        guard case .failure(let error) = GeofencesDocument.load(Array(text.utf8), name: "g.json", unit: .km) else {
            Issue.record("accepted: \(text)")
            return
        }
        #expect(error.description.contains(reason), "\(error)")
        #expect(error.description.hasPrefix("g.json"))
    }

    @Test func mutatedDocumentsNeverCrashTheLoader() throws {
        let example = Array(try Data(contentsOf: Conformance.url("ubudu/u_geofences-example.json")))
        var random = SeededGenerator(seed: 5)
        for _ in 0..<3000 {
            let bytes = example.overwritingRandomBytes(times: 1...6, using: &random)
            if case .success(let document) = GeofencesDocument.load(bytes, name: "m", unit: .km) {
                for fence in document.regions.compactMap(\.geofence) {
                    #expect(fence.radius >= 0 && fence.radius.isFinite)
                }
            }
        }
    }

    // MARK: - Rules on geofences

    /// 2013-08-13T08:00:00Z: a Tuesday, 10:00 in Paris, inside both geofences' validity.
    static let tuesday = Timestamp(secondsSinceEpoch: 1_376_380_800)!

    static func transition(_ direction: Transition.Direction, _ id: String, at seconds: Double) -> MonitorOutput {
        .geofence(
            tuesday.adding(seconds: seconds), GeofenceTransition(direction: direction, id: id, name: nil, distance: 0))
    }

    @Test func geofenceTransitionsFireTheirRulesAndShareTheDailyCapWithBeaconRules() throws {
        let fences = try Self.example(unit: .km).regions
        let uuid = UUID(uuidString: "566C5595-6EC7-4F08-909F-C954BDCA6CD3")!
        let hierarchy = Hierarchy(beacons: [.init(locationID: "1", id: BeaconID(uuid: uuid, major: 1, minor: 1))])
        // A beacon region with the same id as a geofence: their counts must stay apart.
        let beacons = try RulesDocument.load(
            Array(
                #"{"u_beacons": [{"id": "52", "proximity_uid": "\#(uuid.uuidString)", "major": 1, "rules_actions": [{"id": "b1", "rule": {"trigger": "on_entry"}, "action": {"notify_user": "Beacon"}}]}]}"#
                    .utf8), name: "b"
        ).get().regions
        var settings = RuleSettings()
        settings.timeZone = TimeZone(identifier: "Europe/Paris")!
        settings.maxNotificationsPerDay = 3
        var engine = RuleEngine(regions: beacons + fences, hierarchy: hierarchy, settings: settings)
        var outputs: [MonitorOutput] = []
        engine.observe(Self.transition(.enter, "52", at: 0), into: &outputs)
        engine.observe(Self.transition(.exit, "52", at: 10), into: &outputs)
        engine.observe(
            .transition(
                Self.tuesday.adding(seconds: 20),
                Transition(direction: .enter, region: .zone(uuid, major: 1), name: nil, how: .monitored)),
            into: &outputs)
        engine.observe(Self.transition(.enter, "35", at: 30), into: &outputs)
        let rules = outputs.compactMap { if case .rule(_, let e) = $0 { e } else { nil } }
        #expect(rules.map(\.rule) == ["60", "61", "b1", "32"])
        #expect(rules.map { $0.reason?.rawValue ?? "fired" } == ["fired", "fired", "fired", "daily_cap"])
        #expect(rules.map(\.geofence) == [true, true, false, true])
        #expect(rules.map(\.count) == [1, 1, 1, 1])
        let notes = outputs.compactMap { if case .notification(_, let n) = $0 { n } else { nil } }
        #expect(notes.map(\.title) == ["DEMO PRESENTATION 2", "DEMO PRESENTATION 2", nil])
        #expect(notes.first?.url?.hasPrefix("http://mobile.ubudu.com/webcoupon/") == true)
        #expect(notes.map(\.geofence) == [true, true, false])
        #expect(engine.state.rules[RuleKey(region: "geofence:52", rule: "60")]?.count == 1)
        #expect(engine.state.rules[RuleKey(region: "52", rule: "b1")]?.count == 1)
        // The JSON says which kind of region the rule is on.
        let json = outputs.first { $0.type == "rule" }?.json ?? ""
        #expect(json.contains(#""region":"52","kind":"geofence","rule":"60""#), "\(json)")
    }

    @Test func aGeofenceRuleOutsideItsScheduleOrValidityDoesNotFire() throws {
        var engine = RuleEngine(
            regions: try Self.example(unit: .km).regions, hierarchy: Hierarchy(beacons: []), settings: RuleSettings())
        var outputs: [MonitorOutput] = []
        // Sunday: closed all day.
        engine.observe(Self.transition(.enter, "35", at: 5 * 86_400), into: &outputs)
        // 2026: after both ends.
        engine.observe(
            .geofence(
                Timestamp(secondsSinceEpoch: 1_789_459_200)!,
                GeofenceTransition(direction: .enter, id: "35", name: nil, distance: 0)), into: &outputs)
        let reasons = outputs.compactMap { if case .rule(_, let e) = $0 { e.reason?.rawValue } else { nil } }
        #expect(reasons == ["schedule_closed", "after_end"])
    }
}
