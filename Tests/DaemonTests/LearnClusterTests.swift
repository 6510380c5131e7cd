import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The building's fingerprints in a cluster (docs/behaviour.md §21, §22, docs/failover.md): two
/// daemons of etc/learn through a real mosquitto, each reading a trace from a pipe of its own
/// (its `learn` lines are the one way into a daemon that needs no web view or command topic).
/// The active trains the rooms; the standby's database holds the rows it shipped; the active is
/// killed, and the new active places Ben's badge in the bathroom (no scanner) with that training.
@Suite(.serialized) struct LearnClusterTests {
    typealias Subscriber = MQTTRunTests.Subscriber
    typealias Member = ClusterRunTests.Member

    /// etc/learn's configuration for daemon `member` of cluster `learn`: its source the pipe
    /// `feed.fifo` in its folder when `fed`, else none (the scanners' reports through the broker).
    static func ini(port: Int32, member: String, fed: Bool) throws -> String {
        var ini = try String(contentsOf: LearnRestartTests.etc.appendingPathComponent("hsyco.ini"), encoding: .utf8)
            .replacingOccurrences(of: "MQTT.port = 1883", with: "MQTT.port = \(port)")
        if fed { ini = ini.replacingOccurrences(of: "Monitor.source = none", with: "Monitor.source = trace:feed.fifo") }
        return ini + "MQTT.keepalive = 5\nMQTT.clientId = \(member)\nCluster.name = learn\n"
    }

    /// A member of the pair; `fed`, its source is a pipe the test holds open for writing (read
    /// and write, so neither end waits for the other to open it).
    final class Fed {
        let member: Member
        let pipe: NamedPipe?

        init(_ name: String, port: Int32, fed: Bool = true) throws {
            member = try Member(name, port: port)
            try LearnClusterTests.ini(port: port, member: name, fed: fed).write(
                to: member.folder.appendingPathComponent("hsyco.ini"), atomically: true, encoding: .utf8)
            pipe = fed ? try NamedPipe(at: member.folder.appendingPathComponent("feed.fifo").path) : nil
        }

        /// Writes `lines` to the pipe (the daemon reads them when it is the active).
        func feed(_ lines: [Substring]) throws { try pipe?.write(lines) }

        /// The fingerprint table, read as another program would: one line a row, in order; empty
        /// when unreadable.
        var fingerprints: [String] {
            let python = Process()
            python.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            python.arguments = [
                "-c",
                "import sqlite3,sys; c=sqlite3.connect('file:'+sys.argv[1]+'?mode=ro', uri=True)\n"
                    + "for r in c.execute('SELECT room, sequence, scanner, level, at, device, trainedAt FROM fingerprint ORDER BY room, sequence'): print(r)",
                member.folder.appendingPathComponent("state.sqlite").path,
            ]
            let output = Pipe()
            python.standardOutput = output
            python.standardError = FileHandle.nullDevice
            guard (try? python.run()) != nil else { return [] }
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            python.waitUntilExit()
            return python.terminationStatus == 0 ? text.split(separator: "\n").map(String.init) : []
        }

        /// The rooms the table holds.
        var rooms: Set<String> {
            Set(fingerprints.compactMap { $0.split(separator: "'").dropFirst().first.map(String.init) })
        }
    }

    /// The daemons' `online`s (each active's start).
    static func online(_ watcher: Subscriber) -> Int {
        watcher.payloads("flat/status").filter { $0 == "online" }.count
    }

    /// Device `device`'s Zones entered and left, once each, as `enter|exit name`.
    static func zones(_ watcher: Subscriber, _ device: String) -> [String] {
        OutboxTests.firstArrivals(watcher.payloads("/\(device)/transition")).compactMap { payload in
            guard let object = try? JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any],
                object["kind"] as? String == "zone", let type = object["type"] as? String,
                let name = object["name"] as? String
            else { return nil }
            return "\(type) \(name)"
        }
    }

    static let trained: Set = [
        "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:3",
        "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:4",
    ]

    /// etc/learn's trace: Anna's training, and Ben's walk.
    static func trace() throws -> (train: [Substring], walk: [Substring]) {
        let lines = try String(
            contentsOf: LearnRestartTests.etc.appendingPathComponent("train-and-walk.jsonl"), encoding: .utf8
        ).split(separator: "\n")
        return (
            lines.filter { !$0.contains(LearnRestartTests.ben) }, lines.filter { $0.contains(LearnRestartTests.ben) }
        )
    }

    /// A starts and becomes the active, B its standby; Anna trains the kitchen, the bathroom
    /// and the office on A (ending the last session at her last reading), and B's database comes
    /// to hold every row of A's: those rows.
    static func train(_ a: Fed, then b: Fed, _ watcher: Subscriber) async throws -> [String] {
        try a.member.start()
        try await Subscriber.until("A active and online") { Self.online(watcher) == 1 }
        try b.member.start()
        try await Subscriber.until("B a standby") { b.member.logText.contains("cluster: standby") }
        try a.feed(try trace().train + [#"{"t": 1700000093.8, "learn": {"device": "anna", "stop": true}}"#])
        try await Subscriber.until("three rooms learned") {
            OutboxTests.firstArrivals(watcher.payloads("/learned")).count == 3
        }
        #expect(a.rooms == trained, "\(a.fingerprints.prefix(3))")
        // No wall-clock wait: the positions tell.
        try await Subscriber.until("B holding A's fingerprints") {
            !a.member.position.isEmpty && a.member.position == b.member.position
        }
        let shipped = b.fingerprints
        #expect(shipped.count > 200 && shipped == a.fingerprints)
        #expect(b.rooms == trained)
        // The active dies; the standby takes over.
        try await a.member.kill(SIGKILL)
        try await Subscriber.until("B active and online", within: 20) { Self.online(watcher) == 2 }
        // Its status is published before its log line is written: wait for the line too.
        try await Subscriber.until("B says it is the active") { b.member.logText.contains("cluster: active") }
        return shipped
    }

    /// Both daemons read a trace: the new active takes Ben's walk through the flat on the
    /// trace's clock and places him in the bathroom, as the trained active would have.
    @Test func theNextActivePlacesATagWithTheTrainingTheActiveShipped() async throws {
        let broker = try Broker()
        let watcher = try await Subscriber(port: broker.port, filter: "beaconwatch/#")
        defer { watcher.client.shutdown() }
        let (a, b) = (try Fed("bw-a", port: broker.port), try Fed("bw-b", port: broker.port))
        defer {
            for fed in [a, b] {
                if let process = fed.member.process { Glibc.kill(process.processIdentifier, SIGKILL) }
            }
        }
        let shipped = try await Self.train(a, then: b, watcher)
        try b.feed(try Self.trace().walk)
        try await Subscriber.until("Ben in the office") { Self.zones(watcher, "ben").contains("enter Office") }
        let ben = Self.zones(watcher, "ben")
        #expect(
            ben.suffix(7) == [
                "enter Kitchen", "exit Kitchen", "enter Hall", "exit Hall", "enter Bathroom", "exit Bathroom",
                "enter Office",
            ], "\(ben)")
        // No training of its own: the rows are the ones shipped.
        #expect(OutboxTests.firstArrivals(watcher.payloads("/learned")).count == 3)
        #expect(b.fingerprints == shipped)
        try await b.member.kill(SIGTERM)
    }

    /// The new active takes the scanners' reports from the broker (`Monitor.source = none`, the
    /// live loop), as a cluster of a building does: Ben's badge, heard first by the kitchen's
    /// scanner 16 dB under its power (the nearest rule's kitchen), is in the bathroom at once, and
    /// stays there as the hall's and the office's scanners hear him too.
    @Test func theNextActiveOnTheBrokersReportsPlacesATagWithTheShippedTraining() async throws {
        let broker = try Broker()
        let watcher = try await Subscriber(port: broker.port, filter: "beaconwatch/#")
        defer { watcher.client.shutdown() }
        let (a, b) = (try Fed("bw-a", port: broker.port), try Fed("bw-b", port: broker.port, fed: false))
        defer {
            for fed in [a, b] {
                if let process = fed.member.process { Glibc.kill(process.processIdentifier, SIGKILL) }
            }
        }
        let shipped = try await Self.train(a, then: b, watcher)
        // Said again at each thing the test hears (the active's beats among them) until it is
        // taken: one said before the new active subscribed is not delivered to it.
        try await Subscriber.until("Ben in a room") {
            guard Self.zones(watcher, "ben").isEmpty else { return true }
            try? ClusterRunTests.espresense(watcher, node: "kitchen", tag: 2, rssi: -75)
            return false
        }
        #expect(Self.zones(watcher, "ben") == ["enter Bathroom"])
        for _ in 0..<3 {
            try ClusterRunTests.espresense(watcher, node: "hall", tag: 2, rssi: -71)
            try ClusterRunTests.espresense(watcher, node: "office", tag: 2, rssi: -92)
            try ClusterRunTests.espresense(watcher, node: "kitchen", tag: 2, rssi: -75)
        }
        try await Subscriber.until("the office's scanner hearing Ben") {
            watcher.payloads("/ben/event").contains { $0.contains(#""zone":"103""#) }
        }
        #expect(Self.zones(watcher, "ben") == ["enter Bathroom"])
        #expect(b.fingerprints == shipped)
        try await b.member.kill(SIGTERM)
    }
}
