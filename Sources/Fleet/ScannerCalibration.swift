import BeaconCore

/// Receivers' offsets learned from what fixed scanners hear of each other (`Scanners.calibrate =
/// auto`, docs/behaviour.md §19).
///
/// A scanner that also advertises is heard by the others: ESPresense nodes hear each other as
/// `node:<id>` (the ESPresense companion calibrates its nodes from these reports,
/// docs/espresense.md), and any scanner whose `Scanner.<id>.address` is set is known by it. The path
/// between two fixed scanners loses the same both ways, so what A reads of B less what B reads of
/// A is A's receiver offset less B's, whatever walls lie between them (each level taken above the
/// transmitter's own measured power, so nodes sending at different powers compare alike). Each
/// direction's level is a median of its readings, smoothed over minutes (a multipath dip or a burst
/// does not move it); the offsets are the least-squares fit of every pair heard both ways. A
/// scanner with its own `Scanner.<id>.rssiOffset` keeps it and the others are fitted to it; where
/// none has one, the corrections of scanners that hear each other average zero (what decides a
/// room is how scanners compare, not their absolute level).
///
/// Pure: no clock; the fit is redone after every ``refit`` readings of scanners, and when a
/// direction first has ``minimum`` readings.
package struct ScannerCalibration: Sendable, Hashable {
    /// How many readings of each direction make its level (their median).
    package static let window = 31
    /// Readings each direction needs before its pair counts.
    package static let minimum = 5
    /// Readings between two fits.
    package static let refit = 16
    /// The largest correction learned, dB either way.
    package static let limit = 20.0
    /// A pair heard weaker than this, either way (dB above the transmitter's power: -89 dBm for a
    /// node sending -59 at 1 m), does not count: near a receiver's sensitivity only the readings
    /// that happen to be strong are heard, and the weaker receiver's level reads too high.
    package static let weakest = -30.0

    /// One direction's level: the median of its last ``window`` readings at first, then each time
    /// ``window`` more have come, a quarter of the way towards their median (about the last five
    /// windows weigh in: 2.5 minutes of a node advertising every second).
    struct Window: Sendable, Hashable {
        var values: [Double] = []
        var next = 0
        var fresh = 0
        var settled: Double?
        /// The variances of ``spread``, smoothed over windows as ``settled`` is.
        var variances: (fast: Double, total: Double)?

        static func == (lhs: Window, rhs: Window) -> Bool {
            lhs.values == rhs.values && lhs.next == rhs.next && lhs.fresh == rhs.fresh && lhs.settled == rhs.settled
                && lhs.variances?.fast == rhs.variances?.fast && lhs.variances?.total == rhs.variances?.total
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(values)
            hasher.combine(settled)
        }

        mutating func add(_ value: Double) {
            if values.count < ScannerCalibration.window {
                values.append(value)
            } else {
                values[next] = value
            }
            next = (next + 1) % ScannerCalibration.window
            fresh += 1
            if fresh >= ScannerCalibration.window, let median = Self.median(values) {
                fresh = 0
                settled = settled.map { $0 + (median - $0) / 4 } ?? median
                if let spread {
                    // Variances, smoothed as the level is.
                    let now = (spread.fast * spread.fast, spread.total * spread.total)
                    variances = variances.map { ($0.0 + (now.0 - $0.0) / 4, $0.1 + (now.1 - $0.1) / 4) } ?? now
                }
            }
        }

        var level: Double? {
            settled ?? (values.count >= ScannerCalibration.minimum ? Self.median(values) : nil)
        }

        /// How the window's readings spread, dB (robust: a multipath dip or a burst does not count):
        /// `fast`, from one reading to the next (the noise of each reading), and `total`, about
        /// their median (that and the shadowing that lasts longer than a reading); `nil` until the
        /// window is full.
        var spread: (fast: Double, total: Double)? {
            guard values.count >= ScannerCalibration.window, let middle = Self.median(values) else { return nil }
            // In the order they came: the oldest is at `next`.
            var steps: [Double] = []
            steps.reserveCapacity(values.count - 1)
            for offset in 1..<values.count {
                let index = (next + offset) % values.count
                let previous = (next + offset - 1) % values.count
                steps.append(abs(values[index] - values[previous]))
            }
            guard let step = Self.median(steps), let deviation = Self.median(values.map { abs($0 - middle) })
            else { return nil }
            // The median absolute deviation of a normal spread is 0.6745 σ; a difference of two
            // readings spreads √2 times as far as one.
            return (step / 0.6745 / 2.0.squareRoot(), deviation / 0.6745)
        }

        static func median(_ values: [Double]) -> Double? {
            guard !values.isEmpty else { return nil }
            let sorted = values.sorted()
            let middle = sorted.count / 2
            return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        }
    }

    /// The scanners, in the configuration's order, and whether each keeps a given offset.
    private var ids: [String]
    private var anchored: [Bool]
    private var position: [String: Int]
    /// `heard[receiver * count + transmitter]`.
    private var heard: [Window]
    private var pending = 0
    /// dB added to each scanner's readings, by its index.
    private var learned: [Double]
    /// How many fits were made: a change here means ``pairs`` may have changed.
    package private(set) var fits = 0
    /// How many times a direction's level settled (``settledLevels`` changed).
    package private(set) var settles = 0

    /// For scanners `ids`, those in `anchored` keeping the offset they were given.
    package init(scanners ids: [String], anchored: Set<String> = []) {
        self.ids = ids
        self.anchored = ids.map { anchored.contains($0) }
        position = Dictionary(ids.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        heard = Array(repeating: Window(), count: ids.count * ids.count)
        learned = Array(repeating: 0, count: ids.count)
    }

    /// The same calibration for another set of scanners (a reload): what was heard between scanners
    /// still placed is kept.
    package func reconfigured(scanners ids: [String], anchored: Set<String>) -> ScannerCalibration {
        var next = ScannerCalibration(scanners: ids, anchored: anchored)
        for (receiver, a) in ids.enumerated() {
            for (transmitter, b) in ids.enumerated() {
                guard let oldA = position[a], let oldB = position[b] else { continue }
                next.heard[receiver * ids.count + transmitter] = heard[oldA * self.ids.count + oldB]
            }
        }
        next.fit()
        return next
    }

    /// Each direction's settled level (what a restart, or a cluster's next active, starts from:
    /// docs/behaviour.md §21), in scanner order.
    package var settledLevels: [ScannerLevel] {
        var levels: [ScannerLevel] = []
        for (a, receiver) in ids.enumerated() {
            for (b, transmitter) in ids.enumerated() {
                guard let level = heard[a * ids.count + b].settled else { continue }
                levels.append(ScannerLevel(receiver: receiver, transmitter: transmitter, level: level))
            }
        }
        return levels
    }

    /// Goes on from `levels` kept by an earlier run: each direction of two scanners still placed
    /// that has settled on nothing yet starts from its kept level, and the corrections are fitted
    /// at once. Levels out of range, or of a scanner with itself, are ignored.
    package mutating func resume(from levels: [ScannerLevel]) {
        var resumed = false
        for kept in levels {
            guard let a = position[kept.receiver], let b = position[kept.transmitter], a != b,
                kept.level.isFinite, (-200...200).contains(kept.level), heard[a * ids.count + b].settled == nil
            else { continue }
            heard[a * ids.count + b].settled = kept.level
            resumed = true
        }
        if resumed { fit() }
    }

    /// The correction learned for scanner `id`, dB added to its readings (0 when none).
    package func correction(_ id: String) -> Double {
        position[id].map { learned[$0] } ?? 0
    }

    /// Every scanner's learned correction, with how many other scanners it was compared with; a
    /// scanner compared with none is left out.
    package var corrections: [(id: String, offset: Double, pairs: Int)] {
        ids.indices.compactMap { index in
            let pairs = ids.indices.filter { pairLevels(index, $0) != nil }.count
            return pairs > 0 && !anchored[index] ? (ids[index], learned[index], pairs) : nil
        }
    }

    /// How readings between scanners spread about their level (the median over every direction
    /// of its windows' spreads, smoothed; docs/behaviour.md §20): the noise of each reading, dB, and the
    /// shadowing that lasts longer (what spreads them about their median beyond that noise);
    /// `nil` until a direction has a full window.
    package var noise: (reading: Double, shadowing: Double)? {
        var fast: [Double] = []
        var total: [Double] = []
        for (index, window) in heard.enumerated() where index / ids.count != index % ids.count {
            guard let variances = window.variances, let level = window.level, level >= Self.weakest else { continue }
            fast.append(variances.fast)
            total.append(variances.total)
        }
        guard let reading = Window.median(fast), let spread = Window.median(total) else { return nil }
        return (reading.squareRoot(), max(0, spread - reading).squareRoot())
    }

    /// Every pair heard both ways: the mean of the two directions' levels, each with its receiver's
    /// learned correction: how much the path between them loses, whatever the receivers (what a
    /// floor plan's radio is fitted to, docs/behaviour.md §20).
    package var pairs: [(a: String, b: String, level: Double)] {
        var pairs: [(a: String, b: String, level: Double)] = []
        for a in ids.indices {
            for b in ids.indices where b > a {
                guard let (ab, ba) = pairLevels(a, b) else { continue }
                pairs.append((ids[a], ids[b], (ab + learned[a] + ba + learned[b]) / 2))
            }
        }
        return pairs
    }

    /// Scanner `receiver` read `level` dB above the measured power of scanner `transmitter`'s
    /// advertisement (its own offset already added). Ignored unless both are known and differ, or
    /// when the level is not a number from -200 to 200 dB.
    package mutating func heard(receiver: String, transmitter: String, level: Double) {
        guard let a = position[receiver], let b = position[transmitter], a != b, (-200...200).contains(level) else {
            return
        }
        let settled = heard[a * ids.count + b].settled
        heard[a * ids.count + b].add(level)
        if heard[a * ids.count + b].settled != settled { settles &+= 1 }
        pending += 1
        // Also at once when this direction has just enough readings: a new pair counts from then.
        if pending >= Self.refit || heard[a * ids.count + b].values.count == Self.minimum { fit() }
    }

    /// The two directions' levels of the pair, when both have enough readings.
    private func pairLevels(_ a: Int, _ b: Int) -> (Double, Double)? {
        guard a != b, let ab = heard[a * ids.count + b].level, let ba = heard[b * ids.count + a].level,
            min(ab, ba) >= Self.weakest
        else { return nil }
        return (ab, ba)
    }

    /// The least-squares corrections: for each pair heard both ways, `c[a] - c[b]` should be
    /// `level(b hears a) - level(a hears b)`; by Gauss–Seidel sweeps, anchored scanners fixed at 0,
    /// each group of scanners linked by pairs and holding no anchor centred on 0.
    mutating func fit() {
        pending = 0
        fits &+= 1
        let count = ids.count
        var edges = Array(repeating: [(other: Int, difference: Double)](), count: count)
        for a in 0..<count {
            for b in (a + 1)..<max(a + 1, count) {
                guard let (ab, ba) = pairLevels(a, b) else { continue }
                // c[a] - c[b] = ba - ab.
                edges[a].append((b, ba - ab))
                edges[b].append((a, ab - ba))
            }
        }
        // The groups of scanners linked by pairs.
        var group = Array(repeating: -1, count: count)
        var groups: [[Int]] = []
        for start in 0..<count where group[start] < 0 && !edges[start].isEmpty {
            var members = [start]
            group[start] = groups.count
            var cursor = 0
            while cursor < members.count {
                for edge in edges[members[cursor]] where group[edge.other] < 0 {
                    group[edge.other] = groups.count
                    members.append(edge.other)
                }
                cursor += 1
            }
            groups.append(members)
        }
        var next = Array(repeating: 0.0, count: count)
        for members in groups {
            let free = members.filter { !anchored[$0] }
            let hasAnchor = free.count < members.count
            for index in free { next[index] = learned[index] }
            for _ in 0..<100 {
                var moved = 0.0
                for index in free {
                    var sum = 0.0
                    for edge in edges[index] { sum += next[edge.other] + edge.difference }
                    let value = sum / Double(edges[index].count)
                    moved = max(moved, abs(value - next[index]))
                    next[index] = value
                }
                if !hasAnchor {
                    let mean = free.reduce(0) { $0 + next[$1] } / Double(max(free.count, 1))
                    for index in free { next[index] -= mean }
                }
                if moved < 0.001 { break }
            }
            for index in free { next[index] = min(Self.limit, max(-Self.limit, next[index])) }
        }
        learned = next
    }
}
