import BeaconCore
import BeaconConfiguration
import Engine
import Foundation
import RegionMonitor
import Rules
import TestSupport
import Testing

/// docs/behaviour.md §17 through the whole engine: fixes in, geofence transitions with their rules, dwell and
/// `B/geofence` out, beside the beacon half.
@Suite struct GeofenceEngineTests {
    static let document = #"""
        {"u_geofences": [
          {"id": "depot", "name": "Depot", "lat": 45.0, "lng": 9.0, "radius": 200, "group_id": "g",
           "rules_actions": [{"id": "r1", "rule": {"trigger": "on_entry"}, "action": {"notify_user": "Welcome"}}]},
          {"id": "yard", "lat": 45.0, "lng": 9.0, "radius": 500}
        ]}
        """#

    static func engine(extra: String = "") throws -> Engine {
        let configuration = try EngineTests.configuration(
            "LocationBaseBeacon.1 = \(EngineTests.uuid),1,1\nMonitor.exitTimeout = 5\nMonitor.timezone = UTC\n"
                + "Rules.geofences = g.json\n\(extra)")
        let fences = try GeofencesDocument.load(Array(document.utf8), name: "g.json", unit: .m).get().regions
        return Engine(
            configuration: configuration, identity: EngineTests.identity, rules: fences,
            ruleSettings: RuleSettings(configuration, machineID: nil))
    }

    static func fix(_ metresNorth: Double, acc: Double? = 10) -> EngineInput {
        .position(
            Position(latitude: 45 + metresNorth / GreatCircle.earthRadius * 180 / .pi, longitude: 9, accuracy: acc))
    }

    static func lines(_ actions: [EngineAction]) -> [String] {
        actions.compactMap { action in
            switch action {
            case .output(.geofence(_, let t)): "\(t.direction.rawValue) \(t.id)"
            case .output(let output): output.type
            case .persist(let step): "persist \(step.whereabouts.geofences.map { $0.joined(separator: ",") } ?? "-")"
            case .request: "request"
            }
        }
    }

    @Test func fixesEnterAndExitWithRulesDwellAndWhereabouts() throws {
        var engine = try Self.engine()
        var actions: [EngineAction] = []
        engine.start(at: EngineTests.time(0), into: &actions)
        #expect(Self.lines(actions) == ["monitoring", "persist "])
        actions = engine.handle(Self.fix(-1000), at: EngineTests.time(1))
        #expect(Self.lines(actions) == [])
        actions = engine.handle(Self.fix(0), at: EngineTests.time(2))
        #expect(Self.lines(actions) == ["enter depot", "enter yard", "rule", "notification", "persist Depot,yard"])
        // Beyond the depot's exit margin, inside the yard.
        actions = engine.handle(Self.fix(300), at: EngineTests.time(62))
        #expect(Self.lines(actions) == ["exit depot", "persist yard"])
        guard case .output(.geofence(_, let exit))? = actions.first else {
            Issue.record("no exit")
            return
        }
        #expect(exit.dwell == 60 && exit.dwellToday == 60)
        #expect(actions.outputs.first?.json.contains(#""dwell":60.0,"dwellToday":60.0"#) == true)
        // A fix too inaccurate changes nothing; the clock alone changes nothing.
        #expect(Self.lines(engine.handle(Self.fix(2000, acc: 150), at: EngineTests.time(70))) == [])
        #expect(Self.lines(engine.advance(to: EngineTests.time(4000))) == [])
        #expect(engine.geofences?.insideLabels == ["yard"])
        // A second visit to the depot the same day adds to its dwell.
        _ = engine.handle(Self.fix(0), at: EngineTests.time(4000))
        actions = engine.handle(Self.fix(1000), at: EngineTests.time(4010))
        let dwell = actions.outputs.compactMap {
            if case .geofence(_, let t) = $0, t.id == "depot" { t.dwellToday } else { nil }
        }
        #expect(dwell == [70])
        #expect(engine.rules?.state.rules[RuleKey(region: "geofence:depot", rule: "r1")]?.count == 2)
        #expect(engine.reading.geofences == [])
    }

    @Test func beaconsAndGeofencesRunSideBySide() throws {
        var engine = try Self.engine()
        var actions: [EngineAction] = []
        engine.start(at: EngineTests.time(0), into: &actions)
        actions = engine.handle(EngineTests.sighting(minor: 1), at: EngineTests.time(1))
        #expect(actions.outputs.contains { if case .transition = $0 { true } else { false } })
        actions = engine.handle(Self.fix(0), at: EngineTests.time(2))
        #expect(Self.lines(actions).prefix(2) == ["enter depot", "enter yard"])
        // The beacon's exit (5 s) does not touch the geofences.
        actions = engine.advance(to: EngineTests.time(20))
        #expect(actions.outputs.allSatisfy { if case .geofence = $0 { false } else { true } })
        #expect(engine.geofences?.insideLabels == ["Depot", "yard"])
    }

    @Test func aReloadKeepsTheGeofencesInsideAndARefreshedDocumentTooWithoutTransitions() throws {
        var engine = try Self.engine()
        var actions: [EngineAction] = []
        engine.start(at: EngineTests.time(0), into: &actions)
        _ = engine.handle(Self.fix(0), at: EngineTests.time(1))
        let configuration = try EngineTests.configuration(
            "LocationBaseBeacon.1 = \(EngineTests.uuid),1,1\nMonitor.exitTimeout = 7\nRules.geofences = g.json\n")
        let fences = try GeofencesDocument.load(Array(Self.document.utf8), name: "g.json", unit: .m).get().regions
        actions = engine.handle(
            .reconfigure(configuration, rules: fences, settings: RuleSettings(configuration, machineID: nil)),
            at: EngineTests.time(5))
        #expect(!actions.outputs.contains { if case .geofence = $0 { true } else { false } })
        #expect(engine.geofences?.insideLabels == ["Depot", "yard"])
        // A fetched document without the yard: the depot goes on, the yard is dropped quietly.
        actions = engine.handle(.geofences(Array(fences.prefix(1))), at: EngineTests.time(6))
        #expect(!actions.outputs.contains { if case .geofence = $0 { true } else { false } })
        #expect(engine.geofences?.insideLabels == ["Depot"])
        actions = engine.handle(Self.fix(1000), at: EngineTests.time(66))
        #expect(Self.lines(actions) == ["exit depot", "persist "])
    }

    @Test func withoutGeofencesAFixIsIgnored() throws {
        var engine = Engine(
            configuration: try EngineTests.configuration("LocationBaseBeacon.1 = \(EngineTests.uuid),1,1\n"),
            identity: EngineTests.identity)
        var actions: [EngineAction] = []
        engine.start(at: EngineTests.time(0), into: &actions)
        #expect(engine.handle(Self.fix(0), at: EngineTests.time(1)).outputs.isEmpty)
        #expect(engine.geofences == nil && engine.reading.geofences == nil)
    }
}
