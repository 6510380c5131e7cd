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

    @Test func aTagsPageShowsTheRoomsProbabilities() throws {
        let page = try #require(Pages.device(Self.model(), id: "badge"))
        #expect(page.contains("<section class=\"position\">"))
        #expect(page.contains("3.25, 2 ± 0.8 m"))
        #expect(page.contains("<tr data-region=\"\(Self.uuid.uuidString):1\"><td>Reception</td><td>82 %</td></tr>"))
        #expect(page.contains("outside every room"))
    }
}
