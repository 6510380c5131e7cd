import BeaconConfiguration
import BeaconCore
import Floorplan
import Foundation
import RegionMonitor
import Testing
import TestSupport

/// An ESPresense companion `config.yaml` as a floor plan (docs/behaviour.md §20, docs/floorplans.md).
@Suite struct CompanionFloorplanTests {
    static let folder = Conformance.directory.deletingLastPathComponent().appendingPathComponent("floorplans")

    /// TextExtensions' own cases for `ToSnakeCase` (the companion's `GetId()`), and node names.
    @Test(arguments: [
        ("a", "a"), ("ab", "ab"), ("test data", "test_data"), ("TestData", "test_data"),
        ("test data extra", "test_data_extra"), ("testData", "test_data"), ("test_data", "test_data"),
        ("test-data", "test_data"), ("test-DATA", "test_data"), ("test\r\nDATA", "test_data"),
        ("Upstairs Hallway", "upstairs_hallway"), ("VW EOS", "vw_eos"), ("Back Stairs", "back_stairs"),
        ("VWEos", "vw_eos"), ("Node2A", "node2_a"), ("", ""), ("  ", ""), ("Éclair Room", "clair_room"),
    ])
    func nodeIdsAreTheCompanions(name: String, id: String) {
        #expect(CompanionFloorplan.snakeCase(name) == id)
    }

    @Test func theCompanionsOwnExampleLoads() throws {
        let path = Self.folder.appendingPathComponent("companion-example.ini").path
        let configuration = try Configuration.load(contentsOf: path).get()
        #expect(configuration.floorPlan?.file?.hasSuffix("companion-config.example.yaml") == true)
        #expect(configuration.floors.count == 2)
        let first = try #require(configuration.floors[0])
        let second = try #require(configuration.floors[1])
        #expect(first.plan.rooms.count == 9 && second.plan.rooms.count == 4)
        #expect(first.plan.scanners.count == 8 && second.plan.scanners.count == 5)
        // The floors' bounds and heights are the file's.
        #expect(first.plan.bounds == Box(x0: 0, y0: 0, x1: 17, y1: 18))
        #expect(second.plan.bottom == 3 && second.plan.top == 5.5)
        // "Back Stairs" is the scanner back_stairs; its point is the node's.
        let hierarchy = configuration.hierarchy
        let stairs = try #require(
            second.plan.scanners.first { hierarchy.beacons[Int($0.location)].locationID == "125" })
        #expect(stairs.point == PlanPoint(4.5, 7.5) && stairs.z == 3.4)
        // The moving node (VW EOS, stationary: false) is no scanner, and says nothing.
        #expect(!configuration.warnings.contains { $0.message.contains("vw_eos") }, "\(configuration.warnings)")
        #expect(configuration.scanners?.effectiveRooms == .position)
    }

    /// A floor given by the ini's keys and the same floor given by a companion file compile alike.
    @Test func bothFormsGiveTheSameFloor() throws {
        let area = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
        let base = """
            LocationBaseBeacon.101 = \(area),1,1
            LocationBaseBeacon.102 = \(area),2,1
            LocationZoneName.\(area):1 = Living Room
            LocationZoneName.\(area):2 = kitchen
            MQTT.host = 127.0.0.1
            LocationScanner.101 = living_room
            LocationScanner.102 = kitchen
            Scanners.espresense = espresense/devices/+/+

            """
        let ini = try Configuration.load(
            Array(
                (base + """
                    LocationZoneShape.\(area):1 = 0,0; 4,0; 4,3; 0,3
                    LocationZoneShape.\(area):2 = 4,0; 8,0; 8,3; 4,3
                    LocationScannerPoint.living_room = 0.2,1.5,2
                    LocationScannerPoint.kitchen = 7.8,1.5,2.4
                    """).utf8), path: "hsyco.ini"
        ).get()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bw-floor-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try """
        mqtt:
          host: somewhere
        floors:
          - id: ground
            name: Ground
            rooms:
              - name: living-room
                points: [[0, 0], [4, 0], [4, 3], [0, 3], [0, 0]]
              - name: Kitchen
                points: [[4, 0], [8, 0], [8, 3], [4, 3]]
        nodes:
          - name: Living Room
            point: [0.2, 1.5, 2]
            floors: ["ground"]
          - name: Kitchen
            point: [7.8, 1.5, 2.4]
        """.write(to: folder.appendingPathComponent("config.yaml"), atomically: true, encoding: .utf8)
        let yaml = try Configuration.load(
            Array((base + "Floorplan.file = config.yaml\n").utf8), path: folder.appendingPathComponent("hsyco.ini").path
        ).get()
        #expect(ini.floors == yaml.floors)
        #expect(yaml.warnings.isEmpty, "\(yaml.warnings)")
        // Where both give a thing, the ini wins.
        let both = try Configuration.load(
            Array((base + "Floorplan.file = config.yaml\nLocationScannerPoint.kitchen = 6,1\n").utf8),
            path: folder.appendingPathComponent("hsyco.ini").path
        ).get()
        let kitchen = try #require(both.floors[0]?.plan.scanners.first { $0.location == 1 })
        #expect(kitchen.point == PlanPoint(6, 1) && kitchen.z == FloorPlanSettings.scannerHeight)
    }

    @Test(arguments: [
        ("floors: [", 2, "not valid YAML"),
        ("floors: 3", 1, "floors: is not a list"),
        (
            "floors:\n  - id: a\n    rooms:\n      - name: R\n        points: [[0, 0], [1, x], [1, 1]]", 5,
            "floors[0].rooms[0].points[1][1]: 'x' is not a number"
        ),
        ("floors:\n  - rooms:\n      - points: [[0, 0], [1, 0], [1, 1]]", 3, "floors[0].rooms[0]: is not a room"),
        ("floors:\n  - rooms:\n      - name: R\n        points: [[0, 0], [1, 0]]", 4, "3 to 1000 points"),
        ("nodes:\n  - point: [1, 2]", 2, "nodes[0]: has neither a name: nor an id:"),
        ("nodes:\n  - name: n\n    point: [1]", 3, "nodes[0].point: is not a point"),
        (
            "nodes:\n  - name: n\n    point: [1, 2]\n    stationary: maybe", 4,
            "nodes[0].stationary: is not true or false"
        ),
        ("floors:\n  - bounds: [[0, 0, 0]]", 2, "floors[0].bounds: is not two corners"),
        ("- a\n- b", 1, "the document: is not a mapping"),
        ("nodes:\n  - name: n\n    point: [1e300, 2]", 3, "is not a number of metres"),
    ])
    func garbageIsAnErrorAtItsLine(text: String, line: Int, message: String) {
        let plan = CompanionFloorplan.parse(text, file: "config.yaml")
        #expect(plan.errors.count >= 1)
        #expect(plan.errors.first?.line == line, "\(plan.errors)")
        #expect(plan.errors.first?.message.contains(message) == true, "\(plan.errors)")
        #expect(plan.errors.first?.file == "config.yaml")
    }

    /// Every prefix of the companion's example, and every line of it dropped, parses without a
    /// crash: an error or a plan.
    @Test func cutFilesNeverCrash() throws {
        let text = try String(
            contentsOf: Self.folder.appendingPathComponent("companion-config.example.yaml"), encoding: .utf8)
        let whole = CompanionFloorplan.parse(text, file: "c.yaml")
        #expect(whole.errors.isEmpty && whole.floors.count == 2 && whole.nodes.count == 14)
        let characters = Array(text)
        for end in stride(from: 0, to: characters.count, by: 97) {
            _ = CompanionFloorplan.parse(String(characters[..<end]), file: "c.yaml")
        }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        for index in lines.indices where index % 5 == 0 {
            var cut = lines
            cut.remove(at: index)
            _ = CompanionFloorplan.parse(cut.joined(separator: "\n"), file: "c.yaml")
        }
    }

    @Test func aMissingFileIsAnErrorAtItsLine() {
        let text = """
            LocationBaseBeacon.101 = E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,1,1
            Floorplan.file = /nonexistent/config.yaml
            """
        guard case .failure(let errors) = Configuration.load(Array(text.utf8), path: "hsyco.ini") else {
            Issue.record("a missing file loaded")
            return
        }
        #expect(errors.errors.first?.line == 2)
        #expect(errors.errors.first?.message.contains("no such file") == true)
    }
}
