import BeaconCore
import BeaconConfiguration
import Fleet
import Foundation
import RegionMonitor
import TestSupport
import Testing

/// Which Zones a phone keeps when an Area has more Zones than its cap (docs/behaviour.md §5.2):
/// the most recently sighted, the never-sighted in the ini's order, through the real path of an
/// OwnTracks phone whose own waypoints come off the cap (15.1).
@Suite struct CapRecencyTests {
    static let area1 = UUID(uuidString: "A1000000-0000-4000-8000-000000000001")!
    static let area2 = UUID(uuidString: "A2000000-0000-4000-8000-000000000002")!
    static let start = 1_700_000_000.0

    /// Area 1 of 20 Zones (majors 1…20, in that order), Area 2 of 2: more Zones than the cap of
    /// 20, so the phone is first given the Areas, and none of its own three waypoints is pushed
    /// off iOS's limit before its answer says how many it has.
    static func fleet() throws -> Devices {
        var text = "Monitor.userid = bob\nMonitor.exitTimeout = 10\nMonitor.maxRegions = 20\n"
        text += "MQTT.host = 127.0.0.1\nFleet.owntracks = owntracks/+/+\n"
        for (area, zones) in [(area1, 20), (area2, 2)] {
            for major in 1...zones {
                text += "LocationBaseBeacon.\(area == area1 ? 1 : 2)\(major + 100) = \(area.uuidString),\(major),1\n"
            }
        }
        let configuration = try Configuration.load(Array(text.utf8), path: "cap-recency.ini").get()
        return Devices(configuration: configuration, identity: MonitorIdentity(session: "s", address: "a", userid: "u"))
    }

    /// The Zones of Area 1 that §5.2 keeps under `cap`, after the phone ranged `ranged`: the most
    /// recently sighted first, the never-sighted ones in the ini's order.
    static func kept(cap: Int, ranged: [(seconds: Double, beacon: BeaconID)]) -> Set<Region> {
        var last: [Int: Double] = [:]
        for (seconds, beacon) in ranged where beacon.uuid == area1 {
            last[Int(beacon.major)] = max(last[Int(beacon.major)] ?? seconds, seconds)
        }
        let order = (1...20).sorted { lhs, rhs in
            let (l, r) = (last[lhs] ?? -.infinity, last[rhs] ?? -.infinity)
            return l != r ? l > r : lhs < rhs
        }
        return Set(order.prefix(cap).map { Region.zone(area1, major: UInt16($0)) })
    }

    /// A phone with three geofences of its own walks Zone to Zone through the 20 Zones of Area 1,
    /// ranged again 9 s after it came into each and leaving it 9 s after that. Its cap is 17: at
    /// every step the daemon keeps, and the phone holds, the 17 Zones §5.2 says, so the Zone left
    /// a moment ago stays and one never sighted goes.
    @Test func aPhoneWithOwnWaypointsKeepsTheMostRecentlySightedZones() throws {
        var link = PhoneLink(fleet: try Self.fleet(), start: Self.start)
        link.add(
            SimulatedPhone(base: "owntracks/bob/phone", lastFix: Self.start, geofences: ["Home", "Gym", "Office"]))
        _ = try link.locate("bob-phone", at: 0)
        #expect(link.fleet.cap(of: "bob-phone") == 17)
        var zonesSteps = 0
        for major in 1...20 {
            let beacon = BeaconID(uuid: Self.area1, major: UInt16(major), minor: 1)
            let came = 10 + Double(major - 1) * 18
            // In: its first ranging; 9 s on, nearer: ranged again (a `beacon` message).
            for (seconds, accuracy) in [(came, 3.0), (came + 9, 1.0)] {
                _ = try link.advance(to: seconds)
                _ = try link.move("bob-phone", to: [beacon: accuracy], at: seconds)
                let monitored = link.monitored("bob-phone")
                let phone = try #require(link.phones["bob-phone"])
                #expect(phone.beaconRegions == Set(monitored), "at \(seconds) s the phone holds another set")
                #expect(phone.most <= SimulatedPhone.iOSLimit)
                guard monitored.allSatisfy({ $0.kind == .zone }) else {
                    #expect(Set(monitored) == [.area(Self.area1), .area(Self.area2)], "at \(seconds) s")
                    continue
                }
                zonesSteps += 1
                let expected = Self.kept(cap: 17, ranged: link.ranged["bob-phone"] ?? [])
                let extra = Set(monitored).subtracting(expected).map(\.description).sorted()
                let missing = expected.subtracting(monitored).map(\.description).sorted()
                #expect(
                    Set(monitored) == expected,
                    "in Zone \(major) at \(seconds) s: keeps \(extra), drops \(missing) (docs/behaviour.md §5.2)")
            }
            // It is in the Zone it walked into, and was sighted there.
            #expect(
                link.fleet.engine("bob-phone")?.monitor.insideRegions.contains(.zone(Self.area1, major: UInt16(major)))
                    == true, "in Zone \(major)")
        }
        #expect(zonesSteps >= 30, "the walk was mostly under the Zones (\(zonesSteps) steps)")
    }
}
