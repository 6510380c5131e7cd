import ArgumentParser
import BeaconCore
import BeaconConfiguration
import Daemon
import Engine
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

/// Tags heard by fixed scanners through a real mosquitto (docs/behaviour.md §19, issue 35): ESPresense
/// reports of many tags by three scanners each, their ingest rate next to the broker's own for the
/// same messages, memory per tag, and the latency from the report that moves a tag to its `enter`.
struct RoomsBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rooms-ingest",
        abstract: "Scanner reports: ingest rate against the broker's own, memory per tag, report-to-enter latency.",
        discussion: """
            Three ESPresense nodes (kitchen, hall, office) report every tag (QoS 0) to a mosquitto on \
            loopback; the daemon's pipeline runs in this process as in `run`: the MQTT sink subscribed \
            to Scanners.espresense, the engine loop on its own thread, its outputs through the outbox \
            to the broker. Every tag is in the kitchen: the kitchen's node hears it immediate or near, \
            the others near or far, so no report of the ingest moves it. Two ingest runs publish each \
            tag's reports round-robin over the scanners flat out: in the first each report changes its \
            scanner's class (an output per report: the worst case), in the second one report in ten \
            does (a node reports a tag every few seconds, mostly unchanged). The broker's own rate is \
            the same messages to a bare subscriber, in the same run. Memory per tag is the heap's \
            growth over every tag's first report, divided by their number. The latency run publishes \
            at a steady rate, each millisecond's reports together, in pairs: a tag's present room heard \
            as before, twice; one pair in ten instead has its present room heard weak and another room \
            strong, which moves it, and the latency runs from that report's publish to the new room's \
            `enter` leaving the engine.
            """
    )

    @Option(help: "Tags (each declared as Tag.tag-N = espresense:tag-N).")
    var tags = 10_000

    @Option(help: "Reports per tag and scanner in the ingest run.")
    var rounds = 3

    @Option(help: "Reports per second in the latency run.")
    var rate = 10_000

    @Option(help: "Seconds of the latency run.")
    var seconds = 5

    static let scanners = ["kitchen", "hall", "office"]

    static func payload(_ tag: Int, rssi: Int) -> [UInt8] {
        Array(#"{"mac":"4a1b2c3d4e5f","id":"tag-\#(tag)","rssi@1m":-59,"rssi":\#(rssi).00,"int":1000}"#.utf8)
    }

    static func topic(_ tag: Int, _ scanner: Int) -> String { "espresense/devices/tag-\(tag)/\(scanners[scanner])" }

    func run() async throws {
        let broker = try Broker(persistent: false)
        defer { broker.kill(signal: SIGKILL, wait: false) }
        let count = max(tags, 1)
        let total = count * Self.scanners.count * rounds
        let publisher = try MQTTClient(MQTTConnection(host: "127.0.0.1", port: broker.port, clientID: "bench-pub"))
        try await connectBenchClient(publisher, subscribing: nil, qos: 0)

        // The broker alone: the same messages to a bare subscriber.
        let bare = Atomic<Int>(0)
        let subscriber = try MQTTClient(
            MQTTConnection(host: "127.0.0.1", port: broker.port, clientID: "bench-bare"),
            received: { _, _, _ in bare.add(1, ordering: .relaxed) })
        try await connectBenchClient(subscriber, subscribing: "espresense/devices/+/+", qos: 0)
        let bareStart = ContinuousClock.now
        var bareRSSI = Toggles(count: count)
        _ = try publishAll(publisher, total: total, changeEvery: 1, toggles: &bareRSSI)
        guard try await E2EBench.until(within: .seconds(300), { bare.load(ordering: .relaxed) >= total }) else {
            throw RuntimeFailure("the bare subscriber got \(bare.load(ordering: .relaxed)) of \(total)")
        }
        let bareRate = Double(total) / (ContinuousClock.now - bareStart).inSeconds
        subscriber.shutdown()

        // The daemon's pipeline, on a building of three rooms and `tags` declared tags.
        let folder = try scratchFolder("bench-rooms")
        var ini = """
            LocationBaseBeacon.101 = E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,1,1
            LocationBaseBeacon.102 = E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,2,1
            LocationBaseBeacon.103 = E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,3,1
            LocationScanner.101 = kitchen
            LocationScanner.102 = hall
            LocationScanner.103 = office
            Scanners.espresense = espresense/devices/+/+
            Monitor.userid = bench
            Monitor.source = none
            Monitor.hysteresis = 0
            Monitor.exitTimeout = 3600
            MQTT.host = 127.0.0.1
            MQTT.port = \(broker.port)
            MQTT.homeassistant = false
            Fleet.maxDevices = \(count)

            """
        for tag in 0..<count { ini += "Tag.tag-\(tag) = espresense:tag-\(tag)\n" }
        let configuration = try Configuration.load(Array(ini.utf8), path: folder.path + "/bench.ini").get()
        let store = try StateStore(path: folder.appendingPathComponent("state.sqlite").path)
        let control = EngineControl()
        let input = MQTTInput(
            settings: configuration.mqtt!, userid: "bench", fleet: nil, scanners: configuration.scanners,
            control: control, refusals: Refusals(), logger: Logger(label: "rooms"))
        let sink = try MQTTSink(
            settings: configuration.mqtt!, userid: "bench", hierarchy: configuration.hierarchy, store: store,
            input: input)
        let outputs = RoomCounter(tags: count)
        try sink.start()
        async let listening: Void = sink.run(logger: Logger(label: "rooms"))
        guard await sink.waitConnected(within: .seconds(10)) else { throw RuntimeFailure("the broker did not answer") }
        try await Task.sleep(for: .milliseconds(200))  // the scanners' subscription's SUBACK
        async let engineThread: Void = runOnThreadOfItsOwn(named: "bench engine") {
            let live = LiveRun(configuration: configuration)
            try live.run(source: nil, store: store, output: { _ in }, sinks: [sink, outputs], control: control)
        }

        // Memory per tag: every tag's first report (the kitchen's), which enters it.
        let before = heapInUse()
        for tag in 0..<count {
            _ = try publisher.publish(
                topic: Self.topic(tag, 0), payload: Self.payload(tag, rssi: -50), qos: 0, retain: false)
        }
        guard try await E2EBench.until(within: .seconds(300), { outputs.locations.load(ordering: .relaxed) >= count })
        else { throw RuntimeFailure("only \(outputs.locations.load(ordering: .relaxed)) of \(count) tags arrived") }
        let perTag = Double(heapInUse() - before) / Double(count)

        // Ingest, flat out: every report an output, then one in ten. The last round is always a
        // change, so its outputs say the run's reports are all taken.
        var toggles = Toggles(count: count)
        var ingests: [(changeEvery: Int, rate: Double, threads: String)] = []
        for changeEvery in [1, 10] {
            let base = outputs.locations.load(ordering: .relaxed)
            let start = ContinuousClock.now
            let cpuBefore = threadCPU()
            let changes = try publishAll(publisher, total: total, changeEvery: changeEvery, toggles: &toggles)
            guard
                try await E2EBench.until(
                    within: .seconds(600), { outputs.locations.load(ordering: .relaxed) >= base + changes })
            else {
                throw RuntimeFailure(
                    "the daemon made \(outputs.locations.load(ordering: .relaxed) - base) of \(changes) outputs "
                        + "(dropped: \(control.droppedFleetMessages))")
            }
            let wall = (ContinuousClock.now - start).inSeconds
            ingests.append((changeEvery, Double(total) / wall, threadUse(from: cpuBefore, to: threadCPU(), wall: wall)))
            guard try await E2EBench.until(within: .seconds(300), { sink.waiting == 0 && sink.retainedWaiting == 0 })
            else { throw RuntimeFailure("the outbox still held \(sink.waiting) events after the ingest") }
        }

        // Latency at a steady rate: pairs of reports, the present room weak, then another strong.
        let room = Mutex(Array(repeating: 0, count: count))  // each tag's room, as the pairs move it
        let warmup = rate
        let reportsSent = (rate * seconds + warmup) / 2 * 2
        let enters = outputs.enters.load(ordering: .relaxed)
        let wallStart = ContinuousClock.now
        var (n, tick, moves) = (0, 0, 0)
        while n < reportsSent {
            tick += 1
            let due = wallStart.advanced(by: .milliseconds(tick))
            let ahead = due - ContinuousClock.now
            if ahead > .zero { Syscall.sleep(ahead) }
            let upTo = min(reportsSent, tick * rate / 1000 / 2 * 2)
            while n < upTo {
                let tag = (n / 2) % count
                let present = room.withLock { $0[tag] }
                if (n / 2) % 10 != 9 {
                    // As before: the present room's node hears it where it was.
                    let steady = Self.payload(tag, rssi: present == 0 ? toggles.kitchen(tag) : -45)
                    for _ in 0..<2 {
                        _ = try publisher.publish(
                            topic: Self.topic(tag, present), payload: steady, qos: 0, retain: false)
                    }
                    n += 2
                    continue
                }
                let next = (present + 1) % Self.scanners.count
                _ = try publisher.publish(
                    topic: Self.topic(tag, present), payload: Self.payload(tag, rssi: -85), qos: 0, retain: false)
                if n >= warmup { outputs.sending(tag, at: .now) }
                _ = try publisher.publish(
                    topic: Self.topic(tag, next), payload: Self.payload(tag, rssi: -45), qos: 0, retain: false)
                room.withLock { $0[tag] = next }
                moves += 1
                n += 2
            }
        }
        _ = try await E2EBench.until(within: .seconds(120)) {
            outputs.enters.load(ordering: .relaxed) >= enters + moves
        }
        let latencies = outputs.latencies.withLock { $0 }.sorted()
        func percentile(_ p: Double) -> Double {
            latencies.isEmpty ? .nan : latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]
        }
        for ingest in ingests {
            let share = ingest.changeEvery == 1 ? "every report" : "one report in \(ingest.changeEvery)"
            print(
                "rooms-ingest: \(count) tags × 3 scanners, \(total) reports, \(share) an output: ingest "
                    + "\(format(ingest.rate / 1e3, 1))k reports/s, broker alone \(format(bareRate / 1e3, 1))k/s "
                    + "(ratio \(format(ingest.rate / bareRate, 2)))")
            print("rooms-ingest:   CPU by thread: \(ingest.threads)")
        }
        print("rooms-ingest: memory per tag \(format(perTag / 1024, 2)) KiB (heap growth over \(count) tags)")
        print(
            "rooms-ingest: report to the new room's enter at \(rate) reports/s (\(rate / 20) moves/s): "
                + "p50 \(format(percentile(0.5) * 1e3, 2)) ms, p99 \(format(percentile(0.99) * 1e3, 2)) ms "
                + "(\(latencies.count) moves)")
        control.stop()
        try await engineThread
        _ = await sink.finish(within: .seconds(5))
        publisher.shutdown()
        _ = await listening
    }

    /// Each tag's class at each scanner, toggled by a change: the kitchen's node between
    /// immediate (-50 dBm) and near (-65), the others between near (-68) and far (-80); the
    /// kitchen stays the strongest, so no change moves the tag.
    struct Toggles {
        var other: [Bool]
        init(count: Int) { other = Array(repeating: false, count: count * RoomsBench.scanners.count) }
        mutating func rssi(_ tag: Int, _ scanner: Int, changes: Bool) -> Int {
            let slot = tag * RoomsBench.scanners.count + scanner
            if changes { other[slot].toggle() }
            return scanner == 0 ? (other[slot] ? -65 : -50) : (other[slot] ? -80 : -68)
        }
        /// What the kitchen's node hears of `tag` now.
        func kitchen(_ tag: Int) -> Int { other[tag * RoomsBench.scanners.count] ? -65 : -50 }
    }

    /// `total` reports, round-robin over tags and scanners; each `changeEvery`-th round changes
    /// every report's class (the last round always). Returns how many changes.
    func publishAll(_ client: MQTTClient, total: Int, changeEvery: Int, toggles: inout Toggles) throws -> Int {
        let count = max(tags, 1)
        let rounds = total / count
        var changes = 0
        for n in 0..<total {
            let tag = n % count
            let round = n / count
            let scanner = round % Self.scanners.count
            let changing = (round + 1) % max(changeEvery, 1) == 0 || round == rounds - 1
            if changing { changes += 1 }
            _ = try client.publish(
                topic: Self.topic(tag, scanner),
                payload: Self.payload(tag, rssi: toggles.rssi(tag, scanner, changes: changing)), qos: 0, retain: false)
        }
        return changes
    }
}

/// Counts the tags' location outputs and Zone enters as they leave the engine, with the latency
/// of each enter from the report that made it.
final class RoomCounter: OutputSink, Sendable {
    let locations = Atomic<Int>(0)
    let enters = Atomic<Int>(0)
    let latencies = Mutex<[Double]>([])
    let sent: Mutex<[ContinuousClock.Instant?]>

    init(tags: Int) { sent = Mutex(Array(repeating: nil, count: max(tags, 1))) }

    func sending(_ tag: Int, at instant: ContinuousClock.Instant) { sent.withLock { $0[tag] = instant } }

    func deliver(_ outputs: ArraySlice<MonitorOutput>, entries: ArraySlice<OutboxEntry>, context: StepContext) throws {
        guard let device = context.device?.id else { return }
        let now = ContinuousClock.now
        for output in outputs {
            switch output {
            case .location: locations.add(1, ordering: .relaxed)
            case .transition(_, let transition) where transition.direction == .enter && transition.region.kind == .zone:
                enters.add(1, ordering: .relaxed)
                guard let number = FleetBench.Arrivals.number(device) else { continue }
                let start = sent.withLock { sent -> ContinuousClock.Instant? in
                    guard sent.indices.contains(number) else { return nil }
                    defer { sent[number] = nil }
                    return sent[number]
                }
                if let start { latencies.withLock { $0.append((now - start).inSeconds) } }
            default: continue
            }
        }
    }
}
