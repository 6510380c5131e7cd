import Logging
import ArgumentParser
import BeaconCore
import BeaconConfiguration
import Daemon
import Engine
import Foundation
import Persistence
import RegionMonitor
import Synchronization
import TestSupport

/// The live loop of `run` fed a recorded hour of broker messages on a virtual clock, printing
/// every output with its device, every outbox message and every warning: the fleet's part of
/// `scripts/same-output` (issue 34: outputs byte-identical before and after a refactor).
///
/// Messages are routed as the daemon's MQTT input routes them, and handed to `LiveRun` through
/// its control when the virtual clock reaches their arrival; between them the loop waits as it
/// does live, so timers fire at their instants. No broker, no radio.
struct FleetReplay: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet-replay",
        abstract: "The live loop on recorded broker messages, on a virtual clock (scripts/same-output).",
        discussion: """
            Each line of --messages is {"t": arrival seconds, "topic": ..., "payload": text}, in \
            non-decreasing t. Prints one line per output ("out <json>"), outbox message ("mqtt <topic> \
            <payload>") and warning ("warn <line>"), in order. Tests/fleet-run holds a fleet hour.
            """
    )

    @Option(help: "The configuration (Monitor.source = none; Fleet.* set).")
    var config: String

    @Option(help: "The messages, JSON lines.")
    var messages: String

    @Option(help: "Seconds the run goes on after the last message (timers fire).")
    var tail: Double = 120

    struct Line: Decodable {
        var t: Double
        var topic: String
        var payload: String
        var retained: Bool?
    }

    /// Prints each step: its outputs, then the messages the MQTT sink keeps for it.
    struct Printer: OutputSink {
        let mqtt: MQTTSink
        let lines: LineBuffer

        func deliver(_ outputs: ArraySlice<MonitorOutput>, entries: ArraySlice<OutboxEntry>, context: StepContext) {
            for output in outputs { lines.append("out " + output.json(device: context.device?.id)) }
            for message in mqtt.outbox(for: Array(outputs), context: context) {
                lines.append("mqtt \(message.topic) \(message.payload)")
            }
        }
    }

    final class LineBuffer: Sendable {
        private let lines = Mutex<[String]>([])
        func append(_ line: String) { lines.withLock { $0.append(line) } }
        func take() -> [String] {
            lines.withLock { lines in
                defer { lines.removeAll() }; return lines
            }
        }
    }

    /// The broker's deliveries, at their arrival on the virtual clock: the loop's "radio" waits
    /// until the next one (or its timeout), moving the clock there, and posts it to the control.
    final class ScriptedInput: HCIEventSource {
        let lines: [Line]
        var next = 0
        var clock: Int64
        let end: Int64
        let deliver: (Line) -> Void
        let stop: () -> Void

        init(lines: [Line], start: Int64, end: Int64, deliver: @escaping (Line) -> Void, stop: @escaping () -> Void) {
            self.lines = lines
            clock = start
            self.end = end
            self.deliver = deliver
            self.stop = stop
        }

        func nextEvent(timeout: Duration) throws -> [UInt8]? {
            let (seconds, attoseconds) = timeout.components
            let target = clock &+ seconds &* 1_000_000 &+ attoseconds / 1_000_000_000_000
            if next < lines.count {
                let arrival = Int64((lines[next].t * 1_000_000).rounded())
                guard arrival <= target else {
                    clock = target
                    return nil
                }
                clock = max(clock, arrival)
                while next < lines.count, Int64((lines[next].t * 1_000_000).rounded()) == arrival {
                    deliver(lines[next])
                    next += 1
                }
            } else if clock >= end {
                stop()
            } else {
                clock = min(target, end)
            }
            return nil
        }
    }

    func run() throws {
        let configuration = try Configuration.load(contentsOf: config).get()
        let decoder = JSONDecoder()
        let lines = try String(contentsOfFile: messages, encoding: .utf8).split(separator: "\n").map {
            try decoder.decode(Line.self, from: Data($0.utf8))
        }
        let folder = try scratchFolder("fleet-replay")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try StateStore(path: folder.appendingPathComponent("state.sqlite").path)
        let printed = LineBuffer()
        // Each warning a line `warn <message>` among the printed outputs, in order.
        let logger = Logger(label: "fleet-replay") { _ in LineHandler { printed.append("warn \($0.message)") } }
        let first = Int64(((lines.first?.t ?? 1_700_000_000) * 1_000_000).rounded()) - 1_000_000
        let last = Int64(((lines.last?.t ?? 1_700_000_000) * 1_000_000).rounded())
        let rules = try RulesSource.loadAll(
            configuration: configuration, store: store, now: Timestamp(microseconds: first), logger: logger
        )
        .regions
        guard let settings = configuration.mqtt else { throw ValidationError("the configuration has no MQTT.host") }
        let control = EngineControl()
        let userid = MonitorIdentity.resolve(configuration.monitor).userid
        let routing = MQTTInput(
            settings: settings, userid: userid, fleet: configuration.fleet, scanners: configuration.scanners,
            occupancy: configuration.occupancy, control: control, refusals: Refusals(), logger: .silent)
        let mqtt = try MQTTSink(settings: settings, userid: userid, hierarchy: configuration.hierarchy, store: store)
        let input = ScriptedInput(
            lines: lines, start: first, end: last + Int64(tail * 1_000_000),
            deliver: { line in
                // A sensor's topic is exact and looked at first, as the daemon does (MQTTInput).
                let sensors = routing.sensors(on: line.topic)
                guard sensors.isEmpty else {
                    for sensor in sensors {
                        control.post(
                            EngineInput.sensor(SensorMessage(sensor: sensor, payload: Array(line.payload.utf8))))
                    }
                    return
                }
                let routed = MQTTInput.route(
                    topic: line.topic, payload: Array(line.payload.utf8), retained: line.retained ?? false,
                    tree: routing.tree, fleet: routing.fleetSources, scanners: routing.scannerSources,
                    status: routing.scannerStatus)
                switch routed {
                case .command(let command): control.post(command)
                case .fleet(let message): control.post(message)
                case .reports(let reports): for report in reports { control.post(report) }
                case .scannerStatus(let scanner, let online): control.post(.scannerStatus(scanner, online: online))
                case .garbage(let why): printed.append("garbage \(why)")
                case .refusedCommand(let line): printed.append("warn \(line)")
                case .ignored: break
                }
            }, stop: { control.stop() })
        var live = LiveRun(
            configuration: configuration, now: { Timestamp(microseconds: input.clock) },
            elapsed: { .microseconds(input.clock - first) })
        live.rules = rules
        live.hook = ServerHook(configuration: configuration, logger: .silent)
        let sink = Printer(mqtt: mqtt, lines: printed)
        try live.run(
            source: input, store: store, output: { _ in }, sinks: [sink], control: control,
            beforeWaiting: { for line in printed.take() { print(line) } }, logger: logger)
        for line in printed.take() { print(line) }
    }
}
