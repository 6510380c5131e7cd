import ArgumentParser
import BeaconCore
import Foundation
import Simulation

/// `scripts/bench real`: the recorded TETAM tracks (Tests/real-data/tetam) replayed through the
/// daemon with a floor plan, beside the rules users run on the same receptions
/// (docs/performance.md "Real radio"): every reception, or ESPresense nodes' reports of them.
struct RealRadioBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "real",
        abstract: "Recorded tracks with ground truth through `beaconwatch replay`, against the peers' rules."
    )

    @Option(help: "The beaconwatch binary.")
    var binary = ".build/release/beaconwatch"

    @Option(help: "The recorded site's folder.")
    var data = "Tests/real-data/tetam"

    @Option(help: "The power the beacon claims, dBm (the data's own fit is about -62 at 1 m).")
    var power = -59

    @Option(help: "Lines added to every ini (\\n between them), such as 'Rooms.minConfidence = 0.5'.")
    var ini = ""

    @Option(help: "A folder to keep each track's ini, trace and replay output in.")
    var keep: String?

    /// What every system is fed: each reception, or ESPresense nodes' reports of them.
    enum Feed: String, ExpressibleByArgument {
        case raw, firmware
    }

    @Option(
        help: """
            raw: every reception as a scanner report; firmware: the sensors as ESPresense nodes, \
            each reporting its median of 15 s in every 5 s slot of the firmware, all of a slot's \
            reports within 30 ms of it (the ini declares the nodes: Scanners.espresense).
            """)
    var feed = Feed.raw

    @Option(
        help:
            "With --feed firmware: shuffle the order of the nodes' reports inside each burst (0: in sensor order)."
    )
    var burstSeed: UInt64 = 0

    func run() throws {
        let site = try RecordedSite(folder: URL(fileURLWithPath: data))
        let extra = ini.isEmpty ? "" : ini.replacingOccurrences(of: "\\n", with: "\n") + "\n"
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("beaconwatch-real-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let nodes = feed == .firmware
        let systems: [(name: String, ini: String?)] = [
            ("beaconwatch, plan, open (LocationAreaWalls = none)", site.ini(walls: "none", nodes: nodes, extra: extra)),
            ("beaconwatch, plan as left (walls on every edge)", site.ini(walls: nil, nodes: nodes, extra: extra)),
            ("beaconwatch, nearest rule (no plan)", site.ini(floorPlan: false, nodes: nodes, extra: extra)),
            ("strongest sensor over 2 s", nil), ("Bermuda's rule", nil), ("weighted centroid of 3", nil),
            ("oracle: the nearest sensor by true distance", nil),
        ]
        var pooled = Array(repeating: TrackScore(), count: systems.count)
        let fed =
            nodes
            ? "ESPresense nodes' firmware reports, bursts "
                + (burstSeed == 0 ? "in sensor order" : "shuffled by seed \(burstSeed)") : "every reception"
        print(
            "real: \(site.tracks.count) recorded tracks of \(data), the beacon claiming \(power) dBm; scored every 0.1 s; "
                + "fed \(fed)"
        )
        for (trackIndex, track) in site.tracks.enumerated() {
            // What every system hears: the receptions, or the nodes' reports of them.
            let heard: RecordedTrack
            if nodes {
                heard = firmwareReports(site, track, seed: burstSeed, stream: UInt64(trackIndex))
                try site.nodeTrace(heard.receptions, power: power).write(
                    to: folder.appendingPathComponent("trace.jsonl"), atomically: true, encoding: .utf8)
            } else {
                heard = track
                try site.trace(track, power: power).write(
                    to: folder.appendingPathComponent("trace.jsonl"), atomically: true, encoding: .utf8)
            }
            var line = "  \(track.name.padding(toLength: 30, withPad: " ", startingAt: 0))"
            for (index, system) in systems.enumerated() {
                let timeline: Timeline
                if let ini = system.ini {
                    try ini.write(to: folder.appendingPathComponent("site.ini"), atomically: true, encoding: .utf8)
                    let output = try replay(in: folder)
                    if let keep {
                        let kept = URL(fileURLWithPath: keep).appendingPathComponent(track.name)
                        try FileManager.default.createDirectory(at: kept, withIntermediateDirectories: true)
                        for file in ["site.ini", "trace.jsonl"] {
                            try? FileManager.default.removeItem(at: kept.appendingPathComponent("\(index)-\(file)"))
                            try FileManager.default.copyItem(
                                at: folder.appendingPathComponent(file),
                                to: kept.appendingPathComponent("\(index)-\(file)"))
                        }
                        try output.write(
                            to: kept.appendingPathComponent("\(index)-out.jsonl"), atomically: true, encoding: .utf8)
                    }
                    timeline = site.timeline(fromReplay: output)
                } else {
                    switch index {
                    case 3: timeline = site.strongest(heard)
                    case 4: timeline = bermuda(site, heard, until: track.duration)
                    case 5: timeline = site.centroid(heard)
                    default: timeline = site.oracle(track)
                    }
                }
                let score = TrackScore(track: track, timeline: timeline)
                pooled[index].add(score)
                line += " \(percent(score.rightShare))"
            }
            print(line)
        }
        print("pooled over \(String(format: "%.0f", site.tracks.map(\.duration).reduce(0, +))) s:")
        print(
            "  system | right | right ≥ 1 m from other rooms | room changes (truth) | hand-over p50 / p95 | position error median / p90 | Area exits"
        )
        for (index, system) in systems.enumerated() {
            let score = pooled[index]
            let handover = [0.5, 0.95].map {
                TrackScore.percentile(score.handovers, $0).map { format($0, 1) + " s" } ?? "-"
            }
            let error = [0.5, 0.9].map { TrackScore.percentile(score.errors, $0).map { format($0, 2) + " m" } ?? "-" }
            print(
                "  \(system.name) | \(percent(score.rightShare)) | \(score.clearShare.map(percent) ?? "-") | "
                    + "\(score.changes) (\(score.truthChanges)) | \(handover.joined(separator: " / ")) | "
                    + "\(error.joined(separator: " / ")) | \(index < 3 ? String(score.areaExits) : "-")")
        }
    }

    func replay(in folder: URL) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.currentDirectoryURL = folder
        try? FileManager.default.removeItem(at: folder.appendingPathComponent("state.sqlite"))
        process.arguments = ["replay", "--config", "site.ini", "trace:trace.jsonl", "--state", "state.sqlite"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ValidationError("real: \(binary) replay exited with \(process.terminationStatus)")
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// Bermuda's rule (PeerRules.swift) fed every reception of `track`, asked each 0.1 s until
    /// `until` seconds.
    func bermuda(_ site: RecordedSite, _ track: RecordedTrack, until: Double) -> Timeline {
        var rule = Bermuda(tags: 1, roomOf: site.roomOfSensor)
        var timeline = Timeline()
        var rooms: [Int?] = [nil]
        var next = 0
        var time = 0.0
        while time <= until {
            while next < track.receptions.count, track.receptions[next].time <= time {
                let reception = track.receptions[next]
                rule.report(tag: 0, scanner: reception.sensor, rssi: reception.rssi, at: reception.time)
                next += 1
            }
            rule.rooms(at: time, into: &rooms)
            if timeline.rooms.last.map({ $0.room != rooms[0] }) ?? true { timeline.rooms.append((time, rooms[0])) }
            time += 0.1
        }
        return timeline
    }

    /// `track` as ESPresense nodes report it (``NodeReports``' filter, docs/espresense.md): each
    /// sensor a node keeping its readings of the last 15 s (at most 200), and at each 5 s slot of
    /// the firmware (`skip_ms`, offset by the beacon's djb2 time slot of 64) every node that heard
    /// the beacon since its last report sends the median of them, unless that is farther than
    /// `max_distance` (16 m). The firmware's report loop sends at the slot, so a burst's reports
    /// reach the broker within 30 ms of it, at the delays ``NodeReports`` gives; which node comes
    /// when is the sensors' order, or shuffled (`seed` not 0; `stream`: the track). Early reports
    /// on movement are left out: every report of a slot is within 30 ms of it. The receptions of
    /// the result are the reports (their RSSI the filtered one), each with the true position.
    func firmwareReports(_ site: RecordedSite, _ track: RecordedTrack, seed: UInt64, stream: UInt64)
        -> RecordedTrack
    {
        let count = site.sensors.count
        var node = NodeReports(tags: 1, scanners: count, cadence: .firmware)
        var random = SeededGenerator(seed: seed &* 0x9E37_79B9_7F4A_7C15 ^ stream)
        var heardSince = Array(repeating: false, count: count)
        var reports: [RecordedTrack.Reception] = []
        // The trace's epoch is a multiple of 5 s: the slots fall alike on the track's clock.
        let offset = Double(NodeReports.timeSlot(RecordedSite.espresenseID) * (NodeReports.skipMs / 64)) / 1000
        let period = Double(NodeReports.skipMs) / 1000
        var next = 0
        var burst = 0
        while case let slot = offset + Double(burst) * period, slot <= track.duration {
            while next < track.receptions.count, track.receptions[next].time < slot {
                let reception = track.receptions[next]
                // The node's filter keeps the reading; its own schedule's report is not used.
                _ = node.hear(tag: 0, scanner: reception.sensor, rssi: reception.rssi, at: reception.time)
                heardSince[reception.sensor] = true
                next += 1
            }
            var senders: [(sensor: Int, rssi: Double)] = []
            for sensor in 0..<count where heardSince[sensor] {
                let readings = node.pairs[0][sensor].readings.filter { $0.time >= slot - 15 }.map(\.rssi).sorted()
                guard !readings.isEmpty else { continue }
                let middle = readings.count / 2
                let median =
                    readings.count % 2 == 1 ? readings[middle] : (readings[middle - 1] + readings[middle]) / 2
                guard metres(median, power: Double(power), exponent: 2.7) <= NodeReports.maxDistance else { continue }
                senders.append((sensor, (median * 100).rounded() / 100))
                heardSince[sensor] = false
            }
            // NodeReports' delivery delays (0 to 30 ms) of this burst, handed out in the burst's order.
            let delays = senders.map { Double(($0.sensor &* 71 &+ burst &* 17) % 31) / 1000 }.sorted()
            if seed != 0 { senders.shuffle(using: &random) }
            for (sender, delay) in zip(senders, delays) {
                let truth = track.truth(at: slot + delay)
                reports.append(
                    RecordedTrack.Reception(
                        time: slot + delay, sensor: sender.sensor, rssi: sender.rssi, x: truth.x, y: truth.y))
            }
            burst += 1
        }
        return RecordedTrack(name: track.name, receptions: reports)
    }

    func percent(_ share: Double) -> String { String(format: "%.1f %%", share * 100) }
    func format(_ value: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", value) }
}
