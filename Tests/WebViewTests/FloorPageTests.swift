import BeaconCore
import Engine
import Floorplan
import Foundation
import RegionMonitor
import Testing

import WebView

/// The floor page and a tag's position on its page (docs/behaviour.md §20), pure.
@Suite struct FloorPageTests {
    static let uuid = WebViewTests.uuid
    static let hierarchy = WebViewTests.hierarchy

    static func model() -> BuildingModel {
        var model = BuildingModel(hierarchy: hierarchy, maxRegions: 20)
        let map = FloorMap(
            FloorPlan(
                area: 0,
                rooms: [
                    .init(zone: 0, polygon: [PlanPoint(0, 0), PlanPoint(4, 0), PlanPoint(4, 4), PlanPoint(0, 4)]),
                    .init(zone: 1, polygon: [PlanPoint(4, 0), PlanPoint(8, 0), PlanPoint(8, 4), PlanPoint(4, 4)]),
                ],
                scanners: [.init(location: 0, point: PlanPoint(0.3, 2), z: 1)],
                doors: [PlanSegment(PlanPoint(4, 1.5), PlanPoint(4, 2.5))]))
        model.floors = [BuildingModel.Floor(map: map, hierarchy: hierarchy)]
        model.place([("reception", "1001")])
        var reading = WebViewTests.reading(zone: 1, at: 10)
        reading.monitor.position = MonitorReading.PositionReading(
            area: .area(uuid), x: 3.25, y: 2, error: 0.8,
            rooms: [
                .init(room: .zone(uuid, major: 1), probability: 0.82),
                .init(room: .zone(uuid, major: 2), probability: 0.15), .init(room: nil, probability: 0.03),
            ])
        model.update("badge", reading: reading)
        return model
    }

    @Test func theFloorDrawsRoomsDoorsScannersAndTags() throws {
        let model = Self.model()
        let page = try #require(Pages.floor(model, area: Self.uuid.uuidString))
        #expect(page.components(separatedBy: "<g class=\"room\"").count - 1 == 2)
        #expect(page.contains("<line class=\"door\""))
        #expect(page.contains("data-scanner=\"reception\""))
        #expect(page.contains("<g class=\"tag\" data-device=\"badge\" data-x=\"3.25\" data-y=\"2\">"))
        // Drawn with y up: the box reaches 0.5 m beyond the rooms; y = 2 is 2.5 m from its top.
        #expect(page.contains("cx=\"3.75\" cy=\"2.5\" r=\"0.8\""))
        #expect(page.contains("Reception"))
        // No plan for that Area, or not an Area at all: no page.
        #expect(Pages.floor(model, area: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0") == nil)
        #expect(Pages.floor(model, area: "<script>") == nil)
        // The building page links the floor.
        #expect(Pages.building(model).contains("href=\"/floors/\(Self.uuid.uuidString)\""))
    }

    /// `/scanners` says what the floors' scanners taught the estimator (docs/behaviour.md §20),
    /// and says nothing of a radio where no floor has a plan.
    @Test func theScannersPageSaysWhatWasLearnedOfTheRadio() {
        var model = Self.model()
        #expect(!Pages.scanners(model).contains("Floor radio"))
        model.radio = RadioModel()
        #expect(
            Pages.scanners(model).contains("Floor radio: power at 1 m 0.0 dB, exponent 2.5, wall 3.0 dB (defaults)"))
        let before = model.version
        model.radio = RadioModel(bias: -1.25, exponent: 2.46, wallLoss: 4.4, pairs: 6)
        #expect(model.version != before)
        #expect(
            Pages.scanners(model).contains(
                "Floor radio: power at 1 m -1.2 dB, exponent 2.5, wall 4.4 dB (learned from 6 scanner pairs)"))
    }

    /// A house of two floors (the first floor's Area comes first in the hierarchy, the ground
    /// floor's second; stairs join them) and a shed of one floor beside it.
    static func house() -> BuildingModel {
        let first = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E1")!
        let ground = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
        let shed = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E2")!
        let hierarchy = Hierarchy(
            beacons: [
                .init(locationID: "201", id: BeaconID(uuid: first, major: 1, minor: 1)),
                .init(locationID: "101", id: BeaconID(uuid: ground, major: 1, minor: 1)),
                .init(locationID: "301", id: BeaconID(uuid: shed, major: 1, minor: 1)),
            ],
            areaNames: [first: "First floor", ground: "Ground <floor>", shed: "Shed"])
        func plan(_ area: Int32, bottom: Double) -> FloorPlan {
            FloorPlan(
                area: area,
                rooms: [
                    .init(zone: area, polygon: [PlanPoint(0, 0), PlanPoint(4, 0), PlanPoint(4, 4), PlanPoint(0, 4)])
                ],
                scanners: [.init(location: area, point: PlanPoint(2, 2), z: bottom + 2)], bottom: bottom,
                top: bottom + 3)
        }
        var buildings = Building.group(
            [plan(0, bottom: 3), plan(1, bottom: 0)], stairs: [(0, PlanPoint(3, 3), 1, PlanPoint(3, 3))])
        buildings[2] = Building(FloorMap(plan(2, bottom: 0)))
        var model = BuildingModel(hierarchy: hierarchy, maxRegions: 20)
        model.floors = buildings.sorted { $0.key < $1.key }.compactMap { area, building in
            building.floors.first { $0.plan.area == area }.map {
                BuildingModel.Floor(map: $0, hierarchy: hierarchy, building: building)
            }
        }
        // Two tags on the ground floor, one upstairs, one in the shed, and a device with no position.
        let tags: [(String, UUID?)] = [
            ("badge", ground), ("keys", ground), ("cup", first), ("mower", shed), ("phone", nil),
        ]
        for (id, area) in tags {
            var reading = WebViewTests.reading(zone: nil, at: 10)
            reading.monitor.position = area.map {
                MonitorReading.PositionReading(area: .area($0), x: 1, y: 1, error: 0.5, rooms: [])
            }
            model.update(id, reading: reading)
        }
        return model
    }

    /// A floor of a building of several lists every floor of it, lowest first, each with how many
    /// tags are on it now, the one shown marked; a floor alone in its building lists none.
    @Test func aFloorOfSeveralListsTheBuildingsFloorsWithTheirTags() throws {
        let model = Self.house()
        let ground = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
        let first = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E1"
        let page = try #require(Pages.floor(model, area: ground))
        let picker = try #require(
            page.range(of: "<nav class=\"floors\"").flatMap { start in
                page.range(of: "</nav>", range: start.upperBound..<page.endIndex).map {
                    page[start.lowerBound..<$0.upperBound]
                }
            })
        #expect(
            picker == """
                <nav class="floors" aria-label="Floors of this building"><ol>\
                <li class="floor current" data-area="\(ground)"><a href="/floors/\(ground)" aria-current="page">\
                Ground &lt;floor&gt;<span class="count" title="2 tags on this floor">2</span></a></li>\
                <li class="floor" data-area="\(first)"><a href="/floors/\(first)">\
                First floor<span class="count" title="1 tag on this floor">1</span></a></li></ol></nav>
                """)
        // Upstairs, the same floors in the same order, the first floor marked.
        let upstairs = try #require(Pages.floor(model, area: first))
        #expect(upstairs.components(separatedBy: "aria-current=\"page\"").count - 1 == 1)
        #expect(upstairs.contains("<a href=\"/floors/\(first)\" aria-current=\"page\">First floor"))
        #expect(upstairs.contains("<a href=\"/floors/\(ground)\">Ground &lt;floor&gt;"))
        // The shed is a building of its own: no picker, and no house floor named on its page.
        let shed = try #require(Pages.floor(model, area: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E2"))
        #expect(!shed.contains("<nav"))
        #expect(!shed.contains("/floors/\(ground)"))
        #expect(!page.contains("Shed"))
        // The floor page of a building of one floor has none either.
        #expect(!(try #require(Pages.floor(Self.model(), area: Self.uuid.uuidString))).contains("<nav"))
        // A tag going upstairs moves from one floor's count to the other.
        var moved = model
        var reading = WebViewTests.reading(zone: nil, at: 11)
        reading.monitor.position = .init(area: .area(UUID(uuidString: first)!), x: 1, y: 1, error: 0.5, rooms: [])
        moved.update("badge", reading: reading)
        let after = try #require(Pages.floor(moved, area: ground))
        #expect(after.contains("Ground &lt;floor&gt;<span class=\"count\" title=\"1 tag on this floor\">1</span>"))
        #expect(after.contains("First floor<span class=\"count\" title=\"2 tags on this floor\">2</span>"))
        // A reload that changes the floors is a new version of the model: no page is kept.
        var reloaded = model
        reloaded.floors = Array(model.floors.prefix(1))
        #expect(reloaded.version != model.version)
    }

    /// The drawing has each end of the stairs, a link to the floor they lead to (up or down by
    /// the floors' levels), and each tag's name beside its dot: its declared name, else its id.
    @Test func theDrawingHasTheStairsAndTheTagsNames() throws {
        var model = Self.house()
        model.declare(.init(id: "keys", name: "Ben's <keys>"))
        let ground = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
        let first = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E1"
        let page = try #require(Pages.floor(model, area: ground))
        #expect(
            page.contains(
                "<g class=\"stairs\" data-to=\"\(first)\"><a href=\"/floors/\(first)\"><title>stairs up to First floor"
                    + "</title>"), "\(page)")
        #expect(page.components(separatedBy: "<g class=\"stairs\"").count - 1 == 1)
        #expect(page.contains(">stairs up to First floor</text>"))
        // Named: its name, escaped; unnamed: its id.
        #expect(page.contains("<text class=\"name\" x=\"") && page.contains("\">Ben&#39;s &lt;keys&gt;</text>"))
        #expect(page.contains("\">badge</text>"), "\(page)")
        // Beside its dot: 0.25 m to the right of it (the dot at 3.75, 2.5 of the drawing).
        let alone = try #require(Pages.floor(Self.model(), area: Self.uuid.uuidString))
        #expect(alone.contains("<text class=\"name\" x=\"4\" y=\"2.6\">badge</text>"), "\(alone)")
        let upstairs = try #require(Pages.floor(model, area: first))
        #expect(upstairs.contains("<title>stairs down to Ground &lt;floor&gt;</title>"), "\(upstairs)")
        #expect(upstairs.contains(">cup</text>") && !upstairs.contains(">badge</text>"))
        // The shed is joined to nothing.
        let shed = try #require(Pages.floor(model, area: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E2"))
        #expect(!shed.contains("class=\"stairs\""))
        #expect(Self.model().floors[0].stairs.isEmpty)
    }

    /// A floor's page is reached by its Area's name as well as its UUID (case, spaces, `-` and `_`
    /// aside); `/floors` lists every floor with a plan.
    @Test func aFloorIsFoundByItsAreasNameAndTheIndexListsThem() throws {
        let model = Self.house()
        let ground = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
        for name in ["Ground <floor>", "ground-<FLOOR>", "ground_<floor>", ground, ground.lowercased()] {
            #expect(model.floor(named: name)?.area.description == ground, "\(name)")
        }
        #expect(model.floor(named: "First floor")?.area.description == "E2C56DB5-DFFB-48D2-B060-D0F5A71096E1")
        #expect(model.floor(named: "Cellar") == nil && model.floor(named: "") == nil)
        #expect(Pages.floor(model, area: "shed") == Pages.floor(model, area: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E2"))
        let index = Pages.floorIndex(model)
        #expect(index.components(separatedBy: "<li ").count - 1 == 3, "\(index)")
        #expect(
            index.contains(
                "<li data-area=\"\(ground)\"><a href=\"/floors/\(ground)\">Ground &lt;floor&gt;</a>: 2 tags on it, "
                    + "in a building with First floor</li>"), "\(index)")
        #expect(index.contains(">Shed</a>: 1 tag on it</li>"), "\(index)")
    }

    @Test func aTagsPageShowsTheRoomsProbabilities() throws {
        let page = try #require(Pages.device(Self.model(), id: "badge"))
        #expect(page.contains("<section class=\"position\">"))
        #expect(page.contains("3.25, 2 ± 0.8 m"))
        #expect(page.contains("<tr data-region=\"\(Self.uuid.uuidString):1\"><td>Reception</td><td>82 %</td></tr>"))
        #expect(page.contains("outside every room"))
    }
}
