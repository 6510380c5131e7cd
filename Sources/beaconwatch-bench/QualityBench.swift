import ArgumentParser
import BeaconCore
import BeaconConfiguration
import Daemon
import Engine
import Foundation
import RegionMonitor
import Simulation

/// How honest the enters and exits are on noisy radio: simulated walks (`WalkSimulation`) through
/// an office, replayed through the engine for a few `exitTimeout` and `hysteresis` settings.
struct QualityBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "quality",
        abstract: "Spurious exits, enter and exit latency, and class flaps on simulated noisy walks.",
        discussion: """
            An office of 6 Zones with 1, 1, 2, 2, 3 and 3 beacons. Each walk has 20 stops in random Zones (never \
            the same twice in a row), standing at a beacon or in the middle of the Zone for 60 to 180 \
            s, walking 5 to 30 s between them; beacons advertise at --interval with --sigma dB of \
            shadowing and --loss percent lost. Ranging is continuous (foreground), the RSSI filter \
            the default median over 5 s. A spurious exit is an exit of a Zone while the walker is \
            still in it; enter latency runs from arriving to the Zone's enter, exit latency from \
            leaving to its exit; flaps are the class changes of the Zone's beacons while standing \
            still (after the first 5 s of a stop), per beacon and minute. The engine's own delay is \
            the most, over all visits, that an enter comes after the first advertisement heard in \
            the Zone, and that an exit comes off its last one plus exitTimeout: what the engine \
            adds to the radio.
            """
    )

    @Option(help: "Walks per setting.")
    var walks = 100

    @Option(help: "Seconds between two advertisements of a beacon.")
    var interval = 1.0

    @Option(help: "Shadowing, dB.")
    var sigma = 4.0

    @Option(help: "Advertisements lost, percent.")
    var loss = 20.0

    @Flag(help: "Only the adaptive exit's table (Monitor.exitTimeout = auto beside the fixed 10 s).")
    var adaptiveOnly = false

    func run() {
        let hierarchy = Self.office()
        if adaptiveOnly { return adaptiveTable(hierarchy) }
        let defaults = MonitorSettings()
        print(
            "quality: \(walks) walks of 20 stops per setting, σ \(format(sigma, 1)) dB, \(format(loss, 0))% lost, "
                + "advertising every \(format(interval, 1)) s; * marks the defaults"
        )
        print(
            "exitTimeout  hysteresis       spurious exits  enter latency: mean, p95, max, ≤ interval  "
                + "exit latency: mean, p5–p95, min–max, within ±1 s  flaps/beacon/min  engine's delay: enter, exit"
        )
        for exitTimeout in [5.0, 10, 20] {
            for hysteresis in [0.0, 0.15, 0.3] {
                let isDefault = exitTimeout == defaults.exitTimeout && hysteresis == defaults.hysteresis
                let bySize = measure(hierarchy, exitTimeout: exitTimeout, hysteresis: hysteresis, channel: channel)
                let all = bySize.values.reduce(into: Result()) { $0.merge($1) }
                print(row("\(Int(exitTimeout)) s \(isDefault ? "*" : " ")", format(hysteresis, 2), all, exitTimeout))
                guard isDefault else { continue }
                for size in bySize.keys.sorted() {
                    print(row("", "\(size) beacon\(size == 1 ? "" : "s")/zone", bySize[size]!, exitTimeout))
                }
            }
        }
        adaptiveTable(hierarchy)
    }

    /// The channel of the main table: the command's options.
    var channel: Channel { Channel(interval: interval, loss: loss / 100, burst: nil) }

    /// How the beacons advertise and how their advertisements are lost.
    struct Channel {
        var interval: Double
        /// 0…1.
        var loss: Double
        /// Mean run of losses (Gilbert–Elliott), or `nil` for independent losses.
        var burst: Double? = nil

        var description: String {
            "\(format(interval == 1 ? 1 : 1 / interval, 0)) Hz, \(format(loss * 100, 0))% lost"
                + (burst.map { " in runs of \(format($0, 0))" } ?? "")
        }
    }

    /// `Monitor.exitTimeout = auto` beside the fixed default, per Zone size (docs/behaviour.md §18).
    func adaptiveTable(_ hierarchy: Hierarchy) {
        print("")
        print("adaptive exit (Monitor.exitTimeout = auto, confidence 1e-6, at most 30 s) beside the fixed 10 s:")
        print(
            "channel                    beacons/zone  exitTimeout  spurious exits  exit latency: mean, p95  T used: mean, p95"
        )
        let channels = [
            Channel(interval: 1, loss: 0.2), Channel(interval: 0.1, loss: 0.2), Channel(interval: 1, loss: 0.4),
            Channel(interval: 0.1, loss: 0.4), Channel(interval: 1, loss: 0.2, burst: 5),
            Channel(interval: 0.1, loss: 0.2, burst: 10),
        ]
        for channel in channels {
            let fixed = measure(hierarchy, exitTimeout: 10, hysteresis: 0.15, channel: channel)
            let auto = measure(hierarchy, exitTimeout: nil, hysteresis: 0.15, channel: channel)
            for size in fixed.keys.sorted() {
                for (name, result) in [("10 s", fixed[size]!), ("auto", auto[size]!)] {
                    let timeouts =
                        result.timeouts.isEmpty
                        ? "–"
                        : "\(format(result.timeouts.reduce(0, +) / Double(result.timeouts.count), 2)), "
                            + "\(format(quantile(result.timeouts, 0.95), 2)) s"
                    print(
                        "\(pad(channel.description, 25))  \(pad("\(size)", 12))  \(pad(name, 11))  "
                            + "\(pad("\(result.spurious) of \(result.visits)", 14))  "
                            + "\(pad("\(format(result.exitMean, 2)), \(format(result.exit(0.95), 2)) s", 24))  \(timeouts)"
                    )
                }
            }
        }
    }

    /// One line of the table.
    func row(_ first: String, _ second: String, _ result: Result, _ exitTimeout: Double) -> String {
        "\(pad(first, 11))  \(pad(second, 15))  "
            + "\(pad("\(result.spurious) of \(result.visits)", 14))  "
            + pad(
                "\(format(result.enterMean, 2)), \(format(result.enter(0.95), 2)), \(format(result.enterMax, 2)) s, "
                    + percent(result.enterLatencies.filter { $0 <= interval }.count, of: result.enterLatencies.count),
                43) + "  "
            + pad(
                "\(format(result.exitMean, 2)), \(format(result.exit(0.05), 1))–\(format(result.exit(0.95), 1)), "
                    + "\(format(result.exitMin, 1))–\(format(result.exitMax, 1)) s, "
                    + percent(
                        result.exitLatencies.filter { abs($0 - exitTimeout) <= 1 }.count, of: result.exitLatencies.count
                    ),
                48) + "  "
            + pad(format(result.flapsPerMinute, 2), 16) + "  "
            + "\(format(result.engineEnterDelay, 3)), \(format(result.engineExitDelay, 3)) s"
    }

    struct Result {
        var visits = 0
        var spurious = 0
        var enterLatencies: [Double] = []
        var exitLatencies: [Double] = []
        var flaps = 0
        var standingMinutes = 0.0
        /// The most an enter came after the first advertisement heard in the Zone, seconds.
        var engineEnterDelay = 0.0
        /// The most an exit came off the last advertisement heard plus exitTimeout, seconds.
        var engineExitDelay = 0.0
        /// Under `auto`, the silence each exit of the Zone waited, seconds.
        var timeouts: [Double] = []

        var enterMean: Double { enterLatencies.reduce(0, +) / Double(max(enterLatencies.count, 1)) }
        var enterMax: Double { enterLatencies.max() ?? 0 }
        var exitMean: Double { exitLatencies.reduce(0, +) / Double(max(exitLatencies.count, 1)) }
        var exitMin: Double { exitLatencies.min() ?? 0 }
        var exitMax: Double { exitLatencies.max() ?? 0 }
        /// Per beacon heard and minute.
        var flapsPerMinute: Double { Double(flaps) / max(standingMinutes, 1e-9) }

        mutating func merge(_ other: Result) {
            visits += other.visits
            spurious += other.spurious
            enterLatencies += other.enterLatencies
            exitLatencies += other.exitLatencies
            flaps += other.flaps
            standingMinutes += other.standingMinutes
            engineEnterDelay = max(engineEnterDelay, other.engineEnterDelay)
            engineExitDelay = max(engineExitDelay, other.engineExitDelay)
            timeouts += other.timeouts
        }

        func enter(_ q: Double) -> Double { quantile(enterLatencies, q) }
        func exit(_ q: Double) -> Double { quantile(exitLatencies, q) }
    }

    /// The figures of every visit, by the number of beacons in the visited Zone; `exitTimeout`
    /// `nil` is `auto`.
    func measure(_ hierarchy: Hierarchy, exitTimeout: Double?, hysteresis: Double, channel: Channel) -> [Int: Result] {
        var bySize: [Int: Result] = [:]
        var configuration = Configuration(path: "quality.ini")
        configuration.hierarchy = hierarchy
        configuration.monitor.mode = .foreground
        if let exitTimeout {
            configuration.monitor.exitTimeout = exitTimeout
        } else {
            configuration.monitor.adaptiveExit = true
        }
        configuration.monitor.hysteresis = hysteresis
        configuration.monitor.userid = "q"
        configuration.monitor.session = "q"
        configuration.monitor.address = "127.0.0.1"
        let settle = configuration.monitor.rssiWindow
        let start = Timestamp(secondsSinceEpoch: 1_700_000_000)!
        for walk in 0..<walks {
            var random = SeededGenerator(seed: UInt64(1000 + walk))
            let plan = Self.plan(hierarchy, random: &random)
            var simulation = WalkSimulation()
            simulation.seed = UInt64(walk + 1)
            simulation.interval = channel.interval
            simulation.sigma = sigma
            simulation.loss = channel.loss
            simulation.burst = channel.burst
            let (sightings, visits) = simulation.run(plan, through: hierarchy, from: start)
            var engine = Engine(configuration: configuration, identity: .resolve(configuration.monitor))
            var actions: [EngineAction] = []
            for sighting in sightings { engine.handle(sighting, into: &actions) }
            while engine.advanceToNextDeadline(notAfter: nil, into: &actions) {}
            let outputs = actions.outputs
            // The advertisements heard (after loss), per Zone index, in time order. (Keyed by index:
            // a `Region.zone` built here from a sighting's beacon hashed inconsistently in release
            // builds with Swift 6.3.1; see docs/development.md.)
            var heard: [Int32: [Timestamp]] = [:]
            for case .advertisement(let time, let advertisement) in sightings {
                guard let index = hierarchy.index(of: advertisement.beacon) else { continue }
                heard[hierarchy.zoneOfBeacon[index], default: []].append(time)
            }
            var enters: [Region: [Timestamp]] = [:]
            var exits: [Region: [Timestamp]] = [:]
            var timeouts: [Region: [Timestamp: Double]] = [:]
            var reports: [String: [Timestamp]] = [:]
            for output in outputs {
                switch output {
                case .transition(let time, let transition) where transition.region.kind == .zone:
                    if transition.direction == .enter {
                        enters[transition.region, default: []].append(time)
                    } else {
                        exits[transition.region, default: []].append(time)
                        if let timeout = transition.timeout {
                            timeouts[transition.region, default: [:]][time] = timeout
                        }
                    }
                case .location(let time, let event): reports[event.zone, default: []].append(time)
                default: break
                }
            }
            for (index, visit) in visits.enumerated() {
                let zoneIndex = hierarchy.zoneIndex(of: visit.zone)!
                let zone = hierarchy.zones[zoneIndex]
                var result = bySize[zone.beacons.count] ?? Result()
                defer { bySize[zone.beacons.count] = result }
                result.visits += 1
                let zoneExits = exits[visit.zone] ?? []
                let early = zoneExits.filter { $0 >= visit.arrive && $0 < visit.leave }
                result.spurious += early.count
                // Entered on this visit (not still inside from the one before), and its latency.
                let stillInside =
                    index > 0 && visits[index - 1].zone == visit.zone
                    || zoneExits.contains { $0 >= visit.arrive.adding(seconds: -1) && $0 < visit.arrive }
                if let enter = enters[visit.zone]?.first(where: { $0 >= visit.arrive && $0 < visit.leave }),
                    !stillInside
                {
                    result.enterLatencies.append(Self.seconds(enter, since: visit.arrive))
                    if let first = heard[Int32(zoneIndex)]?.first(where: { $0 >= visit.arrive }) {
                        result.engineEnterDelay = max(result.engineEnterDelay, Self.seconds(enter, since: first))
                    }
                }
                if let exit = zoneExits.first(where: { $0 >= visit.leave }) {
                    result.exitLatencies.append(Self.seconds(exit, since: visit.leave))
                    if let timeout = timeouts[visit.zone]?[exit] { result.timeouts.append(timeout) }
                    if let exitTimeout, let last = heard[Int32(zoneIndex)]?.last(where: { $0 < exit }) {
                        let off = abs(Self.seconds(exit, since: last) - exitTimeout)
                        result.engineExitDelay = max(result.engineExitDelay, off)
                    }
                }
                let from = visit.arrive.adding(seconds: settle)
                guard from < visit.leave else { continue }
                result.standingMinutes += Self.seconds(visit.leave, since: from) / 60 * Double(zone.beacons.count)
                for beacon in zone.beacons {
                    let id = hierarchy.beacons[Int(beacon)].locationID
                    result.flaps += (reports[id] ?? []).filter { $0 >= from && $0 < visit.leave }.count
                }
            }
        }
        return bySize
    }

    static func seconds(_ time: Timestamp, since start: Timestamp) -> Double {
        Double(time.microseconds - start.microseconds) / 1_000_000
    }

    /// 6 Zones in one Area, with 1, 1, 2, 2, 3 and 3 beacons.
    static func office() -> Hierarchy {
        let uuid = UUID(uuidString: "0FF1CE00-0000-4000-8000-000000000001")!
        var beacons: [Hierarchy.Beacon] = []
        for zone in 1...6 {
            for minor in 1...(zone + 1) / 2 {
                beacons.append(
                    Hierarchy.Beacon(
                        locationID: "\(zone)0\(minor)",
                        id: BeaconID(uuid: uuid, major: UInt16(zone), minor: UInt16(minor))))
            }
        }
        return Hierarchy(beacons: beacons)
    }

    /// 20 stops in random Zones, never the same twice in a row; at a beacon or in the Zone.
    static func plan(_ hierarchy: Hierarchy, random: inout SeededGenerator) -> WalkPlan {
        var stops: [WalkPlan.Stop] = []
        var previous = -1
        for _ in 0..<20 {
            var zone = Int.random(in: 0..<hierarchy.zones.count, using: &random)
            while zone == previous { zone = Int.random(in: 0..<hierarchy.zones.count, using: &random) }
            previous = zone
            let beacons = hierarchy.zones[zone].beacons
            let atBeacon = Bool.random(using: &random) ? Int(beacons.randomElement(using: &random)!) : nil
            stops.append(
                WalkPlan.Stop(
                    zone: zone, beacon: atBeacon, stay: Double.random(in: 60...180, using: &random),
                    walk: Double.random(in: 5...30, using: &random)))
        }
        return WalkPlan(stops: stops)
    }

    func percent(_ count: Int, of total: Int) -> String {
        "\(format(Double(count) / Double(max(total, 1)) * 100, 1))%"
    }
}
