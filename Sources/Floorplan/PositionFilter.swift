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
    /// Each scanner slot's last reading (µs), `.min` for none, and the level held from it (dB
    /// above the measured power, the radio's bias removed).
    var heardAt: [Int64] = []
    var peaks: [Float] = []
    /// Each scanner slot's usual seconds between readings of the tag (0 until it has two).
    var gaps: [Float] = []
    /// When the readings were last weighed (µs).
    var weighedAt: Int64 = .min
    /// The tag's power at 1 m as its readings say, dB above its claim (the radio's bias removed),
    /// and the seconds of evidence behind it: the prior the weighing holds the power to narrows
    /// from ``PositionSettings/powerSpread`` towards ``PositionSettings/learnedPowerSpread`` as it
    /// grows.
    package private(set) var power = 0.0
    package private(set) var powerEvidence = 0.0
    /// Each of ``exponentShares``' evidence (log-likelihood, fading with ``exponentMemory``), and
    /// when it was last added to.
    var exponentEvidence: [Double] = []
    var evidenceAt: Int64 = .min
    /// Room for each cell's score while weighing.
    var scratch: [Float] = []

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
    /// (the receiver's offset added). The reading is held as that scanner's peak (a body or a
    /// fade only weakens: the loudest of the last seconds is the path's level, falling by
    /// ``PositionSettings/decay`` a second), and the probability weighed by every scanner heard
    /// within ``PositionSettings/window`` together, with the tag's power at 1 m left free: a claim
    /// that is off by any number of dB moves every reading alike, and the likelihood does not see
    /// it (docs/behaviour.md §20, "Real radio"). The weight is the time since the last weighing
    /// times ``PositionSettings/rate``: readings that arrive together count once, in any order.
    package mutating func observe(
        slot: Int, level: Double, at time: Int64, building: Building, radio: RadioModel, settings: PositionSettings
    ) {
        let scanners = building.scannerSlot.count
        guard level.isFinite, slot >= 0, slot < scanners else { return }
        spread(to: time, building: building, settings: settings)
        if heardAt.count != scanners {
            heardAt = Array(repeating: .min, count: scanners)
            peaks = Array(repeating: 0, count: scanners)
            gaps = Array(repeating: 0, count: scanners)
        }
        let reading = Float(min(max(level - radio.bias, -200), 200))
        let previous = heardAt[slot]
        if previous != .min, time > previous {
            // The scanner's usual interval between readings of the tag (readings of one burst count once).
            let gap = Float(min(Double(time - previous) / 1_000_000, 3600))
            if gap > 0.05 { gaps[slot] = gaps[slot] == 0 ? gap : gaps[slot] * 0.8 + gap * 0.2 }
        }
        let decay = heldDecay(slot, settings: settings)
        if decay > 0, previous != .min, time >= previous {
            let held = peaks[slot] - decay * Float(min(Double(time - previous) / 1_000_000, 3600))
            peaks[slot] = max(reading, held)
        } else {
            peaks[slot] = reading
        }
        heardAt[slot] = max(previous, time)
        readings &+= 1
        // How much this weighing counts: the time since the last one, at the settings' rate.
        var weight = 1.0
        if weighedAt != .min {
            let (since, overflow) = time.subtractingReportingOverflow(weighedAt)
            weight = overflow || since < 0 ? 0 : min(1, Double(since) / 1_000_000 * settings.rate)
        }
        guard weight >= Self.leastWeight else { return }
        weighedAt = max(weighedAt, time)
        // The scanners heard within their window, each at its held level now.
        var active: [(slot: Int, level: Float)] = []
        for s in 0..<scanners where heardAt[s] != .min {
            let (age, overflow) = time.subtractingReportingOverflow(heardAt[s])
            guard !overflow, Double(age) <= window(s, settings: settings) * 1_000_000 else { continue }
            let faded = heldDecay(s, settings: settings) * Float(max(0, Double(age)) / 1_000_000)
            active.append((s, peaks[s] - faded - Float(power)))
        }
        guard !active.isEmpty else { return }
        let exponent = Float(radio.exponent * exponentScale)
        let (sum, best) = weigh(
            active, exponent: exponent, weight: Float(weight), building: building, radio: radio, settings: settings)
        learnExponent(
            active, cell: best, weight: weight, at: time, building: building, radio: radio, settings: settings)
        learnPower(
            active, cell: best, exponent: Double(exponent), weight: weight, building: building, radio: radio,
            settings: settings)
        normalise(total: sum, building: building, share: Float(min(0.5, settings.jump * weight)))
    }

    /// How loud each room's scanners hear the tag together at `time` (an open plan's rooms,
    /// docs/behaviour.md §20): by room slot, the power sum of the two loudest of its scanners heard
    /// within their window, each at its held level, dB above the tag's power; `nil` for a room
    /// none of whose scanners heard it. The tag's power is common to every room: a claim that is
    /// off moves no room against another.
    package func loudness(at time: Int64, building: Building, settings: PositionSettings) -> [Double?] {
        var loudest = [(Double, Double)?](repeating: nil, count: building.zones.count)
        for slot in heardAt.indices where heardAt[slot] != .min && slot < building.scannerRoom.count {
            let room = building.scannerRoom[slot]
            let (age, overflow) = time.subtractingReportingOverflow(heardAt[slot])
            guard room >= 0, !overflow, Double(age) <= window(slot, settings: settings) * 1_000_000 else { continue }
            let level = Double(
                peaks[slot] - heldDecay(slot, settings: settings) * Float(max(0, Double(age)) / 1_000_000))
            let (first, second) = loudest[room] ?? (-.infinity, -.infinity)
            loudest[room] = level > first ? (level, first) : (first, max(second, level))
        }
        return loudest.map { pair in
            pair.map { first, second in
                second == -.infinity ? first : first + 10 * log10(1 + pow(10, (second - first) / 10))
            }
        }
    }

    /// Seconds a scanner's reading stands for: ``PositionSettings/window``, or two and a half of
    /// that scanner's usual intervals where it reads the tag more slowly (a tag advertising every
    /// 3 s is weighed on every scanner's last reading, not on one at a time).
    func window(_ slot: Int, settings: PositionSettings) -> Double {
        max(0, min(max(settings.window, 2.5 * Double(gaps[slot])), 3600))
    }

    /// How fast a scanner's held level falls, dB a second: ``PositionSettings/decay`` over the
    /// settings' window, slower over a longer one (a reading loses as much over its window).
    func heldDecay(_ slot: Int, settings: PositionSettings) -> Float {
        let decay = max(0, settings.decay)
        guard decay > 0 else { return 0 }
        return Float(decay * max(settings.window, 1e-6) / max(window(slot, settings: settings), 1e-6))
    }

    /// The least weight a weighing is made with: readings closer together wait for the next.
    static let leastWeight = 1.0 / 64

    /// Multiplies every cell's probability by the likelihood of the `active` scanners' levels from
    /// there, the tag's power at 1 m profiled out (the most likely offset under a prior of
    /// ``PositionSettings/powerSpread`` dB about the claim), tempered by `weight`. The sum of the
    /// probabilities after, and the likeliest cell.
    mutating func weigh(
        _ active: [(slot: Int, level: Float)], exponent: Float, weight: Float, building: Building, radio: RadioModel,
        settings: PositionSettings
    ) -> (sum: Float, best: Int) {
        let cells = building.cellCount
        let sigma = Float(max(0.5, settings.sigma))
        let spread = Float(powerSpread(settings))
        let ridge = (sigma * sigma) / (spread * spread)
        let count = Float(active.count)
        let wall = Float(radio.wallLoss)
        let slab = Float(radio.floorLoss)
        let scale = weight / (2 * sigma * sigma)
        if scratch.count != cells { scratch = Array(repeating: 0, count: cells) }
        var highest = -Float.infinity
        scratch.withUnsafeMutableBufferPointer { score in
            for c in 0..<cells { score[c] = 0 }
            var sums = [Float](repeating: 0, count: cells)
            sums.withUnsafeMutableBufferPointer { s1 in
                building.logDistance.withUnsafeBufferPointer { distances in
                    building.wallsCrossed.withUnsafeBufferPointer { walls in
                        building.floorsCrossed.withUnsafeBufferPointer { floors in
                            for (slot, level) in active {
                                let start = slot * cells
                                for c in 0..<cells {
                                    // The reading's departure from the level expected in cell c at 1 m's power 0.
                                    var e = level + exponent * distances[start + c] + wall * walls[start + c]
                                    if !floors.isEmpty { e += slab * floors[start + c] }
                                    s1[c] += e
                                    score[c] += e * e
                                }
                            }
                        }
                    }
                }
                for c in 0..<cells {
                    // The residual sum of squares with the common offset fitted: S2 - S1² / (k + ridge).
                    let value = -(score[c] - s1[c] * s1[c] / (count + ridge)) * scale
                    score[c] = value
                    highest = max(highest, value)
                }
            }
        }
        var total: Float = 0
        var best = 0
        var bestValue = -Float.infinity
        probability.withUnsafeMutableBufferPointer { p in
            scratch.withUnsafeBufferPointer { score in
                for c in 0..<cells {
                    let value = p[c] * Float(exp(Double(score[c] - highest)))
                    p[c] = value
                    total += value
                    if value > bestValue {
                        bestValue = value
                        best = c
                    }
                }
            }
        }
        return (total, best)
    }

    /// The prior's spread about the learned power, dB: ``PositionSettings/powerSpread`` at first,
    /// narrowing with the evidence (as one over its root, every minute: 21 dB after one, 12 after
    /// five) to
    /// ``PositionSettings/learnedPowerSpread``.
    func powerSpread(_ settings: PositionSettings) -> Double {
        let wide = max(0.5, settings.powerSpread)
        return max(min(wide, max(0.5, settings.learnedPowerSpread)), wide / (1 + powerEvidence / 60).squareRoot())
    }

    /// Moves the learned power towards the offset the `active` levels fit at the likeliest cell
    /// (three scanners or more), by the share of ``PositionSettings/powerMemory`` this weighing
    /// stands for; held within ``RadioModel/biases``-sized limits (±20 dB of the claim).
    mutating func learnPower(
        _ active: [(slot: Int, level: Float)], cell: Int, exponent: Double, weight: Double, building: Building,
        radio: RadioModel, settings: PositionSettings
    ) {
        guard active.count >= 3 else { return }
        let sigma = max(0.5, settings.sigma)
        let spread = powerSpread(settings)
        var sum = 0.0
        for (slot, level) in active {
            sum += Self.departure(level, slot: slot, cell: cell, exponent: exponent, building: building, radio: radio)
        }
        // The offset fitted there, about the power already learned (the levels have it removed).
        let offset = sum / (Double(active.count) + sigma * sigma / (spread * spread))
        let seconds = weight / max(settings.rate, 1e-6)
        let share = min(1, seconds / max(settings.powerMemory, 1e-6))
        power = min(max(power + share * offset, -Self.powerLimit), Self.powerLimit)
        powerEvidence = min(powerEvidence + seconds, 86_400)
    }

    /// How far a level (dB above the tag's power) lies above what scanner slot `slot` expects from
    /// cell `cell` at power 0: the distance's, the walls' and the floors' losses added back.
    static func departure(
        _ level: Float, slot: Int, cell: Int, exponent: Double, building: Building, radio: RadioModel
    ) -> Double {
        let index = slot * building.cellCount + cell
        var e = Double(level) + exponent * Double(building.logDistance[index])
        e += radio.wallLoss * Double(building.wallsCrossed[index])
        if !building.floorsCrossed.isEmpty { e += radio.floorLoss * Double(building.floorsCrossed[index]) }
        return e
    }

    /// The farthest the learned power goes from the claim, dB.
    static let powerLimit = 20.0

    /// The exponents a tag's readings are weighed against, as shares of the building's: the site's
    /// path loss is learned among them from the tag's own readings (docs/behaviour.md §20), the
    /// building's given or learned one favoured by the prior.
    static let exponentShares = [0.64, 0.8, 1.0, 1.28]
    /// The prior's log-weight of each share (the building's own: 0).
    static let exponentPrior = [-2.0, -1.0, 0, -1.0]
    /// Seconds over which the exponent's evidence is remembered.
    static let exponentMemory = 120.0

    /// The share of the building's exponent the tag's readings fit best, with the prior.
    var exponentScale: Double {
        guard exponentEvidence.count == Self.exponentShares.count else { return 1 }
        var best = 2
        var bestValue = -Double.infinity
        for index in Self.exponentShares.indices {
            let value = exponentEvidence[index] + Self.exponentPrior[index]
            if value > bestValue {
                bestValue = value
                best = index
            }
        }
        return Self.exponentShares[best]
    }

    /// Adds to each exponent's evidence how well the `active` levels fit it at the likeliest cell
    /// (three scanners or more: with fewer, the offset explains any two).
    mutating func learnExponent(
        _ active: [(slot: Int, level: Float)], cell: Int, weight: Double, at time: Int64, building: Building,
        radio: RadioModel, settings: PositionSettings
    ) {
        guard active.count >= 3 else { return }
        if exponentEvidence.count != Self.exponentShares.count {
            exponentEvidence = Array(repeating: 0, count: Self.exponentShares.count)
        }
        let sigma = max(0.5, settings.sigma)
        let ridge = sigma * sigma / (powerSpread(settings) * powerSpread(settings))
        let elapsed = evidenceAt == .min ? 0 : max(0, min(Double(time &- evidenceAt) / 1_000_000, 3600))
        evidenceAt = time
        let keep = exp(-elapsed / Self.exponentMemory)
        for (index, share) in Self.exponentShares.enumerated() {
            let exponent = radio.exponent * share
            var (s1, s2) = (0.0, 0.0)
            for (slot, level) in active {
                let e = Self.departure(
                    level, slot: slot, cell: cell, exponent: exponent, building: building, radio: radio)
                s1 += e
                s2 += e * e
            }
            let fit = -(s2 - s1 * s1 / (Double(active.count) + ridge)) / (2 * sigma * sigma)
            exponentEvidence[index] = exponentEvidence[index] * keep + weight * fit
        }
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
        let limit = Float(radio.bias + power - audible)
        let exponent = Float(radio.exponent * exponentScale)
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
