import ArgumentParser
import BeaconCore
import BeaconConfiguration
import Daemon
import Engine
import Fleet
import Foundation
import Logging
import MQTT
import Persistence
import RegionMonitor
import Synchronization
import Syscalls
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Many trackers through a real mosquitto into one daemon's fleet (docs/behaviour.md §15): the ingest rate
/// next to the broker's own rate for the same messages, memory per device, and latency at a
/// steady rate.
struct FleetBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet",
        abstract: "Fleet ingest rate against the broker's own, memory per device, latency at 10,000 sightings/s.",
        discussion: """
            Trackers publish Theengs iBeacon reports (QoS 0) to a mosquitto on loopback; the daemon's \
            pipeline runs in this process as in `run` with Monitor.source = none: the MQTT sink \
            subscribed to Fleet.theengs, the engine loop on its own thread, its outputs through the \
            outbox to the broker. Two ingest runs: in the first each report moves its beacon between \
            immediate and far (no RSSI filter, no hysteresis), so each makes one location event; in \
            the second one report in ten does (trackers mostly repeat their class). The broker's own rate is the same \
            messages to a bare subscriber, in the same run. The latency run publishes each \
            millisecond's reports together, asleep in between. Memory per device is the resident growth \
            over the devices' first reports, divided by their number. Latency runs from the \
            publish to the device's location event leaving the engine, at a steady rate.
            """
    )

    @Option(help: "Devices (auto-added on their first report).")
    var devices = 10_000

    @Option(help: "Reports per device in the rate run.")
    var reports = 10

    @Option(help: "Reports per second in the latency run.")
    var rate = 10_000

    @Option(help: "Seconds of the latency run.")
    var seconds = 5

    static let uuid = "5A4BCFCE-174E-4BAC-A814-092E77F6B7E5"

    static func payload(rssi: Int) -> [UInt8] {
        Array(
            #"{"id":"0A:0B:0C:0D:0E:0F","mfid":"4c00","uuid":"\#(uuid)","major":1,"minor":1,"txpower":-59,"rssi":\#(rssi)}"#
                .utf8)
    }

    /// Counts what arrives, per device, with the instant. A device has at most one event under
    /// way (each reports once a second or less): its send instant is kept by device number, so
    /// that counting costs the engine's thread next to nothing.
    final class Arrivals: Sendable {
        let count = Atomic<Int>(0)
        let latencies = Mutex<[Double]>([])
        let sent: Mutex<[ContinuousClock.Instant?]>

        init(devices: Int) { sent = Mutex(Array(repeating: nil, count: max(devices, 1))) }

        /// The number of device `tag-N`.
        static func number(_ device: String) -> Int? {
            Int(device.utf8.dropFirst(4).reduce(0) { $0 &* 10 &+ Int($1) - 48 })
        }

        func sending(_ device: Int, at instant: ContinuousClock.Instant) {
            sent.withLock { $0[device] = instant }
        }

        func arrived(_ device: String, at instant: ContinuousClock.Instant) {
            count.add(1, ordering: .relaxed)
            guard let number = Self.number(device) else { return }
            let start = sent.withLock { sent -> ContinuousClock.Instant? in
                guard sent.indices.contains(number) else { return nil }
                defer { sent[number] = nil }
                return sent[number]
            }
            if let start { latencies.withLock { $0.append((instant - start).inSeconds) } }
        }
    }

    @Flag(help: "Only the parsing of reports: how many a second one core parses.")
    var parseOnly = false

    @Flag(help: "Only the engine side: parsed reports through the fleet engine and the store, no broker.")
    var engineOnly = false

    /// Parsed reports through the table of `Devices` and the driver (state database on disk, no sinks).
    func engineRate() throws {
        let folder = try scratchFolder("bench-fleet-engine")
        let ini = """
            LocationBaseBeacon.1 = \(Self.uuid),1,1
            Monitor.userid = bench
            Monitor.mode = foreground
            Monitor.rssiFilter = none
            Monitor.hysteresis = 0
            Monitor.exitTimeout = 3600
            MQTT.host = 127.0.0.1
            Fleet.theengs = home/+/BTtoMQTT/#
            Fleet.maxDevices = \(max(devices, 1))

            """
        let configuration = try Configuration.load(Array(ini.utf8), path: folder.path + "/bench.ini").get()
        let store = try StateStore(path: folder.appendingPathComponent("state.sqlite").path)
        var driver = EngineDriver(
            devices: Devices(configuration: configuration, identity: .resolve(configuration.monitor)), store: store,
            requests: .inline(ServerHook(configuration: configuration, logger: .silent)))
        let origin = Timestamp(secondsSinceEpoch: 1_700_000_000)!
        try driver.start(at: origin)
        let filter = TopicFilter("home/+/BTtoMQTT/#")!
        let payloads = [Self.payload(rssi: -80), Self.payload(rssi: -50)]
        let messages = (0..<max(devices, 1)).map { device in
            (0..<2).map { round in
                try! FleetMessage.parse(
                    source: .theengs, filter: filter, topic: "home/tag-\(device)/BTtoMQTT/x", payload: payloads[round]
                ).get()!
            }
        }
        let total = devices * reports
        let start = ContinuousClock.now
        for n in 0..<total {
            let time = Timestamp(microseconds: origin.microseconds + Int64(n) * 10)
            try driver.handle(.message(messages[n % devices][(n / devices) % 2]), at: time)
            if n % 64 == 63 { try driver.commit() }
        }
        try driver.finish()
        let elapsed = (ContinuousClock.now - start).inSeconds
        print(
            "fleet: engine side: \(format(Double(total) / elapsed / 1e3, 1))k reports/s over \(devices) devices "
                + "(parsed beforehand; state on disk, commits of 64)")
    }

    func run() async throws {
        if engineOnly { return try engineRate() }
        if parseOnly {
            let filter = TopicFilter("home/+/BTtoMQTT/#")!
            let payload = Self.payload(rssi: -60)
            let count = 200_000
            let start = ContinuousClock.now
            var parsed = 0
            for n in 0..<count {
                if case .success(let message?) = FleetMessage.parse(
                    source: .theengs, filter: filter, topic: "home/tag-\(n % 100)/BTtoMQTT/x", payload: payload)
                {
                    parsed += message.observations.count
                }
            }
            let elapsed = (ContinuousClock.now - start).inSeconds
            print("fleet: parsing: \(format(Double(parsed) / elapsed / 1e3, 1))k Theengs reports/s on one core")
            return
        }
        let broker = try Broker(persistent: false)
        defer { broker.kill(signal: SIGKILL, wait: false) }
        let total = devices * reports

        // The broker alone: the same messages to a bare subscriber.
        let bare = Atomic<Int>(0)
        let subscriber = try MQTTClient(
            MQTTConnection(host: "127.0.0.1", port: broker.port, clientID: "bench-bare"),
            received: { _, _, _ in bare.add(1, ordering: .relaxed) })
        try await connectBenchClient(subscriber, subscribing: "home/+/BTtoMQTT/#", qos: 0)
        let publisher = try MQTTClient(MQTTConnection(host: "127.0.0.1", port: broker.port, clientID: "bench-pub"))
        try await connectBenchClient(publisher, subscribing: nil, qos: 0)
        let bareStart = ContinuousClock.now
        var bareClasses = Classes(devices: devices)
        _ = try publishAll(publisher, total: total, changeEvery: 1, classes: &bareClasses)
        guard try await E2EBench.until(within: .seconds(300), { bare.load(ordering: .relaxed) >= total }) else {
            throw RuntimeFailure("the bare subscriber got \(bare.load(ordering: .relaxed)) of \(total)")
        }
        let bareRate = Double(total) / (ContinuousClock.now - bareStart).inSeconds
        subscriber.shutdown()

        // The fleet daemon's pipeline.
        let arrivals = Arrivals(devices: devices)
        let folder = try scratchFolder("bench-fleet")
        let ini = """
            LocationBaseBeacon.1 = \(Self.uuid),1,1
            Monitor.userid = bench
            Monitor.source = none
            Monitor.mode = foreground
            Monitor.rssiFilter = none
            Monitor.hysteresis = 0
            Monitor.exitTimeout = 3600
            MQTT.host = 127.0.0.1
            MQTT.port = \(broker.port)
            MQTT.homeassistant = false
            Fleet.theengs = home/+/BTtoMQTT/#
            Fleet.maxDevices = \(max(devices, 1))

            """
        let configuration = try Configuration.load(Array(ini.utf8), path: folder.path + "/bench.ini").get()
        let store = try StateStore(path: folder.appendingPathComponent("state.sqlite").path)
        let control = EngineControl()
        let input = MQTTInput(
            settings: configuration.mqtt!, userid: "bench", fleet: configuration.fleet, control: control,
            refusals: Refusals(), logger: Logger(label: "fleet"))
        let sink = try MQTTSink(
            settings: configuration.mqtt!, userid: "bench", hierarchy: configuration.hierarchy, store: store,
            input: input)
        let counting = DeviceCounter(arrivals: arrivals)
        try sink.start()
        async let listening: Void = sink.run(logger: Logger(label: "fleet"))
        guard await sink.waitConnected(within: .seconds(10)) else { throw RuntimeFailure("the broker did not answer") }
        try await Task.sleep(for: .milliseconds(200))  // the fleet subscription's SUBACK
        async let engineThread: Void = runOnThreadOfItsOwn(named: "bench engine") {
            let live = LiveRun(configuration: configuration)
            try live.run(
                source: nil, store: store, output: { _ in }, sinks: [sink, counting], control: control)
        }

        // Memory per device: every device's first report.
        let before = heapInUse()
        for device in 0..<devices {
            _ = try publisher.publish(
                topic: "home/tag-\(device)/BTtoMQTT/x", payload: Self.payload(rssi: -50), qos: 0, retain: false)
        }
        guard try await E2EBench.until(within: .seconds(300), { arrivals.count.load(ordering: .relaxed) >= devices })
        else { throw RuntimeFailure("only \(arrivals.count.load(ordering: .relaxed)) of \(devices) devices arrived") }
        let perDevice = Double(heapInUse() - before) / Double(max(devices, 1))

        // Ingest: every device reports `reports` times, flat out; first each report moving its
        // beacon to the other class (an event per report: the worst case), then one report in
        // ten (trackers mostly repeat the class they are in).
        var classes = Classes(devices: devices)
        var ingests: [(changeEvery: Int, rate: Double, threads: String, broker: String)] = []
        for changeEvery in [1, 10] {
            let start = ContinuousClock.now
            let (cpuBefore, brokerBefore) = (threadCPU(), threadCPU(pid: broker.pid))
            let base = arrivals.count.load(ordering: .relaxed)
            let events = try publishAll(publisher, total: total, changeEvery: changeEvery, classes: &classes)
            guard
                try await E2EBench.until(
                    within: .seconds(600), { arrivals.count.load(ordering: .relaxed) >= base + events })
            else {
                throw RuntimeFailure(
                    "the fleet made \(arrivals.count.load(ordering: .relaxed) - base) of \(events) events "
                        + "(dropped: \(control.droppedFleetMessages))")
            }
            let wall = (ContinuousClock.now - start).inSeconds
            ingests.append(
                (
                    changeEvery, Double(total) / wall, threadUse(from: cpuBefore, to: threadCPU(), wall: wall),
                    threadUse(from: brokerBefore, to: threadCPU(pid: broker.pid), wall: wall)
                ))
        }

        // Latency at a steady rate, once the ingest's events are all with the broker (a backlog
        // being published is not the steady state).
        guard try await E2EBench.until(within: .seconds(300), { sink.waiting == 0 && sink.retainedWaiting == 0 }) else {
            throw RuntimeFailure("the outbox still held \(sink.waiting) events after the ingest")
        }
        // A tracker fleet publishes independently; here, each millisecond's reports go out
        // together, the publisher asleep in between (it must leave the daemon and the broker
        // their two cores). Each event's latency runs from the publish of the report that made it.
        // As the ingest: one report in ten an event, then every report. Each run's first second
        // is not measured.
        var runs: [(changeEvery: Int, latencies: [Double], threads: String, broker: String)] = []
        for changeEvery in [10, 1] {
            arrivals.latencies.withLock { $0.removeAll() }
            // A first second unmeasured: the daemon settles after the run before (the database
            // copying its log, the allocator giving back memory).
            let warmup = rate
            let reportsSent = rate * seconds + warmup
            let base = arrivals.count.load(ordering: .relaxed)
            let (cpuBefore, brokerBefore) = (threadCPU(), threadCPU(pid: broker.pid))
            let wall = ContinuousClock.now
            var (n, tick, events) = (0, 0, 0)
            while n < reportsSent {
                tick += 1
                let due = wall.advanced(by: .milliseconds(tick))
                let ahead = due - ContinuousClock.now
                if ahead > .zero { Syscall.sleep(ahead) }
                let upTo = min(reportsSent, tick * rate / 1000)
                while n < upTo {
                    let device = n % max(devices, 1)
                    let changes = n % changeEvery == changeEvery - 1
                    if changes {
                        if n >= warmup { arrivals.sending(device, at: .now) }
                        events += 1
                    }
                    _ = try publisher.publish(
                        topic: "home/tag-\(device)/BTtoMQTT/x",
                        payload: Self.payload(rssi: classes.rssi(device, changes: changes)),
                        qos: 0, retain: false)
                    n += 1
                }
            }
            _ = try await E2EBench.until(within: .seconds(120)) {
                arrivals.count.load(ordering: .relaxed) >= base + events
            }
            let wallTime = (ContinuousClock.now - wall).inSeconds
            runs.append(
                (
                    changeEvery, arrivals.latencies.withLock { $0 }.sorted(),
                    threadUse(from: cpuBefore, to: threadCPU(), wall: wallTime),
                    threadUse(from: brokerBefore, to: threadCPU(pid: broker.pid), wall: wallTime)
                ))
            // The next run starts from the steady state again.
            _ = try await E2EBench.until(within: .seconds(300)) { sink.waiting == 0 && sink.retainedWaiting == 0 }
        }
        func percentile(_ latencies: [Double], _ p: Double) -> Double {
            latencies.isEmpty ? .nan : latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]
        }
        func share(_ changeEvery: Int) -> String {
            (changeEvery == 1 ? "every report" : "one report in \(changeEvery)") + " an event"
        }
        for ingest in ingests {
            print(
                "fleet: \(devices) devices, \(total) reports, \(share(ingest.changeEvery)): ingest "
                    + "\(format(ingest.rate / 1e3, 1))k reports/s, broker alone \(format(bareRate / 1e3, 1))k/s "
                    + "(ratio \(format(ingest.rate / bareRate, 2)))")
            print("fleet:   CPU by thread: \(ingest.threads); broker: \(ingest.broker)")
        }
        print("fleet: memory per device \(format(perDevice / 1024, 2)) KiB (resident growth over \(devices) devices)")
        for run in runs {
            print(
                "fleet: latency at \(rate) reports/s over \(devices) devices, \(share(run.changeEvery)): "
                    + "p50 \(format(percentile(run.latencies, 0.5) * 1e3, 2)) ms, "
                    + "p99 \(format(percentile(run.latencies, 0.99) * 1e3, 2)) ms (\(run.latencies.count) events)")
            print("fleet:   CPU by thread: \(run.threads); broker: \(run.broker)")
        }
        control.stop()
        try await engineThread
        _ = await sink.finish(within: .seconds(5))
        publisher.shutdown()
        _ = await listening
    }

    /// The class each device's beacon is in: `immediate` at -50 dBm or `far` at -80 dBm, each
    /// report a dBm apart from the last within its class.
    struct Classes {
        var far: [Bool]
        /// Reports published so far, every device's.
        var reports = 0

        init(devices: Int) { far = Array(repeating: false, count: max(devices, 1)) }

        /// The next report of `device`: moved to the other class when `changes`.
        mutating func rssi(_ device: Int, changes: Bool) -> Int {
            reports += 1
            if changes { far[device].toggle() }
            return (far[device] ? -80 : -50) - reports % 2
        }
    }

    /// Publishes `total` reports round-robin over the devices; each `changeEvery`-th round moves
    /// every beacon to the other class. Returns how many location events that makes.
    func publishAll(_ client: MQTTClient, total: Int, changeEvery: Int, classes: inout Classes) throws -> Int {
        var events = 0
        for n in 0..<total {
            let device = n % max(devices, 1)
            let changes = (n / max(devices, 1) + 1) % max(changeEvery, 1) == 0
            if changes { events += 1 }
            _ = try client.publish(
                topic: "home/tag-\(device)/BTtoMQTT/x",
                payload: Self.payload(rssi: classes.rssi(device, changes: changes)),
                qos: 0, retain: false)
        }
        return events
    }
}

/// Counts each device's location events as they leave the engine.
struct DeviceCounter: OutputSink {
    let arrivals: FleetBench.Arrivals

    func deliver(_ outputs: ArraySlice<MonitorOutput>, entries: ArraySlice<OutboxEntry>, context: StepContext) throws {
        guard let device = context.device?.id else { return }
        let now = ContinuousClock.now
        for output in outputs { if case .location = output { arrivals.arrived(device, at: now) } }
    }
}
