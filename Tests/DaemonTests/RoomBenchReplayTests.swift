import Foundation
import RegionMonitor
import Simulation
import Testing
import TestSupport

/// The room-quality benchmark's walks (`scripts/bench rooms`, docs/performance.md "Rooms") replay
/// deterministically: the same trace of scanner reports gives byte-identical outputs (issue 36).
@Suite struct RoomBenchReplayTests {
    @Test func aBenchmarkWalkReplaysToTheSameBytes() async throws {
        var simulation = FloorSimulation(floor: Floor.corridor(seed: 11))
        simulation.duration = 900
        simulation.walkers = 2
        simulation.stationary = 1
        let movers = simulation.movers()
        let heard = simulation.heard(movers)
        #expect(heard.count > 3000)
        // (A session id is drawn per run unless given: the ini gives one.)
        // The simulation itself is seeded: a second run makes the same trace.
        let trace = simulation.trace(heard)
        #expect(simulation.trace(simulation.heard(simulation.movers())) == trace)
        let scratch = try scratchFolder("room-bench")
        let ini = scratch.appendingPathComponent("hsyco.ini")
        let walk = scratch.appendingPathComponent("walk.jsonl")
        try simulation.floor.ini(tags: movers.count, extra: "Monitor.source = none\nMonitor.session = room-bench\n")
            .write(to: ini, atomically: true, encoding: .utf8)
        try trace.write(to: walk, atomically: true, encoding: .utf8)
        let first = try await DecodeCommandTests.beaconwatch(["replay", ini.path, "trace:\(walk.path)"])
        let second = try await DecodeCommandTests.beaconwatch(["replay", ini.path, "trace:\(walk.path)"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout == second.stdout)
        // Walkers change rooms: each of the three tags has zone transitions, the walkers several.
        for tag in ["t1", "t2", "t3"] {
            let rooms = first.stdout.split(separator: "\n").filter {
                $0.contains("\"device\":\"\(tag)\"") && $0.contains("\"kind\":\"zone\"")
                    && $0.contains("\"type\":\"enter\"")
            }
            #expect(rooms.count >= (tag == "t3" ? 1 : 5), "\(tag): \(rooms.count)")
        }
    }
}
