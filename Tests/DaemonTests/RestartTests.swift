import BeaconCore
import BeaconConfiguration
import Daemon
import Foundation
import TestSupport
import Persistence
import RegionMonitor
import Testing

/// docs/behaviour.md §6 and 12: a kept state database makes a restart repeat no LocationBeaconEvent and report
/// `off` for the beacons gone meanwhile.
@Suite struct RestartTests {
    static let ini = """
        LocationBaseBeacon.101 = E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,1,1
        LocationBaseBeacon.102 = E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,1,2
        Monitor.userid = alice
        Monitor.session = s1
        Monitor.address = 10.0.0.5
        Monitor.mode = foreground
        Monitor.exitTimeout = 10

        """

    static func sightings(_ minor: Int, from start: Int, to end: Int) -> String {
        (start...end).map {
            #"{"t": \#(1_700_000_000 + $0), "uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "major": 1, "minor": \#(minor), "rssi": -59}"#
        }.joined(separator: "\n") + "\n"
    }

    /// Runs `trace` as `run` does (no drain at the end) or as `replay` does, returning the
    /// `location` outputs as "seconds zone distance".
    static func locations(_ trace: String, store: StateStore, drain: Bool = false) throws -> [String] {
        let folder = try scratchFolder("restart")
        let traceFile = folder.appendingPathComponent("trace.jsonl")
        try trace.write(to: traceFile, atomically: true, encoding: .utf8)
        let configuration = try Configuration.load(
            Array(ini.utf8), path: folder.appendingPathComponent("hsyco.ini").path
        ).get()
        var job = FileRun(configuration: configuration, source: .trace(path: traceFile.path))
        job.drainAtEnd = drain
        var lines: [String] = []
        try job.run(
            store: store,
            output: { output in
                guard case .location(let time, let event) = output else { return }
                lines.append("\(Int(time.secondsSinceEpoch) - 1_700_000_000) \(event.zone) \(event.distance.rawValue)")
            },
            logger: .issues
        )
        return lines
    }

    static func storePath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("bw-state-\(UUID().uuidString).sqlite").path
    }

    @Test func aRestartRepeatsNoEventForABeaconStillInItsClass() throws {
        let path = Self.storePath()
        #expect(try Self.locations(Self.sightings(1, from: 0, to: 3), store: StateStore(path: path)) == ["0 101 near"])
        // The daemon stopped at 3 with 101 near; it starts again at 25 and 101 is still near.
        let second = try Self.locations(Self.sightings(1, from: 25, to: 30), store: StateStore(path: path), drain: true)
        #expect(second == ["40 101 off"])
    }

    @Test func aRestartReportsOffForABeaconGoneMeanwhile() throws {
        let path = Self.storePath()
        _ = try Self.locations(Self.sightings(1, from: 0, to: 3), store: StateStore(path: path))
        let second = try Self.locations(Self.sightings(2, from: 25, to: 40), store: StateStore(path: path))
        #expect(second == ["25 102 near", "35 101 off"])
        #expect(try StateStore(path: path).lastReported() == ["101": .off, "102": .near])
    }

    @Test func withoutAKeptStateTheSameRestartReportsAgain() throws {
        _ = try Self.locations(Self.sightings(1, from: 0, to: 3), store: StateStore())
        #expect(try Self.locations(Self.sightings(1, from: 25, to: 30), store: StateStore()) == ["25 101 near"])
    }

    @Test func runKeepsTheStateBetweenStartsOfTheBinary() async throws {
        let folder = try scratchFolder("run")
        try (Self.ini + "State.database = state.sqlite\n").write(
            to: folder.appendingPathComponent("hsyco.ini"), atomically: true, encoding: .utf8)
        try Self.sightings(1, from: 0, to: 3).write(
            to: folder.appendingPathComponent("a.jsonl"), atomically: true, encoding: .utf8)
        try Self.sightings(2, from: 25, to: 40).write(
            to: folder.appendingPathComponent("b.jsonl"), atomically: true, encoding: .utf8)
        let common = [
            "run", "--web-listen", "", "--config", "hsyco.ini", "--no-mqtt", "--events", "-", "--log-level", "error",
        ]
        let first = try await DecodeCommandTests.beaconwatch(common + ["--source", "trace:a.jsonl"], in: folder)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains(#""zone":"101","distance":"near""#))
        let second = try await DecodeCommandTests.beaconwatch(common + ["--source", "trace:b.jsonl"], in: folder)
        #expect(second.status == 0, "\(second.stderr)")
        let locations = second.stdout.split(separator: "\n").filter { $0.contains(#""type":"location""#) }
        #expect(locations.count == 2)
        #expect(
            locations.last?.contains(
                #""t":"2023-11-14T22:13:55.000Z","type":"location","session":"s1","address":"10.0.0.5","userid":"alice","zone":"101","distance":"off""#
            ) == true)
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("state.sqlite").path))
    }
}
