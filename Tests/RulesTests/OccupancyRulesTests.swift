import BeaconCore
import Foundation
import RegionMonitor
import Rules
import Testing

/// docs/behaviour.md §23: Ubudu rules with the `occupied` and `vacant` triggers of a Zone (or
/// Area), fed by the occupancy's announcements as the engine feeds them, with their latches,
/// schedules and conditions as usual. The rule users will copy: lights off 5 minutes after the
/// room is vacant, outside opening hours.
@Suite struct OccupancyRulesTests {
    static let zone = RuleEngineTests.zone
    static let otherZone = RuleEngineTests.otherZone
    static let area = Region.area(RuleEngineTests.uuid)
    static let monday = RuleEngineTests.monday

    /// A rule on `trigger`; `fields` add to `rule`.
    static func rule(_ id: String, _ trigger: String, latch: Int = 0, _ fields: String = "") -> String {
        #"{"id": "\#(id)", "rule": {"trigger": "\#(trigger)", "latch_time": \#(latch)\#(fields.isEmpty ? "" : ", " + fields)}, "action": {"notify_user": "Lights off"}}"#
    }

    /// An Area's region (no major) with `rules`.
    static func areaRegion(_ id: String, rules: [String]) -> String {
        #"{"id": "\#(id)", "name": "Floor", "proximity_uid": "\#(RuleEngineTests.uuid.uuidString)", "major": null, "minor": null, "timezone": {"zone": "Europe/Paris"}, "rules_actions": [\#(rules.joined(separator: ", "))]}"#
    }

    /// The rule engine behind an occupancy monitor, one instant at a time as the engine orders it:
    /// the timers of earlier instants first (latches before the occupancy's), then the input,
    /// whose announcements the rules see.
    struct Harness {
        var monitor: OccupancyMonitor
        var rules: RuleEngine
        var outputs: [MonitorOutput] = []

        init(_ regions: [RuleRegion], scope: OccupancyScope = .zones, sensors: [SensorDefinition] = []) {
            monitor = OccupancyMonitor(
                settings: OccupancySettings(scope: scope, sensors: sensors), hierarchy: RuleEngineTests.hierarchy)
            rules = RuleEngine(
                regions: regions, hierarchy: RuleEngineTests.hierarchy, settings: RuleEngineTests.Harness.defaults)
            step(at: 0) { monitor, time, outputs in monitor.start(at: time, into: &outputs) }
        }

        static func time(_ seconds: Double) -> Timestamp {
            Timestamp(microseconds: Int64((OccupancyRulesTests.monday + seconds) * 1_000_000))
        }

        private mutating func see(_ produced: [MonitorOutput]) {
            for output in produced {
                outputs.append(output)
                rules.observe(output, into: &outputs)
            }
        }

        mutating func advance(to seconds: Double) {
            let time = Self.time(seconds)
            while let due = [rules.nextDeadline, monitor.nextDeadline].compactMap({ $0 }).min(), due <= time {
                rules.advance(to: due, into: &outputs)
                var produced: [MonitorOutput] = []
                monitor.advance(to: due, into: &produced)
                see(produced)
            }
            rules.advance(to: time, into: &outputs)
        }

        mutating func step(
            at seconds: Double, _ input: (inout OccupancyMonitor, Timestamp, inout [MonitorOutput]) -> Void
        ) {
            advance(to: seconds)
            var produced: [MonitorOutput] = []
            input(&monitor, Self.time(seconds), &produced)
            see(produced)
        }

        mutating func place(_ device: String, _ regions: [Region], at seconds: Double) {
            step(at: seconds) { monitor, time, outputs in
                monitor.place(device, inside: regions, at: time, into: &outputs)
            }
        }

        mutating func sensor(_ id: String, _ payload: String, at seconds: Double) {
            step(at: seconds) { monitor, time, outputs in
                monitor.sensor(id, payload: Array(payload.utf8), at: time, into: &outputs)
            }
        }

        /// Each evaluation as `<seconds after monday> <rule> <fired or reason>`.
        var verdicts: [String] {
            outputs.compactMap { output in
                guard case .rule(let time, let evaluation) = output else { return nil }
                let seconds = Double(time.microseconds) / 1_000_000 - OccupancyRulesTests.monday
                return "\(seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)) \(evaluation.rule) "
                    + (evaluation.reason?.rawValue ?? "fired")
            }
        }

        var notifications: [UserNotification] {
            outputs.compactMap { if case .notification(_, let notification) = $0 { notification } else { nil } }
        }
    }

    static func harness(_ rules: [String], extra: String = "") throws -> Harness {
        Harness(try RuleEngineTests.regions(RuleEngineTests.region("1", extra: extra, rules: rules)))
    }

    // MARK: - vacant

    /// "Lights off 5 minutes after the room is vacant": the room empties at 100, is vacant at
    /// 130, and the rule fires once, at 430 exactly.
    @Test func aVacantRuleWithALatchFiresOnceThatLongAfterTheVacancy() throws {
        var harness = try Self.harness([Self.rule("off", "vacant", latch: 300)])
        harness.place("anna", [Self.zone], at: 10)
        harness.place("anna", [], at: 100)
        harness.advance(to: 429.999)
        #expect(harness.verdicts.isEmpty)
        harness.advance(to: 430)
        #expect(harness.verdicts == ["430 off fired"])
        #expect(harness.notifications.map(\.body) == ["Lights off"])
        harness.advance(to: 86_400)
        #expect(harness.verdicts == ["430 off fired"], "once")
    }

    @Test func aVacantRuleDoesNotFireWhenTheRoomIsOccupiedAgainWithinTheLatch() throws {
        var harness = try Self.harness([Self.rule("off", "vacant", latch: 300)])
        harness.place("anna", [Self.zone], at: 10)
        harness.place("anna", [], at: 100)
        harness.place("bob", [Self.zone], at: 400)  // vacant since 130: 270 s
        harness.advance(to: 2000)
        #expect(harness.verdicts.isEmpty)
        // The next vacancy counts from its own start.
        harness.place("bob", [], at: 2000)
        harness.advance(to: 5000)
        #expect(harness.verdicts == ["2330 off fired"])
        #expect(harness.outputs.compactMap { if case .rule(_, let e) = $0 { e.count } else { nil } } == [1])
    }

    /// A short blip of occupancy inside vacantAfter is no vacancy at all: nothing is held.
    @Test func aRoomThatNeverBecameVacantFiresNothing() throws {
        var harness = try Self.harness([Self.rule("off", "vacant", latch: 300)])
        harness.place("anna", [Self.zone], at: 10)
        harness.place("anna", [], at: 100)
        harness.place("anna", [Self.zone], at: 125)
        harness.advance(to: 1000)
        #expect(harness.verdicts.isEmpty)
        #expect(harness.rules.pendingLatches.isEmpty)
    }

    /// Opening hours 08:00–18:00 (Paris) as the schedule's break: the rule acts outside them only.
    @Test func aVacantRuleActsOnlyWhenItsScheduleIsOpen() throws {
        let outsideOpeningHours =
            #""schedule": {"week": {"mon": {"open": 0, "close": 86400}}, "breaks": {"mon": {"open": 28800, "close": 64800}}}"#
        var harness = try Self.harness([Self.rule("off", "vacant", latch: 300)], extra: outsideOpeningHours)
        // 10:00 Paris: vacant at 10:02:10, the latch ends at 10:07:10, inside opening hours.
        harness.place("anna", [Self.zone], at: 10)
        harness.place("anna", [], at: 100)
        // 19:00 Paris: after opening hours.
        harness.place("anna", [Self.zone], at: 32_400)
        harness.place("anna", [], at: 32_500)
        harness.advance(to: 40_000)
        #expect(harness.verdicts == ["430 off schedule_closed", "32830 off fired"])
        #expect(harness.notifications.count == 1)
        // The schedule is asked when the latch ends: vacant at 17:57:30 Paris, held until 18:02:30,
        // when the rule acts again.
        var evening = try Self.harness([Self.rule("off", "vacant", latch: 300)], extra: outsideOpeningHours)
        evening.place("anna", [Self.zone], at: 28_500)
        evening.place("anna", [], at: 28_620)
        evening.advance(to: 40_000)
        #expect(evening.verdicts == ["28950 off fired"])
    }

    @Test func aVacantRuleSeesAPresenceSensorsVacancy() throws {
        let radar = SensorDefinition(id: "radar", topic: "r", kind: .presence, zone: Self.zone, silence: 0)
        var harness = Harness(
            try RuleEngineTests.regions(RuleEngineTests.region("1", rules: [Self.rule("off", "vacant", latch: 300)])),
            sensors: [radar])
        harness.sensor("radar", "ON", at: 5)
        harness.sensor("radar", "OFF", at: 60)
        harness.advance(to: 1000)
        #expect(harness.verdicts == ["390 off fired"])
    }

    // MARK: - occupied

    @Test func anOccupiedRuleFiresWhenTheRoomIsOccupiedAgainAndNotOnCountChanges() throws {
        var harness = try Self.harness([Self.rule("on", "occupied")])
        harness.advance(to: 100)  // vacant at 30: the first announcement, no event
        harness.place("anna", [Self.zone], at: 200)
        harness.place("bob", [Self.zone], at: 210)
        harness.place("anna", [], at: 220)
        harness.place("anna", [Self.zone], at: 230)
        harness.place("anna", [], at: 240)
        harness.place("bob", [], at: 240)
        harness.advance(to: 1000)
        harness.place("anna", [Self.zone], at: 1000)
        #expect(harness.verdicts == ["200 on fired", "1000 on fired"])
    }

    @Test func anOccupiedRuleWithALatchWaitsForTheOccupancyToLast() throws {
        var harness = try Self.harness([Self.rule("on", "occupied", latch: 60)])
        harness.advance(to: 100)
        harness.place("anna", [Self.zone], at: 200)
        harness.place("anna", [], at: 210)  // vacant at 240: the occupancy did not last 60 s
        harness.advance(to: 500)
        harness.place("anna", [Self.zone], at: 500)
        harness.advance(to: 1000)
        #expect(harness.verdicts == ["560 on fired"])
    }

    // MARK: - What is no event

    /// After a start the first announcement of each Zone is no flip: a room found occupied or
    /// vacant at a (re)start fires nothing.
    @Test func theFirstAnnouncementAfterAStartFiresNothing() throws {
        var harness = Harness(
            try RuleEngineTests.regions(
                RuleEngineTests.region("1", rules: [Self.rule("on", "occupied")]),
                RuleEngineTests.region("2", major: 43, rules: [Self.rule("off", "vacant")])))
        harness.place("anna", [Self.zone], at: 1)
        harness.advance(to: 1000)
        #expect(harness.outputs.contains { if case .occupancy = $0 { true } else { false } })
        #expect(harness.verdicts.isEmpty)
    }

    /// `on_entry` rules see the device's own transitions only; `occupied` and `vacant` rules the
    /// occupancy's flips only.
    @Test func presenceAndOccupancyTriggersDoNotMix() throws {
        var harness = try Self.harness([
            Self.rule("entry", "on_entry"), Self.rule("exit", "on_exit"), Self.rule("on", "occupied"),
            Self.rule("off", "vacant"),
        ])
        harness.advance(to: 100)
        let time = Harness.time(150)
        harness.rules.observe(
            .transition(time, Transition(direction: .enter, region: Self.zone, name: nil, how: .derived)),
            into: &harness.outputs)
        harness.place("anna", [Self.zone], at: 200)
        harness.place("anna", [], at: 300)
        harness.advance(to: 400)
        harness.rules.observe(
            .transition(Harness.time(400), Transition(direction: .exit, region: Self.zone, name: nil, how: .derived)),
            into: &harness.outputs)
        #expect(harness.verdicts == ["150 entry fired", "200 on fired", "330 off fired", "400 exit fired"])
    }

    @Test func anAreasRuleSeesTheAreasOccupancy() throws {
        var harness = Harness(
            try RuleEngineTests.regions(Self.areaRegion("9", rules: [Self.rule("off", "vacant", latch: 300)])),
            scope: .both)
        harness.place("anna", [Self.zone, Self.area], at: 10)
        harness.place("anna", [Self.otherZone, Self.area], at: 50)  // the Area stays occupied
        harness.place("anna", [], at: 100)
        harness.advance(to: 1000)
        #expect(harness.verdicts == ["430 off fired"])
    }
}
