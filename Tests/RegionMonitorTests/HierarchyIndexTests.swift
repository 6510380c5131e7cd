import BeaconCore
import Foundation
import RegionMonitor
import Testing

/// The lookups every sighting and every restart make: identity → beacon, Location ID → beacon.
@Suite struct HierarchyIndexTests {
    static func randomID(_ random: inout SeededGenerator) -> BeaconID {
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255, using: &random) }
        // Few UUIDs and dense majors/minors, as real buildings have.
        bytes[15] = bytes[15] % 4
        let uuid = UUID(uuid: (bytes[0] % 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, bytes[15]))
        return BeaconID(
            uuid: uuid, major: UInt16.random(in: 0...200, using: &random),
            minor: UInt16.random(in: 0...400, using: &random))
    }

    @Test func everyConfiguredBeaconIsFoundAndNoOtherIs() {
        var random = SeededGenerator(seed: 3)
        var ids: Set<BeaconID> = []
        while ids.count < 20_000 { ids.insert(Self.randomID(&random)) }
        let list = Array(ids)
        let hierarchy = Hierarchy(
            beacons: list.enumerated().map { Hierarchy.Beacon(locationID: "L\($0.offset)", id: $0.element) }
        )
        for (position, id) in list.enumerated() {
            #expect(hierarchy.index(of: id) == position)
            #expect(hierarchy.index(ofLocation: "L\(position)") == position)
        }
        var strangers = 0
        while strangers < 20_000 {
            let id = Self.randomID(&random)
            guard !ids.contains(id) else { continue }
            strangers += 1
            #expect(hierarchy.index(of: id) == nil)
        }
        #expect(hierarchy.index(ofLocation: "L") == nil)
        #expect(hierarchy.index(ofLocation: "L20000") == nil)
        #expect(hierarchy.index(ofLocation: "") == nil)
    }

    @Test func anEmptyHierarchyFindsNothing() {
        let hierarchy = Hierarchy(beacons: [])
        #expect(hierarchy.index(of: BeaconID(uuid: UUID(), major: 1, minor: 1)) == nil)
        #expect(hierarchy.index(ofLocation: "1") == nil)
    }

    @Test func parentsAreIndexedInFileOrder() {
        let hierarchy = MonitorHarness.hierarchy(["a=1,1,1", "b=2,5,1", "c=1,2,1", "d=1,1,2"])
        #expect(hierarchy.zoneOfBeacon == [0, 1, 2, 0])
        #expect(hierarchy.areaOfZone == [0, 1, 0])
        #expect(hierarchy.zones[0].beacons == [0, 3])
        #expect(hierarchy.areas[0].zones == [0, 2])
    }
}
