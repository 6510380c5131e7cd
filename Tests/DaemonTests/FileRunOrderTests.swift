import BeaconConfiguration
import Daemon
import Engine
import Foundation
import Persistence
import RegionMonitor
import TestSupport
import Testing

/// The shell's orders in a file run (docs/architecture.md, "Devices: one path"): taken between
/// events, at the input's clock.
@Suite struct FileRunOrderTests {
    /// A command posted before the file's first event (at start-up, as the web API or a reload
    /// may) waits for the input's clock and is not dropped.
    @Test func anOrderPostedBeforeTheFirstEventIsTakenAtTheInputsTime() throws {
        let folder = try scratchFolder("file-run-order")
        let uuid = RuleRunTests.uuid
        let text = """
            LocationBaseBeacon.4201 = \(uuid),42,1
            Monitor.userid = bob
            Monitor.session = s
            Monitor.exitTimeout = 5
            """
        let configuration = try Configuration.load(
            Array(text.utf8), path: folder.appendingPathComponent("hsyco.ini").path
        ).get()
        let trace = folder.appendingPathComponent("trace.jsonl")
        try (0..<20).map {
            #"{"t": \#(1_383_555_600 + $0), "uuid": "\#(uuid)", "major": 42, "minor": 1, "rssi": -60}"#
        }.joined(separator: "\n").appending("\n").write(to: trace, atomically: true, encoding: .utf8)
        let control = EngineControl()
        // The daemon ranges in the background by default (docs/behaviour.md §6); the order brings it to the foreground.
        control.post(EngineInput.mode(.foreground))
        var outputs: [MonitorOutput] = []
        _ = try FileRun(configuration: configuration, source: .trace(path: trace.path)).run(
            store: StateStore(), output: { outputs.append($0) }, control: control, logger: .silent)
        let locations = outputs.compactMap { output -> LocationBeaconEvent? in
            if case .location(_, let event) = output { event } else { nil }
        }
        #expect(!locations.isEmpty)
        #expect(locations.contains { !$0.background }, "the order was taken: foreground ranging")
    }
}
