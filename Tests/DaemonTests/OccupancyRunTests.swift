import BeaconConfiguration
import Foundation
import JSONText
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 60, occupancy end to end (docs/behaviour.md §23, docs/occupancy.md): the office floor of
/// etc/occupancy, its badges walking and its sensors publishing as zigbee2mqtt and ESPHome do,
/// through `replay` and through `run` with a real mosquitto.
///
/// `run` reads the badges' reports from a pipe and hears the sensors from the broker. A message
/// from the broker is taken at the time of the last report read (a file runs on its own clock), so
/// the test makes each one arrive where etc/occupancy/day.jsonl has it: it writes the reports up to
/// a sensor line and a line that is not JSON after them, waits for the daemon to say it skipped
/// that line (every report before it is handled), publishes the sensor's messages, then a command
/// the daemon does not know, and waits for the daemon to say it ignored that (the messages before
/// it, in order from one client, are queued for the engine, which takes them before the next
/// report). No sleeps: each wait is for the daemon's own word, and the run is the trace's, so that
/// `replay` of the trace must give the same outputs byte for byte.
@Suite(.serialized) struct OccupancyRunTests {
    typealias Subscriber = MQTTRunTests.Subscriber
    typealias Output = TwoFloorRunTests.Output
    static let etc = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("etc/occupancy")
    /// 17:40 in Paris on Monday 2 March 2026: the trace's first instant (etc/occupancy/make-trace.py).
    static let start = 1_772_469_600.0
    static let area = "0E5A6B7C-8D9E-4F01-A2B3-C4D5E6F70812"
    static let meeting = "\(area):1"
    static let office = "\(area):2"
    static let kitchen = "\(area):3"

    /// One line of the trace: a badge's report, or a sensor's message as it is published.
    struct Line {
        var text: String
        var t: Double
        var sensor: String?
        var payload: [UInt8] = []
    }

    static func trace(_ name: String = "day.jsonl") throws -> [Line] {
        let text = try String(contentsOf: etc.appendingPathComponent(name), encoding: .utf8)
        return try text.split(separator: "\n").map { line in
            let object = try #require(JSONValue.parse(Array(line.utf8)), "\(line)")
            guard case .number(let t)? = object["t"] else { throw BrokerError("no t in \(line)") }
            guard case .string(let sensor)? = object["sensor"] else { return Line(text: String(line), t: t) }
            // As the trace parser reads it: a string is the payload's text, another value its JSON.
            let payload: [UInt8]
            if case .string(let text)? = object["payload"] {
                payload = Array(text.utf8)
            } else {
                payload = Array((object["payload"]?.jsonText ?? "").utf8)
            }
            return Line(text: String(line), t: t, sensor: sensor, payload: payload)
        }
    }

    /// etc/occupancy in a scratch folder, on the broker at `port`; `edit` changes the ini.
    static func folder(port: Int32, edit: (String) -> String = { $0 }) throws -> URL {
        let folder = try scratchFolder("occupancy")
        let ini = try String(contentsOf: etc.appendingPathComponent("hsyco.ini"), encoding: .utf8)
            .replacingOccurrences(of: "MQTT.port = 1883", with: "MQTT.port = \(port)")
        try (edit(ini) + "MQTT.keepalive = 5\n").write(
            to: folder.appendingPathComponent("hsyco.ini"), atomically: true, encoding: .utf8)
        for file in ["rules.json", "day.jsonl"] {
            try FileManager.default.copyItem(
                at: etc.appendingPathComponent(file), to: folder.appendingPathComponent(file))
        }
        return folder
    }

    /// What `replay` prints for `trace` in `folder`, and what it logs.
    static func replay(in folder: URL, trace: String = "day.jsonl") async throws -> (outputs: [Output], log: String) {
        let run = try await DecodeCommandTests.beaconwatch(
            ["replay", "--config", "hsyco.ini", "trace:\(trace)", "--state", "replay-\(trace).sqlite"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        return (outputs(run.stdout), run.stderr)
    }

    /// The outputs of `text` (`session` blanked), with their seconds into the trace.
    static func outputs(_ text: String) -> [Output] {
        TwoFloorRunTests.outputs(ReplayCommandTests.withoutSession(text)).map { output in
            var output = output
            output.second += TwoFloorRunTests.start - start
            return output
        }
    }

    /// The `occupancy` outputs of `region` as `second occupied count`.
    static func occupancy(_ outputs: [Output], _ region: String) -> [String] {
        outputs.filter { $0.type == "occupancy" && $0.line.contains(#""region":"\#(region)""#) }.map { output in
            let object = JSONValue.parse(Array(output.line.utf8))
            return "\(Int(output.second)) \(object?["occupied"] == .bool(true) ? "occupied" : "vacant") "
                + (object?["count"]?.jsonText ?? "?")
        }
    }

    /// Each sensor's topic (etc/occupancy/hsyco.ini); ESPHome's are retained, zigbee2mqtt's not.
    static func topics() throws -> [String: String] {
        let configuration = try Configuration.load(contentsOf: etc.appendingPathComponent("hsyco.ini").path).get()
        let sensors = try #require(configuration.occupancy?.sensors)
        return Dictionary(uniqueKeysWithValues: sensors.map { ($0.id, $0.topic) })
    }

    /// The badges' reports and the sensors' messages in turns: each run of reports, then the
    /// sensor lines after it.
    static func turns(_ lines: [Line]) -> [(reports: [Line], sensors: [Line])] {
        var turns: [(reports: [Line], sensors: [Line])] = []
        for line in lines {
            if line.sensor != nil, !turns.isEmpty {
                turns[turns.count - 1].sensors.append(line)
            } else if line.sensor == nil, turns.last?.sensors.isEmpty == true {
                turns[turns.count - 1].reports.append(line)
            } else {
                turns.append((line.sensor == nil ? [line] : [], line.sensor == nil ? [] : [line]))
            }
        }
        return turns
    }

    @Test func theDaysTraceGivesOccupancyTheRuleAndTheGarbageOnce() async throws {
        let folder = try Self.folder(port: 1883)
        let (outputs, log) = try await Self.replay(in: folder)
        // The meeting room: Anna's badge and the PIR, vacant at 17:47:35 (the PIR's hold of 120 s
        // after her last motion at 17:45:05, then 30 s); Ben from 17:56, still but badged; vacant
        // at 18:06:25 (his last motion at 18:03:55).
        let meeting = Self.occupancy(outputs, Self.meeting)
        #expect(meeting.first == "0 occupied 1", "\(meeting)")
        #expect(meeting.filter { $0.contains("vacant") }.prefix(2) == ["455 vacant 0", "1585 vacant 0"], "\(meeting)")
        // The office: Carla, no badge, sits still under the radar for half an hour; it said ON once.
        let office = Self.occupancy(outputs, Self.office)
        #expect(office.first == "0 occupied 1" && office.last == "1835 vacant 0", "\(office)")
        #expect(!office.dropLast().contains { $0.contains("vacant") }, "\(office)")
        // The kitchen: the radar's count beside Ben's badge (the trolley is no person).
        let kitchen = Self.occupancy(outputs, Self.kitchen)
        #expect(kitchen.first == "0 occupied 1", "\(kitchen)")
        #expect(["125 occupied 2", "245 occupied 1", "365 occupied 2", "1235 vacant 0"].allSatisfy(kitchen.contains))
        // The rule: at 17:52:35 the vacancy is in opening hours; at 18:11:25 it fires, once.
        let rules = outputs.filter { $0.type == "rule" }
        #expect(rules.count == 2, "\(rules.map(\.line))")
        #expect(rules.first?.second == 755 && rules.first?.line.contains(#""reason":"schedule_closed""#) == true)
        #expect(rules.last?.second == 1885 && rules.last?.line.contains(#""fired":true"#) == true)
        #expect(rules.allSatisfy { $0.line.contains(#""trigger":"vacant""#) })
        #expect(outputs.filter { $0.type == "notification" }.map(\.second) == [1885])

        // Garbage is said once a sensor, and changes nothing: the trace without it gives the same.
        #expect(log.components(separatedBy: "sensor meeting-pir: ").count == 2, "\(log)")
        #expect(log.components(separatedBy: "sensor kitchen-radar: a negative count").count == 2, "\(log)")
        let garbage = try Self.trace().filter {
            let text = String(decoding: $0.payload, as: UTF8.self)
            return text == "-1" || text.hasSuffix("illumin")
        }
        #expect(garbage.count == 4)
        let clean = try Self.trace().filter { line in !garbage.contains { $0.text == line.text } }
        try clean.map { $0.text + "\n" }.joined().write(
            to: folder.appendingPathComponent("clean.jsonl"), atomically: true, encoding: .utf8)
        let without = try await Self.replay(in: folder, trace: "clean.jsonl")
        #expect(without.outputs.map(\.line) == outputs.map(\.line))
        // Nothing said of a sensor but the PIR's silence running out after the trace's last message.
        let said = without.log.split(separator: "\n").filter { $0.contains("sensor ") }
        #expect(
            said == [
                "beaconwatch: warning: sensor meeting-pir is offline: no message for 7200 s "
                    + "(Sensor.meeting-pir.silence); it counts for nothing until it speaks"
            ], "\(without.log)")
    }

    /// With the default silence of 15 minutes, the office's radar, which said ON once, counts for
    /// nothing after 17:55 and the office is vacant at 17:55:30 with Carla at her desk: why
    /// docs/occupancy.md says `silence = 0` for sensors that publish only on change.
    @Test func aSensorThatPublishesOnlyOnChangeNeedsNoSilence() async throws {
        let folder = try Self.folder(port: 1883) {
            $0.replacingOccurrences(of: "Sensor.office-radar.silence = 0\n", with: "")
        }
        let office = Self.occupancy(try await Self.replay(in: folder).outputs, Self.office)
        // A presence sensor's silence is 0 by default: the room stays occupied until the radar
        // says clear, not 900 s after its last change.
        let explicit = Self.occupancy(try await Self.replay(in: try Self.folder(port: 1883)).outputs, Self.office)
        #expect(office == explicit)
        #expect(office.first { $0.contains("vacant") } != "930 vacant 0", "\(office)")
    }

    @Test func runThroughABrokerGivesWhatReplayGives() async throws {
        let broker = try Broker()
        let folder = try Self.folder(port: broker.port)
        let expected = try await Self.replay(in: folder).outputs
        let lines = try Self.trace()
        let topics = try Self.topics()
        let turns = Self.turns(lines)
        let watcher = try await Subscriber(port: broker.port, filter: "beaconwatch/#")
        func publish(_ line: Line) throws {
            let topic = try #require(topics[line.sensor ?? ""])
            _ = try watcher.client.publish(
                topic: topic, payload: line.payload, qos: 1, retain: !topic.hasPrefix("zigbee2mqtt/"))
        }
        // What the radars said before the daemon started: retained, heard at its subscription.
        for line in turns[0].sensors { try publish(line) }

        let pipe = try NamedPipe(at: folder.appendingPathComponent("feed.fifo").path)
        let process = Process()
        process.currentDirectoryURL = folder
        process.executableURL = DecodeCommandTests.productsDirectory.appendingPathComponent("beaconwatch")
        process.arguments = [
            "run", "--web-listen", "", "--config", "hsyco.ini", "--source", "trace:feed.fifo", "--events",
            "events.jsonl", "--skip-bad-lines",
        ]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        let logFile = folder.appendingPathComponent("daemon.log")
        try Eventually.start(process, loggingTo: logFile)
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        func log() -> String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }
        try await Subscriber.until("the daemon online") { watcher.payloads("floor2/status").last == "online" }

        var probes = 0
        /// Every message published so far is queued for the engine: a command it does not know,
        /// published after them, has been refused.
        func queued() async throws {
            probes += 1
            let topic = "beaconwatch/floor2/cmd/probe-\(probes)"
            _ = try watcher.client.publish(topic: topic, payload: [], qos: 1, retain: false)
            try await Subscriber.until("the daemon to refuse \(topic)") { log().contains("\(topic):") }
        }
        var written = 0
        /// Writes `reports` and a line that is not JSON, and waits until the daemon skipped it.
        func feed(_ reports: [Line]) async throws {
            try pipe.write(reports.map(\.text) + ["not JSON: the test's mark"])
            written += reports.count + 1
            try await Subscriber.until("the daemon to skip line \(written)") { log().contains("feed.fifo:\(written):") }
        }
        try await queued()
        for (index, turn) in turns.enumerated() {
            try await feed(turn.reports)
            guard index > 0, !turn.sensors.isEmpty else { continue }
            for line in turn.sensors { try publish(line) }
            try await queued()
        }
        kill(process.processIdentifier, SIGTERM)
        try await Subscriber.until("the daemon to exit") { !process.isRunning }
        #expect(process.terminationStatus == 0, "\(log())")

        // The events file is what replay prints up to the trace's end, byte for byte.
        let last = try #require(lines.last).t - Self.start
        let upToTheEnd = expected.filter { $0.second <= last }
        #expect(upToTheEnd.count < expected.count)
        let events = Self.outputs(
            try String(contentsOf: folder.appendingPathComponent("events.jsonl"), encoding: .utf8))
        #expect(events.map(\.line) == upToTheEnd.map(\.line))
        #expect(Self.occupancy(events, Self.meeting) == Self.occupancy(upToTheEnd, Self.meeting))
        // Garbage said once a sensor, as replay says it.
        #expect(log().components(separatedBy: "sensor meeting-pir: ").count == 2, "\(log())")
        #expect(log().components(separatedBy: "sensor kitchen-radar: ").count == 2, "\(log())")

        // On the broker: every occupancy output on B/occupancy through the outbox, the rule and its
        // notification on theirs.
        let occupancy = upToTheEnd.filter { $0.type == "occupancy" }
        try await Subscriber.until("every occupancy output on B/occupancy") {
            watcher.payloads("floor2/occupancy").count >= occupancy.count
        }
        #expect(watcher.payloads("floor2/occupancy").map(ReplayCommandTests.withoutSession) == occupancy.map(\.line))
        #expect(
            watcher.payloads("floor2/rule").map(ReplayCommandTests.withoutSession)
                == upToTheEnd.filter { $0.type == "rule" }.map(\.line))
        #expect(watcher.payloads("floor2/notification").count == 1)
        // MQTT.topic/occupancy/<region> holds each Zone's latest, retained.
        let later = try await Subscriber(port: broker.port, filter: "beaconwatch/occupancy/#")
        try await Subscriber.until("the three Zones' retained occupancy") { later.messages.count >= 3 }
        for region in [Self.meeting, Self.office, Self.kitchen] {
            let retained = later.messages.first { $0.topic == "beaconwatch/occupancy/\(region)" }
            let latest = occupancy.last { $0.line.contains(#""region":"\#(region)""#) }
            #expect(retained?.retained == true)
            #expect(
                retained.map { ReplayCommandTests.withoutSession($0.payload) } == latest?.line, "\(region)")
        }
        later.client.shutdown()
        watcher.client.shutdown()
    }

    /// With neither a fleet nor scanners, the daemon still hears its sensors from the broker (on
    /// its own clock, Monitor.source = none); a reload (SIGHUP) that adds a sensor on a new topic
    /// subscribes it at once, and the sensor's retained state comes with the subscription.
    @Test func aReloadSubscribesTheTopicOfANewSensor() async throws {
        let broker = try Broker()
        let folder = try scratchFolder("occupancy-reload")
        let ini = folder.appendingPathComponent("hsyco.ini")
        try """
        LocationBaseBeacon.101 = \(Self.area),1,1
        LocationBaseBeacon.102 = \(Self.area),2,1
        LocationZoneName.\(Self.area):1 = Meeting room
        LocationZoneName.\(Self.area):2 = Office
        Sensor.meeting-pir = zigbee2mqtt/meeting/pir, motion, Meeting room
        Monitor.userid = floor2
        Monitor.source = none
        MQTT.host = 127.0.0.1
        MQTT.port = \(broker.port)
        MQTT.keepalive = 5
        State.database = state.sqlite

        """.write(to: ini, atomically: true, encoding: .utf8)
        let watcher = try await Subscriber(port: broker.port, filter: "beaconwatch/#")
        // The office's radar said ON before anyone listened: retained on the broker.
        _ = try watcher.client.publish(
            topic: "office-radar/binary_sensor/presence/state", payload: Array("ON".utf8), qos: 1, retain: true)
        let daemon = try FleetRunTests.daemon(in: folder)
        defer { if daemon.isRunning { kill(daemon.processIdentifier, SIGKILL) } }
        let log = folder.appendingPathComponent("daemon.log")
        func said(_ text: String) -> Bool { ((try? String(contentsOf: log, encoding: .utf8)) ?? "").contains(text) }
        try await Subscriber.until("the daemon online") { watcher.payloads("floor2/status").last == "online" }
        func occupancy(_ region: String) -> [String] {
            watcher.payloads("floor2/occupancy").filter { $0.contains(#""region":"\#(region)""#) }
        }
        _ = try watcher.client.publish(
            topic: "zigbee2mqtt/meeting/pir",
            payload: Array(#"{"battery":100,"linkquality":87,"occupancy":true}"#.utf8),
            qos: 1, retain: false)
        try await Subscriber.until("the PIR's motion") {
            occupancy(Self.meeting).last?.contains(#""occupied":true"#) == true
                && occupancy(Self.meeting).last?.contains(#""meeting-pir":true"#) == true
        }
        #expect(!occupancy(Self.office).contains { $0.contains("office-radar") })

        try
            (String(contentsOf: ini, encoding: .utf8)
            + "Sensor.office-radar = office-radar/binary_sensor/presence/state, presence, Office\n"
            + "Sensor.office-radar.silence = 0\n").write(to: ini, atomically: true, encoding: .utf8)
        kill(daemon.processIdentifier, SIGHUP)
        try await Subscriber.until("the reload and the radar's retained ON") {
            said("configuration reloaded")
                && occupancy(Self.office).last?.contains(#""sensors":{"office-radar":true}"#) == true
        }
        #expect(occupancy(Self.office).last?.contains(#""occupied":true"#) == true)
        _ = try watcher.client.publish(
            topic: "office-radar/binary_sensor/presence/state", payload: Array("OFF".utf8), qos: 1, retain: true)
        try await Subscriber.until("the radar's OFF") {
            occupancy(Self.office).last?.contains(#""sensors":{"office-radar":false}"#) == true
        }
        kill(daemon.processIdentifier, SIGTERM)
        try await Subscriber.until("the daemon to exit") { !daemon.isRunning }
        #expect(daemon.terminationStatus == 0)
        watcher.client.shutdown()
    }

    /// Sensors without a broker: `run` says at start that none is heard from it, naming the first
    /// sensor's line, and still takes a trace's sensor lines.
    @Test func sensorsWithoutABrokerAreSaidOnceAtStart() async throws {
        let folder = try scratchFolder("occupancy-no-broker")
        try """
        LocationBaseBeacon.101 = \(Self.area),1,1
        LocationZoneName.\(Self.area):1 = Lab
        Sensor.lab-radar = lab-radar/binary_sensor/presence/state, presence, Lab
        State.database = state.sqlite

        """.write(to: folder.appendingPathComponent("lab.ini"), atomically: true, encoding: .utf8)
        try #"{"t": 1772469600, "sensor": "lab-radar", "payload": "ON"}"#.appending("\n").write(
            to: folder.appendingPathComponent("lab.jsonl"), atomically: true, encoding: .utf8)
        let run = try await DecodeCommandTests.beaconwatch(
            ["run", "--web-listen", "", "--config", "lab.ini", "--source", "trace:lab.jsonl", "--events", "-"],
            in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        let warning = "lab.ini:3: Sensor.lab-radar: sensors are heard from the broker, and without MQTT.host none is"
        #expect(run.stderr.components(separatedBy: warning).count == 2, "\(run.stderr)")
        #expect(run.stdout.contains(#""sensors":{"lab-radar":true}"#), "\(run.stdout)")
    }
}
