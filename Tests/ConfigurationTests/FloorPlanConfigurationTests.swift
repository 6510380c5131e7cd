import BeaconConfiguration
import BeaconCore
import Floorplan
import Foundation
import RegionMonitor
import Testing

/// The floor plan's ini keys (docs/behaviour.md §20): rooms as polygons, scanners at points, levels and
/// doors, each error and warning at its line.
@Suite struct FloorPlanConfigurationTests {
    static let area = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
    static let base = """
        LocationBaseBeacon.101 = \(area),1,1
        LocationBaseBeacon.102 = \(area),2,1
        MQTT.host = 127.0.0.1
        LocationScanner.101 = kitchen
        LocationScanner.102 = hall
        Scanners.espresense = espresense/devices/+/+

        """

    static func load(_ text: String) -> Result<Configuration, ConfigurationErrors> {
        Configuration.load(Array(text.utf8), path: "conf/hsyco.ini")
    }

    @Test func aFloorPlanLoads() throws {
        let configuration = try Self.load(
            Self.base + """
                LocationZoneShape.\(Self.area):1 = 0,0; 4,0; 4,3; 0,3
                LocationZoneShape.\(Self.area):2 = 4,0; 8,0; 8,3; 4,3
                LocationScannerPoint.kitchen = 0.2, 1.5
                LocationScannerPoint.hall = 7.8,1.5,2.4
                LocationAreaLevel.\(Self.area) = 0,2.8
                Door.kitchen-hall = 4,1; 4,2
                """
        ).get()
        let plan = try #require(configuration.floorPlan)
        #expect(
            plan.shapes.map(\.zone) == [
                .zone(UUID(uuidString: Self.area)!, major: 1), .zone(UUID(uuidString: Self.area)!, major: 2),
            ])
        #expect(plan.shapes[0].points == [.init(0, 0), .init(4, 0), .init(4, 3), .init(0, 3)])
        #expect(plan.scannerPoints.map(\.scanner) == ["kitchen", "hall"])
        #expect(plan.scannerPoints[0].z == nil && plan.scannerPoints[1].z == 2.4)
        #expect(plan.levels.first?.bottom == 0 && plan.levels.first?.top == 2.8)
        #expect(plan.doors.first?.id == "kitchen-hall" && plan.doors.first?.from == .init(4, 1))
        #expect(plan.file == nil)
        // Compiled: one floor, both rooms, both scanners, the door.
        let floor = try #require(configuration.floors[0])
        #expect(floor.plan.rooms.count == 2 && floor.plan.scanners.count == 2 && floor.plan.doors.count == 1)
        #expect(floor.plan.top == 2.8)
        // A scanner without a height is 2 m above its floor's bottom.
        #expect(floor.plan.scanners.map(\.z) == [FloorPlanSettings.scannerHeight, 2.4])
        #expect(configuration.warnings.isEmpty, "\(configuration.warnings)")
        #expect(configuration.unknownKeys.isEmpty)
        #expect(try Self.load(Self.base).get().floorPlan == nil)
    }

    @Test(arguments: [
        ("LocationZoneShape.\(area) = 0,0; 1,0; 1,1", "is not a Zone"),
        ("LocationZoneShape.\(area):9 = 0,0; 1,0; 1,1", "has no beacon"),
        ("LocationZoneShape.\(area):1 = 0,0; 1,0", "2 points where at least 3"),
        ("LocationZoneShape.\(area):1 = 0,0; 1,x; 1,1", "'1,x' is not a point"),
        ("LocationZoneShape.\(area):1 = 0,0; 1,0; 1,1,1", "'1,1,1' is not a point"),
        ("LocationZoneShape.\(area):1 = 0,0; 1e9,0; 1,1", "is not a point"),
        ("LocationZoneShape.\(area):1 = 0,0; nan,0; 1,1", "is not a point"),
        ("LocationScannerPoint.kitchen = 1", "is not x,y or x,y,z"),
        ("LocationScannerPoint.kitchen = 1,2,3,4", "is not x,y or x,y,z"),
        ("LocationScannerPoint.kitchen = inf,2", "is not x,y or x,y,z"),
        ("LocationAreaLevel.\(area) = 3,0", "is not below its top"),
        ("LocationAreaLevel.\(area) = 0", "is not z0,z1"),
        ("LocationAreaLevel.nope = 0,3", "is not a UUID"),
        ("LocationAreaLevel.11111111-2222-3333-4444-555555555555 = 0,3", "has no beacon"),
        ("LocationAreaWalls.\(area) = some", "'some' is not a kind of walls; give none"),
        ("LocationAreaWalls.nope = none", "is not a UUID"),
        ("LocationAreaWalls.11111111-2222-3333-4444-555555555555 = none", "has no beacon"),
        ("Door.a b = 0,0; 1,0", "door id"),
        ("Door.front = 0,0; 0,0", "give its two ends apart"),
        ("Door.front = 0,0; 1,0; 2,0", "3 points where 2"),
        ("Door.front = 0,0; 1,0, garage", "'garage' is not a kind of door; the one kind is exit"),
        ("Door.front = 0,0; 1,0; exit", "is not a point"),
        ("Stairs.a b = \(area), 1,1; \(area), 2,2", "stairs id"),
        ("Stairs.main = \(area), 1,1", "stairs have two ends, 1 given"),
        ("Stairs.main = \(area), 1,1; \(area), 2,2", "both ends are on floor"),
        ("Stairs.main = \(area), 1; 11111111-2222-3333-4444-555555555555, 2,2", "is not a floor's UUID and a point"),
        (
            "Stairs.main = \(area), 1,1; 11111111-2222-3333-4444-555555555555, 2,2",
            "has no beacon; stairs join two floors"
        ),
        ("Stairs.main = \(area), 1,1; \(area), 2,2; \(area), 3,3", "stairs have two ends, 3 given"),
    ])
    func aBadFloorPlanValueIsAnErrorOnItsLine(line: String, message: String) {
        guard case .failure(let failure) = Self.load(Self.base + line + "\n") else {
            Issue.record("\(line) was taken")
            return
        }
        #expect(failure.errors.map(\.line) == [7], "\(failure)")
        #expect(failure.description.contains(message), "\(failure)")
    }

    /// `LocationAreaWalls.<UUID> = none`: an open plan, whose Zones share no walls (desk zones of
    /// one hall, docs/behaviour.md §20 "Real radio"); `edges`, the default, keeps them.
    @Test(arguments: [("none", 0), ("edges", 7), ("NONE", 0), (nil, 7)] as [(String?, Int)])
    func anOpenPlanHasNoWalls(walls: String?, count: Int) throws {
        let shapes = """
            LocationZoneShape.\(Self.area):1 = 0,0; 4,0; 4,3; 0,3
            LocationZoneShape.\(Self.area):2 = 4,0; 8,0; 8,3; 4,3
            LocationScannerPoint.kitchen = 0.2, 1.5
            LocationScannerPoint.hall = 7.8,1.5

            """
        let configuration = try Self.load(
            Self.base + shapes + (walls.map { "LocationAreaWalls.\(Self.area) = \($0)\n" } ?? "")
        ).get()
        let floor = try #require(configuration.floors.values.first)
        #expect(floor.walls.count == count, "\(floor.walls)")
        // Between the two scanners: one wall crossed on the edges plan, none in the open one.
        #expect(floor.walls(from: .init(0.2, 1.5), to: .init(7.8, 1.5)) == (count == 0 ? 0 : 1))
    }

    /// Two floors with levels, stairs between them and an exit door: one building whose scanners
    /// are heights in its frame (docs/behaviour.md §20, "Moving tags and floors").
    @Test func twoFloorsWithStairsAndAnExitAreOneBuilding() throws {
        let upstairs = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E1"
        let configuration = try Self.load(
            Self.base + """
                LocationBaseBeacon.201 = \(upstairs),1,1
                LocationScanner.201 = bedroom
                LocationZoneShape.\(Self.area):1 = 0,0; 4,0; 4,3; 0,3
                LocationZoneShape.\(Self.area):2 = 4,0; 8,0; 8,3; 4,3
                LocationZoneShape.\(upstairs):1 = 0,0; 8,0; 8,3; 0,3
                LocationScannerPoint.kitchen = 0.2, 1.5
                LocationScannerPoint.hall = 7.8,1.5
                LocationScannerPoint.bedroom = 1,1.5
                LocationAreaLevel.\(upstairs) = 3,6
                Door.front = 8,1; 8,2, exit
                Door.kitchen-hall = 4,1; 4,2
                Stairs.main = \(Self.area), 6,2.5; \(upstairs), 6,2.5
                """
        ).get()
        let plan = try #require(configuration.floorPlan)
        #expect(plan.doors.map(\.exit) == [true, false])
        #expect(plan.stairs.map(\.id) == ["main"])
        let ground = try #require(configuration.buildings[0])
        #expect(configuration.buildings[1] === ground)
        #expect(ground.floors.map(\.plan.area) == [0, 1] && ground.stairs.count == 1)
        // A door applies to every floor with a room edge under it.
        #expect(ground.floors[0].plan.exits.count == 1 && ground.floors[1].plan.exits.count == 1)
        #expect(!ground.exitCells.isEmpty)
        // Upstairs, a scanner given no height is 2 m above that floor's bottom.
        #expect(ground.floors[1].plan.scanners.map(\.z) == [5])
        #expect(ground.floors(between: 1, and: 5) == 1 && ground.floors(between: 1, and: 2) == 0)
        #expect(configuration.warnings.isEmpty, "\(configuration.warnings)")
        // Stairs to a floor without a plan join nothing, and say so.
        let unplanned = try Self.load(
            Self.base + """
                LocationBaseBeacon.201 = \(upstairs),1,1
                LocationZoneShape.\(Self.area):1 = 0,0; 4,0; 4,3; 0,3
                Stairs.main = \(Self.area), 2,2; \(upstairs), 2,2
                """
        ).get()
        #expect(
            unplanned.warnings.contains { $0.description.contains("Stairs.main: floor \(upstairs) has no floor plan") })
        // Two Areas at the same level with no stairs are two buildings.
        let apart = try Self.load(
            Self.base + """
                LocationBaseBeacon.201 = \(upstairs),1,1
                LocationZoneShape.\(Self.area):1 = 0,0; 4,0; 4,3; 0,3
                LocationZoneShape.\(upstairs):1 = 0,0; 4,0; 4,3; 0,3
                """
        ).get()
        #expect(apart.buildings[0] !== apart.buildings[1] && apart.buildings.count == 2)
    }

    /// A shape that crosses itself and a point for a scanner that is not placed are warnings.
    @Test func doubtfulShapesAndPointsAreWarnedAbout() throws {
        let configuration = try Self.load(
            Self.base + """
                LocationZoneShape.\(Self.area):1 = 0,0; 4,3; 4,0; 0,3
                LocationScannerPoint.attic = 1,1
                """
        ).get()
        let warnings = configuration.warnings.map(\.description)
        #expect(
            warnings.contains { $0.hasPrefix("conf/hsyco.ini:7: the shape of Zone") && $0.contains("crosses itself") })
        #expect(warnings.contains { $0.hasPrefix("conf/hsyco.ini:8: no scanner 'attic' is placed") })
    }

    @Test func simplePolygonsAreTold() {
        typealias P = FloorPlanSettings.Point
        #expect(FloorPlanSettings.isSimple([P(0, 0), P(4, 0), P(4, 3), P(0, 3)]))
        #expect(FloorPlanSettings.isSimple([P(0, 0), P(4, 0), P(4, 3), P(2, 1), P(0, 3)]))  // concave
        #expect(FloorPlanSettings.isSimple([P(0, 0), P(2, 0), P(4, 0), P(4, 3)]))  // a corner on a straight edge
        #expect(!FloorPlanSettings.isSimple([P(0, 0), P(4, 3), P(4, 0), P(0, 3)]))  // a bow tie
        #expect(!FloorPlanSettings.isSimple([P(0, 0), P(4, 0), P(4, 0), P(0, 3)]))  // a corner twice
        #expect(!FloorPlanSettings.isSimple([P(0, 0), P(4, 0), P(2, 0), P(2, 3)]))  // folds back along an edge
        #expect(!FloorPlanSettings.isSimple([P(0, 0), P(4, 0)]))
    }

    /// Garbage in the floor plan's values never crashes the loader (docs/behaviour.md §13).
    @Test func garbageValuesNeverCrash() {
        var random = SeededGenerator(seed: 48)
        let alphabet = Array("0123456789,;.-+e xnaif\t")
        for _ in 0..<2000 {
            let value = String(
                (0..<Int.random(in: 0...24, using: &random)).map { _ in alphabet.randomElement(using: &random)! })
            for key in [
                "LocationZoneShape.\(Self.area):1", "LocationScannerPoint.kitchen", "LocationAreaLevel.\(Self.area)",
                "Door.d", "Stairs.s",
            ] {
                _ = Self.load(Self.base + "\(key) = \(value)\n")
            }
        }
    }
}
