import RegionMonitor
import Testing

/// The adaptive exit's estimator (docs/behaviour.md §18): how long a region may stay silent before it exits.
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
        // 1 Hz, 8 of 40 advertisements lost, one at a time.
        let (model, last) = Self.beacon(Array(repeating: 1, count: 24) + Array(repeating: 2, count: 8))
        let figures = try #require(model.figures)
        #expect(figures.interval == Self.second)
        #expect(figures.losses == SilenceModel.Losses(slots: 40, heard: 32, lostAgain: 0, lostThenHeard: 8))
        // After a heard one: (8 + ½) / (40 + 1), 1.5 standard deviations up. After a lost one: 8
        // runs, none longer than one, on a prior of 0.95 worth two runs, 1.5 standard deviations up.
        let heard = 8.5 / 41
        #expect(abs(figures.losses.afterHeard - (heard + 1.5 * (heard * (1 - heard) / 42).squareRoot())) < 1e-12)
        let lost = 1.9 / 10
        #expect(abs(figures.losses.afterLost - (lost + 1.5 * (lost * (1 - lost) / 11).squareRoot())) < 1e-12)
        // 0.3011 × 0.3674^13 < 1e-6 <= 0.3011 × 0.3674^12: fourteen lost, then 110 ms for jitter.
        let timeout = SilenceModel.timeout(after: last, beacons: [model], confidence: 1e-6, maximum: 30 * Self.second)
        #expect(timeout == 14 * Self.second + 110_000)
    }

    /// A stepped clock moves the last sighting, not what was learned: sightings after a step back
    /// go on at the same interval, and the timeout after the last one is the same as unstepped.
    @Test func aClockStepMovesTheLastSightingAndKeepsTheFigures() throws {
        let gaps = Array(repeating: 1.0, count: 24) + Array(repeating: 2.0, count: 8)
        let (plain, plainLast) = Self.beacon(gaps + [1, 1])
        var (stepped, last) = Self.beacon(gaps)
        let day = 86_400 * Self.second
        stepped.shiftClock(by: -day)
        #expect(stepped.last == last - day)
        last -= day
        for _ in 0..<2 {
            last += Self.second
            stepped.sighted(at: last)
        }
        #expect(stepped.figures == plain.figures)
        let maximum = 30 * Self.second
        #expect(
            SilenceModel.timeout(after: last, beacons: [stepped], confidence: 1e-6, maximum: maximum)
                == SilenceModel.timeout(after: plainLast, beacons: [plain], confidence: 1e-6, maximum: maximum))
    }

    /// Never slower than the fixed timeout where a silence that long is already improbable below
    /// the looser confidence: a beacon that lost 7 of 38 one at a time allows 14 s and more at
    /// 1e-6, but ten lost in a row (0.2545 × 0.4049^9 = 7.4e-5) is below 1e-4, so 10 s; not below
    /// 1e-5, so longer again.
    @Test func theFixedTimeoutCapsWhereItIsSafe() {
        let (model, last) = Self.beacon(Array(repeating: 1, count: 24) + Array(repeating: 2, count: 7))
        func timeout(_ loose: Double) -> Int64 {
            SilenceModel.timeout(
                after: last, beacons: [model], confidence: 1e-6, maximum: 30 * Self.second,
                fixed: (10 * Self.second, loose))
        }
        #expect(timeout(1e-4) == 10 * Self.second)
        #expect(timeout(1e-5) > 14 * Self.second)
    }

    /// Once eight runs of losses are seen, the fixed timeout also caps when a silence that long
    /// is improbable below a tenth of the looser confidence as counted, without the margins: runs
    /// of one (8.5/41 lost after a heard one, as many after a lost one: 1.4e-7) cap at 10 s; runs
    /// of five (0.55 × 0.79^9 = 0.066) do not, nor do seven runs of one, too few to tell.
    @Test func enoughRunsOfLossesCapAsCounted() {
        func timeout(_ gaps: [Double]) -> Int64 {
            let (model, last) = Self.beacon(gaps)
            return SilenceModel.timeout(
                after: last, beacons: [model], confidence: 1e-6, maximum: 30 * Self.second,
                fixed: (10 * Self.second, 1e-5))
        }
        let steady = Array(repeating: 1.0, count: 24)
        #expect(timeout(steady + Array(repeating: 2, count: 8)) == 10 * Self.second)
        #expect(timeout(steady + Array(repeating: 2, count: 7)) > 14 * Self.second)
        #expect(timeout(steady + Array(repeating: 6, count: 8)) > 10 * Self.second)
    }

    /// A new visit keeps the beacon's interval and half of what its losses were; the figures
    /// are there from its first sighting.
    @Test func aNewVisitStartsFromHalfOfTheLast() throws {
        var (model, last) = Self.beacon(Array(repeating: 1, count: 24) + Array(repeating: 2, count: 8))
        model.startVisit()
        #expect(model.last == nil)
        let figures = try #require(model.figures)
        #expect(figures.interval == Self.second)
        #expect(figures.losses == SilenceModel.Losses(slots: 20, heard: 16, lostAgain: 0, lostThenHeard: 4))
        model.sighted(at: last + 60 * Self.second)
        #expect(model.figures?.losses == figures.losses)
        last += 61 * Self.second
        model.sighted(at: last)
        #expect(model.figures?.losses == SilenceModel.Losses(slots: 21, heard: 17, lostAgain: 0, lostThenHeard: 4))
    }

    @Test func threeBeaconsAtOneHertzAreClampedToTwoIntervals() {
        // No loss in 300 advertisements: each beacon's next is lost with at most about 0.005; the
        // three of them are improbable enough, the third 1 s after the last sighting: under two
        // intervals.
        let (a, last) = Self.beacon(Array(repeating: 1, count: 100), start: 10 * Self.second)
        let (b, _) = Self.beacon(Array(repeating: 1, count: 100), start: 10 * Self.second - 700_000)
        let (c, _) = Self.beacon(Array(repeating: 1, count: 100), start: 10 * Self.second - 400_000)
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
        // Faster (1 s, then 100 ms): each gap counted at the interval known when it came, so
        // none is a loss; the interval is the new one at once.
        let (faster, _) = Self.beacon(Array(repeating: 1, count: 20) + Array(repeating: 0.1, count: 10))
        let fast = try #require(faster.figures)
        #expect(fast.interval < 2 * 100_000)
        #expect(fast.losses == SilenceModel.Losses(slots: 30, heard: 30, lostAgain: 0, lostThenHeard: 0))
        let (settled, _) = Self.beacon(Array(repeating: 1, count: 20) + Array(repeating: 0.1, count: 32))
        #expect(try #require(settled.figures).interval == 100_000)
        // Slower (100 ms, then 1 s): the long gaps count as losses while the short ones are still
        // in the ring (a longer silence, never a shorter one), then the interval is the new one.
        let (slowing, _) = Self.beacon(Array(repeating: 0.1, count: 20) + Array(repeating: 1, count: 5))
        #expect(try #require(slowing.figures).losses.slots == 20 + 5 * 10)
        let (slower, _) = Self.beacon(Array(repeating: 0.1, count: 20) + Array(repeating: 1, count: 32))
        #expect(try #require(slower.figures).interval == Self.second)
    }

    @Test func lossesInRunsLengthenTheSilence() {
        // The same 16 of 48 advertisements lost: one at a time, or in runs of four.
        let (single, singleLast) = Self.beacon(Array(repeating: [1, 2], count: 16).flatMap { $0 })
        let (bursty, burstyLast) = Self.beacon(Array(repeating: 1, count: 28) + Array(repeating: 5, count: 4))
        #expect(single.figures?.losses.afterHeard == bursty.figures?.losses.afterHeard)
        #expect((bursty.figures?.losses.afterLost ?? 0) > 0.7)
        let independent = SilenceModel.timeout(
            after: singleLast, beacons: [single], confidence: 1e-6, maximum: 30 * Self.second)
        let runs = SilenceModel.timeout(
            after: burstyLast, beacons: [bursty], confidence: 1e-6, maximum: 30 * Self.second)
        #expect(independent == 17 * Self.second + 110_000)
        #expect(runs == 30 * Self.second)
    }

    @Test func aBeaconSilentForLongIsTakenAsOutOfRange() {
        // B was last heard 20 s before A: counting its missed advertisements would make any
        // silence improbable at once (two intervals); it is left out and A decides. Heard with A,
        // B shortens the silence.
        let (a, last) = Self.beacon(Array(repeating: [1, 2], count: 16).flatMap { $0 }, start: 100 * Self.second)
        let (gone, _) = Self.beacon(Array(repeating: 1, count: 32), start: 100 * Self.second - 52 * Self.second)
        let (near, _) = Self.beacon(Array(repeating: 1, count: 32), start: last - 32 * Self.second - 500_000)
        let withGone = SilenceModel.timeout(
            after: last, beacons: [a, gone], confidence: 1e-6, maximum: 30 * Self.second)
        let withNear = SilenceModel.timeout(
            after: last, beacons: [a, near], confidence: 1e-6, maximum: 30 * Self.second)
        #expect(withGone > 4 * Self.second)
        #expect(withNear < withGone)
    }

    @Test func garbageTimesAreHarmless() {
        var model = SilenceModel()
        for time in [Int64.max, .min, 0, -5, .max, 3] { model.sighted(at: time) }
        #expect(SilenceModel.timeout(after: .max, beacons: [model], confidence: 1e-6, maximum: 30 * Self.second) >= 0)
        #expect(SilenceModel.timeout(after: 0, beacons: [model], confidence: 2, maximum: 7) == 7)
    }
}
