import BeaconCore
import BeaconConfiguration
import Engine
import Foundation
import RegionMonitor
import Rules
import TestSupport
import Testing

/// The pure engine, run with no database, no files of its own and no threads: inputs in,
/// ordered actions out.
@Suite struct EngineTests {
    static let identity = MonitorIdentity(session: "s", address: "192.0.2.1", userid: "u")
    static let uuid = "ACFD165E-C0C0-11E3-9BBE-1A514932AC01"

    static func configuration(_ text: String) throws -> Configuration {
        try Configuration.load(Array(text.utf8), path: "/tmp/hsyco.ini").get()
    }

    static func time(_ seconds: Double) -> Timestamp { Timestamp(secondsSinceEpoch: 1_700_000_000 + seconds)! }

    static func sighting(minor: UInt16, rssi: Int8 = -60) -> EngineInput {
        .advertisement(
            Advertisement(
                format: .ibeacon, beacon: BeaconID(uuid: UUID(uuidString: uuid)!, major: 1, minor: minor), power: -59,
                rssi: rssi, address: nil))
    }

    /// An action as a short line: an output's type (and region), `persist`, `request`.
    /// An engine for beacon 1 (exit after 5 s, plus `settings`) under the rules `document`.
    static func engine(rules document: String, settings: String) throws -> Engine {
        let regions = try RulesDocument.load(Array(document.utf8), name: "rules").get().regions
        let configuration = try Self.configuration(
            "LocationBaseBeacon.1 = \(Self.uuid),1,1\nMonitor.exitTimeout = 5\n\(settings)\n")
        return Engine(
            configuration: configuration, identity: Self.identity, rules: regions,
            ruleSettings: RuleSettings(configuration, machineID: nil))
    }

    static func describe(_ action: EngineAction) -> String {
        switch action {
        case .output(.transition(_, let transition)): "\(transition.direction.rawValue) \(transition.region.kind)"
        case .output(let output): output.type
        case .persist: "persist"
        case .request: "request"
        }
    }

    /// Every conformance scenario, replayed through the engine alone (the trace parsed and its
    /// HCI events decoded here, the clock run on at the end): what `replay` prints, without a
    /// state database or a shell.
    @Test(arguments: ["areas-then-zones", "beacons-mode", "zones-mode", "ubudu-example-rules"])
    func aConformanceScenarioThroughThePureEngineGivesItsExpectedOutputs(name: String) throws {
        let scenario = try Conformance.Scenario(name)
        let configuration = try Configuration.load(contentsOf: scenario.ini.path).get()
        var rules: [RuleRegion]?
        if case .file(let path)? = configuration.rules.source {
            rules = try RulesDocument.load(Array(Data(contentsOf: URL(fileURLWithPath: path))), name: path).get()
                .regions
        }
        var engine = Engine(
            configuration: configuration,
            identity: MonitorIdentity(
                session: configuration.monitor.session ?? "s", address: configuration.monitor.address ?? "192.0.2.1",
                userid: configuration.monitor.userid ?? "u"),
            rules: rules, ruleSettings: RuleSettings(configuration, machineID: nil))
        var parser = TraceParser()
        var decoder = AdvertisingReportDecoder()
        var actions: [EngineAction] = []
        let lines = try String(contentsOf: scenario.trace, encoding: .utf8).split(separator: "\n")
        for (number, line) in lines.enumerated() {
            guard let (time, record) = try parser.parse(Array(line.utf8), number: number + 1).get() else { continue }
            switch record {
            case .sighting(let advertisement): engine.handle(.advertisement(advertisement), at: time, into: &actions)
            case .hci(let bytes):
                decoder.decode(event: bytes) { engine.handle(.advertisement($0), at: time, into: &actions) }
            case .mode(let mode): engine.handle(.mode(mode), at: time, into: &actions)
            case .command(let command): engine.handle(.command(command), at: time, into: &actions)
            case .position(let position): engine.handle(.position(position), at: time, into: &actions)
            case .report, .learn, .sensor: Issue.record("a conformance scenario has no scanner and no sensor")
            }
        }
        while engine.advanceToNextDeadline(notAfter: nil, into: &actions) {}
        #expect(!actions.contains { if case .request = $0 { true } else { false } })
        let text = actions.outputs.map(\.json).joined(separator: "\n")
        let mismatches = try scenario.mismatches(Conformance.Scenario.objects(text))
        #expect(mismatches.isEmpty, "\(mismatches)")
    }

    @Test func eachStepsOutputsComeBeforeThePersistThatClosesIt() throws {
        var engine = Engine(
            configuration: try Self.configuration(
                "LocationBaseBeacon.1 = \(Self.uuid),1,1\nMonitor.mode = foreground\n"),
            identity: Self.identity)
        let actions = engine.handle(Self.sighting(minor: 1), at: Self.time(0)).map(Self.describe)
        #expect(
            actions == [
                "monitoring", "enter area", "enter zone", "enter beacon", "location", "nearest", "persist",
            ])
        guard case .persist(let step)? = engine.handle(Self.sighting(minor: 1), at: Self.time(1)).last else {
            // A sighting that changes nothing closes no step.
            return
        }
        Issue.record("a sighting that changed nothing closed a step: \(step)")
    }

    /// The deadlines of earlier instants are each their own step, before the input's; where the
    /// user is after each is the state of that instant.
    @Test func earlierInstantsAreStepsOfTheirOwnWithTheirOwnWhereabouts() throws {
        let ini = """
            LocationBaseBeacon.1 = \(Self.uuid),1,1
            LocationBaseBeacon.2 = \(Self.uuid),2,1
            LocationZoneName.\(Self.uuid):1 = Kitchen
            LocationZoneName.\(Self.uuid):2 = Hall
            Monitor.exitTimeout = 5
            """
        var engine = Engine(configuration: try Self.configuration(ini), identity: Self.identity)
        _ = engine.handle(Self.sighting(minor: 1), at: Self.time(0))
        let second = engine.handle(
            .advertisement(
                Advertisement(
                    format: .ibeacon, beacon: BeaconID(uuid: UUID(uuidString: Self.uuid)!, major: 2, minor: 1),
                    power: -59, rssi: -60, address: nil)), at: Self.time(10))
        let zones = second.compactMap { action -> String? in
            guard case .persist(let step) = action else { return nil }
            return step.whereabouts.zone ?? "none"
        }
        #expect(zones == ["none", "Hall"])
        #expect(engine.nextDeadline == Self.time(15))
    }

    /// At one instant, a rule's latch expires before the monitor's deadlines (an event "before" a
    /// latch expires is strictly before it), and an input comes after both, each its own step.
    @Test func atOneInstantLatchesComeBeforeExitsAndTheInputAfterBoth() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("engine-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let document = #"""
            {"u_beacons": [{"id": "1", "name": "Shop", "proximity_uid": "\#(Self.uuid)", "major": 1, "minor": "",
              "rules_actions": [{"id": "11", "rule": {"trigger": "on_entry", "latch_time": 5},
              "action": {"notify_user": "Hello"}}]}]}
            """#
        var engine = try Self.engine(rules: document, settings: "Monitor.mode = foreground")
        _ = engine.handle(Self.sighting(minor: 1), at: Self.time(0))
        // The entry's latch and the exit both fall due at 5 s.
        let actions = engine.handle(.mode(.background), at: Self.time(5)).map(Self.describe)
        #expect(
            actions == [
                "rule", "notification", "exit beacon", "exit zone", "exit area", "location", "nearest", "persist",
            ])
    }

    /// Local midnight is a wake-up for a live shell (the day's dwell shown goes to 0) but not a
    /// pending timer: a replay's clock does not run on for it.
    @Test func localMidnightWakesALiveShellAndClosesAStepWithTheNewDaysDwell() throws {
        let ini = "LocationBaseBeacon.1 = \(Self.uuid),1,1\nMonitor.timezone = UTC\nMonitor.exitTimeout = 5\n"
        var engine = Engine(configuration: try Self.configuration(ini), identity: Self.identity)
        // 2023-11-14T23:59:50Z: in, then out 5 s later; the day's dwell is shown.
        let evening = Timestamp(secondsSinceEpoch: 1_700_006_390)!
        _ = engine.handle(Self.sighting(minor: 1), at: evening)
        _ = engine.advance(to: evening.adding(seconds: 6))
        #expect(engine.nextDeadline == nil)
        let midnight = Timestamp(secondsSinceEpoch: 1_700_006_400)!
        #expect(engine.nextWake == midnight)
        let actions = engine.advance(to: midnight)
        guard case .persist(let step)? = actions.last else {
            Issue.record("no step at midnight: \(actions)")
            return
        }
        #expect(step.whereabouts.dwell == ["\(Self.uuid)": 0, "\(Self.uuid):1": 0])
    }

    /// The day's dwell is a sum of visits, printed to the millisecond as `dwell` is: 5.1 s and
    /// 5.3 s make 10.4, not the float noise 10.399999999999999.
    @Test func theDaysDwellIsPrintedToTheMillisecond() throws {
        var engine = try Self.engine(rules: #"{"u_beacons": []}"#, settings: "Monitor.timezone = UTC")
        var todays: [Double] = []
        var lines: [String] = []
        for start in [0.0, 100.0] {
            let length = start == 0 ? 0.1 : 0.3
            _ = engine.handle(Self.sighting(minor: 1), at: Self.time(start))
            _ = engine.handle(Self.sighting(minor: 1), at: Self.time(start + length))
            for output in engine.advance(to: Self.time(start + 50)).outputs {
                guard case .transition(_, let transition) = output, transition.direction == .exit,
                    transition.region.kind == .zone
                else { continue }
                todays += [try #require(transition.dwellToday)]
                lines += [output.json]
            }
        }
        #expect(todays == [5.1, 10.4])
        #expect(lines.last?.contains(#""dwellToday":10.4"#) == true, "\(lines)")
    }

    /// Time never goes back: an input stamped before the engine's clock happens at the clock.
    @Test func anInputFromThePastIsTakenAtTheEnginesClock() throws {
        var engine = Engine(
            configuration: try Self.configuration("LocationBaseBeacon.1 = \(Self.uuid),1,1\n"), identity: Self.identity)
        _ = engine.advance(to: Self.time(100))
        let actions = engine.handle(Self.sighting(minor: 1), at: Self.time(0))
        for case .output(let output) in actions { #expect(output.time == Self.time(100)) }
        #expect(engine.now == Self.time(100))
    }

    /// A stepped wall clock re-expresses the engine's instants: the pending exit and the open
    /// latch move with it, nothing fires for the step, and the visit keeps its length.
    @Test func aClockStepMovesEveryDeadlineAndNoVisitChangesLength() throws {
        let ini = """
            LocationBaseBeacon.1 = \(Self.uuid),1,1
            Monitor.exitTimeout = 10
            LocationAlert.1 = near,<=
            Alert.resetAfter = 30
            """
        var engine = Engine(configuration: try Self.configuration(ini), identity: Self.identity)
        _ = engine.handle(Self.sighting(minor: 1), at: Self.time(0))
        let exit = try #require(engine.nextOutputDeadline)
        let day: Int64 = 86_400_000_000
        engine.shiftClock(by: day)
        #expect(engine.now == Timestamp(microseconds: Self.time(0).microseconds + day))
        #expect(engine.nextOutputDeadline == Timestamp(microseconds: exit.microseconds + day))
        // The old deadline is nothing now; the moved one is the exit, 10 s after the sighting.
        #expect(engine.advance(to: Timestamp(microseconds: exit.microseconds + 1)).outputs.isEmpty)
        let outputs = engine.advance(to: Timestamp(microseconds: exit.microseconds + day)).outputs
        let exits = outputs.compactMap { output -> Double? in
            guard case .transition(_, let transition) = output, transition.direction == .exit else { return nil }
            return transition.dwell
        }
        #expect(!exits.isEmpty)
        #expect(exits.allSatisfy { $0 == 10 }, "\(exits)")
    }

    /// After a clock step, schedules are read on the new clock: closed on a Tuesday night, open
    /// after the clock is set to a Monday morning.
    @Test func afterAClockStepSchedulesFollowTheNewTime() throws {
        let document = #"""
            {"u_beacons": [{"id": "1", "proximity_uid": "\#(Self.uuid)", "major": 1, "minor": "",
              "timezone": {"zone": "UTC"},
              "schedule": {"week": {"mon": {"open": 32400, "close": 64800}}},
              "rules_actions": [{"id": "11", "rule": {"trigger": "on_entry"}, "action": {"notify_user": "Hello"}}]}]}
            """#
        var engine = try Self.engine(rules: document, settings: "Monitor.timezone = UTC")
        func reasons(_ actions: [EngineAction]) -> [String] {
            actions.outputs.compactMap { output in
                guard case .rule(_, let evaluation) = output else { return nil }
                return evaluation.reason?.rawValue ?? "fired"
            }
        }
        // 2023-11-14T22:13:20Z, a Tuesday night.
        #expect(reasons(engine.handle(Self.sighting(minor: 1), at: Self.time(0))) == ["schedule_closed"])
        _ = engine.advance(to: Self.time(20))
        // Set to Monday 2023-11-20T10:00:00Z.
        let monday: Int64 = 1_700_474_400_000_000
        engine.shiftClock(by: monday - Self.time(20).microseconds)
        #expect(engine.now == Timestamp(microseconds: monday))
        #expect(
            reasons(engine.handle(Self.sighting(minor: 1), at: Timestamp(microseconds: monday + 1_000_000))) == [
                "fired"
            ])
    }
}
