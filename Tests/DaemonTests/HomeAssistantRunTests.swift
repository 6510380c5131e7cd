import Foundation
import TestSupport
import Testing

/// Home Assistant discovery from a running daemon on a real mosquitto (issue 72,
/// docs/home-assistant.md); Tests/homeassistant/ha-test reads it through Home Assistant itself.
@Suite(.serialized) struct HomeAssistantRunTests {
    typealias Subscriber = MQTTRunTests.Subscriber

    /// What the broker holds retained, read by a subscriber after a marker retained last: mosquitto
    /// sends a new subscription every retained message at once, so the marker comes after them.
    static func retained(port: Int32) async throws -> [String: String] {
        let marker = try await Subscriber(port: port, filter: "zz-marker")
        _ = try marker.client.publish(topic: "zz-marker", payload: Array("here".utf8), qos: 1, retain: true)
        try await Subscriber.until("the marker") { !marker.messages.isEmpty }
        marker.client.shutdown()
        let everything = try await Subscriber(port: port, filter: "#")
        try await Subscriber.until("every retained message") {
            everything.messages.contains { $0.topic == "zz-marker" }
        }
        everything.client.shutdown()
        return Dictionary(everything.messages.map { ($0.topic, $0.payload) }) { _, last in last }
    }

    /// A start that fails because the radio cannot be opened (exit 3) leaves no discovery and no
    /// status on the broker: Home Assistant shows no device that never ran.
    @Test func aStartThatFailsLeavesNothingRetained() async throws {
        guard !FileManager.default.fileExists(atPath: "/sys/class/bluetooth") else { return }
        let broker = try Broker()
        let folder = try RunCommandTests.folder(
            "Monitor.userid = flat\nMQTT.host = 127.0.0.1\nMQTT.port = \(broker.port)\nMQTT.keepalive = 5\n")
        let run = try await DecodeCommandTests.beaconwatch(
            ["run", "--web-listen", "", "--config", "hsyco.ini", "--source", "hci0", "--log-level", "error"],
            in: folder)
        #expect(run.status == 3, "\(run.stderr)")
        let retained = try await Self.retained(port: broker.port)
        #expect(retained.keys.filter { $0.hasPrefix("homeassistant/") }.isEmpty, "\(retained.keys.sorted())")
        #expect(retained["beaconwatch/flat/status"] == nil, "\(retained["beaconwatch/flat/status"] ?? "")")
    }
}
