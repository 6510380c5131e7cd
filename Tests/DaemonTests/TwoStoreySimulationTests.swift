import BeaconConfiguration
import Foundation
import Simulation
import Testing

/// The room-quality benchmark's two-storey house (`scripts/bench rooms`, row "two floors", issue
/// 61): its ini is the building docs/floorplans.md describes, people change storey only on the
/// stairs, and the radio loses the slab between storeys.
@Suite struct TwoStoreySimulationTests {
    static let house = Floor.twoStorey(seed: 31)

    @Test func theHousesPlanIsOneBuildingOfTwoFloorsJoinedByTheStairs() throws {
        let text = Self.house.ini(
            tags: 2, extra: "MQTT.host = 127.0.0.1\nScanners.theengs = home/+/BTtoMQTT/#\n", plan: true)
        #expect(text.contains("LocationAreaLevel.\(Floor.area(storey: 1)) = 3,6\n"))
        #expect(text.contains("Stairs.s1 = \(Floor.area(storey: 0)), 7.2,1; \(Floor.area(storey: 1)), 7.2,1\n"))
        #expect(text.contains("LocationScannerPoint.landing = 4.9,0.4,4\n"))
        let configuration = try Configuration.load(Array(text.utf8), path: "house.ini").get()
        #expect(configuration.warnings.isEmpty, "\(configuration.warnings)")
        let buildings = Set(configuration.buildings.values.map(ObjectIdentifier.init))
        #expect(buildings.count == 1)
        let building = try #require(configuration.buildings.values.first)
        #expect(building.floors.count == 2)
        #expect(building.stairs.count == 1)
        #expect(building.floors.map(\.plan.bottom).sorted() == [0, 3])
    }

    @Test func walkersChangeStoreyOnlyOnTheStairs() throws {
        var simulation = FloorSimulation(floor: Self.house)
        simulation.duration = 1800
        simulation.walkers = 6
        simulation.stationary = 4
        let stairs = try #require(Self.house.stairs)
        var climbs = 0
        for mover in simulation.movers() {
            for (from, to) in zip(mover.keyframes, mover.keyframes.dropFirst()) where from.storey != to.storey {
                climbs += 1
                #expect(from.point == stairs && to.point == stairs)
                #expect(abs(to.time - from.time - Self.house.climb) < 1e-9)
            }
            if mover.stationary {
                let storeys = Set(mover.keyframes.map(\.storey))
                #expect(storeys.count == 1)
            }
        }
        #expect(climbs > 10)
    }

    @Test func theSlabAndTheDistanceUpstairsWeakenTheSignal() throws {
        let house = Self.house
        let landing = try #require(house.scanners.firstIndex { $0.id == "landing" })
        let hall = try #require(house.scanners.firstIndex { $0.id == "hall" })
        // Straight under the landing's scanner, 3 m below it: the distance and the slab.
        let under = house.scanners[landing].at
        let level = house.level(0, from: under, storey: 0, at: landing)
        #expect(abs(level - (-25 * log10(3) - house.slabLoss)) < 1e-9)
        // On its own storey a scanner is heard as on a flat floor.
        let beside = Floor.Point(under.x + 2, under.y)
        #expect(abs(house.level(0, from: beside, storey: 1, at: landing) - (-25 * log10(2))) < 1e-9)
        // Downstairs the hall's scanner beats the landing's above it; upstairs the other way round.
        #expect(
            house.level(0, from: beside, storey: 0, at: hall) > house.level(0, from: beside, storey: 0, at: landing))
        #expect(
            house.level(0, from: beside, storey: 1, at: landing) > house.level(0, from: beside, storey: 1, at: hall))
        #expect(house.room(at: beside, storey: 0) == 0 && house.room(at: beside, storey: 1) == 3)
    }
}
