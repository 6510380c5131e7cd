import BeaconCore
import BeaconConfiguration
import Daemon
import Foundation
import Persistence
import RegionMonitor
import Rules
import TestSupport
import Testing

/// The conformance scenarios, run in-process through the same job as `replay`.
@Suite struct ScenarioTests {
    static let scenarios = ["beacons-mode", "zones-mode", "areas-then-zones", "ubudu-example-rules"]

    static func replay(_ scenario: Conformance.Scenario) throws -> [[String: Any]] {
        let configuration = try Configuration.load(contentsOf: scenario.ini.path).get()
        var lines: [String] = []
        let store = try StateStore()
        var job = FileRun(configuration: configuration, source: .trace(path: scenario.trace.path))
        job.rules = try RulesSource(configuration: configuration)
            .load(store: store, now: Timestamp(.now)!, logger: .issues)?.regions
        try job.run(
            store: store,
            output: { lines.append($0.json) },
            logger: .issues
        )
        return try Conformance.Scenario.objects(lines.joined(separator: "\n"))
    }

    @Test(arguments: scenarios)
    func theScenarioReplaysAsExpected(_ name: String) throws {
        let scenario = try Conformance.Scenario(name)
        let problems = try scenario.mismatches(Self.replay(scenario))
        #expect(problems.isEmpty, "\(scenario.about): \(problems.joined(separator: "; "))")
    }

    @Test func theComparisonCatchesAWrongOutput() throws {
        let scenario = try Conformance.Scenario("beacons-mode")
        var outputs = try Self.replay(scenario)
        let exit = try #require(outputs.firstIndex { $0["type"] as? String == "exit" })
        outputs[exit]["t"] = "2023-11-14T22:13:35.002Z"
        #expect(try scenario.mismatches(outputs).count == 1)
        outputs.remove(at: exit)
        #expect(try scenario.mismatches(outputs).count == 1)
    }

    /// The bundled walk (`scripts/demo`) through the example office enters and leaves every room.
    @Test func theDemoWalkEntersAndLeavesEveryZoneOfTheExampleOffice() throws {
        let root = Conformance.directory.deletingLastPathComponent().deletingLastPathComponent()
        let configuration = try Configuration.load(contentsOf: root.appendingPathComponent("etc/hsyco.ini").path).get()
        guard case .btsnoop = configuration.monitor.source else {
            Issue.record("etc/hsyco.ini's Monitor.source is not the demo capture")
            return
        }
        var transitions: [String] = []
        try FileRun(configuration: configuration, source: configuration.monitor.source).run(
            store: StateStore(),
            output: { output in
                if case .transition(_, let transition) = output, transition.region.kind != .beacon {
                    transitions.append("\(transition.direction.rawValue) \(transition.name ?? "?")")
                }
            },
            logger: .issues
        )
        #expect(
            transitions == [
                "enter Office", "enter Reception", "enter Kitchen", "enter Meeting room", "exit Reception",
                "exit Kitchen", "exit Meeting room", "exit Office",
            ])
    }
}
