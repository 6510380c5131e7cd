import ArgumentParser
import BeaconCore
import Foundation
import RegionMonitor

/// Fixes per second against many geofences (docs/behaviour.md §17, issue 20): the grid index against a scan of
/// every geofence.
struct GeofenceBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "geofence",
        abstract: "Position fixes per second through GeofenceMonitor against --geofences geofences.",
        discussion: """
            Two layouts: spread (geofences over a 2,800 × 2,800 km box, radii 20 m to 2 km, \
            vehicles driving 15 m between fixes through it, aimed at geofences) and city (all of \
            them in a 20 × 20 km city, so a fix has many geofences near it). Each is timed with \
            the grid index (GeofenceMonitor) and with a scan of every geofence doing the same \
            work; both must decide the same transitions.
            """
    )

    @Option(help: "Geofences.")
    var geofences = 10_000

    @Option(help: "Fixes per layout.")
    var fixes = 2_000_000

    @Option(help: "Fixes for the scan (it is slow).")
    var scanFixes = 20_000

    func run() throws {
        print("geofence: \(geofences) geofences, release build")
        for (name, span) in [("spread", 25.0), ("city", 0.18)] {
            var random = SeededGenerator(seed: 20)
            let fences = (0..<geofences).map { index in
                Geofence(
                    id: "\(index)", name: nil, latitude: 45 + Double.random(in: -span / 2...span / 2, using: &random),
                    longitude: 9 + Double.random(in: -span / 2...span / 2, using: &random),
                    radius: 20 * pow(100, Double.random(in: 0...1, using: &random)))
            }
            // The city decides a transition on most fixes: a tenth of the fixes is enough to time.
            let track = Self.drive(fences, count: name == "city" ? fixes / 10 : fixes, using: &random)
            var monitor = GeofenceMonitor(geofences: fences)
            var outputs: [MonitorOutput] = []
            var transitions = 0
            let clock = ContinuousClock()
            let start = Timestamp(secondsSinceEpoch: 1_789_459_200)!
            let indexed = clock.measure {
                for (step, fix) in track.enumerated() {
                    monitor.fix(fix, at: start.adding(microseconds: Int64(step) * 1_000_000), into: &outputs)
                    transitions += outputs.count
                    outputs.removeAll(keepingCapacity: true)
                }
            }
            // The same rule by a scan of every geofence, on the first fixes, checked equal.
            var scanInside = [Bool](repeating: false, count: fences.count)
            var check = GeofenceMonitor(geofences: fences)
            var mismatches = 0
            let scanned = clock.measure {
                for (step, fix) in track.prefix(scanFixes).enumerated() {
                    let margin = max(fix.accuracy ?? 0, 20)
                    for (position, fence) in fences.enumerated() {
                        let distance = GreatCircle.distance(
                            latitude: fence.latitude, longitude: fence.longitude, latitude: fix.latitude,
                            longitude: fix.longitude)
                        if scanInside[position] {
                            if distance > fence.radius + margin { scanInside[position] = false }
                        } else if distance <= fence.radius {
                            scanInside[position] = true
                        }
                    }
                    check.fix(fix, at: start.adding(microseconds: Int64(step) * 1_000_000), into: &outputs)
                    outputs.removeAll(keepingCapacity: true)
                    if check.inside != scanInside.indices.filter({ scanInside[$0] }) { mismatches += 1 }
                }
            }
            let indexRate = Double(track.count) / indexed.inSeconds
            let scanRate = Double(min(scanFixes, track.count)) / scanned.inSeconds
            print(
                "  \(name): index \(Self.rate(indexRate)) fixes/s (\(transitions) transitions), "
                    + "scan \(Self.rate(scanRate)) fixes/s, \(String(format: "%.0f", indexRate / scanRate))x; "
                    + "index and scan \(mismatches == 0 ? "agree" : "DIFFER on \(mismatches) fixes")")
            if mismatches > 0 { throw ExitCode(1) }
        }
    }

    static func rate(_ value: Double) -> String {
        value >= 1e6 ? String(format: "%.2f M", value / 1e6) : String(format: "%.0f k", value / 1e3)
    }

    /// A vehicle driving 15 m between fixes from one geofence's centre to another's, on and on.
    static func drive(_ fences: [Geofence], count: Int, using random: inout SeededGenerator) -> [Position] {
        var track: [Position] = []
        track.reserveCapacity(count)
        var here = fences[0]
        while track.count < count {
            let next = fences[Int.random(in: 0..<fences.count, using: &random)]
            let metres = GreatCircle.distance(
                latitude: here.latitude, longitude: here.longitude, latitude: next.latitude, longitude: next.longitude)
            let steps = max(1, min(Int(metres / 15), 2000))
            for step in 0..<steps where track.count < count {
                let f = Double(step) / Double(steps)
                track.append(
                    Position(
                        latitude: here.latitude + (next.latitude - here.latitude) * f,
                        longitude: here.longitude + (next.longitude - here.longitude) * f,
                        accuracy: Double.random(in: 3...30, using: &random)))
            }
            here = next
        }
        return track
    }
}
