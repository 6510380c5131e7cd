import ArgumentParser
import BeaconCore
import BeaconConfiguration
import Daemon
import Engine
import Foundation
import RegionMonitor
import Rules

#if canImport(Glibc)
    import Glibc
#endif

/// Sightings through the engine (monitor and ranging; no output sink) over a configured building
/// of a given size, and the memory that building costs.
struct PipelineBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pipeline",
        abstract: "Sightings per second through the engine, and memory per configured beacon.",
        discussion: """
            The building has 10 beacons per Zone and at most 20 Zones per Area (HSYCO's advice), so \
            10 beacons are monitored as Beacons, 1,000 as Areas then Zones, and 100,000 (500 Areas) \
            as scan-assisted Areas then Zones. A walker stays 30 s in a random Zone, hearing its 10 \
            beacons at 10 Hz each with ±5 dB of noise: every Zone change is an exit, a monitoring \
            switch and an enter, as in a real walk. Sightings are made as they are consumed, so the \
            input costs no memory. Steady memory is the resident memory after the run less that \
            before the building was made, per configured beacon (page-grained: meaningless for 10).
            """
    )

    @Option(help: "Configured beacons.")
    var beacons = 1000

    @Option(help: "Sightings to run through the engine.")
    var sightings = 3_000_000

    @Flag(
        inversion: .prefixedNo,
        help:
            "Ubudu rules on every Zone: an on_entry rule (latch 2 s, counts, a notification) and an on_exit one, grouped by Area."
    )
    var rules = true

    @Flag(help: "Monitor.exitTimeout = auto (docs/behaviour.md §18) instead of the fixed 10 s.")
    var auto = false

    func run() {
        let before = heapInUse()
        var configuration = Configuration(path: "bench.ini")
        configuration.hierarchy = Self.building(beacons: beacons)
        configuration.monitor.mode = .background
        configuration.monitor.adaptiveExit = auto
        configuration.monitor.userid = "bench"
        configuration.monitor.session = "bench"
        configuration.monitor.address = "127.0.0.1"
        let hierarchy = configuration.hierarchy
        var settings = RuleSettings()
        settings.autoServerNotify = false
        var engine = Engine(
            configuration: configuration, identity: .resolve(configuration.monitor),
            rules: rules ? Self.rules(for: hierarchy) : nil, ruleSettings: settings)
        var walk = Walk(hierarchy: hierarchy, seed: 11)
        var actions: [EngineAction] = []
        var produced = 0

        // Warm up: a tenth of the run, not timed.
        for _ in 0..<(sightings / 10) {
            engine.handle(walk.next(), into: &actions)
            produced &+= actions.count
            actions.removeAll(keepingCapacity: true)
        }
        let clock = ContinuousClock()
        let elapsed = clock.measure {
            for _ in 0..<sightings {
                engine.handle(walk.next(), into: &actions)
                produced &+= actions.count
                actions.removeAll(keepingCapacity: true)
            }
        }
        let steady = heapInUse() - before
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        let rate = Double(sightings) / seconds
        let plan = MonitoringPlan(hierarchy, maxRegions: configuration.monitor.maxRegions)
        print(
            "pipeline: \(beacons) beacons, \(hierarchy.zones.count) zones, \(hierarchy.areas.count) areas "
                + "(\(plan.shortName))\(rules ? ", rules on every zone" : ", no rules")\(auto ? ", exitTimeout auto" : ""): \(format(rate / 1e6, 2)) million sightings/s, "
                + "\(format(seconds / Double(sightings) * 1e9, 0)) ns/sighting; "
                + "steady \(format(Double(steady) / Double(beacons), 0)) B/beacon "
                + "(\(format(Double(steady) / 1_048_576, 1)) MiB); peak RSS \(peakResidentMiB()) MiB; "
                + "\(produced) actions (outputs and steps), \(walk.zoneChanges) zone changes"
        )
        withExtendedLifetime(engine) {}
    }

    /// Two rules on every Zone of `hierarchy`, its Area's UUID as their group.
    static func rules(for hierarchy: Hierarchy) -> [RuleRegion] {
        let document = rulesDocument(for: hierarchy, server: "http://bench.test/{id}/{udid}")
        return (try? RulesDocument.load(Array(document.utf8), name: "bench").get().regions) ?? []
    }

    /// A u_beacons document with two rules on every Zone of `hierarchy`: an on_entry one (latch
    /// 2 s, from the 2nd entry, a notification, and a server call to `server` when given) and an
    /// on_exit one.
    static func rulesDocument(for hierarchy: Hierarchy, server: String?) -> String {
        let call = server.map { #", "notify_server": "\#($0)""# } ?? ""
        let regions = hierarchy.zones.enumerated().map { index, zone in
            """
            {"id": "\(index)", "group_id": "\(zone.uuid.uuidString)", "name": "Zone \(index)",
             "proximity_uid": "\(zone.uuid.uuidString)", "major": \(zone.major), "minor": "",
             "rules_actions": [
              {"id": "\(index)-in", "rule": {"trigger": "on_entry", "latch_time": 2, "min_events": 2, "max_group_events": 100000},
               "action": {"notify_user": "Welcome"\(call)}},
              {"id": "\(index)-out", "rule": {"trigger": "on_exit", "latch_time": 0}, "action": {"notify_user": ""}}]}
            """
        }
        return #"{"u_beacons": ["# + regions.joined(separator: ",") + "]}"
    }

    /// `beacons` beacons, 10 to a Zone, at most 20 Zones to an Area, in file order.
    static func building(beacons: Int) -> Hierarchy {
        var list: [Hierarchy.Beacon] = []
        list.reserveCapacity(beacons)
        for index in 0..<beacons {
            let zone = index / 10
            let area = zone / 20
            let uuid = UUID(
                uuid: (
                    0xBE, 0xAC, 0, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, UInt8(area >> 16 & 0xFF), UInt8(area >> 8 & 0xFF),
                    UInt8(area & 0xFF), 1
                ))
            list.append(
                Hierarchy.Beacon(
                    locationID: String(index + 1),
                    id: BeaconID(uuid: uuid, major: UInt16(zone % 20 + 1), minor: UInt16(index % 10 + 1))
                )
            )
        }
        return Hierarchy(beacons: list)
    }
}

/// A person walking through the building: 30 s in a random Zone, its beacons heard in turn, one
/// sighting every 10 ms.
struct Walk {
    let hierarchy: Hierarchy
    var random: SeededGenerator
    var time = Timestamp(microseconds: 1_700_000_000_000_000)
    var zone = 0
    var step = 0
    var zoneChanges = 0

    init(hierarchy: Hierarchy, seed: UInt64) {
        self.hierarchy = hierarchy
        random = SeededGenerator(seed: seed)
    }

    mutating func next() -> SourceEvent {
        time.microseconds += 10_000
        step += 1
        if step == 3000 {
            step = 0
            zone = Int(random.next() % UInt64(hierarchy.zones.count))
            zoneChanges += 1
        }
        let members = hierarchy.zones[zone].beacons
        let beacon = hierarchy.beacons[Int(members[step % members.count])]
        let rssi = Int8(-70 + Int(random.next() % 11) - 5)
        return .advertisement(
            time, Advertisement(format: .ibeacon, beacon: beacon.id, power: -59, rssi: rssi, address: nil))
    }
}

extension MonitoringPlan {
    var shortName: String {
        switch self {
        case .beacons: "beacons"
        case .zones: "zones"
        case .hierarchical(false): "areas then zones"
        case .hierarchical(true): "areas then zones, scan-assisted"
        }
    }
}

/// The process's resident memory now, bytes (`/proc/self/statm`).
func heapInUse() -> Int {
    guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
        let pages = Int(statm.split(separator: " ")[1])
    else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// The process's peak resident memory (`VmHWM`), MiB.
func peakResidentMiB() -> String {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
        let kib = Double(line.split(separator: " ").dropFirst().first ?? "")
    else { return "?" }
    return format(kib / 1024, 1)
}

/// CPU seconds spent so far by each thread of process `pid` (`/proc/PID/task/*/stat`), by thread
/// id, with the thread's name: where a pipeline's time goes, thread by thread.
func threadCPU(pid: Int32 = getpid()) -> [Int: (name: String, seconds: Double)] {
    let folder = "/proc/\(pid)/task"
    let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
    var result: [Int: (name: String, seconds: Double)] = [:]
    for task in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
        guard let stat = try? String(contentsOfFile: "\(folder)/\(task)/stat", encoding: .utf8),
            let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")"), let id = Int(task)
        else { continue }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { continue }
        result[id] = (String(stat[stat.index(after: open)..<close]), (user + system) / max(ticks, 1))
    }
    return result
}

/// The threads' CPU use between two ``threadCPU(pid:)`` readings over `wall` seconds, busiest
/// first, as percentages of one core.
func threadUse(
    from before: [Int: (name: String, seconds: Double)], to after: [Int: (name: String, seconds: Double)],
    wall: Double
) -> String {
    after.map { id, thread in (thread.name, (thread.seconds - (before[id]?.seconds ?? 0)) / max(wall, 1e-9) * 100) }
        .filter { $0.1 >= 1 }.sorted { $0.1 > $1.1 }
        .map { "\($0.0) \(Int($0.1.rounded()))%" }.joined(separator: ", ")
}
