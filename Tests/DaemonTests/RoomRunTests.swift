import BeaconCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Rooms from fixed scanners (docs/behaviour.md §19) against a real mosquitto: three nodes publishing as
/// ESPresense does (docs/espresense.md) in the three rooms of etc/rooms and two tags walking
/// between them.
@Suite(.serialized) struct RoomRunTests {
    typealias Subscriber = MQTTRunTests.Subscriber
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("etc/rooms")

    /// etc/rooms/hsyco.ini on the test's broker. Its exit timeout (10 s) is long enough for a
    /// loaded machine's delays between two reports never to look like leaving.
    static func ini(port: Int32) throws -> String {
        let text = try String(contentsOf: folder.appendingPathComponent("hsyco.ini"), encoding: .utf8)
        return text.replacingOccurrences(of: "MQTT.port = 1883", with: "MQTT.port = \(port)")
            + "MQTT.keepalive = 5\n"
    }

    /// One line of etc/rooms/walk.jsonl.
    struct Report {
        var scanner: String
        var tag: String
        var rssi: Double
    }

    /// The walk, in its order; each tag named as an ESPresense node names an iBeacon
    /// (`iBeacon:<uuid>-<major>-<minor>`, the UUID in lower case).
    static func walk() throws -> [Report] {
        let text = try String(contentsOf: folder.appendingPathComponent("walk.jsonl"), encoding: .utf8)
        return try text.split(separator: "\n").map { line in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let tag = try #require(object["tag"] as? String)
            let parts = tag.split(separator: ":")
            return Report(
                scanner: try #require(object["scanner"] as? String),
                tag: "iBeacon:\(parts[1].lowercased())-\(parts[2])-\(parts[3])",
                rssi: try #require(object["rssi"] as? Double))
        }
    }

    /// What an ESPresense node publishes for a report (`BleFingerprint::fill`).
    static func payload(_ report: Report) -> String {
        let rssi = String(format: "%.2f", report.rssi)
        return
            #"{"mac":"4a1b2c3d4e5f","id":"\#(report.tag)","rssi@1m":-59,"rssi":\#(rssi),"rxAdj":0,"rssiVar":1.20,"distance":1.10,"var":0.20,"int":2000}"#
    }

    /// The zone and area transitions of a tag on its topic, as `enter|exit name`.
    static func transitions(_ watcher: Subscriber, _ tag: String) -> [String] {
        watcher.payloads("/\(tag)/transition").compactMap { payload in
            guard let object = try? JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any],
                object["kind"] as? String != "beacon"
            else { return nil }
            return "\(object["type"] ?? "") \(object["name"] ?? "")"
        }
    }

    @Test func threeNodesAndTwoWalkingTagsGiveOneRoomAtATimeAsReplayDoes() async throws {
        let broker = try Broker()
        let scratch = try scratchFolder("rooms")
        try Self.ini(port: broker.port).write(
            to: scratch.appendingPathComponent("hsyco.ini"), atomically: true, encoding: .utf8)
        let watcher = try await Subscriber(port: broker.port, filter: "beaconwatch/#")
        let discovery = try await Subscriber(port: broker.port, filter: "homeassistant/#")
        let daemon = try FleetRunTests.daemon(in: scratch)
        try await Subscriber.until("the daemon online") { watcher.payloads("flat/status").last == "online" }
        let walk = try Self.walk()
        // A node's status and a query's answer one level deeper are not reports.
        _ = try watcher.client.publish(
            topic: "espresense/devices/\(walk[0].tag)/kitchen/battery", payload: Array(#"{"battery":90}"#.utf8),
            qos: 1, retain: false)
        // The nodes hear each other first (ESPresense's `node:<id>`, docs/espresense.md): never a
        // tag; the kitchen's receiver reads 2 dB higher than the hall's, which the calibration takes.
        let nodes = (0..<6).flatMap { _ in
            [
                Report(scanner: "kitchen", tag: "node:hall", rssi: -70),
                Report(scanner: "hall", tag: "node:kitchen", rssi: -72),
            ]
        }
        for report in nodes + walk {
            _ = try watcher.client.publish(
                topic: "espresense/devices/\(report.tag)/\(report.scanner)", payload: Array(Self.payload(report).utf8),
                qos: 1, retain: false)
        }
        try await Subscriber.until("both tags' exits") {
            Self.transitions(watcher, "anna").last == "exit Flat"
                && Self.transitions(watcher, "ben").last == "exit Flat"
        }
        #expect(
            Self.transitions(watcher, "anna") == [
                "enter Flat", "enter Kitchen", "exit Kitchen", "enter Hall", "exit Hall", "enter Office", "exit Office",
                "exit Flat",
            ])
        #expect(
            Self.transitions(watcher, "ben") == [
                "enter Flat", "enter Office", "exit Office", "enter Hall", "exit Hall", "enter Kitchen", "exit Kitchen",
                "exit Flat",
            ])
        #expect(watcher.payloads("/anna/zone").last == "none", "\(watcher.payloads("/anna/zone"))")
        #expect(!watcher.messages.contains { $0.topic.contains("node:") }, "a node heard as a tag")
        // Home Assistant: a device_tracker (its Area) and a room sensor (its Zone) per tag.
        for tag in ["anna", "ben"] {
            try await Subscriber.until("\(tag)'s discovery") {
                let topics = Set(discovery.messages.map(\.topic))
                return topics.contains(
                    "homeassistant/device_tracker/beaconwatch-flat_beaconwatch_\(tag)/location/config")
                    && topics.contains("homeassistant/sensor/beaconwatch-flat_beaconwatch_\(tag)/zone/config")
            }
            let room = discovery.messages.first {
                $0.topic == "homeassistant/sensor/beaconwatch-flat_beaconwatch_\(tag)/zone/config"
            }
            #expect(room?.payload.contains(#""name":"Room""#) == true, "\(room?.payload ?? "")")
        }
        // Monitor.source = none: the daemon has its Status, no tracker or sensors of a radio it has not.
        let own = Set(discovery.messages.map(\.topic).filter { $0.contains("/beaconwatch-flat_beaconwatch_flat/") })
        #expect(own == ["homeassistant/binary_sensor/beaconwatch-flat_beaconwatch_flat/status/config"], "\(own)")
        discovery.client.shutdown()
        // The same reports, in the same order, through replay, as a recording of the nodes' traffic
        // (`"via": "espresense"`) replays on a machine with no broker: no MQTT.* (issue 47).
        let trace =
            (nodes + walk).enumerated().map { n, report in
                #"{"t": \#(1_700_000_000 + Double(n) * 0.001), "scanner": "\#(report.scanner)", "tag": "\#(report.tag)", "rssi": \#(report.rssi), "power": -59, "via": "espresense"}"#
            }.joined(separator: "\n") + "\n"
        let offline =
            try String(contentsOf: scratch.appendingPathComponent("hsyco.ini"), encoding: .utf8)
            .split(separator: "\n").filter { !$0.hasPrefix("MQTT.") }.joined(separator: "\n") + "\n"
        try offline.write(to: scratch.appendingPathComponent("replay.ini"), atomically: true, encoding: .utf8)
        let expected = try await Self.replay(trace, in: scratch, config: "replay.ini")
        for tag in ["anna", "ben"] {
            let wanted = Self.comparable(expected[tag] ?? [])
            #expect(wanted.walk.count > 8 && wanted.end.count >= 3, "\(tag): \(wanted)")
            try await Subscriber.until("\(tag)'s last exit in the events file") {
                Self.comparable(Self.lines(of: tag, in: scratch)).end.count >= wanted.end.count
            }
            let live = Self.comparable(Self.lines(of: tag, in: scratch))
            #expect(live.walk == wanted.walk, "\(tag)")
            #expect(live.end == wanted.end, "\(tag)")
        }
        kill(daemon.processIdentifier, SIGTERM)
        try await Subscriber.until("the daemon to exit") { !daemon.isRunning }
        watcher.client.shutdown()
    }

    /// A building of two rooms, a `forward` node and a Theengs gateway placed in them, and every
    /// iBeacon heard a tag (those of the conformance capture).
    static func capturedIni(port: Int32) -> String {
        """
        LocationBaseBeacon.901 = 5E6F7081-92A3-44B5-86C7-D8E9FAB0C1D2,1,1
        LocationBaseBeacon.902 = 5E6F7081-92A3-44B5-86C7-D8E9FAB0C1D2,2,1
        LocationScanner.901 = node-1
        LocationScanner.902 = lounge
        Scanners.forward = beaconwatch/+/sightings
        Scanners.theengs = home/+/BTtoMQTT/#
        Tags.autoAdd = ibeacon
        Monitor.userid = hq
        Monitor.source = none
        Monitor.rssiFilter = none
        Monitor.exitTimeout = 10
        MQTT.host = 127.0.0.1
        MQTT.port = \(port)
        MQTT.keepalive = 5
        MQTT.homeassistant = false
        State.database = state.sqlite

        """
    }

    /// The capture's sightings as a scanner's trace lines (the reports a scanner makes of them).
    static func capturedTrace(scanner: String, in folder: URL) async throws -> (trace: String, tags: [String]) {
        let decoded = try await DecodeCommandTests.beaconwatch(
            ["decode", "btsnoop:\(ForwardTests.capture)"], in: folder)
        var tags: [String] = []
        let lines = try decoded.stdout.split(separator: "\n").map { line -> String in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let tag = "ibeacon:\(object["uuid"] ?? ""):\(object["major"] ?? 0):\(object["minor"] ?? 0)"
            if !tags.contains(tag) { tags.append(tag) }
            let text = try #require(object["t"] as? String)
            let t = try #require(Timestamp(iso8601: text)).secondsSinceEpoch
            return
                #"{"t": \#(t), "scanner": "\#(scanner)", "tag": "\#(tag)", "rssi": \#(object["rssi"] ?? 0), "power": \#(object["power"] ?? -59), "address": "\#(object["address"] ?? "")"}"#
        }
        return (lines.joined(separator: "\n") + "\n", tags)
    }

    /// A `forward` node fed a capture, placed as a scanner: each iBeacon of the capture is a tag
    /// whose outputs are those `replay` gives the node's reports as scanner lines.
    @Test func aForwardNodeFedACaptureGivesItsTagsWhatReplayGives() async throws {
        let broker = try Broker()
        let scratch = try scratchFolder("rooms")
        try Self.capturedIni(port: broker.port).write(
            to: scratch.appendingPathComponent("hsyco.ini"), atomically: true, encoding: .utf8)
        let node = try ForwardTests.folder(port: broker.port)
        let watcher = try await Subscriber(port: broker.port, filter: "beaconwatch/#")
        let daemon = try FleetRunTests.daemon(in: scratch)
        try await Subscriber.until("the daemon online") { watcher.payloads("hq/status").last == "online" }
        let forward = try await DecodeCommandTests.beaconwatch(
            ["forward", "--config", "hsyco.ini", "--source", "btsnoop:\(ForwardTests.capture)"], in: node)
        #expect(forward.status == 0, "\(forward.stderr)")
        let (trace, tags) = try await Self.capturedTrace(scanner: "node-1", in: scratch)
        try await Self.expectReplay(trace, tags: tags, in: scratch, watcher: watcher)
        kill(daemon.processIdentifier, SIGTERM)
        try await Subscriber.until("the daemon to exit") { !daemon.isRunning }
        watcher.client.shutdown()
    }

    /// A Theengs gateway placed as a scanner, publishing the capture's sightings as Theengs
    /// Gateway does: the same.
    @Test func aTheengsGatewayFedACaptureGivesItsTagsWhatReplayGives() async throws {
        let broker = try Broker()
        let scratch = try scratchFolder("rooms")
        try Self.capturedIni(port: broker.port).write(
            to: scratch.appendingPathComponent("hsyco.ini"), atomically: true, encoding: .utf8)
        let watcher = try await Subscriber(port: broker.port, filter: "beaconwatch/#")
        let daemon = try FleetRunTests.daemon(in: scratch)
        try await Subscriber.until("the daemon online") { watcher.payloads("hq/status").last == "online" }
        let decoded = try await DecodeCommandTests.beaconwatch(
            ["decode", "btsnoop:\(ForwardTests.capture)"], in: scratch)
        for line in decoded.stdout.split(separator: "\n") {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let address = try #require(object["address"] as? String)
            let uuid = try #require(object["uuid"] as? String).replacingOccurrences(of: "-", with: "").lowercased()
            let payload =
                #"{"id":"\#(address)","mfid":"4c00","uuid":"\#(uuid)","major":\#(object["major"] ?? 0),"minor":\#(object["minor"] ?? 0),"txpower":\#(object["power"] ?? -59),"rssi":\#(object["rssi"] ?? 0),"distance":1.2}"#
            _ = try watcher.client.publish(
                topic: "home/lounge/BTtoMQTT/\(address.replacingOccurrences(of: ":", with: ""))",
                payload: Array(payload.utf8), qos: 1, retain: false)
        }
        let (trace, tags) = try await Self.capturedTrace(scanner: "lounge", in: scratch)
        try await Self.expectReplay(trace, tags: tags, in: scratch, watcher: watcher)
        kill(daemon.processIdentifier, SIGTERM)
        try await Subscriber.until("the daemon to exit") { !daemon.isRunning }
        watcher.client.shutdown()
    }

    /// Each of `tags` exits, and its outputs in the events file are those `replay` gives `trace`.
    static func expectReplay(_ trace: String, tags: [String], in folder: URL, watcher: Subscriber) async throws {
        #expect(tags.count == 2)
        let expected = try await Self.replay(trace, in: folder)
        for tag in tags {
            let wanted = (expected[tag] ?? []).map(FleetRunTests.essence)
            #expect(wanted.filter { $0.contains(#""type":"exit""#) }.count >= 3, "\(tag): \(wanted)")
            try await Subscriber.until("\(tag)'s outputs in the events file") {
                Self.lines(of: tag, in: folder).count >= wanted.count
            }
            #expect(Self.lines(of: tag, in: folder).map(FleetRunTests.essence) == wanted, "\(tag)")
            // Under the tag's own topic, every enter and exit.
            let transitions = wanted.filter { $0.contains(#""type":"enter""#) || $0.contains(#""type":"exit""#) }.count
            try await Subscriber.until("\(tag)'s transitions on its topic") {
                watcher.payloads("/\(tag)/transition").count == transitions
            }
        }
    }

    /// A tag's outputs as compared between a live run and a replay (essences,
    /// ``FleetRunTests/essence(_:)``): every output of the walk itself, then the transitions of its
    /// end. At the end each scanner's location goes `off` the exit timeout after the scanner last
    /// heard the tag, and those instants are the reports' arrival times: a live broker delivers a
    /// burst of reports within a millisecond or two, a trace spaces them as it says, so which `off`
    /// comes first (and the nearest it leaves for a moment) is the one thing that may differ.
    static func comparable(_ lines: [String]) -> (walk: [String], end: [String]) {
        func time(_ line: String) -> Double {
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return (object?["t"] as? String).flatMap { Timestamp(iso8601: $0) }?.secondsSinceEpoch ?? 0
        }
        // The end: from half the exit timeout (10 s) before the tag's last Area exit; the walk's
        // reports all come within a fraction of a second.
        let last = lines.last { $0.contains(#""type":"exit""#) && $0.contains(#""kind":"area""#) }.map(time)
        let end = last.flatMap { last in lines.firstIndex { time($0) >= last - 5 } } ?? lines.count
        return (
            lines[..<end].map(FleetRunTests.essence),
            lines[end...].filter { $0.contains(#""type":"exit""#) || $0.contains(#""type":"enter""#) }
                .map(FleetRunTests.essence)
        )
    }

    /// Device `tag`'s lines in the events file.
    static func lines(of tag: String, in folder: URL) -> [String] {
        let text = (try? String(contentsOf: folder.appendingPathComponent("events.jsonl"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").filter { $0.contains(#""device":"\#(tag)""#) }.map(String.init)
    }

    /// What `replay` prints for `trace` on the folder's configuration, each device's lines.
    static func replay(_ trace: String, in folder: URL, config: String = "hsyco.ini") async throws -> [String: [String]]
    {
        let path = folder.appendingPathComponent("replay.jsonl")
        try trace.write(to: path, atomically: true, encoding: .utf8)
        let run = try await DecodeCommandTests.beaconwatch(
            ["replay", "--config", config, "trace:\(path.path)", "--state", "replay.sqlite"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        var devices: [String: [String]] = [:]
        for line in run.stdout.split(separator: "\n") {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            guard let device = object?["device"] as? String else { continue }
            devices[device, default: []].append(String(line))
        }
        return devices
    }
}
