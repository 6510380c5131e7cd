import Foundation
import TestSupport
import Testing

/// Home Assistant discovery of the occupancy through a real mosquitto (docs/behaviour.md §23,
/// docs/mqtt.md): `run` on a trace announces each Zone with an occupancy as a `binary_sensor` and a
/// count `sensor`, retained beside the `MQTT.topic/occupancy/<region>` they read.
@Suite(.serialized) struct MQTTOccupancyRunTests {
    static let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"

    @Test func eachZoneWithAnOccupancyIsAnnouncedToHomeAssistant() async throws {
        let broker = try Broker()
        let folder = try scratchFolder("mqtt-occupancy")
        try """
        Monitor.userid = flat
        Monitor.exitTimeout = 10
        LocationBaseBeacon.101 = \(Self.uuid),1,1
        LocationBaseBeacon.102 = \(Self.uuid),2,1
        LocationAreaName.\(Self.uuid) = Flat
        LocationZoneName.\(Self.uuid):1 = Kitchen
        LocationZoneName.\(Self.uuid):2 = Office
        Sensor.office-radar = office-radar/binary_sensor/radar_target/state, presence, Office
        MQTT.host = 127.0.0.1
        MQTT.port = \(broker.port)
        MQTT.topic = bw
        State.database = state.sqlite

        """.write(to: folder.appendingPathComponent("hsyco.ini"), atomically: true, encoding: .utf8)
        // The own radio in the Kitchen; the Office's radar says present, as ESPHome publishes it.
        try """
        {"t": 1700000000.0, "uuid": "\(Self.uuid)", "major": 1, "minor": 1, "rssi": -60, "power": -59}
        {"t": 1700000001.0, "sensor": "office-radar", "payload": "ON"}
        {"t": 1700000002.0, "uuid": "\(Self.uuid)", "major": 1, "minor": 1, "rssi": -60, "power": -59}

        """.write(to: folder.appendingPathComponent("trace.jsonl"), atomically: true, encoding: .utf8)
        let run = try await DecodeCommandTests.beaconwatch(
            [
                "run", "--web-listen", "", "--config", "hsyco.ini", "--source", "trace:trace.jsonl", "--log-level",
                "error",
            ], in: folder)
        #expect(run.status == 0, "\(run.stderr)")

        // What Home Assistant is told when it subscribes after the run: retained configs and states.
        let discovery = try await MQTTRunTests.Subscriber(
            port: broker.port, filter: "homeassistant/+/beaconwatch-flat_bw_flat/#")
        let states = try await MQTTRunTests.Subscriber(port: broker.port, filter: "bw/occupancy/#")
        let objects = ["\(Self.uuid)_1", "\(Self.uuid)_2"]
        let wanted = Set(
            objects.flatMap {
                [
                    "homeassistant/binary_sensor/beaconwatch-flat_bw_flat/occupancy_\($0)/config",
                    "homeassistant/sensor/beaconwatch-flat_bw_flat/occupants_\($0)/config",
                ]
            })
        try await MQTTRunTests.Subscriber.until("both Zones' discovery and states") {
            Set(discovery.messages.map(\.topic)).isSuperset(of: wanted) && states.messages.count >= 2
        }
        // The Area is not counted (Occupancy.count defaults to zones): no entities for it.
        #expect(!discovery.messages.contains { $0.topic.contains("occupancy_\(Self.uuid)/") })
        #expect(discovery.messages.allSatisfy { $0.retained })
        let configs = Dictionary(discovery.messages.map { ($0.topic, $0.payload) }) { _, last in last }
        let office = WebTests.object(
            configs["homeassistant/binary_sensor/beaconwatch-flat_bw_flat/occupancy_\(objects[1])/config"] ?? "")
        #expect(office["state_topic"] as? String == "bw/occupancy/\(Self.uuid):2")
        #expect(office["device_class"] as? String == "occupancy")
        #expect((office["device"] as? [String: Any])?["suggested_area"] as? String == "Office")
        #expect(office["availability_topic"] as? String == "bw/flat/status")

        // The states the templates read: the Kitchen occupied by the own radio, the Office by its radar.
        let byTopic = Dictionary(states.messages.map { ($0.topic, $0.payload) }) { _, last in last }
        let kitchen = WebTests.object(byTopic["bw/occupancy/\(Self.uuid):1"] ?? "")
        #expect(kitchen["occupied"] as? Bool == true)
        #expect(kitchen["count"] as? Int == 1)
        #expect(kitchen["devices"] as? [String] == ["flat"])
        let radar = WebTests.object(byTopic["bw/occupancy/\(Self.uuid):2"] ?? "")
        #expect(radar["occupied"] as? Bool == true)
        #expect((radar["sensors"] as? [String: Any])?["office-radar"] as? Bool == true)
        discovery.client.shutdown()
        states.client.shutdown()
    }
}
