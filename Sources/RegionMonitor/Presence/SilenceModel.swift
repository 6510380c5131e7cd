import Foundation

/// What one beacon's sightings during a visit say about how it advertises (docs/behaviour.md §18): the spacing
/// of its last ``capacity`` sightings gives its advertising interval; every gap of the visit,
/// counted in advertisements at the interval known then, gives its losses, both after a heard
/// advertisement and after a lost one (so losses that come in runs are seen as such).
///
/// Times are microseconds on the monitor's clock. Pure value held inline (no allocation);
/// ``sighted(at:)`` is O(1) but when the shortest gap leaves the ring.
package struct SilenceModel: Sendable {
    /// Gaps kept for the interval: a beacon that changes its interval is read anew after this many.
    package static let capacity = 32
    /// Gaps needed before the beacon's figures are used, and losses after a loss before their
    /// own rate is (until then, half of them are taken as lost).
    package static let minimumGaps = 8

    /// The last sighting, if any.
    package private(set) var last: Int64?
    /// The last ``capacity`` gaps, microseconds (a longer one is kept as `Int32.max`).
    private var gaps = InlineArray<32, Int32>(repeating: 0)
    private var count = 0
    private var next = 0
    private var shortest: Int64 = .max
    /// Over the ring: the gaps' sum, and the advertisements they span at ``shortest``.
    private var ringSpan: Int64 = 0
    private var ringSlots: Int64 = 0
    /// Over the visit: advertisements, those heard after the first, and losses by what came before.
    private var slots: Int64 = 0
    private var heard: Int64 = 0
    private var lostAgain: Int64 = 0
    private var lostThenHeard: Int64 = 0

    package init() {}

    /// The last sighting re-expressed `delta` microseconds later: the wall clock was stepped
    /// (``Monitor/shiftClock(by:)``); the gaps are lengths and stay.
    package mutating func shiftClock(by delta: Int64) {
        last = last?.shifted(by: delta)
    }

    /// The beacon heard again after it went `off`: a new visit. Its advertising interval (the
    /// gaps kept) and what its losses were carry over at half their weight: a beacon's channel is
    /// much the same from one visit to the next, and a visit's first minute says little about
    /// runs of losses (`scripts/bench quality`); halving at every visit lets a changed channel
    /// show within a visit.
    package mutating func startVisit() {
        last = nil
        slots /= 2
        heard /= 2
        lostAgain /= 2
        lostThenHeard /= 2
    }

    /// A sighting at `time` (not before the last one; a repeat at the same instant adds nothing).
    package mutating func sighted(at time: Int64) {
        defer { last = max(last ?? time, time) }
        guard let last, time > last else { return }
        let (gap, overflow) = time.subtractingReportingOverflow(last)
        guard !overflow else { return }
        let kept = Int64(Int32(clamping: gap))
        let before = shortest
        if count < Self.capacity {
            gaps[count] = Int32(kept)
            count += 1
            shortest = min(shortest, kept)
        } else {
            let evicted = Int64(gaps[next])
            gaps[next] = Int32(kept)
            next = (next + 1) % Self.capacity
            ringSpan -= evicted
            ringSlots -= Self.spanned(evicted, at: before)
            if evicted == shortest {
                shortest = .max
                for index in 0..<count { shortest = min(shortest, Int64(gaps[index])) }
            } else {
                shortest = min(shortest, kept)
            }
        }
        ringSpan += kept
        if shortest == before {
            ringSlots += Self.spanned(kept, at: shortest)
        } else {
            ringSlots = 0
            for index in 0..<count { ringSlots += Self.spanned(Int64(gaps[index]), at: shortest) }
        }
        // The gap spans k advertisements at the interval known now: k - 1 lost, then one heard.
        let k = Self.spanned(gap, at: shortest)
        slots += k
        heard += 1
        if k >= 2 {
            lostAgain += k - 2
            lostThenHeard += 1
        }
    }

    /// Advertisements a gap spans at `interval` (rounded, at least one; bounded for nonsense gaps).
    static func spanned(_ gap: Int64, at interval: Int64) -> Int64 {
        min(max(1, gap / interval + (gap % interval >= interval / 2 ? 1 : 0)), 1 << 20)
    }

    /// The beacon's advertising interval and losses, once ``minimumGaps`` gaps are known.
    package var figures: Figures? {
        guard count >= Self.minimumGaps, shortest > 0, shortest < .max, ringSlots > 0 else { return nil }
        return Figures(
            interval: max(1, ringSpan / ringSlots),
            losses: Losses(slots: slots, heard: heard, lostAgain: lostAgain, lostThenHeard: lostThenHeard))
    }

    /// A beacon's advertisements still to come in a silence: the next one, and how many in a row
    /// it has missed before it.
    private struct Pending {
        var interval: Int64
        /// Microseconds after the region's last sighting.
        var nextSlot: Int64
        var missed: Int
        /// Log-probabilities of a loss after a heard advertisement and after a lost one.
        var logHeard: Double
        var logLost: Double
        /// The same as counted, without margins.
        var plainHeard: Double
        var plainLost: Double
    }

    /// A beacon's advertising as its sightings show it.
    package struct Figures: Sendable, Hashable {
        /// Microseconds between two advertisements.
        package var interval: Int64
        package var losses: Losses
    }

    /// Advertisements of a visit counted by what became of them and of the one before.
    package struct Losses: Sendable, Hashable {
        package var slots: Int64 = 0
        /// Heard after the first (each ends a gap).
        package var heard: Int64 = 0
        /// Lost after a lost one.
        package var lostAgain: Int64 = 0
        /// Heard after a lost one: the runs of losses.
        package var lostThenHeard: Int64 = 0

        package init(slots: Int64 = 0, heard: Int64 = 0, lostAgain: Int64 = 0, lostThenHeard: Int64 = 0) {
            self.slots = slots
            self.heard = heard
            self.lostAgain = lostAgain
            self.lostThenHeard = lostThenHeard
        }

        static func + (a: Losses, b: Losses) -> Losses {
            Losses(
                slots: a.slots &+ b.slots, heard: a.heard &+ b.heard, lostAgain: a.lostAgain &+ b.lostAgain,
                lostThenHeard: a.lostThenHeard &+ b.lostThenHeard)
        }

        /// The probability that an advertisement is lost when the one before was heard: half a
        /// loss more than seen, taken one and a half standard deviations up (72 clean
        /// advertisements still allow one in fifty lost, and a channel that loses in runs can
        /// look clean that long).
        package var afterHeard: Double {
            let mean = (Double(slots - heard) + 0.5) / (Double(slots) + 1)
            return min(0.995, mean + 1.5 * (mean * (1 - mean) / (Double(slots) + 2)).squareRoot())
        }

        /// The probability that an advertisement is lost when the one before was lost too: from
        /// the runs of losses, starting from a weak belief (two runs' worth) that it is 0.95, so
        /// that losses are taken to come in long runs until the runs seen say otherwise, and taken
        /// one and a half standard deviations above the estimate (a few runs say little, and an
        /// underestimate is a spurious exit); never below ``afterHeard``.
        package var afterLost: Double {
            let weight = Double(lostAgain + lostThenHeard) + 2
            let mean = (Double(lostAgain) + 1.9) / weight
            let deviation = (mean * (1 - mean) / (weight + 1)).squareRoot()
            return max(afterHeard, min(0.995, mean + 1.5 * deviation))
        }

        /// The runs of losses seen before ``plainAfterHeard`` and ``plainAfterLost`` are used for
        /// the fixed default (``SilenceModel/timeout(after:beacons:confidence:maximum:pooled:fixed:)``).
        package static let plainRuns: Int64 = 8

        /// The probability of a loss after a heard advertisement as counted, without a margin.
        package var plainAfterHeard: Double {
            min(0.995, (Double(slots - heard) + 0.5) / (Double(slots) + 1))
        }

        /// The probability of a loss after a lost advertisement as counted, without a margin or
        /// the prior of long runs; never below ``plainAfterHeard``.
        package var plainAfterLost: Double {
            max(plainAfterHeard, min(0.995, (Double(lostAgain) + 0.5) / (Double(lostAgain + lostThenHeard) + 1)))
        }
    }

    /// How long a region whose last sighting was at `lastSighting` may stay silent before it
    /// exits: the shortest silence whose probability, while still inside, is below `confidence`,
    /// given its `beacons` (each one's model), clamped to two of its advertising intervals at
    /// least and `maximum` at most; `maximum` while no beacon has enough sightings.
    ///
    /// Each beacon's advertisements after its own last sighting are lost with its ``Figures``
    /// (independently of the other beacons'); those it already missed before `lastSighting`
    /// count (a beacon silent for longer than its model finds plausible is taken as out of range
    /// and left out). The silence ends a jitter allowance after the advertisement that makes it
    /// improbable enough.
    ///
    /// `pooled`: the beacons' losses are pooled (a phone: its surroundings lose advertisements,
    /// whichever beacon sent them); otherwise each beacon's own (fixed scanners hearing a tag: each
    /// path loses its own, a far scanner far more than a near one; docs/behaviour.md §19).
    ///
    /// `fixed`: the fixed exit timeout and a looser confidence: the silence is never longer than
    /// that timeout when a silence that long is already improbable below that confidence
    /// (docs/behaviour.md §18: never slower than the fixed default where it is safe).
    package static func timeout(
        after lastSighting: Int64, beacons: some Sequence<SilenceModel>, confidence: Double, maximum: Int64,
        pooled: Bool = true, fixed: (limit: Int64, confidence: Double)? = nil
    ) -> Int64 {
        // The beacons' losses pooled: the walker's surroundings lose advertisements, whichever beacon sent them.
        var heard: [(figures: Figures, since: Int64)] = []
        var losses = Losses()
        for model in beacons {
            guard let last = model.last, let figures = model.figures else { continue }
            let (difference, overflow) = lastSighting.subtractingReportingOverflow(last)
            guard !overflow else { continue }
            // Heard after `lastSighting` (a sighting too weak to keep a region): as heard then.
            let since = max(0, difference)
            heard.append((figures, since))
            losses = losses + figures.losses
        }
        guard !heard.isEmpty, confidence > 0, confidence < 1 else { return maximum }
        func logs(_ losses: Losses) -> (heard: Double, lost: Double) {
            (log(max(losses.afterHeard, .leastNormalMagnitude)), log(max(losses.afterLost, .leastNormalMagnitude)))
        }
        func plainLogs(_ losses: Losses) -> (heard: Double, lost: Double) {
            (
                log(max(losses.plainAfterHeard, .leastNormalMagnitude)),
                log(max(losses.plainAfterLost, .leastNormalMagnitude))
            )
        }
        let pooledLogs = logs(losses)
        let pooledPlain = plainLogs(losses)
        let target = log(confidence)
        var pending: [Pending] = []
        var longestInterval: Int64 = 0
        for (figures, since) in heard {
            let (logHeard, logLost) = pooled ? pooledLogs : logs(figures.losses)
            let plain = pooled ? pooledPlain : plainLogs(figures.losses)
            let missed = Int(since / figures.interval)
            // Already silent for longer than it would be in range but once in 1/confidence: out
            // of range (a looser cut took beacons in a long run of losses for gone).
            if missed > 0 {
                guard logHeard + Double(missed - 1) * logLost >= target else { continue }
            }
            // Its next advertisement, as silence after `lastSighting`: within one interval.
            let nextSlot = figures.interval - since % figures.interval
            pending.append(
                Pending(
                    interval: figures.interval, nextSlot: nextSlot, missed: missed, logHeard: logHeard,
                    logLost: logLost,
                    plainHeard: plain.heard, plainLost: plain.lost))
            longestInterval = max(longestInterval, figures.interval)
        }
        guard !pending.isEmpty else { return maximum }
        // The log-probability that every advertisement of the beacons up to `silence` is lost
        // (`plain`: as counted, without margins).
        func logLikelihood(_ silence: Int64, plain: Bool = false) -> Double {
            var sum = 0.0
            for beacon in pending where beacon.nextSlot <= silence {
                let count = 1 + (silence - beacon.nextSlot) / beacon.interval
                let (logHeard, logLost) =
                    plain ? (beacon.plainHeard, beacon.plainLost) : (beacon.logHeard, beacon.logLost)
                sum += beacon.missed == 0 ? logHeard + Double(count - 1) * logLost : Double(count) * logLost
            }
            return sum
        }
        // The fixed timeout, when a silence that long is already improbable enough: with the
        // estimates' margins at the fixed confidence, or, once enough runs of losses are seen to
        // tell a channel that loses in runs, as counted at a tenth of it.
        let fixedLimit = fixed.flatMap { fixed -> Int64? in
            guard fixed.limit < maximum else { return nil }
            if logLikelihood(fixed.limit) < log(fixed.confidence) { return fixed.limit }
            guard losses.lostThenHeard >= Losses.plainRuns else { return nil }
            return logLikelihood(fixed.limit, plain: true) < log(fixed.confidence / 10) ? fixed.limit : nil
        }
        // Improbable enough within the maximum at all? Then the first instant it is, by halving
        // (the likelihood only falls as the silence grows, at the beacons' advertisements).
        guard logLikelihood(maximum) < target else { return fixedLimit ?? maximum }
        var (low, high) = (Int64(0), maximum)
        while high - low > 1 {
            let middle = low + (high - low) / 2
            if logLikelihood(middle) < target { high = middle } else { low = middle }
        }
        // The advertisement at `high`, whose jitter the silence allows for.
        let interval =
            pending.first { high >= $0.nextSlot && (high - $0.nextSlot) % $0.interval == 0 }?.interval
            ?? longestInterval
        let jitter = min(interval / 2, 10_000 + interval / 10)
        return min(fixedLimit ?? maximum, max(high + jitter, 2 * longestInterval))
    }
}
