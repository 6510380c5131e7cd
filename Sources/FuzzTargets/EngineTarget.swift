import BeaconCore
import BeaconConfiguration
import Engine
import Foundation
import RegionMonitor
import Rules

/// The whole engine under a fuzzed program of sightings, time passing, wall clock steps, mode switches, alert
/// commands and answers to its server calls, with its promises checked after every input:
/// outputs are well-formed JSON whose times never go back (but by a clock step), a region exits only after it entered
/// and enters only when outside, dwell is never negative, and every request is answerable.
///
/// The configuration is small on purpose (five beacons in two Areas under a three-region cap,
/// alerts, rules with a latch, a schedule and a server call), so that short programs reach every
/// policy switch; programs of odd length run it with the adaptive exit.
enum EngineTarget {
    static let ini = """
        LocationBaseBeacon.4201 = 566C5595-6EC7-4F08-909F-C954BDCA6CD3,42,1
        LocationBaseBeacon.4202 = 566C5595-6EC7-4F08-909F-C954BDCA6CD3,42,2
        LocationBaseBeacon.4301 = 566C5595-6EC7-4F08-909F-C954BDCA6CD3,43,1
        LocationBaseBeacon.101 = ACFD165E-C0C0-11E3-9BBE-1A514932AC01,1,101
        LocationBaseBeacon.102 = ACFD165E-C0C0-11E3-9BBE-1A514932AC01,2,102
        LocationAlert.4201 = near,<=,Open the door,Door
        LocationAlert.101 = far,>=
        Alert.resetAfter = 5
        Monitor.maxRegions = 3
        Monitor.exitTimeout = 4
        Monitor.timezone = Europe/Paris
        Monitor.udid = fuzz
        Rules.source = fuzz.json
        Rules.maxNotificationsPerDay = 3

        """

    static let rulesDocument = """
        {"u_beacons": [{"id": "1", "group_id": "g", "name": "Shop", "proximity_uid": "566C5595-6EC7-4F08-909F-C954BDCA6CD3",
          "major": 42, "timezone": {"zone": "Europe/Paris"},
          "schedule": {"week": {"mon": {"open": 32400, "close": 68400}, "tue": {"open": 0, "close": 86400},
            "wed": {"open": 79200, "close": 93600}}, "breaks": {"mon": {"open": 46800, "close": 54000}}},
          "rules_actions": [
            {"id": "11", "rule": {"trigger": "on_entry", "min_events": 1, "max_events": 5, "latch_time": 3},
             "action": {"notify_user": "Welcome", "notify_server": "http://127.0.0.1:9/enter/{id}/{udid}"}},
            {"id": "12", "rule": {"trigger": "on_exit", "min_events": 2, "latch_time": 0},
             "action": {"notify_user": "Bye"}},
            {"id": "13", "rule": {"trigger": "on_entry", "maximum_proximity": 1, "latch_time": 2},
             "action": {"notify_user": "Close"}}]},
         {"id": "2", "group_id": "g", "proximity_uid": "ACFD165E-C0C0-11E3-9BBE-1A514932AC01",
          "rules_actions": [{"id": "21", "rule": {"trigger": "on_entry", "max_events": 2, "max_group_events": 3},
             "action": {"notify_server": "http://127.0.0.1:9/b"}}]}]}
        """

    struct Setup: Sendable {
        var configuration: Configuration
        var rules: [RuleRegion]
        var beacons: [BeaconID]
        /// Every configured region, and one that is not: what a phone may say it entered.
        var regions: [Region]
    }

    static let setup: Setup = {
        guard case .success(let configuration) = Configuration.load(Array(ini.utf8), path: "/fuzz/hsyco.ini"),
            case .success(let document) = RulesDocument.load(Array(rulesDocument.utf8), name: "fuzz.json")
        else { preconditionFailure("the engine target's own configuration does not load") }
        precondition(document.regions.count == 2 && configuration.alerts.count == 2)
        let beacons =
            configuration.hierarchy.beacons.map(\.id) + [
                BeaconID(uuid: UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0") ?? UUID(), major: 7, minor: 7)
            ]
        let hierarchy = configuration.hierarchy
        let regions: [Region] =
            hierarchy.areas.map(\.region) + hierarchy.zones.map(\.region) + beacons.map { .beacon($0) }
        return Setup(configuration: configuration, rules: document.regions, beacons: beacons, regions: regions)
    }()

    /// Reads the program a byte at a time; past the end, zeros.
    struct Program {
        let bytes: [UInt8]
        var at = 0
        mutating func next() -> UInt8 {
            defer { at += 1 }
            return at < bytes.count ? bytes[at] : 0
        }
        var done: Bool { at >= bytes.count }
    }

    static func run(_ bytes: [UInt8]) {
        let setup = setup
        // Programs of odd length run under `Monitor.exitTimeout = auto` (docs/behaviour.md §18).
        var configuration = setup.configuration
        configuration.monitor.adaptiveExit = bytes.count % 2 == 1
        var engine = Engine(
            configuration: configuration,
            identity: MonitorIdentity(session: "s", address: "192.0.2.1", userid: "u"),
            rules: setup.rules, ruleSettings: RuleSettings(setup.configuration, machineID: nil))
        var checker = Checker()
        var actions: [EngineAction] = []
        var clock = Timestamp(microseconds: 1_711_843_200_000_000)  // 2024-03-31, the night Paris springs forward
        var calls: [Int] = []
        var program = Program(bytes: bytes)
        engine.start(at: clock, into: &actions)
        checker.check(&actions, calls: &calls)
        while !program.done {
            let operation = program.next()
            switch operation % 8 {
            case 0, 1:
                let beacon = setup.beacons[Int(program.next()) % setup.beacons.count]
                let level = program.next()
                let rssi: Int8 = level == 255 ? 127 : -Int8(truncatingIfNeeded: 30 + Int(level % 70))
                let advertisement = Advertisement(
                    format: level & 0x80 == 0 ? .ibeacon : .altbeacon, beacon: beacon, power: -59, rssi: rssi,
                    address: nil)
                engine.handle(.advertisement(advertisement), at: clock, into: &actions)
            case 2:
                clock = clock.adding(seconds: Double(program.next()) / 10)
                engine.advance(to: clock, into: &actions)
            case 3:
                // Minutes to a day and more: midnights, the schedule's hours, alert resets.
                clock = clock.adding(seconds: Double(program.next()) * 600)
                engine.advance(to: clock, into: &actions)
            case 4 where operation & 0x20 != 0:
                // A phone's own monitoring (OwnTracks, docs/behaviour.md §15.1): any region, entered or left.
                let region = setup.regions[Int(program.next()) % setup.regions.count]
                engine.handle(.deviceTransition(region, entered: operation & 0x40 != 0), at: clock, into: &actions)
            case 4:
                engine.handle(.mode(operation & 0x10 == 0 ? .foreground : .background), at: clock, into: &actions)
            case 5:
                let ids = ["4201", "101", "4202", "nope", ""]
                let name = operation & 0x10 == 0 ? "alert/done" : (operation & 0x20 == 0 ? "alert/decline" : "frob")
                engine.handle(
                    .command(TraceCommand(name: name, arguments: ["id": ids[Int(program.next()) % ids.count]])),
                    at: clock, into: &actions)
            case 6:
                guard !calls.isEmpty else { continue }
                let call = calls.remove(at: Int(program.next()) % calls.count)
                let answers: [ServerAnswer] = [
                    .enable, .disable, .failed("timeout"), .declined("no"),
                    .notify(RuleAction(alertBody: "Hi", payload: nil, openURL: nil, openPBK: nil)),
                ]
                engine.handle(
                    .answer(answers[Int(operation >> 4) % answers.count], call: call), at: clock, into: &actions)
            case 7 where operation & 0x10 != 0:
                // The wall clock stepped by up to ±2 days: instants move, no time passes.
                let delta = (Int64(program.next()) - 128) * 1_350_000_000
                engine.shiftClock(by: delta)
                clock = Timestamp(microseconds: clock.microseconds + delta)
                checker.last = Timestamp(
                    microseconds: checker.last.microseconds.addingReportingOverflow(delta).partialValue)
            default:
                // An input dated before the engine's clock is taken at the clock.
                let earlier = clock.adding(seconds: -Double(program.next()))
                engine.handle(.mode(.foreground), at: earlier, into: &actions)
                _ = engine.advanceToNextDeadline(notAfter: nil, into: &actions)
                clock = max(clock, engine.now)
            }
            checker.check(&actions, calls: &calls)
        }
        while engine.advanceToNextDeadline(notAfter: nil, into: &actions) {
            checker.check(&actions, calls: &calls)
        }
        checker.check(&actions, calls: &calls)
        precondition(engine.nextOutputDeadline == nil, "an output deadline remains after every one was fired")
    }

    /// What the outputs so far promise about the next ones.
    struct Checker {
        var last = Timestamp(microseconds: .min)
        var inside: Set<String> = []

        mutating func check(_ actions: inout [EngineAction], calls: inout [Int]) {
            for action in actions {
                switch action {
                case .output(let output):
                    precondition(output.time >= last, "\(output.json) went back from \(last)")
                    last = output.time
                    let json = output.json
                    precondition(
                        (try? JSONSerialization.jsonObject(with: Data(json.utf8))) is [String: Any], "not JSON: \(json)"
                    )
                    guard case .transition(_, let transition) = output else { continue }
                    let region = transition.region.description
                    switch transition.direction {
                    case .enter: precondition(inside.insert(region).inserted, "entered \(region) twice")
                    case .exit:
                        precondition(inside.remove(region) != nil, "exited \(region) without entering")
                        precondition((transition.dwell ?? 0) >= 0 && (transition.dwellToday ?? 0) >= 0, json)
                    }
                case .persist:
                    break
                case .request(let request):
                    switch request {
                    case .fetch(let call, _, _), .runServerScript(let call, _): calls.append(call)
                    }
                }
            }
            actions.removeAll(keepingCapacity: true)
        }
    }
}
