import ArgumentParser
import Foundation
import Simulation

/// `scripts/bench real`: the recorded TETAM tracks (Tests/real-data/tetam) replayed through the
/// daemon with a floor plan, beside the rules users run on the same receptions
/// (docs/performance.md "Real radio").
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

    func run() throws {
        let site = try RecordedSite(folder: URL(fileURLWithPath: data))
        let extra = ini.isEmpty ? "" : ini.replacingOccurrences(of: "\\n", with: "\n") + "\n"
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("beaconwatch-real-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let systems: [(name: String, ini: String?)] = [
            ("beaconwatch, plan, open (LocationAreaWalls = none)", site.ini(walls: "none", extra: extra)),
            ("beaconwatch, plan as left (walls on every edge)", site.ini(walls: nil, extra: extra)),
            ("beaconwatch, nearest rule (no plan)", site.ini(floorPlan: false, extra: extra)),
            ("strongest sensor over 2 s", nil), ("Bermuda's rule", nil), ("weighted centroid of 3", nil),
            ("oracle: the nearest sensor by true distance", nil),
        ]
        var pooled = Array(repeating: TrackScore(), count: systems.count)
        print(
            "real: \(site.tracks.count) recorded tracks of \(data), the beacon claiming \(power) dBm; scored every 0.1 s"
        )
        for track in site.tracks {
            try site.trace(track, power: power).write(
                to: folder.appendingPathComponent("trace.jsonl"), atomically: true, encoding: .utf8)
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
                    case 3: timeline = site.strongest(track)
                    case 4: timeline = bermuda(site, track)
                    case 5: timeline = site.centroid(track)
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

    /// Bermuda's rule (PeerRules.swift) fed every reception, asked each 0.1 s.
    func bermuda(_ site: RecordedSite, _ track: RecordedTrack) -> Timeline {
        var rule = Bermuda(tags: 1, roomOf: site.roomOfSensor)
        var timeline = Timeline()
        var rooms: [Int?] = [nil]
        var next = 0
        var time = 0.0
        while time <= track.duration {
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

    func percent(_ share: Double) -> String { String(format: "%.1f %%", share * 100) }
    func format(_ value: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", value) }
}
