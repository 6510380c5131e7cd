import Foundation

/// How a signal weakens on a floor (docs/behaviour.md §20): a reading, in dB above the
/// transmitter's measured power at 1 m (with the receiver's offset), is expected at
/// `bias - 10 · exponent · log10(distance) - wallLoss · walls crossed - floorLoss · floors
/// crossed`. Learned from what the scanners hear of each other at known distances through known
/// walls and floors (``fit(_:defaults:)``), else these defaults.
package struct RadioModel: Sendable, Hashable, CustomStringConvertible {
    /// dB at 1 m above the measured power (0 when the tags' measured power is right).
    package var bias: Double
    package var exponent: Double
    /// dB lost through a wall.
    package var wallLoss: Double
    /// dB lost through a floor (between two storeys).
    package var floorLoss: Double
    /// How many scanner pairs the figures were learned from (0: defaults).
    package var pairs: Int
    /// How readings spread about the level expected, dB, as the scanners hear each other
    /// (``ScannerCalibration``'s windows): the noise of each reading and the shadowing that lasts
    /// longer; `nil` until learned. The position estimator reads with them
    /// (``PositionSettings/reading(_:)``).
    package private(set) var noise: Double?
    package private(set) var shadowing: Double?
    /// The likelihood of a reading with that spread (``PositionSettings/likelihood(for:)``).
    private(set) var likelihood: Likelihood?

    package init(bias: Double = 0, exponent: Double = 2.5, wallLoss: Double = 3, floorLoss: Double = 10, pairs: Int = 0)
    {
        self.floorLoss = floorLoss
        self.bias = bias
        self.exponent = exponent
        self.wallLoss = wallLoss
        self.pairs = pairs
    }

    /// Readings spread by `noise` dB each and `shadowing` dB that lasts longer (each held to
    /// ``spreads``): the estimator weighs them by the true noise and shadowing added, above the level
    /// expected, and 1.4 times that below (a body or multipath weakens more often than anything
    /// strengthens). The true figures from the learned: multipath dips make the noise read about
    /// 1.2 times high, and a window of 31 readings holds about three quarters of shadowing that
    /// lasts 10 s (the benchmark's radio, 2 dB of noise and 3 dB of shadowing, is learned as 2.4 and
    /// 2.3 and read with the 5 and 7 dB chosen there; its independent 2.5 dB, learned as 3.0, with
    /// 2.5 and 3.5: docs/performance.md).
    package mutating func learn(noise: Double, shadowing: Double) {
        guard noise.isFinite, shadowing.isFinite else { return }
        let noise = min(max(noise, Self.spreads.lowerBound), Self.spreads.upperBound)
        let shadowing = min(max(shadowing, 0), Self.spreads.upperBound)
        self.noise = noise
        self.shadowing = shadowing
        let above = 0.83 * noise + 1.3 * shadowing
        likelihood = Likelihood(sigmaAbove: above, sigmaBelow: 1.4 * above, outlier: 0.05)
    }

    /// How much of the readings' spread lasts (0…1): 1.5 times the shadowing against the noise, at
    /// most 1 (the benchmark's radio, 2.1 dB of each learned, is at 1 and keeps the contest chosen
    /// there: docs/performance.md); 0 where readings are independent; `nil` until learned.
    package var steadiness: Double? {
        guard let noise, let shadowing, noise > 0 else { return nil }
        return min(1, 1.5 * shadowing / noise)
    }

    /// The spreads learned are held within these, dB.
    package static let spreads = 0.5...10.0

    package static func == (lhs: RadioModel, rhs: RadioModel) -> Bool {
        lhs.bias == rhs.bias && lhs.exponent == rhs.exponent && lhs.wallLoss == rhs.wallLoss
            && lhs.floorLoss == rhs.floorLoss && lhs.pairs == rhs.pairs && lhs.noise == rhs.noise
            && lhs.shadowing == rhs.shadowing
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(bias)
        hasher.combine(exponent)
        hasher.combine(wallLoss)
        hasher.combine(noise)
    }

    /// The limits a fit is held to: any building's radio lies within them.
    package static let exponents = 1.5...4.5
    package static let wallLosses = 0.0...15.0
    package static let biases = -15.0...15.0
    package static let floorLosses = 0.0...40.0

    /// The level expected at `distance` metres through `walls` walls and `floors` floors.
    package func level(distance: Double, walls: Double, floors: Double = 0) -> Double {
        bias - 10 * exponent * log10(max(distance, 0.25)) - wallLoss * walls - floorLoss * floors
    }

    /// One pair of scanners that hear each other: their distance, the walls and floors between,
    /// and the level (the mean of both directions, each above the transmitter's power, offsets
    /// removed).
    package struct Pair: Sendable, Hashable {
        package var distance: Double
        package var walls: Double
        package var floors: Double
        package var level: Double

        package init(distance: Double, walls: Double, floors: Double = 0, level: Double) {
            self.distance = distance
            self.walls = walls
            self.floors = floors
            self.level = level
        }
    }

    /// The least-squares fit of bias, exponent and wall loss to `pairs` (drawn towards the usual
    /// power at 1 m and exponent where the pairs say little), each within its limits:
    /// all three when the pairs span distances and walls, the exponent and wall loss with the
    /// bias at 0 when they do not; the floor loss too where pairs hear each other across a floor;
    /// `nil` for fewer than three pairs (the defaults stand).
    package static func fit(_ pairs: [Pair], defaults: RadioModel = RadioModel()) -> RadioModel? {
        guard pairs.count >= 3 else { return nil }
        // Columns: 1, -10 log10 d, -walls, -floors.
        var rows = pairs.map { [1, -10 * log10(max($0.distance, 0.25)), -$0.walls, -$0.floors] }
        var values = pairs.map(\.level)
        // A light pull towards what rooms usually are (the tags' own power at 1 m, exponent 2.5),
        // far less than one pair weighs: where the pairs' distances are all alike, power and
        // exponent explain them equally well together (a two-storey house's pairs are 5.5–7.4 m
        // apart: fitted as 9 dB and 3.6 without it), and the usual values decide; pairs that span
        // distances move the fit by a few hundredths.
        rows += [[0.3, 0, 0, 0], [0, 1, 0, 0]]
        values += [0, 2.5]
        // The wall loss is learned wherever pairs cross walls; the power at 1 m only where they
        // cross different numbers of walls (else it and the walls say the same thing).
        let anyWalls = pairs.contains { $0.walls > 0 }
        let varied = Set(pairs.map(\.walls)).count > 1
        let floors = pairs.contains { $0.floors > 0 } && pairs.contains { $0.floors == 0 } ? [3] : []
        var columns = (varied ? [0, 1, 2] : (anyWalls ? [1, 2] : [0, 1])) + floors
        var solution = solve(rows, values, columns: columns)
        // A bias the pairs cannot pin down (or beyond reason): fitted at 0.
        if columns.first == 0, !(solution?.first.map(biases.contains) ?? false) {
            columns = (anyWalls ? [1, 2] : [1]) + floors
            solution = solve(rows, values, columns: columns)
        }
        guard let solution else { return nil }
        var model = defaults
        model.pairs = pairs.count
        for (index, column) in columns.enumerated() {
            let value = solution[index]
            switch column {
            case 0: model.bias = min(max(value, biases.lowerBound), biases.upperBound)
            case 1: model.exponent = min(max(value, exponents.lowerBound), exponents.upperBound)
            case 2: model.wallLoss = min(max(value, wallLosses.lowerBound), wallLosses.upperBound)
            default: model.floorLoss = min(max(value, floorLosses.lowerBound), floorLosses.upperBound)
            }
        }
        if columns.first != 0 { model.bias = 0 }
        return model
    }

    /// Least squares over `columns` of `rows` by the normal equations; `nil` when singular.
    static func solve(_ rows: [[Double]], _ values: [Double], columns: [Int]) -> [Double]? {
        let n = columns.count
        var matrix = Array(repeating: Array(repeating: 0.0, count: n + 1), count: n)
        for (row, value) in zip(rows, values) {
            for i in 0..<n {
                for j in 0..<n { matrix[i][j] += row[columns[i]] * row[columns[j]] }
                matrix[i][n] += row[columns[i]] * value
            }
        }
        // Gaussian elimination with partial pivoting.
        for column in 0..<n {
            guard
                let pivot = (column..<n).max(by: { abs(matrix[$0][column]) < abs(matrix[$1][column]) }),
                abs(matrix[pivot][column]) > 1e-9
            else { return nil }
            matrix.swapAt(column, pivot)
            for row in 0..<n where row != column {
                let factor = matrix[row][column] / matrix[column][column]
                for k in column...n { matrix[row][k] -= factor * matrix[column][k] }
            }
        }
        let solution = (0..<n).map { matrix[$0][n] / matrix[$0][$0] }
        return solution.allSatisfy(\.isFinite) ? solution : nil
    }

    package var description: String {
        func text(_ value: Double) -> String { String(format: "%.1f", value) }
        let source = pairs == 0 ? "defaults" : "learned from \(pairs) scanner pair\(pairs == 1 ? "" : "s")"
        let spread = noise.map { noise in
            ", noise \(text(noise)) dB" + (shadowing.map { ", shadowing \(text($0)) dB" } ?? "")
        }
        return
            "power at 1 m \(text(bias)) dB, exponent \(text(exponent)), wall \(text(wallLoss)) dB\(spread ?? "") (\(source))"
    }
}
