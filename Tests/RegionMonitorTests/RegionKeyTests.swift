import BeaconCore
import Foundation
import RegionMonitor
import Testing

/// Regions as dictionary and set keys, built from sightings' beacon identities. With Swift 6.3.1,
/// `-O` code like the grouping below once made a key per *minor*: a `Region.zone` built from a
/// `BeaconID`'s fields carried the minor along where the Zone has none, and the dictionary hashed
/// it. `.ci/run` runs the tests in release too, where this would show.
@Suite struct RegionKeyTests {
    static let uuid = UUID(uuidString: "0FF1CE00-0000-4000-8000-000000000001")!

    static func sightings() -> [SourceEvent] {
        (0..<300).map { n in
            .advertisement(
                Timestamp(secondsSinceEpoch: 1_700_000_000 + Double(n))!,
                Advertisement(
                    format: .ibeacon, beacon: BeaconID(uuid: uuid, major: UInt16(n % 3), minor: UInt16(n)),
                    power: -59, rssi: -60, address: nil))
        }
    }

    @Test func zonesBuiltFromSightingsGroupByZone() {
        var heard: [Region: [Timestamp]] = [:]
        for case .advertisement(let time, let advertisement) in Self.sightings() {
            heard[.zone(advertisement.beacon.uuid, major: advertisement.beacon.major), default: []].append(time)
        }
        #expect(heard.count == 3)
        #expect(heard[.zone(Self.uuid, major: 1)]?.count == 100)
    }

    @Test func parentsOfBeaconRegionsAreOneZoneAndOneArea() {
        var zones = Set<Region>()
        var areas: [Region: Int] = [:]
        for case .advertisement(_, let advertisement) in Self.sightings() {
            let zone = Region.beacon(advertisement.beacon).parent!
            zones.insert(zone)
            areas[zone.parent!, default: 0] += 1
        }
        #expect(zones == [.zone(Self.uuid, major: 0), .zone(Self.uuid, major: 1), .zone(Self.uuid, major: 2)])
        #expect(areas == [.area(Self.uuid): 300])
    }
}
