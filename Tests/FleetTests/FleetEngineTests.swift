import BeaconCore
import BeaconConfiguration
import Engine
import Fleet
import Foundation
import RegionMonitor
import Rules
import TestSupport
import Testing

/// The fleet engine (SPEC 15): a device per engine, and an OwnTracks phone whose regions follow
/// its monitored set under the 20-region cap (15.1).
@Suite struct FleetEngineTests {
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

    static func fleet(_ extra: String = "") throws -> FleetEngine {
        FleetEngine(
            configuration: try configuration(extra), identity: MonitorIdentity(session: "s", address: "a", userid: "u"))
    }

    static func time(_ seconds: Double) -> Timestamp { Timestamp(secondsSinceEpoch: start + seconds)! }

    /// Feeds the phone's observations and applies the fleet's commands to it until quiet; returns
    /// the device's transitions as `enter <region>` lines.
    static func exchange(
        _ transitions: [(Region, entered: Bool)], phone: inout SimulatedPhone, fleet: inout FleetEngine,
        at seconds: Double,
        monitored: (FleetEngine) -> [Region]
    ) throws -> [String] {
        var pending = transitions.map { FleetObservation.Kind.transition($0.0, entered: $0.entered) }
        var lines: [String] = []
        var rounds = 0
        while !pending.isEmpty || rounds == 0 {
            rounds += 1
            try #require(rounds < 10, "the phone and the daemon did not settle")
            var actions: [FleetEngine.Action] = []
            fleet.advance(to: time(seconds), into: &actions)
            let message = FleetMessage(
                source: .owntracks, device: "alice-phone",
                observations: pending.map { FleetObservation(time: time(seconds), kind: $0) },
                commandTopic: "owntracks/alice/phone/cmd")
            fleet.handle(message, at: time(seconds), into: &actions)
            pending = []
            for action in actions {
                switch action {
                case .engine(_, .output(.transition(_, let transition))):
                    lines.append("\(transition.direction.rawValue) \(transition.region)")
                case .waypoints(_, let topic, let command, let regions):
                    #expect(topic == "owntracks/alice/phone/cmd")
                    pending += try phone.apply(command).map { .transition($0.0, entered: $0.entered) }
                    #expect(Set(phone.regions.values) == Set(regions))
                    #expect(Set(phone.regions.values) == Set(monitored(fleet)))
                default:
                    break
                }
            }
        }
        return lines
    }

    /// A walk through the office: the phone always holds exactly the monitored set (Areas while
    /// outside, the Zones of the Area it is in), never more than 20, and the device enters and
    /// leaves as the walk goes.
    @Test func aPhoneHoldsExactlyTheHSYCOSetThroughAWalk() throws {
        var fleet = try Self.fleet()
        var phone = SimulatedPhone()
        let monitored = { (fleet: FleetEngine) in fleet.engines["alice-phone"]?.monitor.monitoredRegions ?? [] }
        func place(_ area: UUID, _ major: UInt16) -> Set<Region> {
            [.area(area), .zone(area, major: major), .beacon(BeaconID(uuid: area, major: major, minor: 1))]
        }
        // A first message (a location) makes the device and its first command: the two Areas.
        var lines = try Self.exchange([], phone: &phone, fleet: &fleet, at: 0, monitored: monitored)
        #expect(Set(phone.regions.values) == [.area(Self.area1), .area(Self.area2)])
        #expect(lines.isEmpty)

        lines = try Self.exchange(
            phone.move(to: place(Self.area1, 3)), phone: &phone, fleet: &fleet, at: 10, monitored: monitored)
        #expect(lines == ["enter \(Self.area1)", "enter \(Self.area1):3"], "\(lines)")
        #expect(phone.regions.count == 12 && phone.regions.values.allSatisfy { $0.kind == .zone })

        lines = try Self.exchange(
            phone.move(to: place(Self.area1, 7)), phone: &phone, fleet: &fleet, at: 60, monitored: monitored)
        #expect(lines == ["enter \(Self.area1):7", "exit \(Self.area1):3"], "\(lines)")

        lines = try Self.exchange(
            phone.move(to: place(Self.area2, 2)), phone: &phone, fleet: &fleet, at: 120, monitored: monitored)
        #expect(lines.prefix(2) == ["exit \(Self.area1):7", "exit \(Self.area1)"], "\(lines)")
        #expect(lines.suffix(2) == ["enter \(Self.area2)", "enter \(Self.area2):2"], "\(lines)")
        #expect(Set(phone.regions.values) == Set((1...12).map { Region.zone(Self.area2, major: UInt16($0)) }))

        lines = try Self.exchange(phone.move(to: []), phone: &phone, fleet: &fleet, at: 180, monitored: monitored)
        #expect(lines == ["exit \(Self.area2):2", "exit \(Self.area2)"], "\(lines)")
        #expect(Set(phone.regions.values) == [.area(Self.area1), .area(Self.area2)])
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
        var actions: [FleetEngine.Action] = []
        var closed = try Self.fleet(
            "Fleet.autoAdd = false\nFleet.maxDevices = 1\nDevice.cart-1 = Cart 1\nDevice.cart-2 = Cart 2\n")
        #expect(closed.handle(message("stranger"), at: Self.time(100), into: &actions) == .unknownDevice)
        #expect(closed.handle(message("cart-1"), at: Self.time(100), into: &actions) == nil)
        #expect(closed.handle(message("cart-2"), at: Self.time(100), into: &actions) == .tooManyDevices)
        #expect(closed.handle(message("cart-1", age: 31), at: Self.time(100), into: &actions) == .stale(1))
        #expect(closed.devices.keys.sorted() == ["cart-1"] && closed.devices["cart-1"]?.stale == 1)
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
        #expect(halves[0].devices.count + halves[1].devices.count == 200)
    }

    /// A phone's ranging message is a sighting, and its own class is reported beside the
    /// daemon's as `phoneProximity`; a tracker's sighting has none.
    @Test func aPhonesOwnClassIsReportedAsPhoneProximity() throws {
        var fleet = try Self.fleet()
        var actions: [FleetEngine.Action] = []
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
            return (device, output.json)
        }
        #expect(locations.count == 2)
        #expect(locations.first { $0.0 == "alice-phone" }?.1.hasSuffix(#","phoneProximity":"immediate"}"#) == true)
        #expect(locations.first { $0.0 == "cart-1" }?.1.contains("phoneProximity") == false)
    }

    /// A reload reaches every device: a name given meanwhile is on the device's next outputs.
    @Test func aReloadReachesEveryDevice() throws {
        var fleet = try Self.fleet()
        var actions: [FleetEngine.Action] = []
        let advertisement = Advertisement(
            format: .ibeacon, beacon: BeaconID(uuid: Self.area1, major: 3, minor: 1), power: -59, rssi: -60,
            address: nil)
        fleet.handle(
            FleetMessage(
                source: .theengs, device: "cart-1",
                observations: [FleetObservation(time: nil, kind: .sighting(advertisement, phoneProximity: nil))]),
            at: Self.time(1), into: &actions)
        let renamed = try Self.configuration("LocationAreaName.\(Self.area1) = Warehouse\n")
        fleet.reconfigure(
            .reconfigure(renamed, rules: nil, settings: RuleSettings()), at: Self.time(2), into: &actions)
        actions = []
        fleet.advance(to: Self.time(30), into: &actions)
        let names = actions.compactMap { action -> String? in
            guard case .engine("cart-1", .output(.transition(_, let transition))) = action,
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
        var actions: [FleetEngine.Action] = []
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
        #expect(fleet.engines.values.allSatisfy { $0.monitor.insideRegions.isEmpty })
    }

    /// SPEC 15.1 and 17: an OwnTracks phone's `location` is a fix for its own geofences, and the
    /// transitions carry the device.
    @Test func anOwnTracksLocationEntersTheDevicesGeofences() throws {
        let example = Self.folder.appendingPathComponent("conformance/ubudu/u_geofences-example.json")
        let configuration = try Self.configuration("Rules.geofences = \(example.path)\nRules.geofenceRadiusUnit = km\n")
        let fences = try GeofencesDocument.load(Array(Data(contentsOf: example)), name: "g", unit: .km).get().regions
        var fleet = FleetEngine(
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
            var actions: [FleetEngine.Action] = []
            fleet.handle(message, at: Self.time(seconds), into: &actions)
            return actions.compactMap { action in
                guard case .engine(let device, .output(let output)) = action, case .geofence = output else {
                    return nil
                }
                return "\(device) \(output.type) \(output.json(device: device).contains(#""device":"alice-phone""#))"
            }
        }
        #expect(try locate(48.8682, 2.3232, at: 0) == ["alice-phone enter true"])
        #expect(try locate(48.8690, 2.3232, at: 10) == [])
        #expect(try locate(48.8800, 2.3232, at: 20) == ["alice-phone exit true"])
        #expect(fleet.engines["alice-phone"]?.geofences?.insideLabels == Optional([String]()))
    }
}
