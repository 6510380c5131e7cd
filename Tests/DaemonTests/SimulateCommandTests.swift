import Foundation
import TestSupport
import Testing

/// `beaconwatch simulate` (docs/behaviour.md §11) on the example office.
@Suite struct SimulateCommandTests {
    static let root = Conformance.directory.deletingLastPathComponent().deletingLastPathComponent()

    @Test func theSameSeedWritesTheSameTraceAndItsReplayFollowsThePlan() async throws {
        let folder = try scratchFolder("simulate")
        let plan = folder.appendingPathComponent("walk.plan")
        try """
        # at the entrance, then every room, then back to reception
        17082         40  12
        Kitchen       60  12
        Meeting room  50  12
        Reception     30
        """.write(to: plan, atomically: true, encoding: .utf8)
        let ini = Self.root.appendingPathComponent("etc/hsyco.ini").path
        let arguments = ["simulate", "--config", ini, "--walk", plan.path, "--seed", "9"]
        let first = try await DecodeCommandTests.beaconwatch(arguments)
        let again = try await DecodeCommandTests.beaconwatch(arguments)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout == again.stdout)
        #expect(first.stdout.split(separator: "\n").count > 150, "about 200 of 250 advertisements")
        let other = try await DecodeCommandTests.beaconwatch(arguments.dropLast() + ["10"])
        #expect(other.stdout != first.stdout)

        let trace = folder.appendingPathComponent("walk.jsonl")
        try first.stdout.write(to: trace, atomically: true, encoding: .utf8)
        let replay = try await DecodeCommandTests.beaconwatch(["replay", ini, "trace:\(trace.path)"])
        #expect(replay.status == 0, "\(replay.stderr)")
        var zones: [String] = []
        for line in replay.stdout.split(separator: "\n") {
            guard line.contains(#""kind":"zone""#), let name = line.firstMatch(of: /"name":"([^"]*)"/)?.1 else {
                continue
            }
            zones.append((line.contains(#""type":"enter""#) ? "enter " : "exit ") + name)
        }
        #expect(
            zones == [
                "enter Reception", "exit Reception", "enter Kitchen", "exit Kitchen", "enter Meeting room",
                "exit Meeting room", "enter Reception", "exit Reception",
            ])
    }

    @Test func aBadPlanIsBadInputWithItsLine() async throws {
        let folder = try scratchFolder("simulate-bad")
        let plan = folder.appendingPathComponent("walk.plan")
        try "Kitchen 60\nAttic 30\n".write(to: plan, atomically: true, encoding: .utf8)
        let run = try await DecodeCommandTests.beaconwatch([
            "simulate", "--config", Self.root.appendingPathComponent("etc/hsyco.ini").path, "--walk", plan.path,
        ])
        #expect(run.status == 2)
        #expect(run.stderr.hasPrefix("beaconwatch: \(plan.path):2: a stop is:"), "\(run.stderr)")
        #expect(run.stderr.split(separator: "\n").count == 1)
    }
}
