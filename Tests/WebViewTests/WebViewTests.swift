import BeaconCore
import Engine
import Foundation
import RegionMonitor
import Testing

import WebView

/// The web view's model and rendering, pure: readings and outputs in, HTML and JSON out.
@Suite struct WebViewTests {
    static let uuid = UUID(uuidString: "74278BDA-B644-4520-8F0C-720EAF059935")!
    static let hierarchy = Hierarchy(
        beacons: [
            .init(locationID: "1001", id: BeaconID(uuid: uuid, major: 1, minor: 1), name: "Desk <1>"),
            .init(locationID: "2001", id: BeaconID(uuid: uuid, major: 2, minor: 1), name: "Fridge"),
        ],
        areaNames: [uuid: "Office & Co"],
        zoneNames: [.zone(uuid, major: 1): "Reception", .zone(uuid, major: 2): "Kitchen"])

    static func time(_ seconds: Int64) -> Timestamp {
        Timestamp(microseconds: 1_700_000_000_000_000 + seconds * 1_000_000)
    }

    static func reading(zone major: UInt16?, at seconds: Int64, rssi: Double? = -60, dwell: [String: Double] = [:])
        -> DeviceReading
    {
        var inside: [MonitorReading.Presence] = []
        var beacons: [MonitorReading.Beacon] = []
        if let major {
            inside = [
                .init(region: .area(uuid), since: time(0)), .init(region: .zone(uuid, major: major), since: time(0)),
            ]
            beacons = [
                .init(
                    locationID: "\(major)001", computed: rssi == nil ? .off : .near, reported: .near, rssi: rssi,
                    meters: rssi == nil ? nil : 1.5)
            ]
        }
        return DeviceReading(
            monitor: MonitorReading(
                time: time(seconds), mode: .beacons,
                monitored: [
                    .beacon(BeaconID(uuid: uuid, major: 1, minor: 1)),
                    .beacon(BeaconID(uuid: uuid, major: 2, minor: 1)),
                ],
                inside: inside, beacons: beacons, nearest: major.map { "\($0)001" }, ranging: .foreground),
            dwellToday: dwell)
    }

    @Test func zonesAreNamedByTheirOwnRegion() {
        let text = Self.uuid.uuidString
        let direct = Region.zone(Self.uuid, major: 2)
        #expect(direct.description == "\(text):2")
        #expect("\(direct)" == "\(text):2")
        let zone = Self.hierarchy.zones[1]
        #expect(zone.region.description == "\(text):2")
        let copied = zone.region
        #expect(copied == direct)
        #expect(copied.description == "\(text):2")
        #expect(Self.hierarchy.zones.map(\.region.description) == ["\(text):1", "\(text):2"])
        #expect(Self.hierarchy.zones.map(\.region) == [.zone(Self.uuid, major: 1), .zone(Self.uuid, major: 2)])
        var model = BuildingModel(hierarchy: Self.hierarchy, maxRegions: 20)
        model.declare(.init(id: "alice", own: true))
        model.update("alice", reading: Self.reading(zone: 2, at: 10))
        let page = Pages.building(model)
        #expect(page.contains("data-region=\"\(text):2\""))
        #expect(page.contains("Kitchen<span class=\"count\">1</span>"))
    }

    @Test func devicesShowInTheZoneTheyAreInAndTheLeaderboardRanksTodaysStays() {
        var model = BuildingModel(hierarchy: Self.hierarchy, maxRegions: 20)
        model.declare(.init(id: "alice", own: true))
        model.declare(.init(id: "tag-1", name: "Bob"))
        let kitchen = Region.zone(Self.uuid, major: 2)
        model.update("alice", reading: Self.reading(zone: 1, at: 10, dwell: [kitchen.description: 30]))
        model.update("tag-1", reading: Self.reading(zone: 2, at: 10, dwell: [kitchen.description: 90]))
        #expect(model.devices(inside: .zone(Self.uuid, major: 1)).map(\.id) == ["alice"])
        #expect(model.devices(inside: kitchen).map(\.label) == ["Bob"])
        #expect(model.leaderboard(kitchen).map(\.device.label) == ["Bob", "alice"])
        #expect(model.orderedDevices.map(\.id) == ["alice", "tag-1"])

        let page = Pages.building(model)
        #expect(page.contains("Office &amp; Co"))
        #expect(page.contains("data-device=\"tag-1\""))
        #expect(!page.contains("<1>"))
        let state = StateJSON.state(model)
        let object = try? JSONSerialization.jsonObject(with: Data(state.utf8)) as? [String: Any]
        let devices = object?["devices"] as? [[String: Any]]
        #expect(devices?.map { $0["zone"] as? String } == ["Reception", "Kitchen"])
    }

    /// docs/behaviour.md §17: the geofences each device is inside, on the building page, its state and its page.
    @Test func theGeofencesInsideAreListedPerDevice() throws {
        var model = BuildingModel(hierarchy: Self.hierarchy, maxRegions: 20)
        model.declare(.init(id: "van", own: true))
        model.declare(.init(id: "cart"))
        var van = Self.reading(zone: nil, at: 10)
        van.geofences = ["Depot <north>", "Yard"]
        var cart = Self.reading(zone: 1, at: 10)
        cart.geofences = []
        model.update("van", reading: van)
        model.update("cart", reading: cart)
        let page = Pages.building(model)
        #expect(page.contains("<th>geofences</th>"))
        #expect(page.contains("<td class=\"geofences\">Depot &lt;north&gt;, Yard</td>"), "\(page)")
        #expect(page.contains("<td class=\"geofences\">—</td>"))
        let object = try JSONSerialization.jsonObject(with: Data(StateJSON.state(model).utf8)) as? [String: Any]
        let devices = object?["devices"] as? [[String: Any]]
        #expect(devices?.map { $0["geofences"] as? [String] } == [["Depot <north>", "Yard"], []])
        let device = try #require(Pages.device(model, id: "van"))
        #expect(device.contains("geofence <span class=\"where\">Depot &lt;north&gt;</span>"), "\(device)")
        #expect(!device.contains("nowhere"))
        // Without geofences, no column.
        var plain = BuildingModel(hierarchy: Self.hierarchy, maxRegions: 20)
        plain.declare(.init(id: "alice", own: true))
        plain.update("alice", reading: Self.reading(zone: 1, at: 10))
        #expect(!Pages.building(plain).contains("geofences"))
    }

    @Test func theLatestTransitionsKeepTheNewestFifty() {
        var model = BuildingModel(hierarchy: Self.hierarchy, maxRegions: 20)
        for n in 0..<60 {
            let transition = Transition(
                direction: n % 2 == 0 ? .enter : .exit, region: .zone(Self.uuid, major: 1), name: "Reception",
                how: .derived)
            model.record(.transition(Self.time(Int64(n)), transition), device: "alice")
            model.record(.nearest(Self.time(Int64(n)), NearestChange(locationID: nil)), device: "alice")
        }
        #expect(model.transitions.count == BuildingModel.transitionLimit)
        #expect(model.transitions.first?.time == Self.time(10))
        #expect(model.transitions.last?.time == Self.time(59))
    }

    @Test func rssiHistoryKeepsFiveMinutesAndMarksABeaconGoneOff() {
        var model = BuildingModel(hierarchy: Self.hierarchy, maxRegions: 20)
        for second in stride(from: Int64(0), through: 400, by: 10) {
            model.update("alice", reading: Self.reading(zone: 1, at: second, rssi: -60 - Double(second % 7)))
        }
        let samples = model.history["alice"]?["1001"] ?? []
        #expect(samples.first?.time == Self.time(100))
        #expect(samples.last?.time == Self.time(400))
        model.update("alice", reading: Self.reading(zone: nil, at: 410))
        #expect(model.history["alice"]?["1001"]?.last?.rssi == nil)
        let chart = Chart.rssi(model.history["alice"]?["1001"] ?? [], end: Self.time(410))
        #expect(chart.contains("<polyline"))
        #expect(
            Chart.rssi([.init(time: Self.time(0), rssi: -70, proximity: .near)], end: Self.time(0)).contains("<circle"))
    }

    @Test func theDevicePageDrawsEverySlotAndUnknownDevicesAreNone() {
        var model = BuildingModel(hierarchy: Self.hierarchy, maxRegions: 20)
        model.update("alice", reading: Self.reading(zone: 2, at: 5))
        let page = Pages.device(model, id: "alice") ?? ""
        #expect(page.components(separatedBy: "class=\"slot ").count - 1 == 20)
        #expect(page.components(separatedBy: "class=\"slot filled").count - 1 == 2)
        #expect(page.contains("Desk &lt;1&gt;"))
        #expect(Pages.device(model, id: "bob") == nil)
        #expect(StateJSON.device(model, id: "bob") == nil)
        let json = StateJSON.device(model, id: "alice") ?? ""
        let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        #expect(object?["maxRegions"] as? Int == 20)
        #expect((object?["monitored"] as? [String])?.count == 2)
    }

    /// A phone's page draws its slots under the cap (docs/behaviour.md §5.2); a tag heard by
    /// scanners has no cap of a phone's (§19), so its page has no slots panel (issue 74).
    @Test func aTagsPageHasNoSlotsAndAPhonesHasThem() throws {
        var model = BuildingModel(hierarchy: Self.hierarchy, maxRegions: 20)
        model.declare(.init(id: "alice-phone"))
        model.declare(.init(id: "badge", name: "Badge"))
        model.tags = ["badge"]
        model.update("alice-phone", reading: Self.reading(zone: 2, at: 5))
        model.update("badge", reading: Self.reading(zone: 2, at: 5))
        let phone = try #require(Pages.device(model, id: "alice-phone"))
        #expect(phone.contains("class=\"slots-section\""))
        #expect(phone.contains("Monitored regions: 2 of 20 slots"))
        let tag = try #require(Pages.device(model, id: "badge"))
        #expect(!tag.contains("slots"), "\(tag)")
        #expect(!tag.contains("Monitored regions"))
        #expect(tag.contains("<section class=\"inside\">"), "the rest of the tag's page is there")
    }

    /// A phone with monitored waypoints has fewer slots than `Monitor.maxRegions` (§15.1): its page
    /// counts its own cap, not the building's.
    @Test func aPhonesSlotsAreItsOwnCap() throws {
        var model = BuildingModel(hierarchy: Self.hierarchy, maxRegions: 20)
        model.declare(.init(id: "alice-phone"))
        var reading = Self.reading(zone: 2, at: 5)
        reading.monitor.maxRegions = 17
        model.update("alice-phone", reading: reading)
        let phone = try #require(Pages.device(model, id: "alice-phone"))
        #expect(phone.contains("Monitored regions: 2 of 17 slots"), "\(phone)")
        #expect(phone.components(separatedBy: "class=\"slot empty\"").count - 1 == 15)
    }

    @Test func textIsEscapedAndNumbersAreWrittenPlainly() {
        #expect(HTML.escape("<a href=\"x\">'&'</a>") == "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;")
        #expect(HTML.duration(42) == "42 s")
        #expect(HTML.duration(7260) == "2 h 01 min")
        #expect(HTML.duration(.nan) == "0 s")
        #expect(Chart.oneDecimal(-0.04) == "0.0")
        #expect(Chart.oneDecimal(-0.5) == "-0.5")
        #expect(Chart.oneDecimal(.infinity) == "0.0")
        #expect(Pages.percentEncoded("a b/ü") == "a%20b%2F%C3%BC")
    }
}
