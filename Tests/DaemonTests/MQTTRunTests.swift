import Foundation
import MQTT
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `run` publishing to a real mosquitto (docs/behaviour.md §10.1).
@Suite(.serialized) struct MQTTRunTests {
    /// Collects every message under a topic filter, as a subscriber sees it.
    final class Subscriber: Sendable {
        struct Message: Sendable, Hashable {
            var topic: String
            var payload: String
            var retained: Bool
        }

        final class Inbox: Sendable {
            let messages = Mutex<[Message]>([])
            let subscribed = Mutex(false)
            /// The client, for the connect handler's subscription (let go in the subscriber's
            /// deinit: the client's handlers hold this inbox).
            let client = Mutex<MQTTClient?>(nil)
        }

        let client: MQTTClient
        let inbox = Inbox()

        /// A subscriber to `filter` at QoS 1; `persistentAs` names a persistent session (kept by
        /// the broker across reconnects and, with its persistence, across its restarts).
        ///
        /// Everything it hears is taken on libmosquitto's network thread (the client's handlers),
        /// never through a task: on a loaded machine the cooperative pool may be busy with other
        /// tests for a long time, and a subscriber that needed it to hear would make their waits
        /// time out (docs/reliability.md, "Waits in tests").
        init(port: Int32, filter: String, persistentAs clientID: String? = nil) async throws {
            var connection = MQTTConnection(
                host: "127.0.0.1", port: port, clientID: clientID ?? "sub-\(UUID().uuidString.prefix(12))")
            connection.cleanSession = clientID == nil
            let inbox = inbox
            let client = try MQTTClient(
                connection,
                received: { topic, payload, retained in
                    let message = Message(
                        topic: topic, payload: String(decoding: payload, as: UTF8.self), retained: retained)
                    inbox.messages.withLock { $0.append(message) }
                    Eventually.changed()
                },
                connectionEvents: { event in
                    switch event {
                    case .connected(0): _ = try? inbox.client.withLock { $0 }?.subscribe(filter, qos: 1)
                    case .subscribed:
                        inbox.subscribed.withLock { $0 = true }
                        Eventually.changed()
                    default: break
                    }
                })
            self.client = client
            inbox.client.withLock { $0 = client }
            try client.start()
            try await Self.until("the subscription to \(filter) on port \(port)") { inbox.subscribed.withLock { $0 } }
        }

        deinit { inbox.client.withLock { $0 = nil } }

        var messages: [Message] { inbox.messages.withLock { $0 } }

        func payloads(_ suffix: String) -> [String] { messages.filter { $0.topic.hasSuffix(suffix) }.map(\.payload) }

        /// Waits for `condition`, woken by what the tests watch (messages, daemons' logs and
        /// exits), within `seconds` (generous: CI may run on a loaded machine).
        static func until(_ what: String, within seconds: Double = Eventually.patience, _ condition: () -> Bool)
            async throws
        {
            try await Eventually.until(what, within: max(seconds, Eventually.patience), condition)
        }
    }

    static func folder(port: Int32, userid: String) throws -> URL {
        let scenario = Conformance.url("scenarios/areas-then-zones")
        let folder = try scratchFolder("mqtt")
        var ini = try String(contentsOf: scenario.appendingPathComponent("hsyco.ini"), encoding: .utf8)
        ini = ini.replacingOccurrences(of: "Monitor.userid = dave", with: "Monitor.userid = \(userid)")
        ini += "\nMQTT.host = 127.0.0.1\nMQTT.port = \(port)\nMQTT.keepalive = 5\nState.database = state.sqlite\n"
        try ini.write(to: folder.appendingPathComponent("hsyco.ini"), atomically: true, encoding: .utf8)
        try FileManager.default.copyItem(
            at: scenario.appendingPathComponent("trace.jsonl"), to: folder.appendingPathComponent("trace.jsonl"))
        return folder
    }

    /// Starts the daemon with standard input left open (for `trace:-`).
    static func daemon(_ arguments: [String], in folder: URL) throws -> (Process, Pipe) {
        let process = Process()
        process.currentDirectoryURL = folder
        process.executableURL = DecodeCommandTests.productsDirectory.appendingPathComponent("beaconwatch")
        process.arguments = arguments
        let input = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        Eventually.watchExit(of: process)
        try process.run()
        return (process, input)
    }

    @Test func areasThenZonesPublishesEveryTopicWithItsRetainFlag() async throws {
        let broker = try Broker()
        let folder = try Self.folder(port: broker.port, userid: "dave")
        let live = try await Subscriber(port: broker.port, filter: "beaconwatch/dave/#")
        let run = try await DecodeCommandTests.beaconwatch(
            [
                "run", "--web-listen", "", "--config", "hsyco.ini", "--source", "trace:trace.jsonl", "--log-level",
                "error",
            ], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        try await Subscriber.until("offline") { live.payloads("/status").last == "offline" }

        #expect(live.payloads("/status") == ["online", "offline"])
        let events = live.payloads("/event").map {
            try! JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
        }
        #expect(events.map { "\($0["zone"]!) \($0["distance"]!)" } == ["1003 near", "1003 off", "2007 near"])
        let allLocations = events.allSatisfy {
            $0["userid"] as? String == "dave" && $0["type"] as? String == "location"
        }
        #expect(allLocations)
        let transitions = live.payloads("/transition").map {
            try! JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
        }
        #expect(
            transitions.map { "\($0["type"]!) \($0["kind"]!)" } == [
                "enter area", "enter zone", "exit zone", "exit area", "enter area", "enter zone",
            ])
        #expect(
            live.payloads("/monitoring").map { $0.contains(#""mode":"areas""#) ? "areas" : "zones" } == [
                "areas", "zones", "areas", "zones",
            ])
        #expect(
            live.payloads("/area") == [
                "112EBB9D-B8C9-4ABD-9EB3-43578BF86A41", "none", "22A17B43-552A-4482-865F-597D4C10BACC",
            ])
        #expect(
            live.payloads("/zone") == [
                "112EBB9D-B8C9-4ABD-9EB3-43578BF86A41:3", "none", "22A17B43-552A-4482-865F-597D4C10BACC:7",
            ])
        #expect(live.payloads("/beacon/1003") == ["near", "off"])

        // What a subscriber arriving now is told: the retained state, and nothing else.
        let later = try await Subscriber(port: broker.port, filter: "beaconwatch/dave/#")
        let area = "112EBB9D-B8C9-4ABD-9EB3-43578BF86A41"
        let expected: Set<String> = [
            "status", "monitoring", "area", "zone", "beacon/1003", "beacon/2007", "nearest", "dwell/\(area)",
            "dwell/\(area):3",
        ]
        // A new subscriber is sent the retained messages only; wait for the whole set.
        try await Subscriber.until("retained state") {
            Set(later.messages.map { $0.topic.replacingOccurrences(of: "beaconwatch/dave/", with: "") })
                .isSuperset(of: expected)
        }
        let retained = Dictionary(
            later.messages.map { ($0.topic.replacingOccurrences(of: "beaconwatch/dave/", with: ""), $0) },
            uniquingKeysWith: { $1 })
        #expect(Set(retained.keys) == expected)
        #expect(retained["nearest"]?.payload == "2007")
        // The exits' day totals: seconds inside, as plain numbers.
        #expect(
            retained["dwell/\(area)"].flatMap { Double($0.payload) }
                == retained["dwell/\(area):3"].flatMap { Double($0.payload) })
        #expect((retained["dwell/\(area)"].flatMap { Double($0.payload) } ?? 0) > 0)
        let allRetained = retained.values.allSatisfy { $0.retained }
        #expect(allRetained)
        #expect(retained["status"]?.payload == "offline")
        #expect(retained["beacon/2007"]?.payload == "near")
        #expect(retained["monitoring"]?.payload.contains(#""area":"22A17B43-552A-4482-865F-597D4C10BACC""#) == true)
        // Home Assistant discovery (MQTT.homeassistant defaults to true), retained.
        let homeAssistant = try await Subscriber(port: broker.port, filter: "homeassistant/#")
        try await Subscriber.until("discovery") { homeAssistant.messages.count >= 3 + 24 }
        #expect(homeAssistant.messages.allSatisfy { $0.retained })
        #expect(
            homeAssistant.messages.contains {
                $0.topic == "homeassistant/device_tracker/beaconwatch-dave_beaconwatch_dave/location/config"
            })

        // Two days later (a restart with the kept state): "seconds inside today" is 0 again for
        // every region with kept dwell, before any exit says otherwise.
        try #"{"t": 1700172800.0, "uuid": "22A17B43-552A-4482-865F-597D4C10BACC", "major": 7, "minor": 1, "rssi": -59}"#
            .write(to: folder.appendingPathComponent("later.jsonl"), atomically: true, encoding: .utf8)
        let second = try await DecodeCommandTests.beaconwatch(
            [
                "run", "--web-listen", "", "--config", "hsyco.ini", "--source", "trace:later.jsonl", "--log-level",
                "error",
            ], in: folder)
        #expect(second.status == 0, "\(second.stderr)")
        try await Subscriber.until("the new day's dwell") {
            live.payloads("/dwell/\(area)").last == "0" && live.payloads("/dwell/\(area):3").last == "0"
        }
        live.client.shutdown()
        later.client.shutdown()
        homeAssistant.client.shutdown()
    }

    /// Retained state is republished on every connect, the kept beacon classes included: a broker
    /// that lost everything while the daemon was stopped hears them at the next start.
    @Test func aStartRepublishesTheKeptClassesToABrokerThatLostThem() async throws {
        let broker = try Broker()
        let folder = try Self.folder(port: broker.port, userid: "fay")
        let first = try await DecodeCommandTests.beaconwatch(
            [
                "run", "--web-listen", "", "--config", "hsyco.ini", "--source", "trace:trace.jsonl", "--log-level",
                "error",
            ], in: folder)
        #expect(first.status == 0, "\(first.stderr)")
        try await broker.stop(signal: SIGKILL)
        try FileManager.default.removeItem(at: broker.folder.appendingPathComponent("mosquitto.db"), ifExists: true)
        try broker.start()
        // The second run hears only a beacon that is not configured: it reports nothing itself.
        try #"{"t": 1700000100.0, "uuid": "0FF1CE00-0000-4000-8000-000000000009", "major": 1, "minor": 1, "rssi": -59}"#
            .write(to: folder.appendingPathComponent("stranger.jsonl"), atomically: true, encoding: .utf8)
        let second = try await DecodeCommandTests.beaconwatch(
            [
                "run", "--web-listen", "", "--config", "hsyco.ini", "--source", "trace:stranger.jsonl", "--log-level",
                "error",
            ], in: folder)
        #expect(second.status == 0, "\(second.stderr)")
        let retained = try await Subscriber(port: broker.port, filter: "beaconwatch/fay/beacon/+")
        try await Subscriber.until("the kept classes") { retained.messages.count >= 2 }
        let messages = retained.messages
        #expect(
            Dictionary(uniqueKeysWithValues: messages.map { ($0.topic, $0.payload) }) == [
                "beaconwatch/fay/beacon/1003": "off", "beaconwatch/fay/beacon/2007": "near",
            ])
        let allRetained = messages.allSatisfy { $0.retained }
        #expect(allRetained)
        retained.client.shutdown()
    }

    /// A broker that is down at the start is said once it is 5 s late, and again when it comes.
    @Test func aBrokerLateAtTheStartIsSaidAndSoIsItsComing() async throws {
        let broker = try Broker()
        broker.kill(signal: SIGKILL, wait: false)
        try await Subscriber.until("the broker gone") { !Broker.accepts(port: broker.port) }
        let folder = try Self.folder(port: broker.port, userid: "gus")
        let process = Process()
        process.currentDirectoryURL = folder
        process.executableURL = DecodeCommandTests.productsDirectory.appendingPathComponent("beaconwatch")
        process.arguments = ["run", "--web-listen", "", "--config", "hsyco.ini", "--source", "trace:-"]
        let input = Pipe()
        let logFile = folder.appendingPathComponent("stderr.log")
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        try Eventually.start(process, loggingTo: logFile)
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        func log() -> String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }
        try await Subscriber.until("the late broker said", within: 15) { log().contains("is not reachable yet") }
        #expect(!log().contains("reachable;"))
        try broker.start()
        try await Subscriber.until("its coming said", within: 15) {
            log().contains("MQTT broker 127.0.0.1:\(broker.port) reachable; retained state")
        }
    }

    @Test func theWillSaysOfflineWhenTheDaemonDiesAndRetainedStateReturnsAfterABrokerRestart() async throws {
        let broker = try Broker()
        let folder = try Self.folder(port: broker.port, userid: "erin")
        let watcher = try await Subscriber(port: broker.port, filter: "beaconwatch/erin/#")
        let (daemon, input) = try Self.daemon(
            ["run", "--web-listen", "", "--config", "hsyco.ini", "--source", "trace:-", "--log-level", "error"],
            in: folder)
        input.fileHandleForWriting.write(
            Data(
                #"{"t": 1700000000, "uuid": "112EBB9D-B8C9-4ABD-9EB3-43578BF86A41", "major": 3, "minor": 1, "rssi": -59}"#
                    .utf8 + [0x0A]))
        try await Subscriber.until("online and the first event") {
            watcher.payloads("/status") == ["online"] && watcher.payloads("/event").count == 1
        }

        // The broker goes away and comes back empty (no persistence): the daemon reconnects and
        // publishes its retained state again.
        try await broker.stop(signal: SIGKILL)
        try FileManager.default.removeItem(at: broker.folder.appendingPathComponent("mosquitto.db"), ifExists: true)
        try broker.start()
        let fresh = try await Subscriber(port: broker.port, filter: "beaconwatch/erin/#")
        try await Subscriber.until("republished state", within: 15) {
            fresh.payloads("/status") == ["online"]
                && fresh.payloads("/zone").last == "112EBB9D-B8C9-4ABD-9EB3-43578BF86A41:3"
        }
        #expect(fresh.payloads("/beacon/1003") == ["near"])

        // SIGKILL: no clean disconnect, so the broker publishes the will.
        kill(daemon.processIdentifier, SIGKILL)
        _ = try await Child.exit(of: daemon, "the daemon, killed")
        try await Subscriber.until("the will") { fresh.payloads("/status").last == "offline" }
        watcher.client.shutdown()
        fresh.client.shutdown()
    }
}

extension FileManager {
    func removeItem(at url: URL, ifExists: Bool) throws {
        guard fileExists(atPath: url.path) else { return }
        try removeItem(at: url)
    }
}
