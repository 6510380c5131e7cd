import BeaconCore
import BeaconConfiguration
import Engine
import Fleet
import Foundation
import RegionMonitor
import Rules
import TestSupport
import Testing

/// The fleet engine (docs/behaviour.md §15): a device per engine, and an OwnTracks phone whose regions follow
/// its monitored set under the 20-region cap (15.1).
@Suite struct DevicesTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    static let area1 = UUID(uuidString: "112EBB9D-B8C9-4ABD-9EB3-43578BF86A41")!
    static let area2 = UUID(uuidString: "22A17B43-552A-4482-865F-597D4C10BACC")!
    static let start = 1_700_000_000.0

    /// The conformance office of 24 Zones in 2 Areas (more regions than the cap), with a fleet.
    static func configuration(_ extra: String = "") throws -> Configuration {
        let path = folder.appendingPathComponent("conformance/scenarios/areas-then-zones/hsyco.ini").path
        var text = try String(contentsOfFile: path, encoding: .utf8)
        text += "\nMQTT.host = 127.0.0.1\nFleet.owntracks = owntracks/+/+\nFleet.theengs = home/+/BTtoMQTT/#\n" + extra
        return try Configuration.load(Array(text.utf8), path: path).get()
    }

    static func fleet(_ extra: String = "") throws -> Devices {
        Devices(
            configuration: try configuration(extra), identity: MonitorIdentity(session: "s", address: "a", userid: "u"))
    }

    static func time(_ seconds: Double) -> Timestamp { Timestamp(secondsSinceEpoch: start + seconds)! }

    /// A beacon of Zone 3 of the first Area, heard at -60 dBm.
    static let zone3 = Advertisement(
        format: .ibeacon, beacon: BeaconID(uuid: area1, major: 3, minor: 1), power: -59, rssi: -60, address: nil)

    /// A Theengs tracker's report of `advertisement`, with no time of its own.
    static func report(_ device: String, _ advertisement: Advertisement = zone3) -> FleetMessage {
        FleetMessage(
            source: .theengs, device: device,
            observations: [FleetObservation(time: nil, kind: .sighting(advertisement, phoneProximity: nil))])
    }

    /// A walk through the office: the phone always holds exactly the monitored set (Areas while
    /// outside, the Zones of the Area it is in), never more than 20, and the device enters and
    /// leaves as the walk goes. The phone behaves as the OwnTracks app does (SimulatedPhone).
    @Test func aPhoneHoldsExactlyTheHSYCOSetThroughAWalk() throws {
        var link = PhoneLink(fleet: try Self.fleet(), start: Self.start)
        link.add(SimulatedPhone(base: "owntracks/alice/phone", lastFix: Self.start))
        func place(_ area: UUID, _ major: UInt16, accuracy: Double = 1) -> [BeaconID: Double] {
            [BeaconID(uuid: area, major: major, minor: 1): accuracy]
        }
        // A first message (a location) makes the device, its first command (the two Areas) and
        // the question for its own waypoints.
        var lines = try link.locate("alice-phone", at: 0)
        #expect(link.phones["alice-phone"]?.beaconRegions == [.area(Self.area1), .area(Self.area2)])
        #expect(lines.isEmpty)
        #expect(link.commands["alice-phone"]?.first?.contains(#""action":"setWaypoints""#) == true)
        #expect(link.commands["alice-phone"]?.last == Waypoints.request)

        lines = try link.move("alice-phone", to: place(Self.area1, 3), at: 10)
        #expect(lines == ["enter \(Self.area1)", "enter \(Self.area1):3"], "\(lines)")
        #expect(link.phones["alice-phone"]?.beaconRegions.count == 12)
        #expect(link.phones["alice-phone"]?.beaconRegions.allSatisfy { $0.kind == .zone } == true)

        lines = try link.move("alice-phone", to: place(Self.area1, 7), at: 60)
        #expect(lines == ["enter \(Self.area1):7", "exit \(Self.area1):3"], "\(lines)")

        lines = try link.move("alice-phone", to: place(Self.area2, 2), at: 120)
        #expect(lines.prefix(2) == ["exit \(Self.area1):7", "exit \(Self.area1)"], "\(lines)")
        #expect(lines.suffix(2) == ["enter \(Self.area2)", "enter \(Self.area2):2"], "\(lines)")
        #expect(
            link.phones["alice-phone"]?.beaconRegions
                == Set((1...12).map { Region.zone(Self.area2, major: UInt16($0)) }))

        lines = try link.move("alice-phone", to: [:], at: 180)
        #expect(lines == ["exit \(Self.area2):2", "exit \(Self.area2)"], "\(lines)")
        #expect(link.phones["alice-phone"]?.beaconRegions == [.area(Self.area1), .area(Self.area2)])
        #expect(link.phones["alice-phone"].map { $0.most <= SimulatedPhone.iOSLimit } == true)
    }

    /// The own radio is the table's first device (id `''`): its sightings reach its engine alone,
    /// its step comes out named `''`, and a reload reaches it first, then every fleet device.
    @Test func theOwnRadioIsTheFirstDeviceOfTheTable() throws {
        var table = try Self.fleet()
        var actions: [Devices.Action] = []
        table.start(at: Self.time(0), into: &actions)
        #expect(table.ids == [.own] && table.fleet.isEmpty)
        actions = []
        table.handle(.advertisement(Self.zone3), at: Self.time(1), into: &actions)
        let devices = Set(
            actions.compactMap { action -> DeviceID? in
                guard case .engine(let device, _) = action else { return nil }
                return device
            })
        #expect(devices == [.own], "\(actions)")
        #expect(table.own.monitor.insideRegions.contains(.area(Self.area1)))
        table.handle(Self.report("cart-1"), at: Self.time(2), into: &actions)
        #expect(table.ids == [.own, .fleet("cart-1")])
        actions = []
        let renamed = try Self.configuration("LocationAreaName.\(Self.area1) = Warehouse\n")
        table.handle(.reconfigure(renamed, rules: nil, settings: RuleSettings()), at: Self.time(3), into: &actions)
        var order: [DeviceID] = []
        for case .engine(let device, .persist) in actions where order.last != device { order.append(device) }
        #expect(order.first == .own && order.contains(.fleet("cart-1")), "\(order)")
    }

    /// A fleet message with an empty device id names no device: it is refused, and neither the
    /// own radio (whose row the state database keeps under `''`) nor a new device hears it.
    @Test func anEmptyDeviceIDIsRefusedAndNeverReachesTheOwnRadio() throws {
        var table = try Self.fleet()
        var actions: [Devices.Action] = []
        table.start(at: Self.time(0), into: &actions)
        actions = []
        #expect(table.handle(Self.report(""), at: Self.time(1), into: &actions) == .unknownDevice)
        #expect(actions.isEmpty, "\(actions)")
        #expect(table.ids == [.own] && table.own.monitor.insideRegions.isEmpty)
    }

    /// A step of the wall clock moves every device's instants, the fleet's as the own radio's: a
    /// tracker sighted just before the clock jumps an hour ahead exits 10 s after its sighting
    /// on the new clock, not at once.
    @Test func aWallClockStepMovesEveryDevicesTimers() throws {
        var table = try Self.fleet()
        var actions: [Devices.Action] = []
        table.start(at: Self.time(0), into: &actions)
        table.handle(Self.report("cart-1"), at: Self.time(1), into: &actions)
        #expect(table.engine("cart-1")?.monitor.insideRegions.contains(.area(Self.area1)) == true)
        table.shiftClock(by: 3_600_000_000)
        #expect(table.nextWake.map { $0 >= Self.time(3_601) } == true, "\(String(describing: table.nextWake))")
        actions = []
        table.advance(to: Self.time(3_605), into: &actions)
        #expect(table.engine("cart-1")?.monitor.insideRegions.contains(.area(Self.area1)) == true)
        table.advance(to: Self.time(3_612), into: &actions)
        #expect(table.engine("cart-1")?.monitor.insideRegions.isEmpty == true)
    }

    /// The phone's own waypoints come off the cap: with 3 geofences, it is given 17 of an Area's
    /// Zones, never more than 20 regions in all; the Zone it stands in is one of them.
    @Test func aPhonesOwnWaypointsComeOffTheCap() throws {
        var link = PhoneLink(fleet: try Self.fleet("Monitor.maxRegions = 20\n"), start: Self.start)
        link.add(
            SimulatedPhone(base: "owntracks/bob/phone", lastFix: Self.start, geofences: ["Home", "Gym", "Office"]))
        _ = try link.locate("bob-phone", at: 0)
        #expect(link.fleet.cap(of: "bob-phone") == 17)
        // 12 Zones fit under 17: all of them.
        let lines = try link.move("bob-phone", to: [BeaconID(uuid: Self.area1, major: 12, minor: 1): 1], at: 10)
        #expect(lines == ["enter \(Self.area1)", "enter \(Self.area1):12"], "\(lines)")
        let phone = try #require(link.phones["bob-phone"])
        #expect(phone.beaconRegions.count == 12 && phone.iOS.count == 15 && phone.most <= SimulatedPhone.iOSLimit)
        #expect(phone.beaconRegions == Set(link.monitored("bob-phone")))
    }

    /// A first answer to the request for the phone's waypoints with none of its own leaves the
    /// cap as it was (the whole cap until then, docs/behaviour.md §15.1), so the engine goes on:
    /// no `monitoring` again, and what the phone ranged before the answer still holds the
    /// nearest against a beacon less than `Monitor.nearestMargin` stronger. (Restarted, the
    /// engine forgot the ranging, and the nearest went to the next beacon heard.)
    @Test func anAnswerThatLeavesTheCapAsItWasKeepsTheEngineGoing() throws {
        var table = try Self.fleet()
        var actions: [Devices.Action] = []
        table.start(at: Self.time(0), into: &actions)
        let filter = try #require(TopicFilter("owntracks/+/+"))
        func send(_ topic: String, _ payload: String, at seconds: Double) throws -> [Devices.Action] {
            let parsed = FleetMessage.parse(
                source: .owntracks, filter: filter, topic: "owntracks/alice/phone" + topic,
                payload: Array(payload.utf8))
            guard case .success(let message?) = parsed else {
                Issue.record("\(payload) was not taken: \(parsed)")
                return []
            }
            var actions: [Devices.Action] = []
            table.handle(message, at: Self.time(seconds), into: &actions)
            return actions
        }
        func ranged(_ major: Int, rssi: Int) -> String {
            #"{"_type":"beacon","tid":"ph","tst":1700000000,"uuid":"\#(Self.area1.uuidString)","major":\#(major),"minor":1,"prox":2,"acc":1,"rssi":\#(rssi)}"#
        }
        actions = try send("", #"{"_type":"location","lat":45.46,"lon":9.19,"acc":10,"tst":1700000001}"#, at: 1)
        #expect(
            actions.contains { action in
                guard case .command(_, _, let payload) = action else { return false }
                return payload == Waypoints.request
            })
        _ = try send("/beacon", ranged(3, rssi: -62), at: 2)
        #expect(table.engine("alice-phone")?.monitor.nearestLocationID == "1003")

        actions = try send("/waypoints", #"{"_type":"waypoints","waypoints":[]}"#, at: 3)
        #expect(table["alice-phone"]?.ownWaypoints == 0)
        #expect(table.cap(of: "alice-phone") == 20)
        let monitoring = actions.filter { action in
            guard case .engine(_, .output(.monitoring)) = action else { return false }
            return true
        }
        #expect(monitoring.isEmpty, "\(monitoring)")
        #expect(actions.contains { if case .record = $0 { true } else { false } }, "the answer is kept")

        // 4 dB stronger: not clearly closer, so the nearest stays.
        _ = try send("/beacon", ranged(4, rssi: -58), at: 4)
        #expect(table.engine("alice-phone")?.monitor.nearestLocationID == "1003")
    }

    /// A phone whose last fix is 10 minutes old: its transitions carry `created_at` and are
    /// tracked with `Fleet.maxAge = 10`; its beacon messages' old `tst` is not an age.
    @Test func aPhoneWithAnOldFixIsTrackedNormally() throws {
        var link = PhoneLink(fleet: try Self.fleet("Fleet.maxAge = 10\n"), start: Self.start)
        link.add(SimulatedPhone(base: "owntracks/alice/phone", lastFix: Self.start - 600))
        _ = try link.locate("alice-phone", at: 0)
        let lines = try link.move("alice-phone", to: [BeaconID(uuid: Self.area1, major: 3, minor: 1): 1], at: 10)
        #expect(lines == ["enter \(Self.area1)", "enter \(Self.area1):3"], "\(lines)")
        #expect(link.fleet["alice-phone"]?.stale == 0)
    }

    /// A database of the version before: the phone holds `bw:<region>` waypoints without a rid.
    /// The start sends one command deleting each by the rid the app derived for it, then adding
    /// the regions in the form the app reads; the phone then holds exactly those.
    @Test func waypointsOfTheEarlierFormAreReplacedByOneCommand() throws {
        let legacy: [Region] = [.area(Self.area1), .area(Self.area2)]
        // The phone as the earlier version left it: both `bw:` waypoints, one iOS region "bw".
        var phone = SimulatedPhone(base: "owntracks/alice/phone", lastFix: Self.start)
        let old = legacy.map { region in
            #"{"_type":"waypoint","desc":"bw:\#(region)","lat":0,"lon":0,"rad":0,"tst":\#(Waypoints.tst(of: region)),"uuid":"\#(region.uuid.uuidString)"}"#
        }
        let oldCommand =
            #"{"_type":"cmd","action":"setWaypoints","waypoints":{"_type":"waypoints","waypoints":[\#(old.joined(separator: ","))]}}"#
        _ = phone.receive(topic: "owntracks/alice/phone/cmd", payload: oldCommand, now: Self.start)
        #expect(phone.regions.count == 2 && phone.iOS.count == 1)
        var fleet = Devices(
            configuration: try Self.configuration(), identity: MonitorIdentity(session: "s", address: "a", userid: "u"),
            kept: [
                "alice-phone": Devices.Kept(
                    state: KeptState(), source: .owntracks, commandTopic: "owntracks/alice/phone/cmd", waypoints: [],
                    legacy: legacy)
            ])
        var actions: [Devices.Action] = []
        fleet.start(at: Self.time(0), into: &actions)
        let commands = actions.compactMap { action -> String? in
            guard case .command(_, _, let payload) = action else { return nil }
            return payload
        }
        #expect(commands.count == 1)
        for command in commands {
            _ = phone.receive(topic: "owntracks/alice/phone/cmd", payload: command, now: Self.start)
        }
        #expect(phone.regions.count == 2 && phone.regions.allSatisfy { $0.name != Waypoints.legacyName })
        #expect(phone.beaconRegions == Set(legacy))
        #expect(phone.iOS.count == 2)
        // The record keeps the new form.
        let records = actions.compactMap { action -> Devices.Record? in
            guard case .record(_, let record) = action else { return nil }
            return record
        }
        #expect(records.last?.legacy == [] && records.last?.waypoints == legacy)
    }

    /// A restart in the middle of a walk (the fleet rebuilt from what it kept) sends no command,
    /// repeats no `enter`, and the walk's outputs are those of the same walk without it.
    @Test func aRestartMidWalkChangesNothing() throws {
        func walk(restartAt restart: Int?) throws -> (lines: [String], commandsAfterRestart: Int) {
            var link = PhoneLink(fleet: try Self.fleet(), start: Self.start)
            link.add(SimulatedPhone(base: "owntracks/alice/phone", lastFix: Self.start))
            link.add(
                SimulatedPhone(base: "owntracks/bob/phone", lastFix: Self.start, geofences: ["Home", "Gym", "Office"]))
            var lines: [String] = []
            lines += try link.locate("alice-phone", at: 0)
            lines += try link.locate("bob-phone", at: 0)
            let steps: [(String, [BeaconID: Double])] = [
                ("alice-phone", [BeaconID(uuid: Self.area1, major: 3, minor: 1): 1]),
                ("bob-phone", [BeaconID(uuid: Self.area2, major: 5, minor: 1): 2]),
                ("alice-phone", [BeaconID(uuid: Self.area1, major: 4, minor: 1): 1]),
                ("bob-phone", [BeaconID(uuid: Self.area2, major: 5, minor: 1): 4]),
                ("alice-phone", [BeaconID(uuid: Self.area2, major: 6, minor: 1): 1]),
                ("bob-phone", [:]),
                ("alice-phone", [:]),
            ]
            var commands = 0
            for (n, (device, place)) in steps.enumerated() {
                if n == restart {
                    let before = link.commandCount
                    let said = try link.restart(at: Double(n) * 20 + 5)
                    commands = link.commandCount - before
                    #expect(said.isEmpty, "the restart itself said \(said)")
                }
                lines += try link.move(device, to: place, at: Double(n) * 20 + 10).map { "\(device) \($0)" }
            }
            lines += try link.advance(to: 1000).map { "\($0)" }
            return (lines, commands)
        }
        let straight = try walk(restartAt: nil)
        for restart in 1...6 {
            let restarted = try walk(restartAt: restart)
            #expect(restarted.commandsAfterRestart == 0, "restart before step \(restart)")
            #expect(restarted.lines == straight.lines, "restart before step \(restart)")
        }
        let (a1, a2) = (Self.area1, Self.area2)
        #expect(
            straight.lines == [
                "alice-phone enter \(a1)", "alice-phone enter \(a1):3", "bob-phone enter \(a2)",
                "bob-phone enter \(a2):5",
                "alice-phone enter \(a1):4", "alice-phone exit \(a1):3", "alice-phone exit \(a1):4",
                "alice-phone exit \(a1)", "alice-phone enter \(a2)", "alice-phone enter \(a2):6",
                "bob-phone exit \(a2):5",
                "bob-phone exit \(a2)", "alice-phone exit \(a2):6", "alice-phone exit \(a2)",
            ], "\(straight.lines.joined(separator: "\n"))")
    }

    /// A tracker whose sightings ran out while the daemon was down exits at the start, once: the
    /// next start does not exit it again; one that comes back within exitTimeout enters nothing.
    @Test func aRegionWhoseSightingsRanOutExitsOnceAtTheStart() throws {
        var link = PhoneLink(fleet: try Self.fleet(), start: Self.start)
        let sighting = FleetObservation.Kind.sighting(
            Advertisement(
                format: .ibeacon, beacon: BeaconID(uuid: Self.area1, major: 3, minor: 1), power: -59, rssi: -60,
                address: nil), phoneProximity: nil)
        var actions: [Devices.Action] = []
        link.fleet.handle(
            FleetMessage(
                source: .theengs, device: "cart-1", observations: [FleetObservation(time: nil, kind: sighting)]),
            at: link.time(0), into: &actions)
        try link.perform(actions, at: 0)
        #expect(link.transcript.filter { $0.contains(" enter ") }.count == 2)
        // Back within exitTimeout (10 s): nothing happens; the exit comes at its own time.
        #expect(try link.restart(at: 5) == [])
        #expect(try link.advance(to: 10) == ["cart-1 exit \(Self.area1):3", "cart-1 exit \(Self.area1)"])
        // Down past it: the start exits, and a second start does not.
        var late = PhoneLink(fleet: try Self.fleet(), start: Self.start)
        actions = []
        late.fleet.handle(
            FleetMessage(
                source: .theengs, device: "cart-1", observations: [FleetObservation(time: nil, kind: sighting)]),
            at: late.time(0), into: &actions)
        try late.perform(actions, at: 0)
        #expect(try late.restart(at: 100) == ["cart-1 exit \(Self.area1):3", "cart-1 exit \(Self.area1)"])
        #expect(try late.restart(at: 200) == [])
    }

    /// Sharding, unknown devices, the device cap and stale observations.
    @Test func devicesAreAdmittedByShardDeclarationCapAndAge() throws {
        let sighting = FleetObservation.Kind.sighting(
            Advertisement(
                format: .ibeacon, beacon: BeaconID(uuid: Self.area1, major: 3, minor: 1), power: -59, rssi: -60,
                address: nil), phoneProximity: nil)
        func message(_ device: String, age: Double = 0) -> FleetMessage {
            FleetMessage(
                source: .theengs, device: device,
                observations: [FleetObservation(time: Self.time(100 - age), kind: sighting)])
        }
        var actions: [Devices.Action] = []
        var closed = try Self.fleet(
            "Fleet.autoAdd = false\nFleet.maxDevices = 1\nDevice.cart-1 = Cart 1\nDevice.cart-2 = Cart 2\n")
        #expect(closed.handle(message("stranger"), at: Self.time(100), into: &actions) == .unknownDevice)
        #expect(closed.handle(message("cart-1"), at: Self.time(100), into: &actions) == nil)
        #expect(closed.handle(message("cart-2"), at: Self.time(100), into: &actions) == .tooManyDevices)
        #expect(closed.handle(message("cart-1", age: 31), at: Self.time(100), into: &actions) == .stale(1))
        #expect(closed.fleet.keys.sorted() == ["cart-1"] && closed["cart-1"]?.stale == 1)
        // The device's outputs carry its declared name's userid, or its id.
        let userids = actions.compactMap { action -> String? in
            guard case .engine(_, .output(.location(_, let event))) = action else { return nil }
            return event.userid
        }
        #expect(!userids.isEmpty && userids.allSatisfy { $0 == "cart-1" })

        var halves = [try Self.fleet("Fleet.shard = 0/2\n"), try Self.fleet("Fleet.shard = 1/2\n")]
        for n in 0..<200 {
            let refusals = (0..<2).map { halves[$0].handle(message("tag-\(n)"), at: Self.time(100), into: &actions) }
            #expect(refusals.filter { $0 == .otherShard }.count == 1, "tag-\(n)")
        }
        #expect(halves[0].fleet.count + halves[1].fleet.count == 200)
    }

    /// A phone's ranging message is a sighting, and its own class is reported beside the
    /// daemon's as `phoneProximity`; a tracker's sighting has none.
    @Test func aPhonesOwnClassIsReportedAsPhoneProximity() throws {
        var fleet = try Self.fleet()
        var actions: [Devices.Action] = []
        let advertisement = Advertisement(
            format: .ibeacon, beacon: BeaconID(uuid: Self.area1, major: 3, minor: 1), power: -59, rssi: -60,
            address: nil)
        for (device, phone) in [("alice-phone", Proximity.immediate), ("cart-1", nil)] {
            fleet.handle(
                FleetMessage(
                    source: phone == nil ? .theengs : .owntracks, device: device,
                    observations: [FleetObservation(time: nil, kind: .sighting(advertisement, phoneProximity: phone))]),
                at: Self.time(1), into: &actions)
        }
        let locations = actions.compactMap { action -> (String, String)? in
            guard case .engine(let device, .output(let output)) = action, output.type == "location" else { return nil }
            return (device.description, output.json)
        }
        #expect(locations.count == 2)
        #expect(locations.first { $0.0 == "alice-phone" }?.1.hasSuffix(#","phoneProximity":"immediate"}"#) == true)
        #expect(locations.first { $0.0 == "cart-1" }?.1.contains("phoneProximity") == false)
    }

    /// A reload reaches every device: a name given meanwhile is on the device's next outputs.
    @Test func aReloadReachesEveryDevice() throws {
        var fleet = try Self.fleet()
        var actions: [Devices.Action] = []
        fleet.handle(Self.report("cart-1"), at: Self.time(1), into: &actions)
        let renamed = try Self.configuration("LocationAreaName.\(Self.area1) = Warehouse\n")
        fleet.handle(
            .reconfigure(renamed, rules: nil, settings: RuleSettings()), at: Self.time(2), into: &actions)
        actions = []
        fleet.advance(to: Self.time(30), into: &actions)
        let names = actions.compactMap { action -> String? in
            guard case .engine(.fleet("cart-1"), .output(.transition(_, let transition))) = action,
                transition.region == .area(Self.area1)
            else { return nil }
            return transition.name
        }
        #expect(names == ["Warehouse"])
    }

    /// A device's outputs name it, after `type`; the daemon's own outputs do not.
    @Test func aDevicesOutputsCarryItsID() {
        let output = MonitorOutput.nearest(Self.time(0), NearestChange(locationID: "1001", name: "Desk"))
        let expected = #"{"t":"2023-11-14T22:13:20.000Z","type":"nearest","device":"cart-7","id":"1001""#
        #expect(output.json(device: "cart-7").hasPrefix(expected))
        #expect(output.json(device: nil) == output.json && !output.json.contains("device"))
    }

    /// Each device's timers fire on their own: a sighting's exit comes exitTimeout later.
    @Test func eachDevicesExitFiresAtItsOwnTime() throws {
        var fleet = try Self.fleet()
        var actions: [Devices.Action] = []
        for (n, device) in ["a", "b"].enumerated() {
            let sighting = FleetObservation(
                time: nil,
                kind: .sighting(
                    Advertisement(
                        format: .ibeacon, beacon: BeaconID(uuid: Self.area1, major: 3, minor: 1), power: -59,
                        rssi: -60, address: nil), phoneProximity: nil))
            fleet.handle(
                FleetMessage(source: .theengs, device: device, observations: [sighting]), at: Self.time(Double(n)),
                into: &actions)
        }
        actions = []
        #expect(fleet.nextWake == Self.time(10))
        fleet.advance(to: Self.time(10.5), into: &actions)
        let exits = actions.compactMap { action -> String? in
            guard case .engine(let device, .output(.transition(let time, let transition))) = action,
                transition.direction == .exit, transition.region.kind == .area
            else { return nil }
            return "\(device) \(time.secondsSinceEpoch - Self.start)"
        }
        #expect(exits == ["a 10.0"])
        fleet.advance(to: Self.time(11), into: &actions)
        #expect(fleet.fleet.keys.compactMap(fleet.engine).allSatisfy { $0.monitor.insideRegions.isEmpty })
    }

    /// docs/behaviour.md §15.1 and 17: an OwnTracks phone's `location` is a fix for its own geofences, and the
    /// transitions carry the device.
    @Test func anOwnTracksLocationEntersTheDevicesGeofences() throws {
        let example = Self.folder.appendingPathComponent("conformance/ubudu/u_geofences-example.json")
        let configuration = try Self.configuration("Rules.geofences = \(example.path)\nRules.geofenceRadiusUnit = km\n")
        let fences = try GeofencesDocument.load(Array(Data(contentsOf: example)), name: "g", unit: .km).get().regions
        var fleet = Devices(
            configuration: configuration, identity: MonitorIdentity(session: "s", address: "a", userid: "u"),
            rules: fences)
        let filter = try #require(TopicFilter("owntracks/+/+"))
        func locate(_ lat: Double, _ lon: Double, at seconds: Double) throws -> [String] {
            let payload =
                #"{"_type":"location","lat":\#(lat),"lon":\#(lon),"acc":12,"tst":\#(Int(Self.start + seconds))}"#
            let message = try #require(
                try FleetMessage.parse(
                    source: .owntracks, filter: filter, topic: "owntracks/alice/phone", payload: Array(payload.utf8)
                ).get())
            var actions: [Devices.Action] = []
            fleet.handle(message, at: Self.time(seconds), into: &actions)
            return actions.compactMap { action in
                guard case .engine(let device, .output(let output)) = action, case .geofence = output else {
                    return nil
                }
                return
                    "\(device) \(output.type) \(output.json(device: device.fleetID).contains(#""device":"alice-phone""#))"
            }
        }
        #expect(try locate(48.8682, 2.3232, at: 0) == ["alice-phone enter true"])
        #expect(try locate(48.8690, 2.3232, at: 10) == [])
        #expect(try locate(48.8800, 2.3232, at: 20) == ["alice-phone exit true"])
        #expect(fleet.engine("alice-phone")?.geofences?.insideLabels == Optional([String]()))
    }
}
