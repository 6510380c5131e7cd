import BeaconCore
import Foundation
import RegionMonitor
import Testing

/// docs/behaviour.md §5.2 at its edges: B = N, B = N+1, Z = N, Z = N+1, more Areas than N, an Area with more
/// Zones than N.
@Suite struct MonitoringPlanTests {
    /// `areas` UUIDs, each with `zones` zones of `beacons` beacons.
    func hierarchy(areas: Int, zones: Int, beacons: Int) -> Hierarchy {
        var list: [Hierarchy.Beacon] = []
        for area in 0..<areas {
            let uuid = UUID(uuidString: String(format: "00000000-0000-0000-0000-%012d", area))!
            for zone in 0..<zones {
                for minor in 0..<beacons {
                    let id = BeaconID(uuid: uuid, major: UInt16(zone), minor: UInt16(minor))
                    list.append(Hierarchy.Beacon(locationID: "\(area)x\(zone)x\(minor)", id: id))
                }
            }
        }
        return Hierarchy(beacons: list)
    }

    @Test func beaconsFittingTheCapAreEachMonitored() {
        #expect(MonitoringPlan(hierarchy(areas: 1, zones: 4, beacons: 5), maxRegions: 20) == .beacons)  // B = N
        #expect(MonitoringPlan(hierarchy(areas: 1, zones: 1, beacons: 1), maxRegions: 20) == .beacons)
    }

    @Test func oneBeaconOverTheCapMonitorsZones() {
        #expect(MonitoringPlan(hierarchy(areas: 1, zones: 3, beacons: 7), maxRegions: 20) == .zones)  // B = N+1
        #expect(MonitoringPlan(hierarchy(areas: 2, zones: 10, beacons: 2), maxRegions: 20) == .zones)  // Z = N
    }

    @Test func oneZoneOverTheCapGoesHierarchical() {
        #expect(
            MonitoringPlan(hierarchy(areas: 3, zones: 7, beacons: 1), maxRegions: 20)
                == .hierarchical(scanAssisted: false))  // Z = N+1
    }

    @Test func moreAreasThanTheCapIsScanAssisted() {
        #expect(
            MonitoringPlan(hierarchy(areas: 21, zones: 1, beacons: 1), maxRegions: 20)
                == .hierarchical(scanAssisted: true))
        #expect(
            MonitoringPlan(hierarchy(areas: 20, zones: 2, beacons: 1), maxRegions: 20)
                == .hierarchical(scanAssisted: false))
    }

    @Test func anAreaWithMoreZonesThanTheCapIsScanAssisted() {
        #expect(
            MonitoringPlan(hierarchy(areas: 1, zones: 21, beacons: 1), maxRegions: 20)
                == .hierarchical(scanAssisted: true))
    }

    @Test func anyCapWorks() {
        #expect(MonitoringPlan(hierarchy(areas: 1, zones: 1, beacons: 2), maxRegions: 1) == .zones)
        #expect(
            MonitoringPlan(hierarchy(areas: 2, zones: 1, beacons: 1), maxRegions: 1)
                == .hierarchical(scanAssisted: true))
    }
}

@Suite struct RegionTests {
    let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    @Test func canonicalTextRoundTrips() {
        let beacon = Region.beacon(BeaconID(uuid: uuid, major: 1, minor: 2))
        #expect(beacon.description == "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:2")
        #expect(Region("e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2") == beacon)
        #expect(beacon.parent == .zone(uuid, major: 1))
        #expect(beacon.parent?.parent == .area(uuid))
        #expect(Region.area(uuid).parent == nil)
        for bad in [
            "", "x", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:2:3",
            "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:70000",
        ] {
            #expect(Region(bad) == nil, "\(bad)")
        }
    }

    @Test func regionsOrderOutsideIn() {
        let zone = Region.zone(uuid, major: 1)
        let area = Region.area(uuid)
        let beacon = Region.beacon(BeaconID(uuid: uuid, major: 1, minor: 1))
        #expect([beacon, zone, area].sorted() == [area, zone, beacon])
    }

    @Test func proximityClassesOrderImmediateToOff() {
        #expect(Proximity.allCases.sorted() == [.immediate, .near, .far, .off])
        #expect(Proximity.near < .far)
    }
}
