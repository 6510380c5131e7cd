import BeaconCore
import BeaconConfiguration
import Fleet
import Foundation
import TestSupport
import Testing

/// `beaconwatch forward` (docs/behaviour.md §15) against a real mosquitto: what a node publishes is what
/// `decode` prints of the same capture, and a broker outage loses none of it.
@Suite(.serialized) struct ForwardTests {
    typealias Subscriber = MQTTRunTests.Subscriber
    static let capture = Conformance.url("capture-1001.btsnoop").path

    static func folder(port: Int32) throws -> URL {
        let folder = try scratchFolder("forward")
        // What `forward --help` says a node needs, and no building (issue 47: it asked for a beacon).
        let ini = """
            Monitor.userid = node-1
            MQTT.host = 127.0.0.1
            MQTT.port = \(port)
            MQTT.keepalive = 5
            State.database = state.sqlite

            """
        try ini.write(to: folder.appendingPathComponent("hsyco.ini"), atomically: true, encoding: .utf8)
        return folder
    }

    /// The sightings in `payloads`, as `decode` prints them.
    static func sightings(_ payloads: [String]) throws -> [String] {
        let filter = try #require(TopicFilter("beaconwatch/+/sightings"))
        var lines: [String] = []
        for payload in payloads {
            let parsed = FleetMessage.parse(
                source: .forward, filter: filter, topic: "beaconwatch/node-1/sightings", payload: Array(payload.utf8))
            let message = try #require(try parsed.get())
            #expect(message.device == "node-1")
            for observation in message.observations {
                guard case .sighting(let advertisement, _) = observation.kind, let time = observation.time else {
                    Issue.record("not a sighting: \(observation)")
                    continue
                }
                lines.append(advertisement.jsonLine(at: time))
            }
        }
        return lines
    }

    @Test func aNodePublishesWhatDecodePrintsInBatches() async throws {
        let broker = try Broker()
        let folder = try Self.folder(port: broker.port)
        let watcher = try await Subscriber(port: broker.port, filter: "beaconwatch/node-1/#")
        // 400 sightings 1 ms apart: eight or nine 50 ms batches.
        let trace = folder.appendingPathComponent("burst.jsonl")
        try OutboxTests.sightings(0..<400).write(to: trace, atomically: true, encoding: .utf8)
        let run = try await DecodeCommandTests.beaconwatch(
            ["forward", "--config", "hsyco.ini", "--source", "trace:\(trace.path)"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        let decoded = try await DecodeCommandTests.beaconwatch(["decode", "--quiet", "trace:\(trace.path)"])
        let expected = decoded.stdout.split(separator: "\n").map(String.init)
        #expect(!expected.isEmpty)
        try await Subscriber.until("every sighting") {
            ((try? Self.sightings(watcher.payloads("/sightings"))) ?? []).count >= expected.count
        }
        let payloads = watcher.payloads("/sightings")
        #expect(try Self.sightings(payloads) == expected)
        #expect((8...10).contains(payloads.count), "\(payloads.count) messages for \(expected.count) sightings")
        #expect(payloads.allSatisfy { $0.utf8.count < FleetMessage.payloadLimit })
        #expect(watcher.payloads("/status").last == "offline")
        // A node that ended cleanly closed its database: no -wal or -shm left.
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(files.contains("state.sqlite") && !files.contains { $0.hasSuffix("-wal") || $0.hasSuffix("-shm") })
        watcher.client.shutdown()
    }

    /// With the broker down, the node keeps its batches in the outbox; the next start sends them.
    @Test func batchesQueuedDuringAnOutageGoOutAtTheNextStart() async throws {
        let broker = try Broker()
        let folder = try Self.folder(port: broker.port)
        let watcher = try await Subscriber(
            port: broker.port, filter: "beaconwatch/node-1/sightings", persistentAs: "fw-sub")
        try broker.saved()
        try await broker.stop()
        let offline = try await DecodeCommandTests.beaconwatch(
            ["forward", "--config", "hsyco.ini", "--source", "btsnoop:\(Self.capture)"], in: folder)
        #expect(offline.status == 0, "\(offline.stderr)")
        #expect(offline.stderr.contains("not acknowledged before stopping"), "\(offline.stderr)")
        try broker.start()
        let again = try await DecodeCommandTests.beaconwatch(
            ["forward", "--config", "hsyco.ini", "--source", "trace:-"], stdin: "", in: folder)
        #expect(again.status == 0, "\(again.stderr)")
        let decoded = try await DecodeCommandTests.beaconwatch(["decode", "--quiet", "btsnoop:\(Self.capture)"])
        let expected = decoded.stdout.split(separator: "\n").map(String.init)
        try await Subscriber.until("every sighting after the outage") {
            ((try? Self.sightings(watcher.payloads("/sightings"))) ?? []).count >= expected.count
        }
        #expect(try Self.sightings(watcher.payloads("/sightings")) == expected)
        watcher.client.shutdown()
    }
}
