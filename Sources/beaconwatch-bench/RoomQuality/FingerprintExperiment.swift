import BeaconCore
import Foundation
import Simulation

extension RoomQualityBench {
    /// Learning rooms from training (issue 59), measured before it is built: on each one-storey floor
    /// a tag walked about each room for 60 s (four spots, 15 s between them, as a user training a
    /// room would), then the floor's own walkers and still tags (other draws) classified every second
    /// from each scanner's mean reading over the last 5 s, by three rules: the nearest scanner's room,
    /// k nearest training vectors (k = 5, an unheard scanner at -100 dB), and a Gaussian per room
    /// and scanner (with the chance that the scanner hears the room at all). Prints each rule's share
    /// of seconds in the right room, still tags and walkers, and again with every test tag 4 dB
    /// quieter than the training one.
    func fingerprintExperiment() {
        print("fingerprints: \(pad("scenario", 30)) \(pad("rule", 36)) right: still tags / walkers")
        for scenario in Self.scenarios(scale: scale)
        where (only.map { scenario.name.contains($0) } ?? true) && scenario.simulation.floor.storeys == 1
            && scenario.dies == nil && scenario.shuttles.isEmpty
        {
            let floor = scenario.simulation.floor
            var training = scenario.simulation
            training.duration = 60
            training.seed = scenario.simulation.seed &+ 59
            var random = SeededGenerator(seed: training.seed)
            let trainers = floor.rooms.map { room in
                training.shuttle(along: (0..<4).map { _ in Self.spot(in: room.rect, random: &random) }, segment: 15)
            }
            let samples = Self.vectors(training.heard(trainers), scanners: floor.scanners.count, seconds: 60) {
                tag, _ in tag
            }
            let model = FingerprintModel(samples: samples, rooms: floor.rooms.count, scanners: floor.scanners.count)
            let simulation = scenario.simulation
            let movers = simulation.movers()
            let still = Set(simulation.walkers..<movers.count)
            for quieter in [0.0, 4.0] {
                var heard = simulation.heard(movers)
                for index in heard.indices { heard[index].rssi -= quieter }
                let tests = Self.vectors(heard, scanners: floor.scanners.count, seconds: simulation.duration) {
                    tag, time in movers[tag].position(at: time).flatMap(floor.room(at:))
                }
                model.report(
                    scenario.name, tests: tests, still: still, roomOf: floor.scanners.map(\.room), quieter: quieter)
            }
        }
    }

    /// A point in `rect` at least half a metre from its edges.
    static func spot(in rect: Floor.Rect, random: inout SeededGenerator) -> Floor.Point {
        let margin = min(0.5, (rect.x1 - rect.x0) / 4, (rect.y1 - rect.y0) / 4)
        return Floor.Point(
            Double.random(in: (rect.x0 + margin)...(rect.x1 - margin), using: &random),
            Double.random(in: (rect.y0 + margin)...(rect.y1 - margin), using: &random))
    }

    /// Every tag's vector each second from 5 s on: each scanner's mean reading over the last 5 s
    /// (`nil`: not heard), with the room `label` gives (the trainer's room, or the truth).
    static func vectors(
        _ heard: [FloorSimulation.Heard], scanners: Int, seconds: Double, label: (Int, Double) -> Int?
    ) -> [FingerprintModel.Sample] {
        var byTag: [Int: [FloorSimulation.Heard]] = [:]
        for reading in heard { byTag[reading.tag, default: []].append(reading) }
        var samples: [FingerprintModel.Sample] = []
        for tag in byTag.keys.sorted() {
            let readings = byTag[tag] ?? []
            var start = 0
            var second = 5.0
            while second <= seconds {
                while start < readings.count, readings[start].time <= second - 5 { start += 1 }
                var sums = Array(repeating: 0.0, count: scanners)
                var counts = Array(repeating: 0, count: scanners)
                var index = start
                while index < readings.count, readings[index].time <= second {
                    sums[readings[index].scanner] += readings[index].rssi
                    counts[readings[index].scanner] += 1
                    index += 1
                }
                if let room = label(tag, second), counts.contains(where: { $0 > 0 }) {
                    let levels = zip(sums, counts).map { $1 > 0 ? $0 / Double($1) : nil }
                    samples.append(FingerprintModel.Sample(tag: tag, room: room, levels: levels))
                }
                second += 1
            }
        }
        return samples
    }
}

/// Rooms learned from training vectors (``RoomQualityBench/fingerprintExperiment()``).
struct FingerprintModel {
    struct Sample {
        var tag: Int
        var room: Int
        var levels: [Double?]
    }

    let samples: [Sample]
    /// By room and scanner: the mean and spread of its readings, and the share of samples it heard.
    let mean: [[Double]]
    let sigma: [[Double]]
    let heard: [[Double]]

    init(samples: [Sample], rooms: Int, scanners: Int) {
        self.samples = samples
        var mean = Array(repeating: Array(repeating: -100.0, count: scanners), count: rooms)
        var sigma = Array(repeating: Array(repeating: 4.0, count: scanners), count: rooms)
        var heard = Array(repeating: Array(repeating: 0.0, count: scanners), count: rooms)
        for room in 0..<rooms {
            let mine = samples.filter { $0.room == room }
            for scanner in 0..<scanners {
                let values = mine.compactMap { $0.levels[scanner] }
                guard !mine.isEmpty else { continue }
                heard[room][scanner] = Double(values.count) / Double(mine.count)
                guard !values.isEmpty else { continue }
                let average = values.reduce(0, +) / Double(values.count)
                let variance = values.reduce(0) { $0 + ($1 - average) * ($1 - average) } / Double(values.count)
                mean[room][scanner] = average
                sigma[room][scanner] = max(2, variance.squareRoot())
            }
        }
        (self.mean, self.sigma, self.heard) = (mean, sigma, heard)
    }

    /// The room of the strongest scanner.
    func nearest(_ levels: [Double?], roomOf: [Int]) -> Int {
        var best = 0
        for index in levels.indices where (levels[index] ?? -200) > (levels[best] ?? -200) { best = index }
        return roomOf[best]
    }

    /// The most common room of the `k` training vectors nearest to `levels` (-100 dB unheard).
    func nearestNeighbours(_ levels: [Double?], k: Int = 5) -> Int {
        var distances: [(Double, Int)] = samples.map { sample in
            var sum = 0.0
            for (a, b) in zip(levels, sample.levels) {
                let d = (a ?? -100) - (b ?? -100)
                sum += d * d
            }
            return (sum, sample.room)
        }
        distances.sort { $0.0 < $1.0 }
        var votes: [Int: Int] = [:]
        for (_, room) in distances.prefix(k) { votes[room, default: 0] += 1 }
        return votes.max { ($0.value, -$0.key) < ($1.value, -$1.key) }?.key ?? 0
    }

    /// The room whose Gaussians make `levels` likeliest.
    func gaussian(_ levels: [Double?]) -> Int {
        var best = (room: 0, score: -Double.infinity)
        for room in mean.indices {
            var score = 0.0
            for (scanner, level) in levels.enumerated() {
                let share = min(max(heard[room][scanner], 0.02), 0.98)
                if let level {
                    let e = (level - mean[room][scanner]) / sigma[room][scanner]
                    score += log(share) - e * e / 2 - log(sigma[room][scanner])
                } else {
                    score += log(1 - share)
                }
            }
            if score > best.score { best = (room, score) }
        }
        return best.room
    }

    func report(_ scenario: String, tests: [Sample], still: Set<Int>, roomOf: [Int], quieter: Double) {
        let rules: [(String, ([Double?]) -> Int)] = [
            ("nearest scanner", { nearest($0, roomOf: roomOf) }), ("k nearest (5)", { nearestNeighbours($0) }),
            ("Gaussian per room", { gaussian($0) }),
        ]
        for (name, rule) in rules {
            var right = [0, 0]
            var total = [0, 0]
            for sample in tests {
                let kind = still.contains(sample.tag) ? 0 : 1
                total[kind] += 1
                if rule(sample.levels) == sample.room { right[kind] += 1 }
            }
            func share(_ kind: Int) -> String {
                String(format: "%.1f%%", Double(right[kind]) / Double(max(total[kind], 1)) * 100)
            }
            let label = quieter == 0 ? "" : " (\(Int(quieter)) dB quieter)"
            print("fingerprints: \(pad(scenario, 30)) \(pad(name + label, 36)) \(share(0)) / \(share(1))")
        }
    }
}
