import Foundation

/// What one beacon's sightings during a visit say about how it advertises (SPEC 18): the spacing
/// of its last ``capacity`` sightings gives its advertising interval, and the gaps that are
/// multiples of it its losses, both after a heard advertisement and after a lost one (so losses
/// that come in runs are seen as such).
///
/// Times are microseconds on the monitor's clock. Pure value, no allocation after the first
/// sightings: ``sighted(at:)`` is O(1).
public struct SilenceModel: Sendable, Hashable {
    /// Gaps kept: a beacon that changes its interval is read anew after this many sightings.
    public static let capacity = 32
    /// Gaps needed before the beacon's figures are used.
    public static let minimumGaps = 8

    /// The last sighting, if any.
    public private(set) var last: Int64?
    private var gaps: [Int64] = []
    private var next = 0

    public init() {}

    /// A sighting at `time` (not before the last one; a repeat at the same instant adds nothing).
    public mutating func sighted(at time: Int64) {
        defer { last = max(last ?? time, time) }
        guard let last, time > last else { return }
        let (gap, overflow) = time.subtractingReportingOverflow(last)
        guard !overflow else { return }
        if gaps.count < Self.capacity {
            gaps.append(gap)
        } else {
            gaps[next] = gap
            next = (next + 1) % Self.capacity
        }
    }

    /// The beacon's advertising interval and losses, once ``minimumGaps`` gaps are known.
    public var figures: Figures? {
        guard gaps.count >= Self.minimumGaps, let shortest = gaps.min(), shortest > 0 else { return nil }
        var slots: Int64 = 0
        var spanned: Int64 = 0
        var lostFirst = 0  // a heard advertisement followed by a lost one
        var lostAgain = 0  // a lost advertisement followed by another lost one
        var lostThenHeard = 0
        for gap in gaps {
            // Each gap spans k advertisements: k - 1 lost, then one heard.
            let k = max(1, (gap + shortest / 2) / shortest)
            slots += k
            spanned += gap
            if k >= 2 {
                lostFirst += 1
                lostAgain += Int(k - 2)
                lostThenHeard += 1
            }
        }
        let interval = spanned / slots
        // Pooled: every advertisement alike (losses independent), halfway-smoothed.
        let lost = Double(slots) - Double(gaps.count)
        let pooled = (lost + 0.5) / (Double(slots) + 1)
        // After a loss: only trusted when enough losses were seen, and never below the pooled.
        let afterLoss: Double
        if lostAgain + lostThenHeard >= Self.minimumGaps {
            afterLoss = max(pooled, (Double(lostAgain) + 0.5) / (Double(lostAgain + lostThenHeard) + 1))
        } else {
            afterLoss = pooled
        }
        return Figures(interval: interval, afterHeard: pooled, afterLost: afterLoss)
    }

    /// A beacon's advertisements still to come in a silence: the next one, and how many in a row
    /// it has missed before it.
    private struct Pending {
        var figures: Figures
        /// Microseconds after the region's last sighting.
        var nextSlot: Int64
        var missed: Int
    }

    /// A beacon's advertising as its sightings show it.
    public struct Figures: Sendable, Hashable {
        /// Microseconds between two advertisements.
        public var interval: Int64
        /// The probability that an advertisement is lost when the one before was heard.
        public var afterHeard: Double
        /// The probability that an advertisement is lost when the one before was lost too.
        public var afterLost: Double

        public init(interval: Int64, afterHeard: Double, afterLost: Double) {
            self.interval = interval
            self.afterHeard = afterHeard
            self.afterLost = afterLost
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
    public static func timeout(
        after lastSighting: Int64, beacons: some Sequence<SilenceModel>, confidence: Double, maximum: Int64
    ) -> Int64 {
        var pending: [Pending] = []
        var longestInterval: Int64 = 0
        for model in beacons {
            guard let last = model.last, let figures = model.figures else { continue }
            let (since, overflow) = lastSighting.subtractingReportingOverflow(last)
            guard !overflow, since >= 0 else { continue }
            let missed = Int(since / figures.interval)
            // Already silent for longer than it plausibly would be in range: out of range.
            if missed > 0 {
                let likelihood = figures.afterHeard * pow(figures.afterLost, Double(missed - 1))
                guard likelihood >= 0.01 else { continue }
            }
            // Its next advertisement, as silence after `lastSighting`: within one interval.
            let nextSlot = figures.interval - since % figures.interval
            pending.append(Pending(figures: figures, nextSlot: nextSlot, missed: missed))
            longestInterval = max(longestInterval, figures.interval)
        }
        guard !pending.isEmpty, confidence > 0, confidence < 1 else { return maximum }
        let target = log(confidence)
        var logLikelihood = 0.0
        // Advertisements in time order across the beacons, each one more loss, until improbable.
        while true {
            var earliest = 0
            for index in pending.indices where pending[index].nextSlot < pending[earliest].nextSlot {
                earliest = index
            }
            var beacon = pending[earliest]
            let silence = beacon.nextSlot
            guard silence < maximum else { return maximum }
            let loss = beacon.missed == 0 ? beacon.figures.afterHeard : beacon.figures.afterLost
            logLikelihood += log(max(loss, .leastNormalMagnitude))
            if logLikelihood < target {
                let interval = beacon.figures.interval
                let jitter = min(interval / 2, 10_000 + interval / 10)
                return min(maximum, max(silence + jitter, 2 * longestInterval))
            }
            beacon.missed += 1
            beacon.nextSlot += beacon.figures.interval
            pending[earliest] = beacon
        }
    }
}
