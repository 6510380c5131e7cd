import BeaconConfiguration
import Daemon
import MQTT
import Testing

/// Garbage on the fleet's topics is said at most 10 times a minute, on the daemon's clock that
/// only moves forward (docs/fleet.md, "What the daemon says"); the next minute's first line
/// counts what was not.
@Suite struct RefusalsTests {
    @Test func garbageIsSaidTenTimesAMinuteAndTheRestCounted() {
        let refusals = Refusals()
        let first = (0..<13).map { refusals.garbage("bad \($0)", at: .seconds(30) + .milliseconds($0)) }
        #expect(first.prefix(10).map { $0 ?? "nothing" } == (0..<10).map { "bad \($0)" })
        #expect(first.dropFirst(10).allSatisfy { $0 == nil })
        // 59.9 s after the window opened: still the same minute.
        #expect(refusals.garbage("late", at: .milliseconds(89_900)) == nil)
        #expect(
            refusals.garbage("next", at: .seconds(90))
                == "(4 more fleet messages were ignored in the last minute) next")
        #expect(refusals.garbageCount == 15)
    }
}

/// The routing of a scanner's messages (docs/behaviour.md §19): reports, an ESPresense node's status beside
/// them, garbage.
@Suite struct ScannerRoutingTests {
    static let tree = TopicTree(topic: "beaconwatch", userid: "hq", qos: 1)
    static let espresense = TopicFilter("espresense/devices/+/+")!

    static func route(_ topic: String, _ payload: String) -> MQTTInput.Routed {
        MQTTInput.route(
            topic: topic, payload: Array(payload.utf8), retained: true, tree: tree, fleet: [],
            scanners: [(.espresense, espresense)], status: MQTTInput.statusFilter(espresense: espresense))
    }

    @Test func anESPresenseNodesStatusIsItsHealth() {
        #expect(MQTTInput.statusFilter(espresense: Self.espresense)?.description == "espresense/rooms/+/status")
        #expect(MQTTInput.statusFilter(espresense: TopicFilter("+/devices/+/+")) == nil)
        #expect(MQTTInput.statusFilter(espresense: TopicFilter("nodes/+/+")) == nil)
        guard case .scannerStatus("kitchen", online: true) = Self.route("espresense/rooms/kitchen/status", "online")
        else { Issue.record("online not taken"); return }
        guard case .scannerStatus("kitchen", online: false) = Self.route("espresense/rooms/kitchen/status", "offline")
        else { Issue.record("offline not taken"); return }
        guard case .garbage(let why) = Self.route("espresense/rooms/kitchen/status", "maybe") else {
            Issue.record("garbage taken")
            return
        }
        #expect(why.contains("expected online or offline"))
        guard case .ignored = Self.route("espresense/rooms/kitchen/telemetry", "{}") else {
            Issue.record("telemetry taken")
            return
        }
        guard case .reports(let reports) = Self.route("espresense/devices/badge/kitchen", #"{"rssi":-60}"#) else {
            Issue.record("a report not taken")
            return
        }
        #expect(reports.map(\.scanner) == ["kitchen"])
    }
}
