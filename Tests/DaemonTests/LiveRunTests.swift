import BeaconCore
import BeaconConfiguration
import Daemon
import Engine
import Foundation
import Persistence
import RegionMonitor
import Rules
import Synchronization
import TestSupport
import Testing

/// The live loop, with a scripted radio and a clock that moves only as the radio waits.
@Suite struct LiveRunTests {
    /// Delivers scripted events at their times; waiting moves the shared clock.
    final class ScriptedRadio: HCIEventSource {
        var now: Timestamp
        let start: Timestamp
        var script: [(Timestamp, [UInt8])]
        var waits: [Duration] = []

        /// The scripted clock as the loop's elapsed time: a wall clock never stepped.
        var elapsed: Duration { .microseconds(now.microseconds - start.microseconds) }

        init(start: Timestamp, script: [(Double, [UInt8])]) {
            now = start
            self.start = start
            self.script = script.map { (start.adding(seconds: $0.0), $0.1) }
        }

        func nextEvent(timeout: Duration) throws -> [UInt8]? {
            waits.append(timeout)
            let limit =
                now.microseconds + timeout.components.seconds * 1_000_000
                + timeout.components.attoseconds / 1_000_000_000_000
            if let (time, event) = script.first, time.microseconds <= limit {
                script.removeFirst()
                now = max(now, time)
                return event
            }
            now = Timestamp(microseconds: limit)
            return nil
        }
    }

    static func report(minor: UInt8, rssi: Int8) -> [UInt8] {
        let beacon = BeaconID(
            uuid: UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, major: 1, minor: UInt16(minor))
        let data = AdvertisingData.iBeacon(beacon, power: -59)
        let parameters: [UInt8] =
            [0x02, 0x01, 0x03, 0x00, 1, 2, 3, 4, 5, 6, UInt8(data.count)] + data + [UInt8(bitPattern: rssi)]
        return [0x3E, UInt8(parameters.count)] + parameters
    }

    @Test func exitsFireOnTheRealClockWithNoAdvertisementToWakeTheLoop() throws {
        let ini = """
            LocationBaseBeacon.101 = E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,1,1
            Monitor.mode = foreground
            Monitor.exitTimeout = 10
            """
        let configuration = try Configuration.load(Array(ini.utf8), path: "/tmp/hsyco.ini").get()
        let start = Timestamp(secondsSinceEpoch: 1_700_000_000)!
        let radio = ScriptedRadio(
            start: start,
            script: [
                (0.25, Self.report(minor: 1, rssi: -59)), (0.5, [0x0E, 0x04, 0x01, 0x0C, 0x20, 0x00]),
                (1.25, Self.report(minor: 1, rssi: -59)), (2.125, Self.report(minor: 9, rssi: -40)),
            ]
        )
        var lines: [String] = []
        var flushed: [Int] = []
        try LiveRun(configuration: configuration, now: { radio.now }, elapsed: { radio.elapsed }).run(
            source: radio,
            store: StateStore(),
            output: { output in
                let seconds = String(format: "%.6f", output.time.secondsSinceEpoch - start.secondsSinceEpoch)
                switch output {
                case .transition(_, let transition) where transition.region.kind == .beacon:
                    lines.append("\(seconds) \(transition.direction.rawValue)")
                case .location(_, let event): lines.append("\(seconds) \(event.distance.rawValue)")
                case .monitoring: lines.append("\(seconds) monitoring")
                default: break
                }
            },
            shouldStop: { radio.now.secondsSinceEpoch - start.secondsSinceEpoch >= 30 },
            beforeWaiting: { flushed.append(lines.count) }
        )
        // Whatever a step wrote is flushed before the loop waits: the exit's lines before the
        // long wait that follows it.
        #expect(flushed.last == lines.count)
        #expect(
            lines == [
                "0.000000 monitoring", "0.250000 enter", "0.250000 near", "11.250000 exit", "11.250000 off",
            ])
        // Each wait ends on the next timer (the exit above is on the microsecond), and the loop does
        // not poll: a handful of waits cover the 30 s.
        #expect(radio.waits.count <= 8, "\(radio.waits)")
    }

    /// A radio whose wall clock is stepped at scripted moments while time itself (``elapsed``)
    /// goes on evenly: an administrator's `date -s`, a first NTP sync.
    final class SteppingRadio: HCIEventSource {
        let start: Timestamp
        var elapsed = Duration.zero
        var offset: Int64 = 0
        var events: [(Duration, [UInt8])]
        var steps: [(Duration, Int64)]
        /// Whether a step comes with the advertisement read after it in one wait (the reader's
        /// stamp is then the first reading of the new clock) rather than waking the wait alone.
        var stepsWithEvents = false

        var now: Timestamp {
            Timestamp(microseconds: start.microseconds + Self.microseconds(elapsed) + offset)
        }

        init(start: Timestamp, events: [(Double, [UInt8])], steps: [(Double, Double)]) {
            self.start = start
            self.events = events.map { (.microseconds(Int64($0.0 * 1_000_000)), $0.1) }
            self.steps = steps.map { (.microseconds(Int64($0.0 * 1_000_000)), Int64($0.1 * 1_000_000)) }
        }

        static func microseconds(_ duration: Duration) -> Int64 {
            duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000
        }

        func nextEvent(timeout: Duration) throws -> [UInt8]? {
            let limit = elapsed + timeout
            let event = events.first.map { $0.0 } ?? limit
            if let (at, delta) = steps.first, at <= min(event, limit) {
                // The step wakes the wait with nothing, as a signal would (or, asked, the
                // advertisement due next comes in the same wait).
                steps.removeFirst()
                elapsed = max(elapsed, at)
                offset += delta
                if !stepsWithEvents { return nil }
            }
            if let (at, bytes) = events.first, at <= limit {
                events.removeFirst()
                elapsed = max(elapsed, at)
                return bytes
            }
            elapsed = limit
            return nil
        }
    }

    /// A beacon advertising every second for 20 s (at 0.25 s past each second) under a 10 s exit,
    /// the wall clock stepped at `steps` (elapsed seconds, seconds of step); its transitions as
    /// "seconds-after-start direction dwell", and what the loop warned.
    static func steppedWalk(
        steps: [(Double, Double)], stepsWithEvents: Bool = false
    ) throws -> (lines: [String], warnings: [String]) {
        let ini = """
            LocationBaseBeacon.101 = E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,1,1
            Monitor.mode = foreground
            Monitor.exitTimeout = 10
            Monitor.timezone = UTC
            """
        let configuration = try Configuration.load(Array(ini.utf8), path: "/tmp/hsyco.ini").get()
        let start = Timestamp(secondsSinceEpoch: 1_700_000_000)!
        let radio = SteppingRadio(
            start: start, events: (0...20).map { (Double($0) + 0.25, Self.report(minor: 1, rssi: -59)) }, steps: steps)
        radio.stepsWithEvents = stepsWithEvents
        var lines: [String] = []
        let warnings = LogCapture()
        try LiveRun(configuration: configuration, now: { radio.now }, elapsed: { radio.elapsed }).run(
            source: radio,
            store: StateStore(),
            output: { output in
                let seconds = String(format: "%.2f", output.time.secondsSinceEpoch - start.secondsSinceEpoch)
                if case .transition(_, let transition) = output, transition.region.kind == .beacon {
                    lines.append(
                        "\(seconds) \(transition.direction.rawValue) \(transition.dwell.map { "\($0)" } ?? "")")
                }
            },
            shouldStop: { radio.elapsed > .seconds(40) },
            logger: warnings.logger
        )
        return (lines, warnings.messages)
    }

    /// The wall clock stepped back an hour and then on a day while a beacon is in sight: no exit
    /// storm, no exit held back, one visit of its true length, outputs on the new clock.
    @Test func aSteppedWallClockMovesNoVisitAndFiresNoExit() throws {
        let (lines, warnings) = try Self.steppedWalk(steps: [(10.5, -3600), (15.5, 86400)])
        // Entered at 0.25 s; last seen at 20.25 s of elapsed time, which the two steps put at
        // 20.25 - 3600 + 86400 s on the wall; out 10 s later: a 30 s visit.
        #expect(lines == ["0.25 enter ", "82830.25 exit 30.0"], "\(lines)")
        #expect(
            warnings == [
                "the wall clock stepped by -3600.0 s; visits, silences and timers keep their lengths",
                "the wall clock stepped by +86400.0 s; visits, silences and timers keep their lengths",
            ])
    }

    /// A step back noticed when an advertisement is stamped (the loop's first reading of the new
    /// clock): the advertisement is on the new clock, not at the instant the loop last stood at,
    /// so no output is held at the old time and the exit comes its timeout after the last sighting.
    @Test func aStepNoticedByAnAdvertisementPutsItOnTheNewClock() throws {
        let (lines, _) = try Self.steppedWalk(steps: [(10.25, -3600)], stepsWithEvents: true)
        // Last seen at 20.25 s of elapsed time, 20.25 - 3600 s on the wall; out 10 s later.
        #expect(lines == ["0.25 enter ", "-3569.75 exit 30.0"], "\(lines)")
    }

    /// The live loop does not wait for a rule's server: the call runs on its own thread, the
    /// engine goes on (here the zone is left meanwhile), and the answer comes back as an order.
    @Test func aSlowServerDoesNotHoldTheLiveLoop() throws {
        let folder = try scratchFolder("live-hook")
        let server = try HTTPServer { _ in .hang }
        defer { server.stop() }
        try #"""
        {"u_beacons": [{"id": "1", "proximity_uid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "major": 1,
          "rules_actions": [{"id": "11", "rule": {"trigger": "on_entry"},
          "action": {"notify_user": "hi", "notify_server": "\#(server.url("/slow"))"}}]}]}
        """#.write(to: folder.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
        let ini = """
            LocationBaseBeacon.101 = E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,1,1
            Monitor.exitTimeout = 2
            Rules.source = rules.json
            Rules.serverTimeout = 1
            """
        let configuration = try Configuration.load(
            Array(ini.utf8), path: folder.appendingPathComponent("hsyco.ini").path
        ).get()
        let store = try StateStore()
        var live = LiveRun(configuration: configuration, now: { Timestamp(secondsSinceEpoch: 0)! })
        let radio = ScriptedRadio(
            start: Timestamp(secondsSinceEpoch: 1_700_000_000)!, script: [(0.25, Self.report(minor: 1, rssi: -59))])
        live.now = { radio.now }
        live.elapsed = { radio.elapsed }
        live.rules = try RulesSource(configuration: configuration)
            .load(store: store, now: radio.now, logger: .issues)?.regions
        var types: [String] = []
        let deadline = ContinuousClock.now + .seconds(10)
        try live.run(
            source: radio, store: store,
            output: { output in
                if case .transition(_, let transition) = output, transition.region.kind != .zone { return }
                if case .rule(_, let evaluation) = output {
                    types.append("rule \(evaluation.reason?.rawValue ?? "fired")")
                } else {
                    types.append(output.type)
                }
            },
            control: EngineControl(),
            shouldStop: { types.contains { $0.hasPrefix("rule") } || ContinuousClock.now > deadline }
        )
        #expect(
            types == ["monitoring", "enter", "location", "nearest", "exit", "location", "nearest", "rule server_error"])
    }
    /// A start goes on with the scanners' calibration the store kept (a restart, or a cluster's
    /// new active, whose store was shipped it: docs/behaviour.md §21): the receivers are corrected before any
    /// scanner is heard again.
    @Test func aStartCorrectsTheScannersAsTheKeptCalibrationSays() throws {
        let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
        let ini = """
            LocationBaseBeacon.101 = \(uuid),1,1
            LocationBaseBeacon.102 = \(uuid),2,1
            LocationScanner.101 = kitchen
            LocationScanner.102 = hall
            Scanners.espresense = espresense/devices/+/+
            """
        let configuration = try Configuration.load(Array(ini.utf8), path: "hsyco.ini").get()
        let store = try StateStore()
        // The kitchen reads the hall 6 dB higher than the hall reads the kitchen.
        try store.record(
            devices: [],
            calibration: [
                ScannerLevel(receiver: "kitchen", transmitter: "hall", level: -10),
                ScannerLevel(receiver: "hall", transmitter: "kitchen", level: -16),
            ])
        let control = EngineControl()
        let corrections = Mutex<[Double]?>(nil)
        control.query { driver in
            corrections.withLock { $0 = ["kitchen", "hall"].map { driver?.devices.calibration?.correction($0) ?? 0 } }
        }
        let radio = ScriptedRadio(
            start: Timestamp(secondsSinceEpoch: 1_700_000_000)!, script: [(0.25, Self.report(minor: 1, rssi: -59))])
        try LiveRun(configuration: configuration, now: { radio.now }, elapsed: { radio.elapsed }).run(
            source: radio, store: store, output: { _ in }, control: control,
            shouldStop: { corrections.withLock { $0 != nil } })
        #expect(corrections.withLock { $0 } == [-3, 3])
    }

    /// Records the steps a sink is handed: output types and the `B/dwell` values beyond exits'.
    final class DwellRecorder: OutputSink {
        let steps = Mutex<[(types: [String], dwell: [String: Double])]>([])

        func deliver(_ outputs: ArraySlice<MonitorOutput>, entries: ArraySlice<OutboxEntry>, context: StepContext)
            throws
        {
            let types = outputs.map { output in
                if case .transition(_, let transition) = output, let today = transition.dwellToday {
                    return "exit \(transition.region.kind) today \(today)"
                }
                return output.type
            }
            steps.withLock { $0.append((types, context.whereabouts.dwell)) }
        }
    }

    /// docs/behaviour.md §10.1: `B/dwell/<region>` is the seconds inside *today*, so an idle daemon zeroes it at
    /// local midnight; a restart shows the kept day's totals again.
    @Test func anIdleLiveRunZeroesTheDaysDwellAtLocalMidnightAndARestartShowsItAgain() throws {
        let ini = """
            LocationBaseBeacon.101 = E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,1,1
            Monitor.exitTimeout = 10
            Monitor.timezone = Europe/Paris
            """
        let configuration = try Configuration.load(Array(ini.utf8), path: "/tmp/hsyco.ini").get()
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("beaconwatch-dwell-\(UUID().uuidString).sqlite").path
        let zone = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1"
        let area = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
        // 23:59:00 in Paris; heard at 23:59:01 and 23:59:06: the visit ends at 23:59:16 after 15 s.
        let start = Timestamp(iso8601: "2013-11-05T22:59:00Z")!
        let radio = ScriptedRadio(
            start: start, script: [(1, Self.report(minor: 1, rssi: -59)), (6, Self.report(minor: 1, rssi: -59))])
        let recorder = DwellRecorder()
        try LiveRun(configuration: configuration, now: { radio.now }, elapsed: { radio.elapsed }).run(
            source: radio, store: StateStore(path: path), output: { _ in }, sinks: [recorder],
            shouldStop: { radio.now.secondsSinceEpoch - start.secondsSinceEpoch >= 90 })
        let steps = recorder.steps.withLock { $0 }
        #expect(steps.first?.dwell == [:])
        #expect(
            steps.contains { $0.types.contains("exit zone today 15.0") && $0.types.contains("exit area today 15.0") })
        // At 00:00 a step with no outputs carries the new day's zeros.
        let midnight = steps.filter { $0.types.isEmpty }
        #expect(midnight.map(\.dwell) == [[zone: 0, area: 0]])

        // A restart the next morning shows what was kept: the 5th's regions, at 0 on the 6th.
        let morning = Timestamp(iso8601: "2013-11-06T08:00:00Z")!
        let again = ScriptedRadio(start: morning, script: [])
        let second = DwellRecorder()
        try LiveRun(configuration: configuration, now: { again.now }, elapsed: { again.elapsed }).run(
            source: again, store: StateStore(path: path), output: { _ in }, sinks: [second],
            shouldStop: { again.now.secondsSinceEpoch - morning.secondsSinceEpoch >= 2 })
        #expect(second.steps.withLock { $0.first?.dwell } == [zone: 0, area: 0])
    }

    /// Reads the store's kept presence as each step is delivered (after its commit).
    final class PresenceWatcher: OutputSink {
        let store: StateStore
        let seen = Mutex<[(types: [String], inside: Set<String>)]>([])
        init(_ store: StateStore) { self.store = store }

        func deliver(_ outputs: ArraySlice<MonitorOutput>, entries: ArraySlice<OutboxEntry>, context: StepContext)
            throws
        {
            let inside = Set((try store.kept().presence?.inside.keys).map { $0.map(\.description) } ?? [])
            seen.withLock { $0.append((outputs.map(\.type), inside)) }
        }
    }

    /// A live run of one beacon under a 10 s exit, heard once 1 s after 2013-11-05T10:00:00Z and
    /// stopped at 3 s, on a new database named after `name` (with the sinks `sinks` gives for its
    /// store); the configuration and the database's path, for a restart.
    static func heardOnceThenStopped(
        _ name: String, sinks: (StateStore) -> [any OutputSink] = { _ in [] }
    ) throws -> (Configuration, String) {
        let ini = """
            LocationBaseBeacon.101 = E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,1,1
            Monitor.exitTimeout = 10
            """
        let configuration = try Configuration.load(Array(ini.utf8), path: "/tmp/hsyco.ini").get()
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("beaconwatch-\(name)-\(UUID().uuidString).sqlite").path
        let start = Timestamp(iso8601: "2013-11-05T10:00:00Z")!
        let radio = ScriptedRadio(start: start, script: [(1, Self.report(minor: 1, rssi: -59))])
        let store = try StateStore(path: path)
        try LiveRun(configuration: configuration, now: { radio.now }, elapsed: { radio.elapsed }).run(
            source: radio, store: store, output: { _ in }, sinks: sinks(store),
            shouldStop: { radio.now.secondsSinceEpoch - start.secondsSinceEpoch >= 3 })
        return (configuration, path)
    }

    /// docs/running.md, "Restarts": where the own radio's wearer is is kept with the step that
    /// moved them, so a daemon killed at any instant after it (SIGKILL: no clean stop) starts again
    /// inside and enters nothing twice (found by scripts/chaos).
    @Test func theOwnRadiosRegionsAreKeptWithTheirStepSoARestartEntersNothingAgain() throws {
        var made: PresenceWatcher?
        let (configuration, path) = try Self.heardOnceThenStopped("presence") { store in
            let watcher = PresenceWatcher(store)
            made = watcher
            return [watcher]
        }
        let watcher = try #require(made)
        // The step with the enters was committed with the regions inside: a kill right after it keeps them.
        let entered = try #require(watcher.seen.withLock { $0.first { $0.types.contains("enter") } })
        #expect(
            entered.inside
                == [
                    "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1",
                    "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:1",
                ])

        // A start 4 s later hears the beacon again: no enter, and it exits 10 s after its last sighting.
        let later = Timestamp(iso8601: "2013-11-05T10:00:07Z")!
        let again = ScriptedRadio(start: later, script: [(1, Self.report(minor: 1, rssi: -59))])
        var outputs: [String] = []
        try LiveRun(configuration: configuration, now: { again.now }, elapsed: { again.elapsed }).run(
            source: again, store: StateStore(path: path), output: { outputs.append($0.type) }, sinks: [],
            shouldStop: { again.now.secondsSinceEpoch - later.secondsSinceEpoch >= 30 })
        #expect(!outputs.contains("enter"), "\(outputs)")
        #expect(outputs.filter { $0 == "exit" }.count == 3, "\(outputs)")
    }

    /// docs/running.md, "Restarts": a daemon started on state kept later than its clock (the clock
    /// was set back two days while it was stopped) moves the kept instants back with the clock: the
    /// beacon last heard just before the stop exits its timeout after the start, not two days on.
    @Test func stateKeptAheadOfTheClockMovesBackWithIt() throws {
        let (configuration, path) = try Self.heardOnceThenStopped("behind")

        let behind = Timestamp(iso8601: "2013-11-03T10:00:00Z")!
        let again = ScriptedRadio(start: behind, script: [])
        var exits: [Double] = []
        let warnings = LogCapture()
        try LiveRun(configuration: configuration, now: { again.now }, elapsed: { again.elapsed }).run(
            source: again, store: StateStore(path: path),
            output: { output in
                if output.type == "exit" { exits.append(output.time.secondsSinceEpoch - behind.secondsSinceEpoch) }
            },
            shouldStop: { again.now.secondsSinceEpoch - behind.secondsSinceEpoch >= 30 },
            logger: warnings.logger)
        // The last sighting (1 s after the first start) is put at the second start: out 10 s on.
        #expect(exits == [10, 10, 10], "\(exits)")
        #expect(
            warnings.messages == [
                "the state kept at the last stop is 172801.0 s ahead of the wall clock (it was set back while the "
                    + "daemon was stopped); the kept visits, silences and timers are moved back with it"
            ])
    }
}
