import Foundation
import TestSupport
import Testing

/// The building's occupancy on the web (docs/behaviour.md §23, docs/web.md): the building page's
/// rooms, `/api/v1/occupancy` and the `/metrics` gauges, of a daemon run in-process on a FIFO trace
/// with a zigbee2mqtt-style PIR and an ESPHome-style presence sensor.
@Suite struct WebOccupancyTests {
    static let sensors = """
        Sensor.kitchen-pir = zigbee2mqtt/kitchen/pir, motion, Kitchen
        Sensor.reception-radar = reception-radar/binary_sensor/presence/state, presence, \(WebTests.uuid):1
        Occupancy.vacantAfter = 30

        """

    /// The events of `stream` until one satisfies `done` (at most 50).
    static func events(_ stream: HTTPProbe.EventStream, until done: ([String: Any]) -> Bool) async throws
        -> [[String: Any]]
    {
        var seen: [[String: Any]] = []
        while seen.count < 50, let data = try await stream.next() {
            seen.append(WebTests.object(data))
            if done(seen[seen.count - 1]) { break }
        }
        return seen
    }

    @Test func thePageTheAPIAndTheMetricsShowEachRoomsOccupancy() async throws {
        let daemon = try await WebTests.Daemon(extra: Self.sensors)
        let stream = try HTTPProbe.EventStream("/api/v1/events", port: daemon.port)
        try await stream.connected()
        // alice's own radio in the Reception; the radar there says nobody (ESPHome's plain OFF);
        // the Kitchen's PIR sees motion (zigbee2mqtt's JSON, with its battery and link quality).
        daemon.sight(major: 1, minor: 1, at: 0..<3)
        daemon.sensor("reception-radar", payload: #""OFF""#, at: 3)
        daemon.sensor("kitchen-pir", payload: #"{"battery":100,"occupancy":true,"linkquality":87}"#, at: 4)
        let seen = try await Self.events(stream) {
            $0["type"] as? String == "occupancy" && $0["name"] as? String == "Kitchen"
        }
        #expect(seen.contains { $0["type"] as? String == "occupancy" && $0["name"] as? String == "Reception" })

        let response = try await daemon.get("/api/v1/occupancy")
        #expect(response.status == 200)
        #expect(response.headers["content-type"] == "application/json")
        let regions = WebTests.object(response.body)["regions"] as? [[String: Any]] ?? []
        let byName = Dictionary(regions.map { ($0["name"] as? String ?? "?", $0) }) { first, _ in first }
        let reception = try #require(byName["Reception"], "\(response.body)")
        #expect(reception["region"] as? String == "\(WebTests.uuid):1")
        #expect(reception["kind"] as? String == "zone")
        #expect(reception["occupied"] as? Bool == true)
        #expect(reception["count"] as? Int == 1)
        #expect(reception["devices"] as? [String] == ["alice"])
        #expect((reception["sensors"] as? [String: Any])?["reception-radar"] as? Bool == false)
        #expect(reception["why"] as? String == "Reception is occupied: alice")
        let kitchen = try #require(byName["Kitchen"], "\(response.body)")
        #expect(kitchen["occupied"] as? Bool == true)
        #expect(kitchen["count"] as? Int == 1)
        #expect(kitchen["devices"] as? [String] == [])
        #expect(kitchen["why"] as? String == "Kitchen is occupied: kitchen-pir says present")

        // The building page: each room occupied, with its count, why, and its sensors.
        let page = try await daemon.get("/").body
        let kitchenCard = try #require(Self.card(page, zone: 2))
        #expect(kitchenCard.contains(#"<div class="zone occupied""#))
        // The badge counts people: the PIR's one, though no device is inside.
        #expect(kitchenCard.contains(#"Kitchen<span class="count">1</span>"#))
        #expect(kitchenCard.contains(#"data-occupied="true" data-count="1""#))
        #expect(kitchenCard.contains("<strong>occupied</strong> · 1 person"))
        #expect(kitchenCard.contains("Kitchen is occupied: kitchen-pir says present"))
        // Each sensor's state and its liveness: the firmware's status topic by its state topic.
        #expect(
            kitchenCard.contains(
                #"<li data-sensor="kitchen-pir" data-state="present">kitchen-pir: present<span class="liveness">"#
                    + "offline when zigbee2mqtt/kitchen/pir/availability says offline (zigbee2mqtt&#39;s, by its "
                    + "state topic); until it says anything, offline after 900 s without a message</span></li>"))
        let receptionCard = try #require(Self.card(page, zone: 1))
        #expect(receptionCard.contains("Reception is occupied: alice"))
        #expect(
            receptionCard.contains(
                #"<li data-sensor="reception-radar" data-state="clear">reception-radar: clear<span class="liveness">"#
                    + "offline when reception-radar/status says offline (ESPHome&#39;s, by its state topic)</span></li>"
            ))
        // The Area's badge: its rooms' people together (alice, and the PIR's one), though only
        // Zones are counted (Occupancy.count = zones).
        #expect(page.contains(#"<h2>Office<span class="count">2</span>"#), "\(page)")

        // /metrics: each announced Zone's occupants and whether it is occupied.
        let metrics = try await daemon.get("/metrics").body.split(separator: "\n").map(String.init)
        #expect(Self.sample(metrics, "beaconwatch_zone_occupants", zone: "Kitchen")?.value == 1, "\(metrics)")
        #expect(Self.sample(metrics, "beaconwatch_zone_occupied", zone: "Kitchen")?.value == 1)
        #expect(
            Self.sample(metrics, "beaconwatch_zone_occupants", zone: "Reception")?.line.contains(
                #"region="\#(WebTests.uuid):1""#) == true)
        #expect(Self.sample(metrics, #"beaconwatch_outputs_total{type="occupancy"}"#, zone: nil)?.value ?? 0 > 0)

        // Alice leaves (her beacon is silent past exitTimeout) and the PIR's hold ends: the
        // Reception is vacant 30 s after the radar and her presence both said nobody.
        daemon.sensor("reception-radar", payload: #""OFF""#, at: 200)
        daemon.sensor("reception-radar", payload: #""OFF""#, at: 300)
        _ = try await Self.events(stream) {
            $0["type"] as? String == "occupancy" && $0["name"] as? String == "Reception"
                && $0["occupied"] as? Bool == false
        }
        let vacant = try #require(Self.card(try await daemon.get("/").body, zone: 1))
        #expect(vacant.contains(#"<div class="zone" "#))
        #expect(vacant.contains(#"data-occupied="false" data-count="0""#))
        #expect(vacant.contains("<strong>vacant</strong> · 0 people"))
        #expect(!vacant.contains(#"class="why""#))
        let gone = try await daemon.get("/metrics").body.split(separator: "\n").map(String.init)
        #expect(Self.sample(gone, "beaconwatch_zone_occupied", zone: "Reception")?.value == 0)
        #expect(Self.sample(gone, "beaconwatch_zone_occupants", zone: "Reception")?.value == 0)
        try await daemon.finish()
    }

    /// A configuration without occupancy: no occupancy on the page or in the metrics, and the API
    /// says how to turn it on.
    @Test func withoutOccupancyTheAPISaysHowToTurnItOn() async throws {
        let daemon = try await WebTests.Daemon()
        daemon.sight(major: 1, minor: 1, at: 0..<2)
        let response = try await daemon.get("/api/v1/occupancy")
        #expect(response.status == 404)
        #expect(
            WebTests.object(response.body)["error"] as? String
                == "this configuration has no occupancy; set Occupancy.count = zones or a Sensor.<id> (docs/occupancy.md)"
        )
        #expect(!(try await daemon.get("/").body.contains(#"class="occupancy"#)))
        #expect(!(try await daemon.get("/metrics").body.contains("_occupants{")))
        try await daemon.finish()
    }

    /// The sample of metric `name` (with its `{` when labelled) whose `zone` label is `zone`, and its value.
    static func sample(_ metrics: [String], _ name: String, zone: String?) -> (line: String, value: Double)? {
        let line = metrics.first { line in
            guard line.hasPrefix(zone == nil ? name + " " : name + "{") else { return false }
            return zone.map { line.contains(#"zone="\#($0)""#) } ?? true
        }
        guard let line, let value = line.split(separator: " ").last.flatMap({ Double($0) }) else { return nil }
        return (line, value)
    }

    /// The building page's card of Zone `major` (from its `div` to the next Zone's).
    static func card(_ page: String, zone major: Int) -> String? {
        guard let start = page.range(of: #"data-region="\#(WebTests.uuid):\#(major)""#) else { return nil }
        let from =
            page[..<start.lowerBound].range(of: "<div class=\"zone", options: .backwards)?.lowerBound
            ?? start.lowerBound
        let rest = page[start.upperBound...]
        let end =
            rest.range(of: "<div class=\"zone")?.lowerBound ?? rest.range(of: "</section>")?.lowerBound ?? rest.endIndex
        return String(page[from..<end])
    }
}

extension WebTests.Daemon {
    /// Writes a sensor's trace line (docs/behaviour.md §23): `payload` as JSON text, at seconds
    /// after 1700000000.
    func sensor(_ id: String, payload: String, at second: Double) {
        let text = #"{"t": \#(1_700_000_000 + second), "sensor": "\#(id)", "payload": \#(payload)}"# + "\n"
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(writer, $0.baseAddress, $0.count) }
    }
}
