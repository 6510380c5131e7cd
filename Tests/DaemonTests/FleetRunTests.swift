import BeaconCore
import BeaconConfiguration
import Daemon
import Engine
import Fleet
import Foundation
import MQTT
import Persistence
import Rules
import Synchronization
import RegionMonitor
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A fleet daemon (docs/behaviour.md §15) against a real mosquitto: a Theengs tracker and a `forward` node
/// each give their device the outputs `replay` gives the same sightings; garbage on every fleet
/// topic changes nothing else.
@Suite(.serialized) struct FleetRunTests {
    typealias Subscriber = MQTTRunTests.Subscriber
    static let estimote = "B9407F30-F5F8-466E-AFF9-25556B57FE6D"
    static let other = "F2A74FC4-7625-44DB-9B08-CB7E130B2029"

    /// A fleet daemon's configuration. `exitTimeout` is long enough by default for a loaded
    /// machine's delays between two reports never to look like leaving (what a replay compares).
    static func ini(
        port: Int32, both: Bool = true, maxAge: Int = 0, userid: String = "hq", extra: String = "",
        exitTimeout: Int = 10, homeAssistant: Bool = false
    ) -> String {
        """
        LocationBaseBeacon.1 = \(estimote),73,10
        \(both ? "LocationBaseBeacon.2 = \(other),52428,61166" : "")
        \(extra)
        Monitor.userid = \(userid)
        Monitor.source = none
        Monitor.mode = foreground
        Monitor.rssiFilter = none
        Monitor.hysteresis = 0
        Monitor.exitTimeout = \(exitTimeout)
        MQTT.host = 127.0.0.1
        MQTT.port = \(port)
        MQTT.keepalive = 5
        MQTT.homeassistant = \(homeAssistant)
        State.database = state.sqlite
        Fleet.theengs = home/+/BTtoMQTT/#
        Fleet.forward = beaconwatch/+/sightings
        Fleet.owntracks = owntracks/+/+
        Fleet.maxAge = \(maxAge)

        """
    }

    /// A daemon on `folder`'s hsyco.ini, its log in `daemon.log`, its outputs in `events.jsonl`.
    static func daemon(in folder: URL) throws -> Process {
        let process = Process()
        process.currentDirectoryURL = folder
        process.executableURL = DecodeCommandTests.productsDirectory.appendingPathComponent("beaconwatch")
        process.arguments = ["run", "--web-listen", "", "--config", "hsyco.ini", "--events", "events.jsonl"]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        try Eventually.start(process, loggingTo: folder.appendingPathComponent("daemon.log"))
        return process
    }

    /// An output without what depends on when it was computed or by whom: compared across runs.
    static func essence(_ line: some StringProtocol) -> String {
        guard var object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            return String(line)
        }
        for key in ["t", "device", "session", "address", "userid", "dwell", "dwellToday", "meters", "rssi"] {
            object[key] = nil
        }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    /// The outputs of `device` in the events file, as essences.
    static func outputs(of device: String, in folder: URL) -> [String] {
        let text = (try? String(contentsOf: folder.appendingPathComponent("events.jsonl"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").filter { $0.contains(#""device":"\#(device)""#) }.map(essence)
    }

    /// What `replay` prints for `trace` on the same configuration (its own source), as essences.
    static func replay(_ trace: String, in folder: URL) async throws -> [String] {
        let path = folder.appendingPathComponent("replay.jsonl")
        try trace.write(to: path, atomically: true, encoding: .utf8)
        let run = try await DecodeCommandTests.beaconwatch(["replay", "hsyco.ini", "trace:\(path.path)"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        return run.stdout.split(separator: "\n").map(essence)
    }

    static func theengs(_ uuid: String, _ major: Int, _ minor: Int, rssi: Int) -> String {
        #"{"id":"0A:0B:0C:0D:0E:0F","mfid":"4c00","uuid":"\#(uuid.replacingOccurrences(of: "-", with: "").lowercased())","major":\#(major),"minor":\#(minor),"txpower":-59,"rssi":\#(rssi)}"#
    }

    @Test func aTheengsTrackerGivesItsDeviceWhatReplayGivesTheSameSightings() async throws {
        let broker = try Broker()
        let folder = try scratchFolder("fleet")
        try Self.ini(port: broker.port).write(
            to: folder.appendingPathComponent("hsyco.ini"), atomically: true, encoding: .utf8)
        let watcher = try await Subscriber(port: broker.port, filter: "beaconwatch/#")
        let daemon = try Self.daemon(in: folder)
        try await Subscriber.until("the daemon online") { watcher.payloads("hq/status").last == "online" }
        // Each sighting changes a class, so each makes an event: the next goes once it is out, and
        // the arrivals are in order, as the trace replayed below has them.
        let sightings = [
            (Self.estimote, 73, 10, -65, "near"), (Self.other, 52428, 61166, -70, "far"),
            (Self.estimote, 73, 10, -80, "far"),
        ]
        for (n, (uuid, major, minor, rssi, distance)) in sightings.enumerated() {
            _ = try watcher.client.publish(
                topic: "home/cart-7/BTtoMQTT/0A0B0C0D0E0F",
                payload: Array(Self.theengs(uuid, major, minor, rssi: rssi).utf8),
                qos: 1, retain: false)
            try await Subscriber.until("event \(n + 1)") {
                let events = watcher.payloads("cart-7/event")
                return events.count > n && events[n].contains(#""distance":"\#(distance)""#)
            }
        }
        // Both Areas exit exitTimeout after their last sighting.
        try await Subscriber.until("the tracker's exits") {
            watcher.payloads("cart-7/transition").filter { $0.contains(#""type":"exit""#) }.count == 6
        }
        let trace =
            sightings.enumerated().map { n, sighting in
                #"{"t": \#(1_700_000_000 + Double(n) * 0.001), "uuid": "\#(sighting.0)", "major": \#(sighting.1), "minor": \#(sighting.2), "rssi": \#(sighting.3)}"#
            }.joined(separator: "\n") + "\n"
        let expected = try await Self.replay(trace, in: folder)
        try await Subscriber.until("the last output in the events file") {
            Self.outputs(of: "cart-7", in: folder).count >= expected.count
        }
        #expect(Self.outputs(of: "cart-7", in: folder) == expected)
        // Under the device's own topics, with its id in the payloads.
        #expect(watcher.payloads("cart-7/event").allSatisfy { $0.contains(#""device":"cart-7""#) })
        #expect(watcher.payloads("cart-7/area").last == "none")
        kill(daemon.processIdentifier, SIGTERM)
        try await Subscriber.until("the daemon to exit") { !daemon.isRunning }
        watcher.client.shutdown()
    }

    /// A `forward` node fed a capture: its device gets what `replay` of the capture gives. (One
    /// configured beacon: the node's batches arrive together, so exits of several beacons could
    /// share an instant that the capture spreads out.)
    @Test func aForwardNodeGivesItsDeviceWhatReplayGivesTheCapture() async throws {
        let broker = try Broker()
        let folder = try scratchFolder("fleet")
        try Self.ini(port: broker.port, both: false).write(
            to: folder.appendingPathComponent("hsyco.ini"), atomically: true, encoding: .utf8)
        let node = try ForwardTests.folder(port: broker.port)
        let watcher = try await Subscriber(port: broker.port, filter: "beaconwatch/#")
        let daemon = try Self.daemon(in: folder)
        try await Subscriber.until("the daemon online") { watcher.payloads("hq/status").last == "online" }
        let forward = try await DecodeCommandTests.beaconwatch(
            ["forward", "--config", "hsyco.ini", "--source", "btsnoop:\(ForwardTests.capture)"], in: node)
        #expect(forward.status == 0, "\(forward.stderr)")
        try await Subscriber.until("the node's exit") {
            watcher.payloads("node-1/transition").filter { $0.contains(#""type":"exit""#) }.count == 3
        }
        let replay = try await DecodeCommandTests.beaconwatch(
            ["replay", "hsyco.ini", "btsnoop:\(ForwardTests.capture)"], in: folder)
        let expected = replay.stdout.split(separator: "\n").map(Self.essence)
        #expect(expected.count > 5)
        try await Subscriber.until("the last output in the events file") {
            Self.outputs(of: "node-1", in: folder).count >= expected.count
        }
        #expect(Self.outputs(of: "node-1", in: folder) == expected)
        kill(daemon.processIdentifier, SIGTERM)
        try await Subscriber.until("the daemon to exit") { !daemon.isRunning }
        watcher.client.shutdown()
    }

    /// A restart resumes every device (docs/behaviour.md §15, §12): the class a tracker was reported at is not
    /// reported again, and its beacon, no longer heard, goes `off` exitTimeout after the start.
    @Test func aRestartResumesEveryDevice() async throws {
        let broker = try Broker()
        let folder = try scratchFolder("fleet")
        try Self.ini(port: broker.port, both: false, exitTimeout: 2, homeAssistant: true).write(
            to: folder.appendingPathComponent("hsyco.ini"), atomically: true, encoding: .utf8)
        let watcher = try await Subscriber(port: broker.port, filter: "beaconwatch/#")
        let discovery = try await Subscriber(port: broker.port, filter: "homeassistant/device_tracker/#")
        let first = try Self.daemon(in: folder)
        try await Subscriber.until("the daemon online") { watcher.payloads("hq/status").last == "online" }
        _ = try watcher.client.publish(
            topic: "home/cart-7/BTtoMQTT/x", payload: Array(Self.theengs(Self.estimote, 73, 10, rssi: -65).utf8),
            qos: 1,
            retain: false)
        try await Subscriber.until("the tracker's event") { watcher.payloads("cart-7/event").count == 1 }
        // Home Assistant hears of the tracker as a device of its own.
        try await Subscriber.until("the tracker's discovery") {
            discovery.messages.contains {
                $0.topic == "homeassistant/device_tracker/beaconwatch-hq_beaconwatch_cart-7/location/config"
            }
        }
        kill(first.processIdentifier, SIGTERM)
        try await Subscriber.until("the daemon to stop") { !first.isRunning }
        let second = try Self.daemon(in: folder)
        try await Subscriber.until("the tracker's beacon off after the restart") {
            watcher.payloads("cart-7/event").count == 2
        }
        let events = watcher.payloads("cart-7/event")
        #expect(events[0].contains(#""distance":"near""#) && events[1].contains(#""distance":"off""#), "\(events)")
        #expect(watcher.payloads("cart-7/beacon/1").last == "off")
        kill(second.processIdentifier, SIGTERM)
        try await Subscriber.until("the daemon to exit") { !second.isRunning }
        watcher.client.shutdown()
        discovery.client.shutdown()
    }

    /// With `Fleet.autoAdd` off, an undeclared device is said once, however often it reports,
    /// and a declared one is tracked; past `Fleet.maxDevices`, the cap is said once.
    @Test func undeclaredDevicesAndTheCapAreSaidOnce() async throws {
        let broker = try Broker()
        let folder = try scratchFolder("fleet")
        try Self.ini(port: broker.port, both: false, extra: "Fleet.autoAdd = false\nDevice.cart-1 = Cart 1").write(
            to: folder.appendingPathComponent("hsyco.ini"), atomically: true, encoding: .utf8)
        let watcher = try await Subscriber(port: broker.port, filter: "beaconwatch/#")
        let daemon = try Self.daemon(in: folder)
        try await Subscriber.until("the daemon online") { watcher.payloads("hq/status").last == "online" }
        let payload = Array(Self.theengs(Self.estimote, 73, 10, rssi: -65).utf8)
        for device in ["cart-9", "cart-9", "cart-1", "cart-9"] {
            _ = try watcher.client.publish(
                topic: "home/\(device)/BTtoMQTT/x", payload: payload, qos: 1, retain: false)
        }
        try await Subscriber.until("the declared device's event") { watcher.payloads("cart-1/event").count == 1 }
        let log = folder.appendingPathComponent("daemon.log")
        try await Subscriber.until("the undeclared device said") {
            ((try? String(contentsOf: log, encoding: .utf8)) ?? "").contains("device cart-9 is not declared")
        }
        kill(daemon.processIdentifier, SIGTERM)
        try await Subscriber.until("the daemon to exit") { !daemon.isRunning }
        let text = try String(contentsOf: log, encoding: .utf8)
        #expect(text.components(separatedBy: "device cart-9 is not declared").count == 2, "\(text)")
        #expect(watcher.payloads("cart-9/event").isEmpty)
        watcher.client.shutdown()
    }

    /// Two daemons sharing a broker split 200 trackers by `Fleet.shard`: every tracker's events
    /// come from exactly one of them (its session), and none is missing.
    @Test func twoShardsSplitTheFleetWithNoDeviceTwiceOrMissing() async throws {
        let broker = try Broker()
        var daemons: [Process] = []
        for index in 0..<2 {
            let folder = try scratchFolder("fleet")
            try Self.ini(
                port: broker.port, both: false, userid: "hq\(index)",
                extra: "Fleet.shard = \(index)/2\nMonitor.session = shard-\(index)"
            ).write(to: folder.appendingPathComponent("hsyco.ini"), atomically: true, encoding: .utf8)
            daemons.append(try Self.daemon(in: folder))
        }
        let watcher = try await Subscriber(port: broker.port, filter: "beaconwatch/#")
        try await Subscriber.until("both daemons online") {
            watcher.payloads("hq0/status").last == "online" && watcher.payloads("hq1/status").last == "online"
        }
        let payload = Array(Self.theengs(Self.estimote, 73, 10, rssi: -65).utf8)
        for n in 0..<200 {
            _ = try watcher.client.publish(topic: "home/tag-\(n)/BTtoMQTT/x", payload: payload, qos: 1, retain: false)
        }
        func sessions() -> [String: Set<String>] {
            var found: [String: Set<String>] = [:]
            for message in watcher.messages where message.topic.hasSuffix("/event") {
                let device = message.topic.split(separator: "/")[1]
                guard
                    let object = try? JSONSerialization.jsonObject(with: Data(message.payload.utf8)) as? [String: Any],
                    let session = object["session"] as? String
                else { continue }
                found[String(device), default: []].insert(session)
            }
            return found
        }
        try await Subscriber.until("an event of every tracker") { sessions().count == 200 }
        let found = sessions()
        #expect(found.values.allSatisfy { $0.count == 1 })
        let first = found.values.filter { $0 == ["shard-0"] }.count
        #expect(first > 40 && first < 160, "\(first) of 200 on shard 0")
        for daemon in daemons { kill(daemon.processIdentifier, SIGTERM) }
        try await Subscriber.until("the daemons to exit") { daemons.allSatisfy { !$0.isRunning } }
        watcher.client.shutdown()
    }

    /// Garbage on every fleet topic: invalid JSON, a 1 MiB payload, wrong types, an unknown
    /// `_type`, a stale `tst`. The daemon stays up, says so in a few lines, and a tracker
    /// reporting meanwhile gets exactly what it gets alone.
    @Test func garbageOnEveryFleetTopicChangesNothingElse() async throws {
        let broker = try Broker()
        let folder = try scratchFolder("fleet")
        try Self.ini(port: broker.port, both: false, maxAge: 30).write(
            to: folder.appendingPathComponent("hsyco.ini"), atomically: true, encoding: .utf8)
        let watcher = try await Subscriber(port: broker.port, filter: "beaconwatch/#")
        let daemon = try Self.daemon(in: folder)
        try await Subscriber.until("the daemon online") { watcher.payloads("hq/status").last == "online" }
        let huge = String(repeating: "x", count: 1 << 20)
        let garbage: [(String, String)] = [
            ("home/cart-8/BTtoMQTT/x", "{not json"), ("home/cart-8/BTtoMQTT/x", huge),
            (
                "home/cart-8/BTtoMQTT/x",
                #"{"mfid":"4c00","uuid":"\#(Self.estimote)","major":"73","minor":10,"rssi":-60}"#
            ),
            ("owntracks/eve/phone", #"{"_type":"teleport"}"#), ("owntracks/eve/phone", huge),
            ("owntracks/eve/phone", #"{"_type":"location","lat":"north","lon":9}"#),
            ("owntracks/eve/phone", #"{"_type":"location","lat":45,"lon":9,"tst":1000000000}"#),
            ("beaconwatch/node-9/sightings", "{\"t\": \"soon\"}"), ("beaconwatch/node-9/sightings", huge),
        ]
        func sight(_ rssi: Int) throws {
            _ = try watcher.client.publish(
                topic: "home/cart-9/BTtoMQTT/0A0B0C0D0E0F",
                payload: Array(Self.theengs(Self.estimote, 73, 10, rssi: rssi).utf8), qos: 1, retain: false)
        }
        for (topic, payload) in garbage.prefix(5) {
            _ = try watcher.client.publish(topic: topic, payload: Array(payload.utf8), qos: 1, retain: false)
        }
        try sight(-65)
        try await Subscriber.until("the tracker's first event") { watcher.payloads("cart-9/event").count == 1 }
        for (topic, payload) in garbage.dropFirst(5) {
            _ = try watcher.client.publish(topic: topic, payload: Array(payload.utf8), qos: 1, retain: false)
        }
        try sight(-80)
        try await Subscriber.until("the tracker's exits") {
            watcher.payloads("cart-9/transition").filter { $0.contains(#""type":"exit""#) }.count == 3
        }
        let trace =
            [-65, -80].enumerated().map { n, rssi in
                #"{"t": \#(1_700_000_000 + Double(n) * 0.001), "uuid": "\#(Self.estimote)", "major": 73, "minor": 10, "rssi": \#(rssi)}"#
            }.joined(separator: "\n") + "\n"
        let expected = try await Self.replay(trace, in: folder)
        try await Subscriber.until("the last output in the events file") {
            Self.outputs(of: "cart-9", in: folder).count >= expected.count
        }
        #expect(Self.outputs(of: "cart-9", in: folder) == expected)
        #expect(daemon.isRunning)
        let log = (try? String(contentsOf: folder.appendingPathComponent("daemon.log"), encoding: .utf8)) ?? ""
        let ignored = log.split(separator: "\n").filter { $0.contains("ignored a message on") }
        #expect(ignored.count == 8, "\(log)")
        #expect(log.contains("over 64 KiB") && log.contains("unknown \"_type\" 'teleport'"), "\(log)")
        // The stale fix is said once, with what to do about it.
        #expect(log.contains("fleet: device eve-phone: 1 observation(s) made more than Fleet.maxAge = 30 s"), "\(log)")
        // No device was made by garbage or by a stale fix.
        #expect(Self.outputs(of: "eve-phone", in: folder).isEmpty && Self.outputs(of: "cart-8", in: folder).isEmpty)
        kill(daemon.processIdentifier, SIGTERM)
        try await Subscriber.until("the daemon to exit") { !daemon.isRunning }
        watcher.client.shutdown()
    }
}

/// A fleet device's rules call their server as the daemon's own do (docs/behaviour.md §7.5, §15).
@Suite struct FleetRuleTests {
    /// Records each step's outputs with the device whose step it is.
    final class Recorder: OutputSink {
        let steps = Mutex<[(device: String?, types: [String])]>([])

        func deliver(_ outputs: ArraySlice<MonitorOutput>, entries: ArraySlice<OutboxEntry>, context: StepContext)
            throws
        {
            steps.withLock { $0.append((context.device?.id, outputs.map(\.type))) }
        }
    }

    @Test func aDevicesRuleRunsScriptServerAndNotifies() throws {
        let folder = try scratchFolder("fleet-rules")
        let rulesPath = folder.appendingPathComponent("rules.json")
        try RuleRunTests.rules(server: "http://campaign.test/{id}/{udid}").write(
            to: rulesPath, atomically: true, encoding: .utf8)
        let seen = folder.appendingPathComponent("seen.json")
        let script = try ScriptTests.script("server.sh", in: folder, "cat > '\(seen.path)'; exit 0")
        let configuration = try RuleRunTests.configuration(
            rulesSource: rulesPath.path,
            extra: "Rules.autoServerNotify = false\nScript.server = \(script)\nMQTT.host = 127.0.0.1\n"
                + "Fleet.theengs = home/+/BTtoMQTT/#\nFleet.maxAge = 0",
            in: folder)
        let rules = try RulesDocument.load(Array(Data(contentsOf: rulesPath)), name: "rules").get().regions
        let recorder = Recorder()
        let hook = ServerHook(configuration: configuration, logger: .silent)
        let devices = Devices(
            own: Engine(configuration: configuration, identity: .resolve(configuration.monitor)),
            configuration: configuration, rules: rules, ruleSettings: .resolve(configuration))
        var driver = EngineDriver(devices: devices, store: try StateStore(), sinks: [recorder], requests: .inline(hook))
        let start = Timestamp(secondsSinceEpoch: 1_383_555_600)!
        try driver.start(at: start)
        let sighting = Advertisement(
            format: .ibeacon, beacon: BeaconID(uuid: UUID(uuidString: RuleRunTests.uuid)!, major: 42, minor: 1),
            power: -59, rssi: -60, address: nil)
        try driver.handle(
            .message(
                FleetMessage(
                    source: .theengs, device: "cart-7",
                    observations: [FleetObservation(time: nil, kind: .sighting(sighting, phoneProximity: nil))])),
            at: start)
        try driver.finish()
        let types = recorder.steps.withLock { $0 }.filter { $0.device == "cart-7" }.flatMap(\.types)
        #expect(types.contains("server") && types.contains("rule") && types.contains("notification"), "\(types)")
        #expect(recorder.steps.withLock { $0 }.filter { $0.device == nil }.allSatisfy { !$0.types.contains("rule") })
        let input = try String(contentsOf: seen, encoding: .utf8)
        #expect(input.contains(#""type":"server","device":"cart-7""#), "\(input)")
    }
}
