import BeaconConfiguration
import BeaconCore
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
        #expect(plan.scannerPoints[0].z == FloorPlanSettings.scannerHeight && plan.scannerPoints[1].z == 2.4)
        #expect(plan.levels.first?.bottom == 0 && plan.levels.first?.top == 2.8)
        #expect(plan.doors.first?.id == "kitchen-hall" && plan.doors.first?.from == .init(4, 1))
        #expect(plan.file == nil)
        // Compiled: one floor, both rooms, both scanners, the door.
        let floor = try #require(configuration.floors[0])
        #expect(floor.plan.rooms.count == 2 && floor.plan.scanners.count == 2 && floor.plan.doors.count == 1)
        #expect(floor.plan.top == 2.8)
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
        ("Door.a b = 0,0; 1,0", "door id"),
        ("Door.front = 0,0; 0,0", "give its two ends apart"),
        ("Door.front = 0,0; 1,0; 2,0", "3 points where 2"),
    ])
    func aBadFloorPlanValueIsAnErrorOnItsLine(line: String, message: String) {
        guard case .failure(let failure) = Self.load(Self.base + line + "\n") else {
            Issue.record("\(line) was taken")
            return
        }
        #expect(failure.errors.map(\.line) == [7], "\(failure)")
        #expect(failure.description.contains(message), "\(failure)")
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
                "Door.d",
            ] {
                _ = Self.load(Self.base + "\(key) = \(value)\n")
            }
        }
    }
}
