import BeaconCore
import Foundation
import TestSupport
import Testing

/// Issue 59, "Learn this room", end to end (docs/behaviour.md §22): etc/learn's flat (a kitchen,
/// a hall, an office with a scanner each, a bathroom with none) and its trace, in which Anna's
/// phone trains three rooms through trace `learn` lines and then Ben's badge, 4 dB quieter, walks
/// through all four; through `replay` and through `run` with a real mosquitto.
@Suite(.serialized) struct LearnRunTests {
    typealias Subscriber = MQTTRunTests.Subscriber
    typealias Output = TwoFloorRunTests.Output
    static let etc = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("etc/learn")
    static let start = 1_700_000_000.0
    /// When Ben walks into the bathroom, seconds into the trace (etc/learn/make-trace.py: three
    /// sessions of 30 s with 2 s between, 20 s empty, then 20 s in the kitchen and 20 in the hall).
    static let intoTheBathroom = 156.0

    /// etc/learn in a scratch folder, on the broker at `port`; without its `learn` lines when
    /// `trained` is false.
    static func folder(port: Int32, trained: Bool = true) throws -> URL {
        let folder = try scratchFolder(trained ? "learn" : "learn-untrained")
        let ini =
            try String(contentsOf: etc.appendingPathComponent("hsyco.ini"), encoding: .utf8)
            .replacingOccurrences(of: "MQTT.port = 1883", with: "MQTT.port = \(port)") + "MQTT.keepalive = 5\n"
        try ini.write(to: folder.appendingPathComponent("hsyco.ini"), atomically: true, encoding: .utf8)
        var trace = try String(contentsOf: etc.appendingPathComponent("train-and-walk.jsonl"), encoding: .utf8)
        if !trained {
            trace = trace.split(separator: "\n").filter { !$0.contains("\"learn\"") }.map { $0 + "\n" }.joined()
        }
        try trace.write(to: folder.appendingPathComponent("walk.jsonl"), atomically: true, encoding: .utf8)
        return folder
    }

    static func replay(in folder: URL) async throws -> [Output] {
        let run = try await DecodeCommandTests.beaconwatch(
            ["replay", "--config", "hsyco.ini", "trace:walk.jsonl", "--state", "replay.sqlite"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        return outputs(ReplayCommandTests.withoutSession(run.stdout))
    }

    /// The outputs with their seconds into the trace (both traces start at the same instant).
    static func outputs(_ text: String) -> [Output] { TwoFloorRunTests.outputs(text) }

    /// `device`'s room enters and exits, as `enter Kitchen`.
    static func rooms(_ outputs: [Output], _ device: String) -> [String] {
        outputs.filter { $0.device == device && $0.kind == "zone" && ($0.type == "enter" || $0.type == "exit") }
            .map { "\($0.type) \($0.name ?? "")" }
    }

    /// The three sessions end with a `learned` output each (all three scanners heard, a sample
    /// a reading), and training moves no one: Anna's room goes on by the scanners. Ben, 4 dB
    /// quieter than Anna's phone, is then in each room he walks through, the bathroom (no
    /// scanner) within 10 s of walking in; without the training he is in the hall there.
    @Test func threeRoomsTrainedOneWithoutAScannerThenAWalk() async throws {
        let outputs = try await Self.replay(in: try Self.folder(port: 1883))
        let learned = outputs.filter { $0.type == "learned" }
        #expect(learned.map(\.name) == ["Kitchen", "Bathroom", "Office"])
        for output in learned {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(output.line.utf8)) as? [String: Any])
            #expect(object["device"] as? String == "anna")
            #expect(object["scanners"] as? Int == 3, "\(output.line)")
            #expect((object["samples"] as? Int ?? 0) >= 60, "\(output.line)")
        }
        #expect(
            Self.rooms(outputs, "ben") == [
                "enter Kitchen", "exit Kitchen", "enter Hall", "exit Hall", "enter Bathroom", "exit Bathroom",
                "enter Office", "exit Office",
            ], "\(Self.rooms(outputs, "ben"))")
        let bathroom = try #require(outputs.first { $0.device == "ben" && $0.type == "enter" && $0.name == "Bathroom" })
        #expect(bathroom.second >= Self.intoTheBathroom && bathroom.second <= Self.intoTheBathroom + 10)
        // While Anna trained the bathroom, the scanners put her in the hall: training moved nothing.
        #expect(!Self.rooms(outputs, "anna").contains("enter Bathroom"))

        let untrained = try await Self.replay(in: try Self.folder(port: 1883, trained: false))
        #expect(!untrained.contains { $0.type == "learned" })
        #expect(!Self.rooms(untrained, "ben").contains("enter Bathroom"))
        #expect(Self.rooms(untrained, "ben").contains("enter Hall"))
    }

    /// `run` fed the same trace publishes to a real mosquitto, and writes, byte for byte what
    /// `replay` prints up to the trace's end; the `learned` outputs on Anna's own topic
    /// (`beaconwatch/anna/learned`), Ben's rooms on his `zone`.
    @Test func runThroughABrokerGivesWhatReplayGives() async throws {
        let broker = try Broker()
        let folder = try Self.folder(port: broker.port)
        let expected = try await Self.replay(in: folder)
        let watcher = try await Subscriber(port: broker.port, filter: "beaconwatch/#")
        let (run, events) = try await DecodeCommandTests.runTrace(config: "hsyco.ini", trace: "walk.jsonl", in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        let trace = try String(contentsOf: folder.appendingPathComponent("walk.jsonl"), encoding: .utf8)
        let lastLine = try #require(trace.split(separator: "\n").last)
        let last = try #require(
            (try JSONSerialization.jsonObject(with: Data(lastLine.utf8)) as? [String: Any])?["t"] as? Double)
        let upToTheEnd = expected.filter { $0.second <= last - Self.start }
        #expect(upToTheEnd.count > 20 && upToTheEnd.count < expected.count)
        #expect(ReplayCommandTests.withoutSession(events) == upToTheEnd.map { $0.line + "\n" }.joined())

        func topic(_ device: String, _ leaf: String) -> [String] {
            watcher.messages.filter { $0.topic == "beaconwatch/\(device)/\(leaf)" }.map(\.payload)
        }
        try await Subscriber.until("the three learned outputs, Ben in the office, and the daemon's stop") {
            topic("anna", "learned").count == 3 && topic("ben", "zone").last == "Office"
                && topic("flat", "status").last == "offline"
        }
        #expect(
            topic("anna", "learned").map(ReplayCommandTests.withoutSession)
                == expected.filter { $0.type == "learned" }.map(\.line))
        #expect(topic("ben", "zone").contains("Bathroom"))
        watcher.client.shutdown()
    }
}
