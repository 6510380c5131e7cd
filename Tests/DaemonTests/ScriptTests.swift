import BeaconCore
import BeaconConfiguration
import Daemon
import Engine
import Foundation
import Logging
import Persistence
import RegionMonitor
import Synchronization
import Syscalls
import TestSupport
import Testing

/// `Script.<type>` (docs/behaviour.md §10.2): real programs, started without a shell.
@Suite(.serialized) struct ScriptTests {
    static let uuid = "112EBB9D-B8C9-4ABD-9EB3-43578BF86A41"

    /// What the sink logged.
    typealias Log = LogCapture

    /// A `#!/bin/sh` program in `folder`.
    static func script(_ name: String, in folder: URL, _ body: String) throws -> String {
        let url = folder.appendingPathComponent(name)
        try ("#!/bin/sh\n" + body + "\n").write(to: url, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: url.path)
        return url.path
    }

    /// An office of one Area with named Zones 1 and 2 (one beacon each), as an ini file.
    static func ini(zoneName: String = "Kitchen", extra: String = "") -> String {
        """
        LocationBaseBeacon.101 = \(uuid),1,1
        LocationBaseBeacon.201 = \(uuid),2,1
        LocationAreaName.\(uuid) = Office
        LocationZoneName.\(uuid):1 = \(zoneName)
        LocationZoneName.\(uuid):2 = Hall
        Monitor.userid = dave
        Monitor.session = s-1
        Monitor.address = 192.0.2.7
        Monitor.exitTimeout = 10
        \(extra)
        """
    }

    static func configuration(zoneName: String = "Kitchen", extra: String = "", in folder: URL) throws -> Configuration
    {
        let text = ini(zoneName: zoneName, extra: extra)
        return try Configuration.load(Array(text.utf8), path: folder.appendingPathComponent("hsyco.ini").path).get()
    }

    /// Sightings alternating between zones 1 and 2 every `hop` seconds.
    static func walk(hops: Int, hop: Double = 30) -> String {
        (0..<hops).map { n in
            let time = 1_700_000_000 + Double(n) * hop
            return #"{"t": \#(time), "uuid": "\#(uuid)", "major": \#(n % 2 + 1), "minor": 1, "rssi": -59}"#
        }.joined(separator: "\n") + "\n"
    }

    /// Runs `trace` through the engine with `sink`; returns the outputs.
    static func run(_ trace: String, configuration: Configuration, sink: ScriptSink, in folder: URL) throws
        -> [MonitorOutput]
    {
        let path = folder.appendingPathComponent("trace-\(UUID().uuidString).jsonl")
        try trace.write(to: path, atomically: true, encoding: .utf8)
        let store = try StateStore(path: folder.appendingPathComponent("state-\(UUID().uuidString).sqlite").path)
        let outputs = Mutex<[MonitorOutput]>([])
        try FileRun(configuration: configuration, source: .trace(path: path.path)).run(
            store: store, output: { output in outputs.withLock { $0.append(output) } }, sinks: [sink], logger: .silent)
        return outputs.withLock { $0 }
    }

    /// Waits until `sink` has no run going or waiting (woken by its runners), then checks
    /// `condition` (what the runs wrote).
    static func idle(_ sink: ScriptSink, _ what: String, within seconds: Double = Eventually.patience) async throws {
        guard await sink.waitUntilIdle(within: .milliseconds(Int64(seconds * 1000))) else {
            throw Eventually.TimedOut(what: what, seconds: seconds)
        }
    }

    static func lines(_ url: URL) -> [String] {
        ((try? String(contentsOf: url, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    @Test func invocationsCarryTheEnvironmentOfSPEC10_2() throws {
        let folder = try scratchFolder("scripts")
        let outputs = try Self.run(
            Self.walk(hops: 1), configuration: try Self.configuration(in: folder),
            sink: ScriptSink(scripts: [:], timeout: 10, logger: .silent), in: folder)
        // One sighting: enter Area, Zone, Beacon, then a location and the nearest; at the end, the
        // exits, the location off and no nearest.
        let invocations = outputs.compactMap { ScriptInvocation(for: $0) }
        #expect(
            invocations.map(\.event) == [
                .enter, .enter, .enter, .location, .nearest, .exit, .exit, .exit, .location, .nearest,
            ])
        #expect(invocations[4].environment == ["BW_TYPE": "nearest", "BW_ZONE": "101"])
        #expect(invocations[9].environment == ["BW_TYPE": "nearest", "BW_ZONE": ""])
        #expect(
            invocations[1].environment == [
                "BW_TYPE": "enter", "BW_REGION": "\(Self.uuid):1", "BW_KIND": "zone", "BW_NAME": "Kitchen",
            ])
        #expect(invocations[2].environment["BW_KIND"] == "beacon")
        #expect(
            invocations[3].environment == [
                "BW_TYPE": "location", "BW_SESSION": "s-1", "BW_ADDRESS": "192.0.2.7", "BW_USERID": "dave",
                "BW_ZONE": "101", "BW_DISTANCE": "near", "BW_BACKGROUND": "true",
            ])
        #expect(invocations[3].input == outputs.first { $0.type == "location" }?.json)
        #expect(invocations[8].environment["BW_DISTANCE"] == "off")
        // `monitoring` has no script.
        #expect(outputs.contains { $0.type == "monitoring" })
        #expect(outputs.filter { $0.type == "monitoring" }.allSatisfy { ScriptInvocation(for: $0) == nil })
        // A fleet device's run names it (docs/behaviour.md §15).
        let device = ScriptInvocation(for: outputs[1], device: "cart-7")
        #expect(device?.environment["BW_DEVICE"] == "cart-7" && device?.input == outputs[1].json(device: "cart-7"))
        #expect(invocations.allSatisfy { $0.environment["BW_DEVICE"] == nil })
    }

    /// docs/behaviour.md §17: `Script.enter`/`Script.exit` run on geofence transitions, `BW_KIND=geofence`.
    @Test func geofenceTransitionsRunTheEnterAndExitScripts() throws {
        let output = MonitorOutput.geofence(
            Timestamp(secondsSinceEpoch: 1_700_000_000)!,
            GeofenceTransition(direction: .enter, id: "52", name: "Shop", distance: 3))
        let invocation = try #require(ScriptInvocation(for: output))
        #expect(invocation.event == .enter)
        #expect(invocation.environment["BW_KIND"] == "geofence")
        #expect(invocation.environment["BW_REGION"] == "52")
        #expect(invocation.environment["BW_NAME"] == "Shop")
    }
    @Test func aScriptGetsItsEnvironmentAndTheOutputOnStandardInputInOutputOrder() async throws {
        let folder = try scratchFolder("scripts")
        let seen = folder.appendingPathComponent("seen")
        let record = try Self.script(
            "record", in: folder,
            #"read -r json; printf '%s|%s|%s|%s\n' "$BW_TYPE" "$BW_ZONE$BW_REGION" "$BW_DISTANCE" "$json" >> "$1seen""#
                .replacingOccurrences(of: "$1seen", with: seen.path))
        let log = Log()
        let sink = ScriptSink(
            scripts: [.enter: record, .exit: record, .location: record], timeout: 10, logger: log.logger)
        let outputs = try Self.run(
            Self.walk(hops: 20), configuration: try Self.configuration(in: folder), sink: sink, in: folder)
        let expected = outputs.filter { ["enter", "exit", "location"].contains($0.type) }
        #expect(expected.count > 40)
        try await Self.idle(sink, "every run")
        #expect(Self.lines(seen).count == expected.count)
        let got = Self.lines(seen)
        // Each line: the type, the zone or region, the distance, and the JSON read from stdin.
        #expect(got.map { $0.split(separator: "|", maxSplits: 3).last.map(String.init) } == expected.map(\.json))
        #expect(got.map { String($0.prefix { $0 != "|" }) } == expected.map(\.type))
        #expect(got.contains("location|101|near|\(expected.first { $0.type == "location" }!.json)"))
        #expect(got.contains { $0.hasPrefix("exit|\(Self.uuid):1||") })
        #expect(log.text.isEmpty, "\(log.text)")
    }

    /// `Script.server` is the rule's to run (its exit status decides, ``RuleRunTests``), and a
    /// notification the application delivers itself runs no `Script.notification`.
    @Test func ruleOutputsRunTheirScriptsButServerAndApplicationNotificationsDoNot() async throws {
        let folder = try scratchFolder("rule-scripts")
        let seen = folder.appendingPathComponent("seen")
        let record = try Self.script("record", in: folder, #"echo "$BW_TYPE $BW_REGION $BW_RULE" >> '\#(seen.path)'"#)
        let sink = ScriptSink(
            scripts: [.rule: record, .server: record, .notification: record], timeout: 10, logger: Log().logger)
        let time = Timestamp(secondsSinceEpoch: 1_700_000_000)!
        func notification(_ rule: String, _ delivery: UserNotification.Delivery) -> MonitorOutput {
            .notification(
                time,
                UserNotification(
                    region: "1", rule: rule, title: nil, body: "b", payload: nil, url: nil, pbk: nil, delivery: delivery
                ))
        }
        let outputs: [MonitorOutput] = [
            .server(time, ServerNotice(region: "1", rule: "11", url: "http://s.test")),
            .rule(time, RuleEvaluation(region: "1", rule: "11", trigger: "on_entry", fired: true, count: 1)),
            notification("11", .automatic),
            notification("12", .application),
        ]
        try sink.deliver(
            outputs[...], entries: [], context: StepContext(whereabouts: Whereabouts(area: nil, zone: nil)))
        await sink.finish(within: .seconds(10))
        #expect(Self.lines(seen) == ["rule 1 11", "notification 1 11"])
    }

    @Test func aNameThatLooksLikeShellIsPassedAsDataAndRunsNothing() async throws {
        let folder = try scratchFolder("scripts")
        let pwned = folder.appendingPathComponent("pwned")
        let name = "$(touch \(pwned.path)); x `touch \(pwned.path)` | touch \(pwned.path)"
        let seen = folder.appendingPathComponent("names.txt")
        let record = try Self.script("names", in: folder, #"printf '%s\n' "$BW_NAME" >> "\#(seen.path)""#)
        let sink = ScriptSink(scripts: [.enter: record], timeout: 10, logger: .silent)
        _ = try Self.run(
            Self.walk(hops: 1), configuration: try Self.configuration(zoneName: name, in: folder), sink: sink,
            in: folder)
        // Area, Zone, then the Beacon, which has no name.
        let all = { (try? String(contentsOf: seen, encoding: .utf8)) ?? "" }
        try await Self.idle(sink, "the three enters")
        #expect(all() == "Office\n\(name)\n\n")
        #expect(!FileManager.default.fileExists(atPath: pwned.path))
    }

    @Test func theDaemonRunsTheConfiguredScriptAndWaitsForItsRunsAtTheEnd() async throws {
        let folder = try scratchFolder("scripts")
        let pwned = folder.appendingPathComponent("pwned")
        let name = "$(touch \(pwned.path)); x"
        let seen = folder.appendingPathComponent("enters.txt")
        // A relative Script.enter is found next to the ini file.
        _ = try Self.script(
            "on-enter", in: folder, #"printf '%s %s\n' "$BW_KIND" "$BW_NAME" >> "\#(seen.path)"; sleep 0.2"#)
        let text = Self.ini(zoneName: name, extra: "Script.enter = on-enter\nState.database = state.sqlite\n")
        try text.write(to: folder.appendingPathComponent("hsyco.ini"), atomically: true, encoding: .utf8)
        let run = try await DecodeCommandTests.beaconwatch(
            ["run", "--web-listen", "", "--config", "hsyco.ini", "--source", "trace:-", "--log-level", "warning"],
            stdin: Self.walk(hops: 1),
            in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        // The three runs took 0.6 s; the daemon waited for them before exiting.
        #expect((try? String(contentsOf: seen, encoding: .utf8)) == "area Office\nzone \(name)\nbeacon \n")
        #expect(!FileManager.default.fileExists(atPath: pwned.path))
    }

    @Test func aScriptPastItsTimeoutIsStoppedWithSIGTERMThenSIGKILLAndTheNextRunGoesOn() async throws {
        let folder = try scratchFolder("scripts")
        let done = folder.appendingPathComponent("done")
        // The first run hangs (ignoring SIGTERM when asked to); the others finish at once.
        let stubborn = try Self.script(
            "stubborn", in: folder,
            """
            if [ ! -e "\(done.path).first" ]; then
              : > "\(done.path).first"
              trap '' TERM
              echo "hanging" >&2
              while :; do sleep 0.05; done
            fi
            echo "$BW_TYPE" >> "\(done.path)"
            """)
        let polite = try Self.script(
            "polite", in: folder,
            """
            if [ ! -e "\(done.path).polite" ]; then : > "\(done.path).polite"; exec sleep 30; fi
            exit 3
            """)
        let log = Log()
        let sink = ScriptSink(scripts: [.location: stubborn, .enter: polite], timeout: 0.3, logger: log.logger)
        let clock = ContinuousClock.now
        let outputs = try Self.run(
            Self.walk(hops: 3), configuration: try Self.configuration(in: folder), sink: sink, in: folder)
        let locations = outputs.filter { $0.type == "location" }.count
        try await Self.idle(sink, "every run")
        let elapsed = ContinuousClock.now - clock
        // Every location but the first (which hung) ran to its end.
        #expect(Self.lines(done) == Array(repeating: "location", count: locations - 1))
        #expect(
            log.contains(
                "stubborn (location) ran past Script.timeout (0.3 seconds) and was stopped with SIGKILL after SIGTERM: hanging"
            ), "\(log.text)")
        #expect(log.contains("polite (enter) ran past Script.timeout (0.3 seconds) and was stopped"), "\(log.text)")
        #expect(log.contains("polite (enter) exited with status 3"), "\(log.text)")
        // The hung run cost its timeout and the grace, not 30 s.
        #expect(elapsed < .seconds(15))
    }

    /// Whether process `pid` is alive: not gone and not a zombie waiting for its parent.
    static func isAlive(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        return !stat[close...].hasPrefix(") Z")
    }

    /// A script still running when the daemon stops is stopped with it, and so is what it
    /// started: SIGTERM to its process group (SIGKILL 2 s later if needed). None outlives the daemon.
    @Test func aScriptStillRunningAtStopIsStoppedWithEverythingItStarted() async throws {
        let folder = try scratchFolder("scripts")
        let ready = folder.appendingPathComponent("ready")
        #expect(mkfifo(ready.path, 0o600) == 0)
        // Says its own pid and its child's through the FIFO, then waits for the child.
        _ = try Self.script("lingering", in: folder, #"sleep 100 & echo "$$ $!" > "\#(ready.path)"; wait"#)
        let text = Self.ini(extra: "Script.location = lingering\nState.database = state.sqlite\n")
        try text.write(to: folder.appendingPathComponent("hsyco.ini"), atomically: true, encoding: .utf8)
        let reader = open(ready.path, O_RDONLY | O_NONBLOCK)
        #expect(reader >= 0)
        defer { close(reader) }
        let (daemon, input) = try MQTTRunTests.daemon(
            ["run", "--web-listen", "", "--config", "hsyco.ini", "--source", "trace:-"], in: folder)
        input.fileHandleForWriting.write(Data(Self.walk(hops: 1).utf8))
        // Woken by the script's write, not by polling.
        let revents = try Syscall.waitReadable([reader], timeout: .seconds(Eventually.patience))
        #expect(revents[0] != 0, "the script never said it was running")
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = read(reader, &buffer, buffer.count)
        let pids = String(decoding: buffer.prefix(max(count, 0)), as: UTF8.self).split(separator: " ")
            .compactMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        try #require(pids.count == 2)
        #expect(pids.allSatisfy(Self.isAlive))

        kill(daemon.processIdentifier, SIGTERM)
        try await Eventually.until("the daemon to exit") { !daemon.isRunning }
        #expect(daemon.terminationStatus == 0)
        #expect(!pids.contains(where: Self.isAlive), "\(pids) outlived the daemon")
    }

    @Test func aProgramThatCannotStartIsLoggedAndTheRestGoOn() async throws {
        let folder = try scratchFolder("scripts")
        let notExecutable = folder.appendingPathComponent("plain")
        try "#!/bin/sh\nexit 0\n".write(to: notExecutable, atomically: true, encoding: .utf8)
        let log = Log()
        let sink = ScriptSink(
            scripts: [.enter: notExecutable.path, .location: folder.appendingPathComponent("missing").path],
            timeout: 1, logger: log.logger)
        let outputs = try Self.run(
            Self.walk(hops: 2), configuration: try Self.configuration(in: folder), sink: sink, in: folder)
        #expect(outputs.count > 4)
        try await Self.idle(sink, "every run")
        try await Eventually.until("every outcome logged") { log.lines.withLock { $0.count } >= 4 }
        #expect(log.contains("plain (enter) could not start"), "\(log.text)")
        #expect(log.contains("missing (location) could not start"), "\(log.text)")
        #expect(log.contains("check the path and that it is executable"))
    }

    @Test func moreThanAThousandWaitingRunsDropTheOldestAndSaySo() async throws {
        let folder = try scratchFolder("scripts")
        let gate = folder.appendingPathComponent("gate")
        let seen = folder.appendingPathComponent("seen")
        // Every run waits for the gate, so runs pile up behind the first.
        let slow = try Self.script(
            "slow", in: folder,
            """
            read -r json
            while [ ! -e "\(gate.path)" ]; do sleep 0.01; done
            echo "$json" >> "\(seen.path)"
            """)
        let log = Log()
        let sink = ScriptSink(scripts: [.location: slow], timeout: 30, logger: log.logger)
        // Each hop makes two locations (the beacon left goes off, the new one is near).
        let outputs = try Self.run(
            Self.walk(hops: 510), configuration: try Self.configuration(in: folder), sink: sink, in: folder)
        let locations = outputs.filter { $0.type == "location" }.map(\.json)
        #expect(locations.count == 1020)
        try await Eventually.until("the drop to be said") { log.contains("dropped the oldest") }
        #expect(sink.pending == ScriptSink.queueLimit + 1)
        try Data().write(to: gate)
        try await Self.idle(sink, "the queue to drain", within: 120)
        let got = Self.lines(seen)
        // The first run was already going; then the newest thousand, in order.
        #expect(got.count == ScriptSink.queueLimit + 1)
        #expect(got.first == locations.first)
        #expect(Array(got.dropFirst()) == Array(locations.suffix(ScriptSink.queueLimit)))
        #expect(log.contains("more than 1000 runs waiting; dropped the oldest (1 so far)"), "\(log.text)")
        #expect(!log.contains("(2 so far)"), "once when dropping starts, then every thousandth")
    }

    /// A script that hangs keeps at most about two queues' worth of runs in memory, however many
    /// outputs come (issue 38: every dropped run was kept, about 150 bytes an output).
    @Test func aHungScriptKeepsAFixedNumberOfRunsInMemory() async throws {
        let folder = try scratchFolder("scripts")
        let gate = folder.appendingPathComponent("gate")
        let hung = try Self.script(
            "hung", in: folder, "while [ ! -e \"\(gate.path)\" ]; do sleep 0.01; done")
        let sink = ScriptSink(scripts: [.location: hung], timeout: 300, logger: Log().logger)
        let outputs = try Self.run(
            Self.walk(hops: 5000), configuration: try Self.configuration(in: folder), sink: sink, in: folder)
        #expect(outputs.filter { $0.type == "location" }.count == 10_000)
        #expect(sink.pending == ScriptSink.queueLimit + 1)
        #expect(sink.storedRuns <= 2 * ScriptSink.queueLimit + 30, "\(sink.storedRuns) runs kept")
        try Data().write(to: gate)
        _ = await sink.finish(within: .seconds(1))
    }
}
