import ArgumentParser
import BeaconConfiguration
import BeaconCore
import Fleet
import Foundation
import RegionMonitor
import Simulation

/// The position estimator's cost (docs/behaviour.md §20, issue 48): many tags on a floor plan
/// heard by twelve scanners, through the device table as `run` and `replay` drive it.
struct PositionIngestBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rooms-position",
        abstract:
            "Tags on a floor plan: reports a second, memory per tag, time from a report to the room change it makes.",
        discussion: """
            A 24 × 12 m office of twelve 4 × 6 m rooms in two rows, a scanner in each (by a wall, 1 m \
            high) and 1 m doors onto a middle line; every tag sits somewhere on the floor and every \
            scanner hears it once a second (exponent 2.5, 4 dB walls, 3 dB of noise, seeded). The \
            reports go to the device table in time order as `replay` takes them (no broker: \
            `rooms-ingest` measures the broker's part). Ingest: all reports of `seconds` simulated \
            seconds, timed. Memory: the heap's growth over every tag's first second, per tag. \
            Latency: the time each report takes to handle, at the 50th and 99th percentile, over all \
            and over those whose step changes a tag's room; then a tenth of the tags move to another \
            room and the room changes they make are timed the same way.
            """
    )

    @Option(help: "Tags.")
    var tags = 10_000

    @Option(help: "Simulated seconds of the ingest run.")
    var seconds = 5

    static let area = "F1002000-0000-4000-8000-000000000001"

    /// The office: rooms 1–6 along y 0–6, 7–12 along y 6–12, each with its scanner near its outer wall.
    static func ini(tags: Int) -> (text: String, scanners: [(id: String, x: Double, y: Double)]) {
        var text = "Monitor.source = none\nMonitor.userid = bench\nFleet.maxDevices = \(tags + 10)\n"
        var scanners: [(id: String, x: Double, y: Double)] = []
        for index in 0..<12 {
            let (column, row) = (index % 6, index / 6)
            let (x0, y0) = (Double(column) * 4, Double(row) * 6)
            let id = "s\(index + 1)"
            let point = (x0 + 2 + (column % 2 == 0 ? -1 : 1), row == 0 ? 0.5 : 11.5)
            scanners.append((id, point.0, point.1))
            text += "LocationBaseBeacon.\(index + 1) = \(area),\(index + 1),1\nLocationScanner.\(index + 1) = \(id)\n"
            text += "LocationZoneName.\(area):\(index + 1) = Room \(index + 1)\n"
            text +=
                "LocationZoneShape.\(area):\(index + 1) = \(x0),\(y0); \(x0 + 4),\(y0); \(x0 + 4),\(y0 + 6); \(x0),\(y0 + 6)\n"
            text += "LocationScannerPoint.\(id) = \(point.0),\(point.1),1\n"
            text += "Door.d\(index + 1) = \(x0 + 1.5),6; \(x0 + 2.5),6\n"
        }
        for tag in 1...tags { text += "Tag.t\(tag) = ibeacon:\(Floor.tagUUID):1:\(tag)\n" }
        return (text, scanners)
    }

    /// What a scanner reads of a tag at (x, y): 2.5 exponent, 4 dB a wall crossed (rooms are 4 m
    /// wide and 6 m deep), seeded noise.
    static func rssi(_ x: Double, _ y: Double, _ scanner: (id: String, x: Double, y: Double), noise: Double) -> Double {
        let distance = max(0.25, ((x - scanner.x) * (x - scanner.x) + (y - scanner.y) * (y - scanner.y)).squareRoot())
        let walls =
            abs(Int((x / 4).rounded(.down)) - Int((scanner.x / 4).rounded(.down)))
            + ((y < 6) != (scanner.y < 6) ? 1 : 0)
        return (-59 - 25 * log10(distance) - 4 * Double(walls) + noise).rounded()
    }

    func run() throws {
        let count = max(tags, 1)
        let (text, scanners) = Self.ini(tags: count)
        let configuration = try Configuration.load(Array(text.utf8), path: "office.ini").get()
        guard !configuration.floors.isEmpty else { throw ValidationError("the office has no floor plan") }
        var table = Devices(
            configuration: configuration, identity: MonitorIdentity(session: "s", address: "a", userid: "bench"))
        var actions: [Devices.Action] = []
        func time(_ seconds: Double) -> Timestamp {
            Timestamp(microseconds: 1_700_000_000_000_000 + Int64((seconds * 1_000_000).rounded()))
        }
        table.start(at: time(0), into: &actions)
        var random = SeededGenerator(seed: 48)
        var places = (0..<count).map { _ in
            (Double.random(in: 0.3...23.7, using: &random), Double.random(in: 0.3...11.7, using: &random))
        }
        let tagIDs = (1...count).map { "t\($0)" }
        let clock = ContinuousClock()
        var durations: [Double] = []
        var changes: [Double] = []
        /// One simulated second: every scanner hears every tag, spread over the second.
        func second(_ s: Int, timed: Bool) {
            let step = 1.0 / Double(count * scanners.count)
            var n = 0
            for (tag, place) in places.enumerated() {
                for scanner in scanners {
                    let noise = Double.random(in: -3...3, using: &random)
                    let report = ScannerReport(
                        scanner: scanner.id, tag: tagIDs[tag], rssi: Self.rssi(place.0, place.1, scanner, noise: noise),
                        power: -59)
                    let at = time(Double(s) + Double(n) * step)
                    n += 1
                    if timed {
                        let start = clock.now
                        table.handle(.report(report), at: at, into: &actions)
                        let took = (clock.now - start).inSeconds
                        durations.append(took)
                        if actions.contains(where: Self.isRoomEnter) { changes.append(took) }
                    } else {
                        table.handle(.report(report), at: at, into: &actions)
                    }
                    actions.removeAll(keepingCapacity: true)
                }
            }
        }
        let before = heapInUse()
        second(0, timed: false)
        let perTag = Double(heapInUse() - before) / Double(count)
        let start = clock.now
        for s in 1...max(seconds, 1) { second(s, timed: false) }
        let wall = (clock.now - start).inSeconds
        let reports = Double(count * scanners.count * max(seconds, 1))
        // Latency: a tenth of the tags walk to the room across the floor; the reports of the next
        // seconds are timed one by one.
        for tag in stride(from: 0, to: count, by: 10) {
            places[tag] = (24 - places[tag].0, 12 - places[tag].1)
        }
        for s in (seconds + 1)...(seconds + 8) { second(s, timed: true) }
        func percentile(_ values: [Double], _ p: Double) -> String {
            let sorted = values.sorted()
            guard !sorted.isEmpty else { return "–" }
            return format(sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] * 1e3, 3) + " ms"
        }
        let rooms = tagIDs.filter { table.engine($0)?.monitor.presentRoom != nil }.count
        print(
            "rooms-position: \(count) tags × 12 scanners on a floor plan (\(configuration.floors.first?.value.cellCount ?? 0) cells): "
                + "ingest \(format(reports / wall / 1e3, 1))k reports/s (one core, no broker); memory per tag "
                + "\(format(perTag / 1024, 2)) KiB (heap growth over the first second)")
        print(
            "rooms-position: a report's handling p50 \(percentile(durations, 0.5)), p99 \(percentile(durations, 0.99)); "
                + "of the \(changes.count) that changed a room p50 \(percentile(changes, 0.5)), p99 \(percentile(changes, 0.99)); "
                + "\(rooms) of \(count) tags in a room at the end")
    }

    static func isRoomEnter(_ action: Devices.Action) -> Bool {
        guard case .engine(_, .output(.transition(_, let transition))) = action else { return false }
        return transition.region.kind == .zone && transition.direction == .enter
    }
}
