import Floorplan
import Foundation
import Persistence
import TestSupport
import Testing

/// The building's fingerprints outlive the run that trained them (docs/behaviour.md §22): a run
/// trains etc/learn's three rooms, and the next run on the same state database places Ben's badge
/// in the bathroom, which has no scanner, without a training of its own.
@Suite struct LearnRestartTests {
    static let etc = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("etc/learn")
    static let flat = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
    static let ben = "ibeacon:FDA50693-A4E2-4FB1-AFCF-C6EB07647825:7:2"

    /// etc/learn in a scratch folder, its trace cut in two: Anna's training (the `learn` lines and
    /// her phone's reports) in `train.jsonl`, Ben's walk (kitchen, hall, bathroom, office) in
    /// `walk.jsonl`, each in the trace's order.
    static func folder(port: Int32? = nil) throws -> URL {
        let folder = try scratchFolder("learn-restart")
        var ini = try String(contentsOf: etc.appendingPathComponent("hsyco.ini"), encoding: .utf8)
        if let port { ini = ini.replacingOccurrences(of: "MQTT.port = 1883", with: "MQTT.port = \(port)") }
        try ini.write(to: folder.appendingPathComponent("hsyco.ini"), atomically: true, encoding: .utf8)
        let lines = try String(contentsOf: etc.appendingPathComponent("train-and-walk.jsonl"), encoding: .utf8)
            .split(separator: "\n")
        let (walk, train) = (lines.filter { $0.contains(ben) }, lines.filter { !$0.contains(ben) })
        #expect(train.count(where: { $0.contains(#""learn""#) }) == 3 && walk.count > 200)
        for (name, part) in [("train.jsonl", train), ("walk.jsonl", walk)] {
            try (part.joined(separator: "\n") + "\n").write(
                to: folder.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        return folder
    }

    /// A device's Zones as it entered them, from output lines (JSON objects).
    static func rooms(_ device: String, in output: String) -> [String] {
        output.split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                object["device"] as? String == device, object["type"] as? String == "enter",
                object["kind"] as? String == "zone"
            else { return nil }
            return object["name"] as? String
        }
    }

    /// `replay` of `trace` in `folder`, on the state database `state` when given: its output.
    static func replay(_ trace: String, state: String?, in folder: URL) async throws -> String {
        let run = try await DecodeCommandTests.beaconwatch(
            ["replay", "--config", "hsyco.ini", "trace:\(trace)"] + (state.map { ["--state", $0] } ?? []), in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        return run.stdout
    }

    /// What the training keeps: each trained room's samples, by Anna, as many as its `learned`
    /// output said.
    static func expectTrained(_ kept: Fingerprints, learned output: String) {
        #expect(kept.rooms.keys.sorted() == ["\(flat):1", "\(flat):3", "\(flat):4"])
        // The scanners by Location ID: the kitchen's, the hall's and the office's.
        #expect(kept.rooms.values.allSatisfy { $0.device == "anna" && $0.scanners == ["101", "102", "103"] })
        let said = output.split(separator: "\n").compactMap { line -> (String, Int)? in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                object["type"] as? String == "learned", let room = object["room"] as? String,
                let samples = object["samples"] as? Int
            else { return nil }
            return (room, samples)
        }
        #expect(said.count == 3)
        for (room, samples) in said { #expect(kept.rooms[room]?.samples.count == samples, "\(room)") }
    }

    @Test func aReplayOnTheKeptStatePlacesATagInTheRoomWithoutAScannerWithoutTraining() async throws {
        let folder = try Self.folder()
        // The training, kept.
        let trained = try await Self.replay("train.jsonl", state: "state.sqlite", in: folder)
        Self.expectTrained(
            try StateStore(path: folder.appendingPathComponent("state.sqlite").path).keptFingerprints(),
            learned: trained)
        // Without it, Ben is in the hall while he stands in the bathroom (its scanner hears him best).
        let untrained = Self.rooms("ben", in: try await Self.replay("walk.jsonl", state: nil, in: folder))
        #expect(!untrained.contains("Bathroom") && untrained.contains("Office"), "\(untrained)")
        // With the kept training, the next run places him there.
        let walked = try await Self.replay("walk.jsonl", state: "state.sqlite", in: folder)
        let rooms = Self.rooms("ben", in: walked)
        #expect(rooms.suffix(4) == ["Kitchen", "Hall", "Bathroom", "Office"], "\(rooms)")
        #expect(!walked.contains(#""type":"learned""#))

        // Forgetting every room, in a third run, empties the table for the fourth.
        let forget = #"{"t": 1700000400, "learn": {"room": "*", "forget": true}}"# + "\n"
        try forget.write(to: folder.appendingPathComponent("forget.jsonl"), atomically: true, encoding: .utf8)
        _ = try await Self.replay("forget.jsonl", state: "state.sqlite", in: folder)
        #expect(try StateStore(path: folder.appendingPathComponent("state.sqlite").path).keptFingerprints().isEmpty)
    }

    /// The same with the daemon: `run` of the training stops with its input, Anna having ended the
    /// office's session at her last reading (a `run` stops where its input does: a session still
    /// running then would be lost with the process), and the next `run` (a restart, as
    /// systemd's) goes on from the state database.
    @Test func theDaemonRestartedPlacesATagWithTheTrainingOfItsLastRun() async throws {
        let broker = try Broker()
        let folder = try Self.folder(port: broker.port)
        let stop = #"{"t": 1700000093.8, "learn": {"device": "anna", "stop": true}}"# + "\n"
        let train = folder.appendingPathComponent("train.jsonl")
        try (String(contentsOf: train, encoding: .utf8) + stop).write(to: train, atomically: true, encoding: .utf8)
        let (first, trained) = try await DecodeCommandTests.runTrace(
            config: "hsyco.ini", trace: "train.jsonl", in: folder)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(trained.contains(#""name":"Office","samples":69,"scanners":3,"stopped":true"#), "\(trained)")
        Self.expectTrained(
            try StateStore(path: folder.appendingPathComponent("state.sqlite").path).keptFingerprints(),
            learned: trained)
        let (second, events) = try await DecodeCommandTests.runTrace(
            config: "hsyco.ini", trace: "walk.jsonl", in: folder)
        #expect(second.status == 0, "\(second.stderr)")
        // The events file goes on where the first run left it.
        #expect(events.hasPrefix(trained))
        let walked = String(events.dropFirst(trained.count))
        let rooms = Self.rooms("ben", in: walked)
        #expect(rooms.suffix(4) == ["Kitchen", "Hall", "Bathroom", "Office"], "\(rooms)")
        #expect(!walked.contains(#""type":"learned""#))
    }
}
