import BeaconConfiguration
import Daemon
import Logging
import RegionMonitor
import Testing

/// The presence sensors' topics as the MQTT input subscribes and routes them (docs/behaviour.md
/// §23): each topic once, in the configuration's order, with every sensor on it; a reload's new
/// topics alone to subscribe.
@Suite struct SensorInputTests {
    /// A configuration of one Zone, a broker and `sensors` (id, topic), all presence sensors.
    static func configuration(_ sensors: [(id: String, topic: String)]) throws -> Configuration {
        let text =
            """
            LocationBaseBeacon.101 = 0E5A6B7C-8D9E-4F01-A2B3-C4D5E6F70812,1,1
            LocationZoneName.0E5A6B7C-8D9E-4F01-A2B3-C4D5E6F70812:1 = Lab
            Monitor.userid = floor2
            MQTT.host = 127.0.0.1

            """ + sensors.map { "Sensor.\($0.id) = \($0.topic), presence, Lab\n" }.joined()
        return try Configuration.load(Array(text.utf8), path: "test.ini").get()
    }

    static func occupancy(_ sensors: [(id: String, topic: String)]) throws -> OccupancySettings? {
        try configuration(sensors).occupancy
    }

    static func input(_ sensors: [(id: String, topic: String)]) throws -> MQTTInput {
        let configuration = try configuration(sensors)
        return MQTTInput(
            settings: try #require(configuration.mqtt), userid: "floor2", fleet: nil,
            occupancy: configuration.occupancy, control: EngineControl(), refusals: Refusals(),
            logger: Logger(label: "test"))
    }

    @Test func eachTopicIsSubscribedOnceInTheConfigurationsOrder() throws {
        let input = try Self.input(
            ([
                ("workshop-pir", "tele/tasmota_1A2B3C/SENSOR"),
                ("office-radar", "office-radar/binary_sensor/presence/state"),
                ("workshop-radar", "tele/tasmota_1A2B3C/SENSOR"),
            ]))
        // Each firmware's status topic (docs/occupancy.md, "Liveness") before its state topic.
        #expect(
            input.subscriptions.map(\.filter) == [
                "beaconwatch/floor2/cmd/+", "tele/tasmota_1A2B3C/LWT", "tele/tasmota_1A2B3C/SENSOR",
                "office-radar/status", "office-radar/binary_sensor/presence/state",
            ])
        #expect(
            input.subscriptions[1].lost
                == "sensors workshop-pir, workshop-radar are not known offline when their firmware says so")
        #expect(input.subscriptions[2].lost == "sensors workshop-pir, workshop-radar are not heard")
        #expect(input.subscriptions[4].lost == "sensor office-radar is not heard")
        #expect(input.sensors(status: "tele/tasmota_1A2B3C/LWT") == ["workshop-pir", "workshop-radar"])
        #expect(input.sensors(status: "office-radar/status") == ["office-radar"])
        #expect(input.sensors(on: "tele/tasmota_1A2B3C/SENSOR") == ["workshop-pir", "workshop-radar"])
        #expect(input.sensors(on: "tele/tasmota_1A2B3C") == [])
        #expect(try Self.input([]).subscriptions.map(\.filter) == ["beaconwatch/floor2/cmd/+"])
    }

    @Test func aReloadSubscribesOnlyTheNewTopics() throws {
        let input = try Self.input([("a", "x/a"), ("b", "x/b")])
        let added = input.reconfigure(occupancy: try Self.occupancy([("b", "x/b"), ("c", "x/c"), ("a2", "x/a")]))
        #expect(added.map(\.filter) == ["x/c"])
        #expect(input.sensors(on: "x/a") == ["a2"])
        #expect(input.reconfigure(occupancy: nil).isEmpty)
        #expect(input.sensors(on: "x/b") == [])
        #expect(input.subscriptions.count == 1)
    }
}
