import Foundation
import JSONText
import MQTT
import BeaconCore
import Persistence
import Rules
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// At-least-once delivery through the outbox (docs/behaviour.md §10.1, §12, §13): a broker that dies, a daemon
/// that dies; a persistent QoS 1 subscriber ends with every event, in order.
@Suite(.serialized) struct OutboxTests {
    typealias Subscriber = MQTTRunTests.Subscriber
    static let uuid = "5A4BCFCE-174E-4BAC-A814-092E77F6B7E5"

    /// Four beacons in one zone, no filter and no hysteresis: every sighting below flips its
    /// beacon's class, so each one makes a LocationBeaconEvent.
    static func folder(port: Int32, userid: String) throws -> URL {
        let folder = try scratchFolder("outbox")
        let ini = """
            LocationBaseBeacon.1 = \(uuid),1,1
            LocationBaseBeacon.2 = \(uuid),1,2
            LocationBaseBeacon.3 = \(uuid),1,3
            LocationBaseBeacon.4 = \(uuid),1,4
            Monitor.userid = \(userid)
            Monitor.mode = foreground
            Monitor.rssiFilter = none
            Monitor.hysteresis = 0
            Monitor.exitTimeout = 30
            Monitor.timezone = UTC
            MQTT.host = 127.0.0.1
            MQTT.port = \(port)
            MQTT.homeassistant = false
            State.database = state.sqlite

            """
        try ini.write(to: folder.appendingPathComponent("hsyco.ini"), atomically: true, encoding: .utf8)
        return folder
    }

    /// `count` sightings `spacing` seconds apart (1 ms) from `start`; beacon `n % 4 + 1`
    /// alternates between immediate (-50 dBm) and far (-75 dBm).
    static func sightings(_ range: Range<Int>, start: Double = 1_700_000_000, spacing: Double = 0.001) -> String {
        range.map { n in
            let rssi = (n / 4) % 2 == 0 ? -50 : -75
            let time = String(format: "%.3f", start + Double(n) * spacing)
            return #"{"t": \#(time), "uuid": "\#(uuid)", "major": 1, "minor": \#(n % 4 + 1), "rssi": \#(rssi)}"#
        }.joined(separator: "\n") + "\n"
    }

    static func start(_ arguments: [String], in folder: URL, log: String) throws -> Process {
        let process = Process()
        process.currentDirectoryURL = folder
        process.executableURL = DecodeCommandTests.productsDirectory.appendingPathComponent("beaconwatch")
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        try Eventually.start(process, loggingTo: folder.appendingPathComponent(log))
        return process
    }

    static func exit(of process: Process, within seconds: Double) async throws -> Int32 {
        try await Subscriber.until("the daemon to exit", within: seconds) { !process.isRunning }
        return process.terminationStatus
    }

    /// The `location` lines of an `--events` file, in order.
    static func locations(in file: URL) throws -> [String] {
        try String(contentsOf: file, encoding: .utf8).split(separator: "\n").map(String.init)
            .filter { $0.contains(#""type":"location""#) }
    }

    /// Each payload once, in the order it first arrived.
    static func firstArrivals(_ payloads: [String]) -> [String] {
        var seen = Set<String>()
        return payloads.filter { seen.insert($0).inserted }
    }

    /// Waits up to 30 s for `subscriber` to have every `expected` event; returns the indices of
    /// those that never came and the events in the order they first arrived.
    static func arrivals(of expected: [String], at subscriber: Subscriber) async -> (
        missing: [Int], firstArrivals: [String]
    ) {
        try? await Subscriber.until("every event", within: 30) {
            Set(subscriber.payloads("/event")).isSuperset(of: expected)
        }
        let payloads = subscriber.payloads("/event")
        let got = Set(payloads)
        return (expected.indices.filter { !got.contains(expected[$0]) }, firstArrivals(payloads))
    }

    static func describe(_ missing: [Int], of count: Int) -> String {
        "\(missing.count) of \(count) missing, from \(missing.first ?? -1) to \(missing.last ?? -1)"
    }

    /// A paced run (`--realtime`) of `trace` publishing to a persistent QoS 1 subscriber, while
    /// `faults` does what it does to the broker; then every event must have arrived once, in the
    /// order of the daemon's `--events` file, and the outbox must be empty.
    static func pacedRunDelivers(
        _ trace: String, count: Int, userid: String, faults: (Broker, Subscriber, Process) async throws -> Void
    ) async throws {
        let broker = try Broker()
        let folder = try Self.folder(port: broker.port, userid: userid)
        try trace.write(to: folder.appendingPathComponent("trace.jsonl"), atomically: true, encoding: .utf8)
        let subscriber = try await Subscriber(
            port: broker.port, filter: "beaconwatch/\(userid)/event", persistentAs: "\(userid)-watcher")
        try broker.saved()
        let daemon = try Self.start(
            [
                "run", "--web-listen", "", "--config", "hsyco.ini", "--source", "trace:trace.jsonl", "--realtime",
                "--events", "events.jsonl", "--log-level", "error",
            ], in: folder, log: "daemon.log")
        try await faults(broker, subscriber, daemon)
        let status = try await Self.exit(of: daemon, within: 60)
        let log = try String(contentsOf: folder.appendingPathComponent("daemon.log"), encoding: .utf8)
        #expect(status == 0, "\(log)")
        let expected = try Self.locations(in: folder.appendingPathComponent("events.jsonl"))
        #expect(expected.count == count)
        // A stop waits at most 5 s for the broker's acknowledgements and keeps the rest in the
        // outbox for the next start. On a loaded machine the last fault's reconnect can outlast
        // that, so the daemon is started again on an empty trace, as a restarted service would
        // be, until the outbox is delivered (those starts' own outputs are not counted).
        try Data().write(to: folder.appendingPathComponent("empty.jsonl"))
        var restarts = 0
        while try !StateStore(path: folder.appendingPathComponent("state.sqlite").path).pendingOutbox().isEmpty,
            restarts < 5
        {
            restarts += 1
            let again = try Self.start(
                [
                    "run", "--web-listen", "", "--config", "hsyco.ini", "--source", "trace:empty.jsonl",
                    "--log-level", "error",
                ], in: folder, log: "drain-\(restarts).log")
            #expect(try await Self.exit(of: again, within: 60) == 0)
        }
        let (missing, arrivals) = await Self.arrivals(of: expected, at: subscriber)
        #expect(missing.isEmpty, "\(Self.describe(missing, of: expected.count)), after \(restarts) restarts")
        let wanted = Set(expected)
        let firsts = arrivals.filter(wanted.contains)
        let inOrder = firsts == expected
        // Where the first arrivals leave the committed order, for the next look at it (it failed
        // once in a full local run, in session 28, and not in the runs alone after it).
        let split =
            firsts.indices.first { $0 >= expected.count || firsts[$0] != expected[$0] }
            ?? min(firsts.count, expected.count)
        #expect(
            inOrder,
            "first arrivals leave the order at \(split) of \(expected.count): got \(firsts.dropFirst(max(0, split - 2)).prefix(5)), committed \(expected.dropFirst(max(0, split - 2)).prefix(5)), after \(restarts) restarts"
        )
        #expect(try StateStore(path: folder.appendingPathComponent("state.sqlite").path).pendingOutbox().isEmpty)
        subscriber.client.shutdown()
    }

    @Test func everyEventArrivesInOrderWhenTheBrokerIsKilledFiveTimes() async throws {
        try await Self.pacedRunDelivers(Self.sightings(0..<10_000), count: 10_000, userid: "kim") {
            broker, subscriber, _ in
            for outage in 1...5 {
                // Each outage starts once events flow again after the previous one.
                try await Subscriber.until("events before outage \(outage)", within: 20) {
                    subscriber.payloads("/event").count >= outage * 1200
                }
                try await broker.stop(signal: SIGKILL)
                try broker.start()
            }
        }
    }

    @Test func aDaemonKilledMidReplayDeliversEverythingItCommittedAfterItsRestart() async throws {
        let broker = try Broker()
        let folder = try Self.folder(port: broker.port, userid: "lee")
        try Self.sightings(0..<10_000).write(
            to: folder.appendingPathComponent("first.jsonl"), atomically: true, encoding: .utf8)
        let subscriber = try await Subscriber(
            port: broker.port, filter: "beaconwatch/lee/event", persistentAs: "lee-watcher")
        try broker.saved()
        let first = try Self.start(
            [
                "run", "--web-listen", "", "--config", "hsyco.ini", "--source", "trace:first.jsonl", "--realtime",
                "--events", "first-events.jsonl", "--log-level", "error",
            ], in: folder, log: "first.log")
        try await Subscriber.until("the first events", within: 20) { subscriber.payloads("/event").count >= 2000 }
        // The broker goes: events pile up in the outbox. Then the daemon dies with them there.
        try await broker.stop(signal: SIGKILL)
        let firstEvents = folder.appendingPathComponent("first-events.jsonl")
        let before = subscriber.payloads("/event").count
        try await Subscriber.until("events kept while the broker is away", within: 20) {
            ((try? Self.locations(in: firstEvents).count) ?? 0) >= before + 1500
        }
        kill(first.processIdentifier, SIGKILL)
        _ = try await Child.exit(of: first, "the first daemon, killed")
        let store = try StateStore(path: folder.appendingPathComponent("state.sqlite").path)
        let left = try store.pendingOutbox().count
        #expect(left >= 1500)
        let committed = try Self.locations(in: firstEvents)
        // The restart hears every beacon again at the class it last reported.
        let classes = try store.lastReported()
        #expect(classes.count == 4)
        let resume = 1_700_000_000 + Double(committed.count) / 1000 + 1
        let again = (1...4).map { minor in
            let rssi = classes["\(minor)"] == .immediate ? -50 : -75
            return #"{"t": \#(resume), "uuid": "\#(Self.uuid)", "major": 1, "minor": \#(minor), "rssi": \#(rssi)}"#
        }
        try (again.joined(separator: "\n") + "\n").write(
            to: folder.appendingPathComponent("second.jsonl"), atomically: true, encoding: .utf8)

        try broker.start()
        let second = try Self.start(
            [
                "run", "--web-listen", "", "--config", "hsyco.ini", "--source", "trace:second.jsonl", "--events",
                "second-events.jsonl",
                "--log-level", "error",
            ], in: folder, log: "second.log")
        let status = try await Self.exit(of: second, within: 30)
        let log = try String(contentsOf: folder.appendingPathComponent("second.log"), encoding: .utf8)
        #expect(status == 0, "\(log)")
        // Not reported twice: the classes were committed with the events that reported them.
        #expect(try Self.locations(in: folder.appendingPathComponent("second-events.jsonl")).isEmpty)
        let (missing, firstArrivals) = await Self.arrivals(of: committed, at: subscriber)
        #expect(missing.isEmpty, "\(Self.describe(missing, of: committed.count)); \(left) were left in the outbox")
        let inOrder = Array(firstArrivals.prefix(committed.count)) == committed
        #expect(inOrder)
        #expect(try store.pendingOutbox().isEmpty)
        subscriber.client.shutdown()
    }

    /// docs/behaviour.md §12: a rule's count and the `rule` output it makes are committed together, so a
    /// daemon SIGKILLed mid-run neither counts an entry twice nor loses a count's output: after a
    /// restart, the broker has each count exactly once, 1 to the last, with no gap.
    @Test func aDaemonKilledMidRunNeitherCountsTwiceNorLosesACount() async throws {
        let broker = try Broker()
        let folder = try Self.folder(port: broker.port, userid: "kim")
        // Every sighting is a visit: the zone is entered, and left 2 ms later.
        var ini = try String(contentsOf: folder.appendingPathComponent("hsyco.ini"), encoding: .utf8)
        ini = ini.replacingOccurrences(of: "Monitor.exitTimeout = 30", with: "Monitor.exitTimeout = 0.002")
        ini += "Rules.source = rules.json\n"
        try ini.write(to: folder.appendingPathComponent("hsyco.ini"), atomically: true, encoding: .utf8)
        try #"""
        {"u_beacons": [{"id": "z1", "name": "Zone 1", "proximity_uid": "\#(Self.uuid)", "major": 1,
          "rules_actions": [{"id": "r", "rule": {"trigger": "on_entry", "latch_time": 0}, "action": {"notify_user": "hi"}}]}]}
        """#.write(to: folder.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
        func visits(_ range: Range<Int>, start: Double = 1_700_000_000) -> String {
            range.map { n in
                let time = String(format: "%.3f", start + Double(n) * 0.004)
                return #"{"t": \#(time), "uuid": "\#(Self.uuid)", "major": 1, "minor": 1, "rssi": -50}"#
            }.joined(separator: "\n") + "\n"
        }
        try visits(0..<5000).write(to: folder.appendingPathComponent("first.jsonl"), atomically: true, encoding: .utf8)
        let subscriber = try await Subscriber(
            port: broker.port, filter: "beaconwatch/kim/rule", persistentAs: "kim-watcher")
        try broker.saved()
        let first = try Self.start(
            [
                "run", "--web-listen", "", "--config", "hsyco.ini", "--source", "trace:first.jsonl", "--realtime",
                "--log-level", "error",
            ],
            in: folder, log: "first.log")
        try await Subscriber.until("the first rule outputs", within: 20) { subscriber.payloads("/rule").count >= 300 }
        kill(first.processIdentifier, SIGKILL)
        _ = try await Child.exit(of: first, "the first daemon, killed")
        let store = try StateStore(path: folder.appendingPathComponent("state.sqlite").path)
        let kept = try #require(try store.ruleState().rules[RuleKey(region: "z1", rule: "r")]).count
        #expect(kept >= 300)

        try visits(0..<10, start: 1_700_001_000).write(
            to: folder.appendingPathComponent("second.jsonl"), atomically: true, encoding: .utf8)
        let second = try Self.start(
            [
                "run", "--web-listen", "", "--config", "hsyco.ini", "--source", "trace:second.jsonl", "--log-level",
                "error",
            ],
            in: folder, log: "second.log")
        #expect(try await Self.exit(of: second, within: 30) == 0)
        func counts() -> [Int] {
            Self.firstArrivals(subscriber.payloads("/rule")).compactMap {
                JSONValue.parse(Array($0.utf8))?["count"]?.argument.flatMap { Int($0) }
            }
        }
        try? await Subscriber.until("every count", within: 30) { counts().count >= kept + 10 }
        let seen = counts()
        #expect(seen.count == kept + 10, "each count's output once")
        #expect(seen.sorted() == Array(1...(kept + 10)), "no count lost, none twice")
        #expect(try store.ruleState().rules[RuleKey(region: "z1", rule: "r")]?.count == kept + 10)
        subscriber.client.shutdown()
    }
}

/// The minute of scheduled broker restarts, apart from ``OutboxTests``: a paced run that mostly waits,
/// so it runs beside that suite's full-speed runs instead of after them (the unit stage's last
/// minute had the processor idle, waiting on it; docs/reliability.md).
@Suite struct OutboxScheduleTests {
    /// A broker restarted on a schedule, not on the daemon's progress: every 2 s for the minute a
    /// paced run lasts (issue 16's fault injection).
    @Test func everyEventArrivesInOrderWhileTheBrokerRestartsEveryTwoSecondsForAMinute() async throws {
        try await OutboxTests.pacedRunDelivers(
            OutboxTests.sightings(0..<6_000, spacing: 0.01), count: 6_000, userid: "rita"
        ) {
            broker, _, daemon in
            var restarts = 0
            let clock = ContinuousClock()
            var next = clock.now
            while daemon.isRunning, restarts < 30 {
                // The fault's own schedule, not a wait for something: every 2 s from the first,
                // however long a restart took on a loaded machine.
                next = next.advanced(by: .seconds(2))
                try await Task.sleep(until: next, clock: clock)
                try await broker.stop(signal: SIGTERM)
                try broker.start()
                restarts += 1
            }
            // Enough restarts to prove the point: 27 to 30 on an idle machine; 23 were measured
            // beside four other busy processes, when each restart took longer than its 2 s.
            #expect(restarts >= 15)
        }
    }
}
