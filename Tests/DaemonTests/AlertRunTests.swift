import BeaconCore
import BeaconConfiguration
import Daemon
import Engine
import Foundation
import Persistence
import RegionMonitor
import TestSupport
import Testing

/// Alerts, the nearest beacon and dwell in runs: trace commands, the state kept across replays.
@Suite struct AlertRunTests {
    static let uuid = "ACFD165E-C0C0-11E3-9BBE-1A514932AC01"

    static let ini = """
        LocationBaseBeacon.17081 = \(uuid),1,17081
        LocationBaseBeacon.17082 = \(uuid),1,17082
        LocationAlert.17081 = near,=,popup,Welcome
        LocationAlert.17082 = near,=
        Monitor.mode = foreground
        Monitor.rssiFilter = none
        Monitor.hysteresis = 0
        Monitor.exitTimeout = 10
        Monitor.timezone = Europe/Paris
        Alert.resetAfter = 60
        """

    /// A sighting (RSSI -60 is near, -75 far with the default power) or a command, at `t` seconds.
    static func see(_ minor: Int, _ rssi: Int, at t: Double) -> String {
        #"{"t": \#(1_700_000_000 + t), "uuid": "\#(uuid)", "major": 1, "minor": \#(minor), "rssi": \#(rssi)}"#
    }

    static func command(_ name: String, _ id: String, at t: Double) -> String {
        #"{"t": \#(1_700_000_000 + t), "command": "\#(name)", "id": "\#(id)"}"#
    }

    static func replay(_ lines: [String], state: String, in folder: URL, ini: String = ini) throws -> [MonitorOutput] {
        let configuration = try Configuration.load(
            Array(ini.utf8), path: folder.appendingPathComponent("hsyco.ini").path
        ).get()
        let trace = folder.appendingPathComponent("trace-\(UUID().uuidString).jsonl")
        try (lines.joined(separator: "\n") + "\n").write(to: trace, atomically: true, encoding: .utf8)
        var outputs: [MonitorOutput] = []
        try FileRun(configuration: configuration, source: .trace(path: trace.path)).run(
            store: StateStore(path: state), output: { outputs.append($0) }, logger: .issues)
        return outputs
    }

    static func alerts(_ outputs: [MonitorOutput]) -> [String] {
        outputs.compactMap {
            guard case .alert(_, let change) = $0 else { return nil }
            return "\(change.action.rawValue) \(change.locationID) \(change.title ?? "-") \(change.alertAction)"
        }
    }

    /// docs/behaviour.md §9.1: alert conditions use the computed class in either mode. In `background` mode
    /// 17081 turns near 30 s after the entry, outside the window: the alert is shown then.
    @Test func anAlertIsShownInBackgroundModeOutsideAnyRangingWindow() throws {
        let folder = try scratchFolder("alerts-background")
        let ini = Self.ini.replacingOccurrences(of: "Monitor.mode = foreground", with: "Monitor.mode = background")
        let lines = (0..<40).map { Self.see(17081, $0 < 30 ? -75 : -60, at: Double($0)) }
        let outputs = try Self.replay(
            lines, state: folder.appendingPathComponent("s.sqlite").path, in: folder, ini: ini)
        let shown = outputs.compactMap { output -> Double? in
            guard case .alert(let time, let change) = output, change.action == .show else { return nil }
            return time.secondsSinceEpoch - 1_700_000_000
        }
        #expect(shown == [30])
        #expect(Self.alerts(outputs).prefix(1) == ["show 17081 Welcome popup"])
    }

    @Test func traceCommandsDriveAlertsAndStatusesSurviveARestart() throws {
        let folder = try scratchFolder("alerts")
        let state = folder.appendingPathComponent("state.sqlite").path
        let first = try Self.replay(
            [
                Self.see(17081, -60, at: 0), Self.see(17082, -60, at: 1),
                Self.command("alert/decline", "17081", at: 2), Self.command("alert/done", "17082", at: 3),
                Self.command("alert/done", "17082", at: 4),  // not in progress: ignored
            ], state: state, in: folder)
        #expect(Self.alerts(first) == ["show 17081 Welcome popup", "show 17082 - popup"])
        let line = try #require(first.first { $0.type == "alert" }?.json)
        #expect(line.contains(#""type":"alert","action":"show","id":"17081","title":"Welcome","alertAction":"popup""#))
        // The replay ran on until every beacon was off: both done, their resets 60 s after.
        let kept = try StateStore(path: state).kept().alerts
        #expect(kept["17081"]?.status == .done && kept["17082"]?.status == .done)
        #expect(kept["17081"]?.resetAt != nil)

        // Restarted within the minute: still done, nothing shown.
        let soon = try Self.replay([Self.see(17081, -60, at: 40)], state: state, in: folder)
        #expect(Self.alerts(soon).isEmpty)
        // Long after: reset, shown again; removed when the beacon is lost at the end.
        let later = try Self.replay([Self.see(17081, -60, at: 500)], state: state, in: folder)
        #expect(Self.alerts(later) == ["show 17081 Welcome popup", "remove 17081 Welcome popup"])
    }

    @Test func nearestAndDwellReachTheOutputs() throws {
        let folder = try scratchFolder("nearest-dwell")
        let outputs = try Self.replay(
            [Self.see(17081, -70, at: 0), Self.see(17082, -60, at: 1), Self.see(17082, -60, at: 5)],
            state: folder.appendingPathComponent("s.sqlite").path, in: folder)
        let nearest = outputs.compactMap {
            if case .nearest(_, let change) = $0 { change.locationID ?? "none" } else { nil }
        }
        #expect(nearest == ["17081", "17082", "none"])
        let exits = outputs.compactMap { output -> Transition? in
            if case .transition(_, let transition) = output, transition.direction == .exit { transition } else { nil }
        }
        // Area and Zone exits carry the day's dwell; a Beacon's does not.
        #expect(exits.filter { $0.region.kind != .beacon }.map(\.dwellToday) == [15, 15])
        #expect(exits.filter { $0.region.kind == .beacon }.allSatisfy { $0.dwellToday == nil })
    }

    /// The engine with alerts steps its deadlines instant by instant; a sighting at a Zone's exit
    /// deadline still keeps it inside (docs/behaviour.md §5.1), in a file run as in the monitor alone.
    @Test func aSightingAtTheExitInstantKeepsTheZoneInsideThroughTheEngine() throws {
        let folder = try scratchFolder("tie")
        let outputs = try Self.replay(
            [Self.see(17081, -60, at: 0), Self.see(17081, -60, at: 10), Self.see(17081, -60, at: 20)],
            state: folder.appendingPathComponent("state.sqlite").path, in: folder)
        let transitions = outputs.compactMap { output -> String? in
            guard case .transition(let time, let transition) = output, transition.region.kind == .zone else {
                return nil
            }
            return "\(time.secondsSinceEpoch - 1_700_000_000) \(transition.direction.rawValue)"
        }
        #expect(transitions == ["0.0 enter", "30.0 exit"])
    }
}
