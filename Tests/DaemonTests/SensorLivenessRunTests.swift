import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 73, liveness from the firmware through a real mosquitto (docs/occupancy.md, "Liveness"):
/// an ESPHome radar, a zigbee2mqtt PIR and a Tasmota switch, each going offline on its firmware's
/// status topic (retained, as its broker publishes its MQTT will) and online again. The daemon runs
/// on its own clock (Monitor.source = none); every wait is for the daemon's word on the broker or
/// in its log, within a deadline, never a sleep.
@Suite(.serialized) struct SensorLivenessRunTests {
    typealias Subscriber = MQTTRunTests.Subscriber
    static let area = "0E5A6B7C-8D9E-4F01-A2B3-C4D5E6F70812"

    @Test func eachFirmwaresStatusTopicTakesItsSensorOfflineAndBack() async throws {
        let broker = try Broker()
        let folder = try scratchFolder("sensor-liveness")
        try """
        LocationBaseBeacon.101 = \(Self.area),1,1
        LocationBaseBeacon.102 = \(Self.area),2,1
        LocationBaseBeacon.103 = \(Self.area),3,1
        LocationZoneName.\(Self.area):1 = Meeting room
        LocationZoneName.\(Self.area):2 = Office
        LocationZoneName.\(Self.area):3 = Kitchen
        Sensor.meeting-pir = zigbee2mqtt/meeting/pir, motion, Meeting room
        Sensor.meeting-pir.hold = 3600
        Sensor.office-radar = office-radar/binary_sensor/presence/state, presence, Office
        Sensor.kitchen-switch = tele/kitchen/SENSOR, presence, Kitchen, Switch1
        Occupancy.vacantAfter = 0
        Monitor.userid = floor2
        Monitor.source = none
        MQTT.host = 127.0.0.1
        MQTT.port = \(broker.port)
        MQTT.keepalive = 5
        State.database = state.sqlite

        """.write(to: folder.appendingPathComponent("hsyco.ini"), atomically: true, encoding: .utf8)
        let watcher = try await Subscriber(port: broker.port, filter: "beaconwatch/#")
        func publish(_ topic: String, _ payload: String, retain: Bool = true) throws {
            _ = try watcher.client.publish(topic: topic, payload: Array(payload.utf8), qos: 1, retain: retain)
        }
        // Each firmware online before the daemon starts (retained), its sensor saying someone is there.
        try publish("office-radar/status", "online")
        try publish("office-radar/binary_sensor/presence/state", "ON")
        try publish("tele/kitchen/LWT", "Online")
        try publish("tele/kitchen/SENSOR", #"{"Time":"2026-03-02T17:40:00","Switch1":"ON"}"#)
        try publish("zigbee2mqtt/meeting/pir/availability", #"{"state":"online"}"#)

        let daemon = try FleetRunTests.daemon(in: folder)
        defer { if daemon.isRunning { kill(daemon.processIdentifier, SIGKILL) } }
        let logFile = folder.appendingPathComponent("daemon.log")
        func log() -> String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }
        try await Subscriber.until("the daemon online") { watcher.payloads("floor2/status").last == "online" }
        func latest(_ major: Int) -> String {
            watcher.payloads("floor2/occupancy").last { $0.contains(#""region":"\#(Self.area):\#(major)""#) } ?? ""
        }
        try publish("zigbee2mqtt/meeting/pir", #"{"battery":100,"occupancy":true}"#, retain: false)
        try await Subscriber.until("every room occupied by its sensor") {
            latest(1).contains(#""meeting-pir":true"#) && latest(2).contains(#""office-radar":true"#)
                && latest(3).contains(#""kitchen-switch":true"#)
        }

        // Each firmware says offline (its will): its room is vacant, its sensor null; the daemon
        // says so in its log. Online again: its last state counts again.
        let rooms: [(major: Int, id: String, topic: String, offline: String, online: String)] = [
            (2, "office-radar", "office-radar/status", "offline", "online"),
            (1, "meeting-pir", "zigbee2mqtt/meeting/pir/availability", #"{"state":"offline"}"#, #"{"state":"online"}"#),
            (3, "kitchen-switch", "tele/kitchen/LWT", "Offline", "Online"),
        ]
        for room in rooms {
            try publish(room.topic, room.offline)
            try await Subscriber.until("\(room.id) offline") {
                latest(room.major).contains(#""occupied":false"#)
                    && latest(room.major).contains(#""\#(room.id)":null"#)
                    && log().contains("sensor \(room.id) is offline: \(room.topic) says so")
            }
            try publish(room.topic, room.online)
            try await Subscriber.until("\(room.id) online again") {
                latest(room.major).contains(#""occupied":true"#)
                    && latest(room.major).contains(#""\#(room.id)":true"#)
                    && log().contains("sensor \(room.id) is online again")
            }
        }
        kill(daemon.processIdentifier, SIGTERM)
        try await Subscriber.until("the daemon to exit") { !daemon.isRunning }
        #expect(daemon.terminationStatus == 0, "\(log())")
        watcher.client.shutdown()
    }
}
