import BeaconCore
import Foundation
import RegionMonitor
import Rules
import Testing

/// docs/behaviour.md §7.2–§7.6 on the pure engine: transitions in, `rule`, `server` and `notification` out.
@Suite struct RuleEngineTests {
    static let uuid = UUID(uuidString: "566C5595-6EC7-4F08-909F-C954BDCA6CD3")!
    static let zone = Region.zone(uuid, major: 42)
    static let otherZone = Region.zone(uuid, major: 43)
    /// 2013-11-04T09:00:00Z: a Monday, 10:00 in Paris.
    static let monday = 1_383_555_600.0

    static let hierarchy = Hierarchy(beacons: [
        .init(locationID: "4201", id: BeaconID(uuid: uuid, major: 42, minor: 1)),
        .init(locationID: "4202", id: BeaconID(uuid: uuid, major: 42, minor: 2)),
        .init(locationID: "4301", id: BeaconID(uuid: uuid, major: 43, minor: 1)),
    ])

    /// A rule as the document writes it; `fields` go into `rule`, `action` into `action`.
    static func rule(_ id: String, _ fields: String = "", action: String = #""notify_user": "Hello""#) -> String {
        let latch = fields.contains("latch_time") ? "" : #", "latch_time": 0"#
        return
            #"{"id": "\#(id)", "rule": {"trigger": "on_entry"\#(latch)\#(fields.isEmpty ? "" : ", " + fields)}, "action": {\#(action)}}"#
    }

    /// A region on zone `major` with `rules`; `extra` adds fields (group, start, schedule…).
    static func region(_ id: String, major: Int = 42, extra: String = "", rules: [String]) -> String {
        #"{"id": "\#(id)", "name": "Shop \#(id)", "proximity_uid": "\#(uuid.uuidString)", "major": \#(major), "minor": null, "timezone": {"zone": "Europe/Paris"}\#(extra.isEmpty ? "" : ", " + extra), "rules_actions": [\#(rules.joined(separator: ", "))]}"#
    }

    static func regions(_ regions: String...) throws -> [RuleRegion] {
        try RulesDocument.load(Array(#"{"u_beacons": [\#(regions.joined(separator: ", "))]}"#.utf8), name: "test").get()
            .regions
    }

    /// The engine with its outputs, driven by hand.
    struct Harness {
        var engine: RuleEngine
        var outputs: [MonitorOutput] = []

        init(_ regions: [RuleRegion], settings: RuleSettings = Harness.defaults, state: RuleState = RuleState()) {
            engine = RuleEngine(
                regions: regions, hierarchy: RuleEngineTests.hierarchy, settings: settings, restored: state)
        }

        static var defaults: RuleSettings {
            var settings = RuleSettings()
            settings.timeZone = TimeZone(identifier: "Europe/Paris")!
            settings.values = TemplateValues(namespace: "ns", udid: "dev 1", lat: "45.46", lng: "9.19")
            return settings
        }

        mutating func go(_ direction: Transition.Direction, _ region: Region = RuleEngineTests.zone, at seconds: Double)
        {
            let time = Timestamp(microseconds: Int64(seconds * 1_000_000))
            engine.advance(to: time, into: &outputs)
            engine.observe(
                .transition(time, Transition(direction: direction, region: region, name: nil, how: .derived)),
                into: &outputs)
        }

        /// One visit: enter at `seconds`, exit a second later.
        mutating func visit(_ region: Region = RuleEngineTests.zone, at seconds: Double) {
            go(.enter, region, at: seconds)
            go(.exit, region, at: seconds + 1)
        }

        mutating func location(_ minor: UInt16, _ distance: Proximity, at seconds: Double) {
            let time = Timestamp(microseconds: Int64(seconds * 1_000_000))
            let beacon = BeaconID(uuid: RuleEngineTests.uuid, major: 42, minor: minor)
            let change = ProximityChange(
                time: time, beacon: beacon, locationID: "42\(minor)", proximity: distance, meters: nil)
            engine.advance(to: time, into: &outputs)
            engine.observe(change, into: &outputs)
        }

        mutating func advance(to seconds: Double) {
            engine.advance(to: Timestamp(microseconds: Int64(seconds * 1_000_000)), into: &outputs)
        }

        var evaluations: [RuleEvaluation] {
            outputs.compactMap { if case .rule(_, let evaluation) = $0 { evaluation } else { nil } }
        }

        var notifications: [UserNotification] {
            outputs.compactMap { if case .notification(_, let notification) = $0 { notification } else { nil } }
        }

        /// `fired` or the reason, per evaluation.
        var verdicts: [String] { evaluations.map { $0.reason?.rawValue ?? "fired" } }
    }

    @Test func countsRunFromMinimumToMaximum() throws {
        var harness = Harness(
            try Self.regions(Self.region("1", rules: [Self.rule("11", #""min_events": 2, "max_events": 3"#)])))
        for visit in 0..<4 { harness.visit(at: Self.monday + Double(visit) * 10) }
        #expect(harness.verdicts == ["min_events", "fired", "fired", "max_events"])
        #expect(harness.evaluations.map(\.count) == [1, 2, 3, 4])
        #expect(harness.evaluations.allSatisfy { $0.trigger == "on_entry" && $0.region == "1" && $0.rule == "11" })
    }

    @Test func onExitRulesSeeExitsOnly() throws {
        let exit = #"{"id": "21", "rule": {"trigger": "on_exit", "latch_time": ""}, "action": {"notify_user": "Bye"}}"#
        var harness = Harness(try Self.regions(Self.region("2", rules: [exit])))
        harness.go(.enter, at: Self.monday)
        #expect(harness.evaluations.isEmpty)
        harness.go(.exit, at: Self.monday + 5)
        #expect(harness.verdicts == ["fired"])
        #expect(harness.evaluations.first?.trigger == "on_exit")
        #expect(harness.notifications.map(\.body) == ["Bye"])
    }

    @Test func otherTriggersAreLoadedAndNeverSeeAnything() throws {
        let other = #"{"id": "31", "rule": {"trigger": "on_dwell", "latch_time": 0}, "action": {"notify_user": "x"}}"#
        var harness = Harness(try Self.regions(Self.region("3", rules: [other])))
        harness.visit(at: Self.monday)
        #expect(harness.outputs.isEmpty)
        #expect(harness.engine.regions[0].rules[0].trigger == "on_dwell")
    }

    @Test func regionsThatAttachNowhereNeverFire() throws {
        var harness = Harness(try Self.regions(Self.region("9", major: 99, rules: [Self.rule("91")])))
        harness.visit(Region.zone(Self.uuid, major: 99), at: Self.monday)
        #expect(harness.outputs.isEmpty)
    }

    // MARK: - Reasons

    @Test func dailyCapStopsTheRuleOnceTheDayHasItsNotifications() throws {
        var settings = Harness.defaults
        settings.maxNotificationsPerDay = 2
        var harness = Harness(try Self.regions(Self.region("1", rules: [Self.rule("11")])), settings: settings)
        for visit in 0..<3 { harness.visit(at: Self.monday + Double(visit) * 10) }
        #expect(harness.verdicts == ["fired", "fired", "daily_cap"])
        #expect(harness.notifications.count == 2)
        #expect(harness.engine.state.day == DayCount(date: "2013-11-04", count: 2))
    }

    @Test func startAndEndBoundTheRule() throws {
        let future = Self.region("1", extra: #""start": "2013-11-05T00:00:00+01:00""#, rules: [Self.rule("11")])
        let past = Self.region("2", major: 43, extra: #""end": "2013-11-01T00:00:00+01:00""#, rules: [Self.rule("21")])
        let open = Self.region("3", extra: #""start": "", "end": null"#, rules: [Self.rule("31")])
        var harness = Harness(try Self.regions(future, past, open))
        harness.visit(at: Self.monday)
        harness.visit(Self.otherZone, at: Self.monday + 10)
        #expect(
            harness.evaluations.map { "\($0.region):\($0.reason?.rawValue ?? "fired")" } == [
                "1:before_start", "3:fired", "2:after_end",
            ])
    }

    @Test func aClosedScheduleStopsTheRule() throws {
        // Open Monday 11:00–12:00 Paris time only.
        let schedule = #""schedule": {"week": {"mon": {"open": 39600, "close": 43200}}}"#
        var harness = Harness(try Self.regions(Self.region("1", extra: schedule, rules: [Self.rule("11")])))
        harness.visit(at: Self.monday)  // 10:00
        harness.visit(at: Self.monday + 3600)  // 11:00
        harness.visit(at: Self.monday + 7200)  // 12:00: closed again
        #expect(harness.verdicts == ["schedule_closed", "fired", "schedule_closed"])
        // A closed schedule still counts the event.
        #expect(harness.evaluations.map(\.count) == [1, 2, 3])
    }

    @Test func groupLimitsCountTheGroupsTransitions() throws {
        let group = #""group_id": "1000""#
        let first = Self.region(
            "1", extra: group, rules: [Self.rule("11", #""min_group_events": 2, "max_group_events": 3"#)])
        let second = Self.region(
            "2", major: 43, extra: group, rules: [Self.rule("21", #""min_group_events": 2, "max_group_events": 3"#)])
        var harness = Harness(try Self.regions(first, second))
        harness.visit(at: Self.monday)
        harness.visit(Self.otherZone, at: Self.monday + 10)
        harness.visit(at: Self.monday + 20)
        harness.visit(Self.otherZone, at: Self.monday + 30)
        #expect(harness.verdicts == ["min_group_events", "fired", "fired", "max_group_events"])
        #expect(harness.evaluations.map(\.groupCount) == [1, 2, 3, 4])
        #expect(harness.evaluations.map(\.count) == [1, 1, 2, 2])
    }

    @Test func twoRulesOnOneRegionCountAGroupTransitionOnce() throws {
        let group = #""group_id": "7""#
        let twoRules = [Self.rule("11"), Self.rule("12", #""latch_time": 3"#)]
        var harness = Harness(try Self.regions(Self.region("1", extra: group, rules: twoRules)))
        harness.visit(at: Self.monday)
        harness.advance(to: Self.monday + 10)
        harness.visit(at: Self.monday + 20)
        harness.advance(to: Self.monday + 30)
        // Rule 12's latch holds the entry 3 s, then its exit replaces it: only rule 11 counts.
        #expect(harness.evaluations.map { "\($0.rule):\($0.groupCount!)" } == ["11:1", "11:2"])
        #expect(harness.engine.state.groups[GroupKey(group: "7", trigger: "on_entry")]?.count == 2)

        // Without the early exit, both rules accept the same entry: the group counts it once.
        var both = Harness(try Self.regions(Self.region("1", extra: group, rules: twoRules)))
        both.go(.enter, at: Self.monday)
        both.advance(to: Self.monday + 10)
        #expect(both.evaluations.map { "\($0.rule):\($0.count):\($0.groupCount!)" } == ["11:1:1", "12:1:1"])
    }

    @Test func theServerHooksAnswersGiveTheirReasons() throws {
        let hooked = Self.rule("11", action: #""notify_user": "Hi", "notify_server": "http://example.test/{id}""#)
        for (answer, reason) in [
            (ServerAnswer.disable, "server_disabled"), (.failed("HTTP status 500"), "server_error"),
            (.declined("exit 1"), "declined"), (.enable, "fired"),
        ] {
            var harness = Harness(try Self.regions(Self.region("1", rules: [hooked])))
            harness.go(.enter, at: Self.monday)
            let actions = harness.engine.takeActions()
            #expect(actions == [.fetch(call: 1, url: "http://example.test/1", timeout: 5)])
            #expect(harness.outputs.isEmpty, "nothing is said until the server answers")
            harness.engine.answer(
                answer, to: 1, at: Timestamp(microseconds: Int64(Self.monday * 1e6) + 250_000), into: &harness.outputs)
            #expect(harness.verdicts == [reason])
            #expect(harness.notifications.count == (reason == "fired" ? 1 : 0))
            if case .failed = answer { #expect(harness.evaluations.first?.detail == "HTTP status 500") }
        }
    }

    @Test func withAutoServerNotifyOffTheURLIsPublishedAndTheScriptDecides() throws {
        let hooked = Self.rule("11", action: #""notify_user": "Hi", "notify_server": "http://example.test/{udid}""#)
        var settings = Harness.defaults
        settings.autoServerNotify = false
        // No Script.server: the rule goes on at once.
        var harness = Harness(try Self.regions(Self.region("1", rules: [hooked])), settings: settings)
        harness.go(.enter, at: Self.monday)
        #expect(harness.outputs.map(\.type) == ["server", "rule", "notification"])
        #expect(harness.engine.takeActions().isEmpty)
        if case .server(_, let notice) = harness.outputs.first { #expect(notice.url == "http://example.test/dev%201") }

        settings.serverScript = true
        var scripted = Harness(try Self.regions(Self.region("1", rules: [hooked])), settings: settings)
        scripted.go(.enter, at: Self.monday)
        #expect(scripted.outputs.map(\.type) == ["server"])
        let actions = scripted.engine.takeActions()
        #expect(actions.count == 1)
        guard case .runServerScript(let call, let output)? = actions.first else { return }
        #expect(output == scripted.outputs.first)
        scripted.engine.answer(.declined("exit status 1"), to: call, at: output.time, into: &scripted.outputs)
        #expect(scripted.verdicts == ["declined"])
    }

    @Test func evaluationsWaitingBehindAServerCallKeepTheirOrder() throws {
        let hooked = Self.rule("11", action: #""notify_user": "Hi", "notify_server": "http://example.test/""#)
        var harness = Harness(
            try Self.regions(Self.region("1", rules: [hooked, Self.rule("12", #""min_events": 5"#)])))
        harness.go(.enter, at: Self.monday)
        #expect(harness.outputs.isEmpty, "rule 12 waits behind rule 11")
        #expect(harness.engine.isWaiting)
        harness.engine.answer(
            .enable, to: 1, at: Timestamp(microseconds: Int64(Self.monday * 1e6)), into: &harness.outputs)
        #expect(harness.outputs.map { "\($0.type)" } == ["rule", "notification", "rule"])
        #expect(harness.verdicts == ["fired", "min_events"])
        // An answer to nothing changes nothing.
        harness.engine.answer(.enable, to: 99, at: Timestamp(microseconds: 0), into: &harness.outputs)
        #expect(harness.outputs.count == 3)
    }

    @Test func aReplacingEngineNumbersItsActionsAfterTheOldOnes() throws {
        let hooked = Self.rule("11", action: #""notify_user": "Hi", "notify_server": "http://example.test/""#)
        let regions = try Self.regions(Self.region("1", rules: [hooked]))
        var old = Harness(regions)
        old.go(.enter, at: Self.monday)
        #expect(old.engine.takeActions().count == 1)
        var next = Harness(regions)
        next.engine.numberActions(after: old.engine)
        next.go(.enter, at: Self.monday + 10)
        let actions = next.engine.takeActions()
        #expect(actions == [.fetch(call: 2, url: "http://example.test/", timeout: 5)])
        // The old engine's answer (call 1) is not this one's.
        next.engine.answer(.disable, to: 1, at: Timestamp(microseconds: 0), into: &next.outputs)
        #expect(next.outputs.isEmpty)
    }

    @Test func aNotifyDecisionReplacesTheRulesTexts() throws {
        let hooked = Self.rule(
            "11", action: #""notify_user": "Rule text", "open_pbk": "pbk-1", "notify_server": "http://example.test/""#)
        var harness = Harness(try Self.regions(Self.region("1", rules: [hooked])))
        harness.go(.enter, at: Self.monday)
        let replaced = RuleAction(
            alertBody: "Server text", payload: .object(["k": .string("v")]), openURL: "http://shop.test/{id}?u={udid}")
        harness.engine.answer(
            .notify(replaced), to: 1, at: Timestamp(microseconds: Int64(Self.monday * 1e6)), into: &harness.outputs)
        let notification = try #require(harness.notifications.first)
        #expect(notification.body == "Server text")
        #expect(notification.payload == .object(["k": .string("v")]))
        #expect(notification.url == "http://shop.test/1?u=dev%201")
        #expect(notification.pbk == nil)
        #expect(notification.title == "Shop 1")
    }

    // MARK: - Latch

    @Test func theLatchDiscardsAPendingEventForTheNextOne() throws {
        var harness = Harness(try Self.regions(Self.region("1", rules: [Self.rule("11", #""latch_time": 5"#)])))
        harness.go(.enter, at: Self.monday)
        harness.go(.exit, at: Self.monday + 2)  // discards the entry
        harness.advance(to: Self.monday + 20)  // the exit is accepted at +7: not this rule's trigger
        #expect(harness.outputs.isEmpty)
        harness.go(.enter, at: Self.monday + 30)
        harness.go(.exit, at: Self.monday + 33)
        harness.go(.enter, at: Self.monday + 36)  // restarts the timer with this entry
        harness.advance(to: Self.monday + 40.999)
        #expect(harness.outputs.isEmpty)
        harness.advance(to: Self.monday + 41)
        #expect(harness.verdicts == ["fired"])
        #expect(harness.evaluations.first?.count == 1, "one accepted entry, not three")
        #expect(harness.outputs.first?.time == Timestamp(microseconds: Int64((Self.monday + 41) * 1e6)))
    }

    @Test func latchesExpireInTimeThenFileOrder() throws {
        let rules = [
            Self.rule("11", #""latch_time": 2"#), Self.rule("12", #""latch_time": 1"#),
            Self.rule("13", #""latch_time": 2"#),
        ]
        var harness = Harness(try Self.regions(Self.region("1", rules: rules)))
        harness.go(.enter, at: Self.monday)
        #expect(harness.engine.nextDeadline == Timestamp(microseconds: Int64((Self.monday + 1) * 1e6)))
        harness.advance(to: Self.monday + 5)
        #expect(harness.evaluations.map(\.rule) == ["12", "11", "13"])
        #expect(harness.engine.nextDeadline == nil)
    }

    // MARK: - Counters

    @Test func changedLimitsRestartARulesCount() throws {
        var first = Harness(try Self.regions(Self.region("1", rules: [Self.rule("11", #""max_events": 4"#)])))
        for visit in 0..<3 { first.visit(at: Self.monday + Double(visit) * 10) }
        let kept = first.engine.state
        #expect(kept.rules[RuleKey(region: "1", rule: "11")]?.count == 3)

        var same = Harness(
            try Self.regions(Self.region("1", rules: [Self.rule("11", #""max_events": 4"#)])), state: kept)
        same.visit(at: Self.monday + 100)
        #expect(same.evaluations.map(\.count) == [4])

        var changed = Harness(
            try Self.regions(Self.region("1", rules: [Self.rule("11", #""max_events": 5"#)])), state: kept)
        changed.visit(at: Self.monday + 100)
        #expect(changed.evaluations.map(\.count) == [1])
    }

    @Test func changedGroupLimitsRestartTheGroupsCount() throws {
        let group = #""group_id": "g""#
        var first = Harness(
            try Self.regions(Self.region("1", extra: group, rules: [Self.rule("11", #""max_group_events": 9"#)])))
        first.visit(at: Self.monday)
        first.visit(at: Self.monday + 10)
        let kept = first.engine.state
        var changed = Harness(
            try Self.regions(Self.region("1", extra: group, rules: [Self.rule("11", #""max_group_events": 8"#)])),
            state: kept)
        changed.visit(at: Self.monday + 100)
        #expect(changed.evaluations.map { "\($0.count)/\($0.groupCount!)" } == ["3/1"])
    }

    @Test func changesAreWhatTheStepChanged() throws {
        var harness = Harness(try Self.regions(Self.region("1", extra: #""group_id": "g""#, rules: [Self.rule("11")])))
        harness.visit(at: Self.monday)
        let changes = harness.engine.takeChanges()
        #expect(changes.rules[RuleKey(region: "1", rule: "11")] == RuleCounter(count: 1, fingerprint: "0-any"))
        #expect(changes.groups[GroupKey(group: "g", trigger: "on_entry")]?.count == 1)
        #expect(changes.day == DayCount(date: "2013-11-04", count: 1))
        #expect(harness.engine.takeChanges().isEmpty)
    }

    /// The week the clocks went back in Paris (Sunday 2013-10-27 has 25 hours): the day's count
    /// starts again at local midnight, not at UTC midnight nor 24 hours after the last one.
    @Test func theDailyCapResetsAtLocalMidnightInADSTWeek() throws {
        var settings = Harness.defaults
        settings.maxNotificationsPerDay = 1
        var harness = Harness(try Self.regions(Self.region("1", rules: [Self.rule("11")])), settings: settings)
        let instants = [
            "2013-10-26T21:30:00Z",  // Saturday 23:30 CEST: fired
            "2013-10-26T22:10:00Z",  // Sunday 00:10 CEST: a new day, fired
            "2013-10-27T22:30:00Z",  // Sunday 23:30 CET (UTC says Monday is near): capped
            "2013-10-27T23:00:30Z",  // Monday 00:00:30 CET: fired
            "2013-10-28T12:00:00Z",  // Monday 13:00: capped
        ]
        for text in instants {
            let time = try #require(Timestamp(iso8601: text))
            harness.visit(at: Double(time.microseconds) / 1e6)
        }
        #expect(harness.verdicts == ["fired", "fired", "daily_cap", "fired", "daily_cap"])
        #expect(harness.engine.state.day == DayCount(date: "2013-10-28", count: 1))
    }

    // MARK: - Proximity and notifications

    @Test func maximumProximityQualifiesPresence() throws {
        let near = Self.rule("11", #""maximum_proximity": "1""#)
        var harness = Harness(try Self.regions(Self.region("1", rules: [near])))
        harness.go(.enter, at: Self.monday)
        harness.location(1, .far, at: Self.monday + 1)
        #expect(harness.outputs.isEmpty, "inside, but only far")
        harness.location(2, .near, at: Self.monday + 2)
        #expect(harness.verdicts == ["fired"])
        harness.location(2, .far, at: Self.monday + 3)
        harness.location(1, .immediate, at: Self.monday + 4)
        #expect(harness.evaluations.map(\.count) == [1, 2], "left at far, back at immediate")
        harness.go(.exit, at: Self.monday + 5)
        harness.location(1, .immediate, at: Self.monday + 6)
        #expect(harness.evaluations.count == 2, "a class outside the region is no presence")
    }

    @Test func notificationsFollowTheirAction() throws {
        let rules = [
            Self.rule(
                "11",
                action: #""notify_user": "With both", "open_url": "http://x.test/{namespace}/{nope}", "open_pbk": "p""#),
            Self.rule(
                "12",
                action: #""notify_user": "{\"alertBody\": \"Embedded\", \"payload\": {\"n\": 1}}", "open_pbk": "p2""#),
            Self.rule("13", action: #""notify_user": "", "open_url": "http://ignored.test""#),
        ]
        var harness = Harness(try Self.regions(Self.region("1", rules: rules)))
        harness.go(.enter, at: Self.monday)
        #expect(harness.verdicts == ["fired", "fired", "fired"])
        #expect(harness.outputs.map(\.type) == ["rule", "notification", "rule", "notification", "rule"])
        let (first, second) = (harness.notifications[0], harness.notifications[1])
        #expect(first.url == "http://x.test/ns/{nope}" && first.pbk == nil && first.delivery == .automatic)
        #expect(second.body == "Embedded" && second.payload == .object(["n": .number(1)]))
        #expect(second.url == nil && second.pbk == "p2")
        #expect(harness.engine.state.day?.count == 2, "an empty body is no notification")
    }

    @Test func withAutoUserNotifyOffTheApplicationDelivers() throws {
        var settings = Harness.defaults
        settings.autoUserNotify = false
        var harness = Harness(try Self.regions(Self.region("1", rules: [Self.rule("11")])), settings: settings)
        harness.go(.enter, at: Self.monday)
        #expect(harness.notifications.map(\.delivery) == [.application])
        #expect(harness.outputs.last?.json.contains(#""delivery":"application""#) == true)
    }

    @Test func outputsReadAsTheSpecShowsThem() throws {
        let hooked = Self.rule("11", action: #""notify_user": "Hi", "notify_server": "http://e.test/{id}""#)
        var settings = Harness.defaults
        settings.autoServerNotify = false
        var harness = Harness(
            try Self.regions(Self.region("1", extra: #""group_id": "g""#, rules: [hooked])), settings: settings)
        harness.go(.enter, at: Self.monday)
        #expect(
            harness.outputs.map(\.json) == [
                #"{"t":"2013-11-04T09:00:00.000Z","type":"server","region":"1","rule":"11","url":"http://e.test/1"}"#,
                #"{"t":"2013-11-04T09:00:00.000Z","type":"rule","region":"1","rule":"11","trigger":"on_entry","fired":true,"count":1,"groupCount":1}"#,
                #"{"t":"2013-11-04T09:00:00.000Z","type":"notification","region":"1","rule":"11","title":"Shop 1","body":"Hi","payload":null,"url":null,"pbk":null,"delivery":"automatic"}"#,
            ])
    }

    @Test func aNewDocumentKeepsCountsAndPresence() throws {
        var harness = Harness(try Self.regions(Self.region("1", rules: [Self.rule("11", #""maximum_proximity": 1"#)])))
        harness.go(.enter, at: Self.monday)
        harness.location(1, .near, at: Self.monday + 1)
        #expect(harness.evaluations.map(\.count) == [1])
        harness.engine = harness.engine.replacingRegions(
            with: try Self.regions(Self.region("1", rules: [Self.rule("11", #""maximum_proximity": 1"#)])),
            hierarchy: Self.hierarchy)
        harness.location(2, .near, at: Self.monday + 2)
        #expect(harness.evaluations.count == 1, "still qualified: no new entry")
        harness.location(1, .far, at: Self.monday + 3)
        harness.location(2, .far, at: Self.monday + 4)
        harness.location(1, .immediate, at: Self.monday + 5)
        #expect(harness.evaluations.map(\.count) == [1, 2])
    }
}
