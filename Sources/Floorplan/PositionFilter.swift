import Foundation

/// Where one tag is in a building (docs/behaviour.md §20): a probability for every cell of every
/// floor's grid (a histogram Bayes filter; docs/architecture.md says why this method). Between
/// readings the probability spreads to neighbouring cells as a person may walk, never through a
/// wall where the floor has doors, and between floors only on the stairs; each reading weighs
/// every cell of every floor by how likely that reading is from there (the radio model: distance,
/// walls and floors to the scanner). Deterministic: the same readings at the same instants give
/// the same figures, bit for bit.
package struct PositionFilter: Sendable {
    /// Per cell, summing to 1.
    package internal(set) var probability: [Float]
    /// Per room slot of the building, and outside every room.
    package private(set) var rooms: [Float]
    package private(set) var unroomed: Float = 0
    /// Per floor of the building: all of it, and the share outside every room.
    package private(set) var floors: [Float]
    package private(set) var outside: [Float]
    /// The instant (µs) the spread was last brought up to, and the seconds of it not yet applied.
    var at: Int64 = .min
    var pending = 0.0
    /// How many readings it has taken.
    package private(set) var readings = 0
    /// Each scanner slot's last reading (µs), `.min` for none.
    var heardAt: [Int64] = []

    /// The longest spread applied at once, in passes; a longer silence also mixes in some of the
    /// whole floor.
    static let maximumPasses = 32
    /// The share of the whole floor mixed in at every reading: a tag is never ruled out anywhere.
    static let floorShare: Float = 1e-4

    /// Uniform over `building`.
    package init(building: Building) {
        let cells = building.cellCount
        probability = Array(repeating: 1 / Float(cells), count: cells)
        rooms = building.floors.flatMap(\.roomCells).map { Float($0) / Float(cells) }
        unroomed = 1 - rooms.reduce(0, +)
        floors = building.floors.map { Float($0.cellCount) / Float(cells) }
        outside = building.floors.map { Float($0.cellCount - $0.roomCells.reduce(0, +)) / Float(cells) }
    }

    /// The seconds one spreading pass stands for: each pass adds half a cell squared of variance
    /// along each axis.
    static func passSeconds(building: Building, settings: PositionSettings) -> Double {
        let cell = building.floors.first?.cell ?? FloorMap.finestCell
        return 0.5 * cell * cell / max(settings.spread, 1e-6)
    }

    /// A reading of scanner slot `slot` at `time` (µs): `level` dB above the tag's measured power
    /// (the receiver's offset added). It counts for the share of ``PositionSettings/correlation``
    /// since that scanner's previous reading.
    package mutating func observe(
        slot: Int, level: Double, at time: Int64, building: Building, radio: RadioModel, settings: PositionSettings
    ) {
        let scanners = building.scannerSlot.count
        guard level.isFinite, slot >= 0, slot < scanners else { return }
        spread(to: time, building: building, settings: settings)
        if heardAt.count != scanners { heardAt = Array(repeating: .min, count: scanners) }
        var weight = 1.0
        let (since, overflow) = time.subtractingReportingOverflow(heardAt[slot])
        let correlation = settings.correlation(for: radio)
        if heardAt[slot] != .min, !overflow, since >= 0, correlation > 0 {
            weight = min(1, Double(since) / 1_000_000 / correlation)
        }
        heardAt[slot] = max(heardAt[slot], time)
        let cells = building.cellCount
        let table = settings.likelihood(for: radio).tables
        let base = Likelihood.level(weight) * Likelihood.count
        let last = Float(Likelihood.count - 1)
        let reading = Float(level - radio.bias)
        let exponent = Float(radio.exponent)
        let wall = Float(radio.wallLoss)
        let scale = 1 / Likelihood.step
        let offset = Likelihood.range
        let slab = Float(radio.floorLoss)
        var total: Float = 0
        probability.withUnsafeMutableBufferPointer { p in
            building.logDistance.withUnsafeBufferPointer { distances in
                building.wallsCrossed.withUnsafeBufferPointer { walls in
                    building.floorsCrossed.withUnsafeBufferPointer { floors in
                        table.withUnsafeBufferPointer { table in
                            let start = slot * cells
                            if floors.isEmpty {
                                for c in 0..<cells {
                                    // The departure of the reading from the level expected in cell c.
                                    let e = reading + exponent * distances[start + c] + wall * walls[start + c]
                                    let index = min(max((e + offset) * scale, 0), last)
                                    p[c] *= table[base + Int(index)]
                                    total += p[c]
                                }
                            } else {
                                for c in 0..<cells {
                                    let e =
                                        reading + exponent * distances[start + c] + wall * walls[start + c]
                                        + slab * floors[start + c]
                                    let index = min(max((e + offset) * scale, 0), last)
                                    p[c] *= table[base + Int(index)]
                                    total += p[c]
                                }
                            }
                        }
                    }
                }
            }
        }
        normalise(total: total, building: building, share: Float(settings.jump))
        readings &+= 1
    }

    /// How many scanners have heard the tag in the `seconds` up to `time`.
    package func scannersHeard(within seconds: Double, of time: Int64) -> Int {
        let window = Int64(max(0, min(seconds, 86_400)) * 1_000_000)
        var count = 0
        for at in heardAt where at != .min {
            let (since, overflow) = time.subtractingReportingOverflow(at)
            if !overflow, since <= window { count += 1 }
        }
        return count
    }

    /// Whether a scanner that heard the tag before has been silent for `window` seconds up to
    /// `time` while another heard it, though over most of the probability it would hear the tag
    /// at `audible` dB above its measured power or more: a silence the position does not explain
    /// (the scanner died, or the position is wrong; docs/behaviour.md §20).
    package func silenceUnexplained(
        within window: Double, of time: Int64, building: Building, radio: RadioModel, audible: Double
    ) -> Bool {
        guard heardAt.count == building.scannerSlot.count else { return false }
        let span = Int64(max(0, min(window, 86_400)) * 1_000_000)
        func silent(_ at: Int64) -> Bool? {
            guard at != .min else { return nil }
            let (since, overflow) = time.subtractingReportingOverflow(at)
            return overflow || since > span
        }
        guard heardAt.contains(where: { silent($0) == false }) else { return false }
        let cells = building.cellCount
        // Heard at `audible` or more where exponent · 10 log10(d) + wallLoss · walls (+ the floors'
        // loss) <= bias - audible.
        let limit = Float(radio.bias - audible)
        let exponent = Float(radio.exponent)
        let wall = Float(radio.wallLoss)
        let slab = Float(radio.floorLoss)
        let floors = building.floorsCrossed
        for slot in heardAt.indices where silent(heardAt[slot]) == true {
            var share: Float = 0
            let start = slot * cells
            for c in 0..<cells {
                var loss = exponent * building.logDistance[start + c] + wall * building.wallsCrossed[start + c]
                if !floors.isEmpty { loss += slab * floors[start + c] }
                if loss <= limit { share += probability[c] }
            }
            if share > 0.5 { return true }
        }
        return false
    }

    /// Spreads the probability for the time from the last reading to `time`.
    mutating func spread(to time: Int64, building: Building, settings: PositionSettings) {
        defer { at = max(at, time) }
        guard at != .min else { return }
        let (elapsed, overflow) = time.subtractingReportingOverflow(at)
        guard !overflow, elapsed > 0 else { return }
        pending += Double(elapsed) / 1_000_000
        let seconds = Self.passSeconds(building: building, settings: settings)
        let wanted = (pending / seconds).rounded(.down)
        guard wanted >= 1 else { return }
        pending -= wanted * seconds
        let passes = Int(min(wanted, Double(Self.maximumPasses)))
        for _ in 0..<passes {
            for (floor, map) in building.floors.enumerated() { pass(map: map, from: building.offsets[floor]) }
            climb(building)
        }
        if wanted > Double(Self.maximumPasses) {
            // Silent long enough to have gone anywhere on the floor: some of it goes there.
            let beyond = (wanted - Double(Self.maximumPasses)) * seconds
            let share = Float(min(0.5, beyond / 120))
            let even = share / Float(building.cellCount)
            for c in probability.indices { probability[c] = probability[c] * (1 - share) + even }
        }
    }

    /// One pass of spreading on the floor `map` whose cells start at `from`: a quarter of the
    /// difference with each neighbour flows across, along each row then each column, unless a wall
    /// without a door stands between them.
    mutating func pass(map: FloorMap, from: Int) {
        let (columns, rows) = (map.columns, map.rows)
        probability.withUnsafeMutableBufferPointer { whole in
            guard let base = whole.baseAddress else { return }
            let p = UnsafeMutableBufferPointer(start: base + from, count: map.cellCount)
            map.blockedX.withUnsafeBufferPointer { blockedX in
                map.blockedY.withUnsafeBufferPointer { blockedY in
                    if columns > 1 {
                        for row in 0..<rows {
                            let start = row * columns
                            var old = p[start]
                            for c in start..<(start + columns - 1) {
                                let next = p[c + 1]
                                if !blockedX[c] {
                                    let flow = 0.25 * (next - old)
                                    p[c] += flow
                                    p[c + 1] -= flow
                                }
                                old = next
                            }
                        }
                    }
                    if rows > 1 {
                        for column in 0..<columns {
                            var c = column
                            var old = p[c]
                            while c + columns < rows * columns {
                                let next = p[c + columns]
                                if !blockedY[c] {
                                    let flow = 0.25 * (next - old)
                                    p[c] += flow
                                    p[c + columns] -= flow
                                }
                                old = next
                                c += columns
                            }
                        }
                    }
                }
            }
        }
    }

    /// One pass on the stairs: a quarter of the difference between their two ends flows across.
    mutating func climb(_ building: Building) {
        for (a, b) in building.stairCells {
            let flow = 0.25 * (probability[b] - probability[a])
            probability[a] += flow
            probability[b] -= flow
        }
    }

    /// Scales to a sum of 1, mixes in ``floorShare`` of the whole building, and sums the rooms and
    /// the floors.
    mutating func normalise(total: Float, building: Building, share: Float = floorShare) {
        let cells = building.cellCount
        let even = share / Float(cells)
        guard total.isFinite, total > 0 else {
            // Nothing left anywhere (cannot happen with the outlier floor): start over.
            self = PositionFilter(building: building)
            return
        }
        let scale = (1 - share) / total
        var outside: Float = 0
        for index in rooms.indices { rooms[index] = 0 }
        for (floor, map) in building.floors.enumerated() {
            let (from, firstRoom) = (building.offsets[floor], building.roomOffsets[floor])
            var (mass, unplaced): (Float, Float) = (0, 0)
            probability.withUnsafeMutableBufferPointer { p in
                map.cellRoom.withUnsafeBufferPointer { cellRoom in
                    rooms.withUnsafeMutableBufferPointer { sums in
                        for c in 0..<map.cellCount {
                            let value = p[from + c] * scale + even
                            p[from + c] = value
                            mass += value
                            let room = Int(cellRoom[c])
                            if room >= 0 {
                                sums[firstRoom + room] += value
                            } else {
                                outside += value
                                unplaced += value
                            }
                        }
                    }
                }
            }
            floors[floor] = mass
            self.outside[floor] = unplaced
        }
        unroomed = outside
    }

    /// The probability on the cells within reach of an exit door.
    package func byExit(_ building: Building) -> Float {
        building.exitCells.reduce(0) { $0 + probability[$1] }
    }

    /// The probability's mean and its spread on floor `floor`: the tag's position there and one
    /// standard deviation of its distance from it, metres.
    package func estimate(building: Building, floor: Int = 0) -> (point: PlanPoint, error: Double) {
        let map = building.floors[floor]
        let from = building.offsets[floor]
        var (sx, sy, sxx, syy, total) = (0.0, 0.0, 0.0, 0.0, 0.0)
        for c in 0..<map.cellCount {
            let weight = Double(probability[from + c])
            guard weight > 0 else { continue }
            let point = map.center(c)
            sx += weight * point.x
            sy += weight * point.y
            sxx += weight * point.x * point.x
            syy += weight * point.y * point.y
            total += weight
        }
        guard total > 0 else { return (map.center(0), 0) }
        let (mx, my) = (sx / total, sy / total)
        let variance = max(0, sxx / total - mx * mx) + max(0, syy / total - my * my)
        return (PlanPoint(mx, my), variance.squareRoot())
    }
}
