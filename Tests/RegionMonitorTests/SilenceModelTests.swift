import RegionMonitor
import Testing

/// The adaptive exit's estimator (SPEC 18): how long a region may stay silent before it exits.
@Suite struct SilenceModelTests {
    static let second: Int64 = 1_000_000

    /// A beacon heard after each of `gaps` (seconds), starting at `start`; returns it and the last time.
    static func beacon(_ gaps: [Double], start: Int64 = 0) -> (SilenceModel, Int64) {
        var model = SilenceModel()
        var time = start
        model.sighted(at: time)
        for gap in gaps {
            time += Int64((gap * 1_000_000).rounded())
            model.sighted(at: time)
        }
        return (model, time)
    }

    @Test func aKnownRateAndLossGiveTheExactSilence() throws {
        // 1 Hz, 8 of 40 advertisements lost, one at a time: loss (8 + ½) / (40 + 1).
        let (model, last) = Self.beacon(Array(repeating: 1, count: 24) + Array(repeating: 2, count: 8))
        let figures = try #require(model.figures)
        #expect(figures.interval == Self.second)
        #expect(figures.afterHeard == 8.5 / 41)
        #expect(figures.afterLost == 8.5 / 41)
        // 0.2073^9 < 1e-6 <= 0.2073^8: nine advertisements lost, then 110 ms for jitter.
        let timeout = SilenceModel.timeout(after: last, beacons: [model], confidence: 1e-6, maximum: 30 * Self.second)
        #expect(timeout == 9 * Self.second + 110_000)
    }

    @Test func threeBeaconsAtOneHertzAreClampedToTwoIntervals() {
        // No loss seen: each advertisement is lost with ½ / 33; four in a row are improbable enough,
        // and the fourth comes 1.3 s after the last sighting, under two intervals.
        let (a, last) = Self.beacon(Array(repeating: 1, count: 32), start: 10 * Self.second)
        let (b, _) = Self.beacon(Array(repeating: 1, count: 32), start: 10 * Self.second - 700_000)
        let (c, _) = Self.beacon(Array(repeating: 1, count: 32), start: 10 * Self.second - 400_000)
        let timeout = SilenceModel.timeout(
            after: last, beacons: [a, b, c], confidence: 1e-6, maximum: 30 * Self.second)
        #expect(timeout == 2 * Self.second)
    }

    @Test func tooFewSightingsWaitTheMaximum() {
        let (model, last) = Self.beacon([1, 1, 1, 1, 1])
        #expect(model.figures == nil)
        #expect(
            SilenceModel.timeout(after: last, beacons: [model], confidence: 1e-6, maximum: 30 * Self.second) == 30
                * Self.second)
        #expect(
            SilenceModel.timeout(after: 0, beacons: [], confidence: 1e-6, maximum: 30 * Self.second) == 30 * Self.second
        )
    }

    @Test func heavyLossIsClampedToTheMaximum() {
        // Half the advertisements lost: about twenty in a row needed, more than 10 s.
        let (model, last) = Self.beacon(Array(repeating: [1, 2, 3], count: 11).flatMap { $0 })
        let timeout = SilenceModel.timeout(after: last, beacons: [model], confidence: 1e-6, maximum: 10 * Self.second)
        #expect(timeout == 10 * Self.second)
    }

    @Test func aBeaconThatChangesItsIntervalIsReadAnew() throws {
        // 1 s, then 100 ms: at first the long gaps count as losses at the new interval (a longer
        // silence, never a shorter one); once the ring holds only the new spacing, no loss is left.
        let (changing, changingLast) = Self.beacon(Array(repeating: 1, count: 20) + Array(repeating: 0.1, count: 10))
        let (steady, steadyLast) = Self.beacon(Array(repeating: 0.1, count: 32))
        let mixed = try #require(changing.figures)
        #expect(mixed.interval < 2 * 100_000)
        let during = SilenceModel.timeout(
            after: changingLast, beacons: [changing], confidence: 1e-6, maximum: 30 * Self.second)
        let settled = SilenceModel.timeout(
            after: steadyLast, beacons: [steady], confidence: 1e-6, maximum: 30 * Self.second)
        #expect(during > settled)
        let (after, afterLast) = Self.beacon(Array(repeating: 1, count: 20) + Array(repeating: 0.1, count: 32))
        #expect(after.figures == steady.figures)
        #expect(
            SilenceModel.timeout(after: afterLast, beacons: [after], confidence: 1e-6, maximum: 30 * Self.second)
                == settled)
        // Slower: after 32 gaps at 1 s the old 100 ms spacing is gone.
        let (slower, _) = Self.beacon(Array(repeating: 0.1, count: 20) + Array(repeating: 1, count: 32))
        #expect(try #require(slower.figures).interval == Self.second)
    }

    @Test func lossesInRunsLengthenTheSilence() {
        // The same 16 of 48 advertisements lost: one at a time, or in runs of four.
        let (single, singleLast) = Self.beacon(Array(repeating: [1, 2], count: 16).flatMap { $0 })
        let (bursty, burstyLast) = Self.beacon(Array(repeating: 1, count: 28) + Array(repeating: 5, count: 4))
        #expect(single.figures?.afterHeard == bursty.figures?.afterHeard)
        #expect((bursty.figures?.afterLost ?? 0) > 0.7)
        let independent = SilenceModel.timeout(
            after: singleLast, beacons: [single], confidence: 1e-6, maximum: 30 * Self.second)
        let runs = SilenceModel.timeout(
            after: burstyLast, beacons: [bursty], confidence: 1e-6, maximum: 30 * Self.second)
        #expect(independent == 13 * Self.second + 110_000)
        #expect(runs == 30 * Self.second)
    }

    @Test func aBeaconSilentForLongIsTakenAsOutOfRange() {
        // B was last heard 20 s before A: counting its missed advertisements would make any
        // silence improbable at once; it is left out, and A alone decides.
        let (a, last) = Self.beacon(Array(repeating: [1, 2], count: 16).flatMap { $0 }, start: 100 * Self.second)
        let (b, _) = Self.beacon(Array(repeating: 1, count: 32), start: 100 * Self.second - 52 * Self.second)
        let alone = SilenceModel.timeout(after: last, beacons: [a], confidence: 1e-6, maximum: 30 * Self.second)
        #expect(
            SilenceModel.timeout(after: last, beacons: [a, b], confidence: 1e-6, maximum: 30 * Self.second) == alone)
    }

    @Test func garbageTimesAreHarmless() {
        var model = SilenceModel()
        for time in [Int64.max, .min, 0, -5, .max, 3] { model.sighted(at: time) }
        #expect(SilenceModel.timeout(after: .max, beacons: [model], confidence: 1e-6, maximum: 30 * Self.second) >= 0)
        #expect(SilenceModel.timeout(after: 0, beacons: [model], confidence: 2, maximum: 7) == 7)
    }
}
