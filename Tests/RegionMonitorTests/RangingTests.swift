import BeaconCore
import Foundation
import RegionMonitor
import Testing

/// docs/behaviour.md §4: filters over the window, the log-distance model, classes with hysteresis.
@Suite struct RangingTests {
    static func time(_ seconds: Double) -> Timestamp { MonitorHarness.time(seconds) }

    @Test func theLogDistanceModelGivesOneMetreAtMeasuredPower() {
        let ranging = Ranging()
        #expect(ranging.distance(rssi: -59, power: -59) == 1)
        #expect(abs(ranging.distance(rssi: -79, power: -59) - 10) < 1e-9)
        #expect(abs(Ranging(pathLossExponent: 3).distance(rssi: -89, power: -59) - 10) < 1e-9)
    }

    @Test func theFirstClassIsTakenWithoutHysteresis() {
        let ranging = Ranging()
        #expect(ranging.proximity(distance: 0.49, current: .off) == .immediate)
        #expect(ranging.proximity(distance: 0.5, current: .off) == .near)
        #expect(ranging.proximity(distance: 2.99, current: .off) == .near)
        #expect(ranging.proximity(distance: 3.0, current: .off) == .far)
    }

    @Test func aClassChangesOnlyPastTheBoundaryPlusTheMargin() {
        let ranging = Ranging()
        #expect(ranging.proximity(distance: 3.449, current: .near) == .near)
        #expect(ranging.proximity(distance: 3.451, current: .near) == .far)
        #expect(ranging.proximity(distance: 2.551, current: .far) == .far)
        #expect(ranging.proximity(distance: 2.549, current: .far) == .near)
        #expect(ranging.proximity(distance: 0.57, current: .immediate) == .immediate)
        #expect(ranging.proximity(distance: 0.58, current: .immediate) == .near)
        #expect(ranging.proximity(distance: 0.43, current: .near) == .near)
        #expect(ranging.proximity(distance: 0.42, current: .near) == .immediate)
        // A jump across two classes lands where the distance says.
        #expect(ranging.proximity(distance: 5, current: .immediate) == .far)
        #expect(ranging.proximity(distance: 0.1, current: .far) == .immediate)
    }

    @Test func theMedianOfAnOddAndAnEvenWindow() {
        var filter = RSSIFilter(kind: .median, windowSeconds: 5)
        #expect(filter.add(-70, at: Self.time(0)) == -70)
        #expect(filter.add(-60, at: Self.time(1)) == -65)
        #expect(filter.add(-90, at: Self.time(2)) == -70)
        #expect(filter.add(-50, at: Self.time(3)) == -65)
    }

    @Test func aMedianInARunOfEqualValuesIsPlacedWithinItsDecibel() {
        var filter = RSSIFilter(kind: .median, windowSeconds: 5)
        _ = filter.add(-69, at: Self.time(0))
        _ = filter.add(-68, at: Self.time(0.1))
        #expect(filter.add(-68, at: Self.time(0.2)) == -68.25)
        #expect(filter.add(-67, at: Self.time(0.3)) == -68)
        #expect(filter.add(-68, at: Self.time(0.4)) == -68)
        #expect(filter.add(-67, at: Self.time(0.5)) == -68 + 1.0 / 6)
    }

    @Test func samplesOlderThanTheWindowLeaveIt() {
        var filter = RSSIFilter(kind: .median, windowSeconds: 5)
        _ = filter.add(-90, at: Self.time(0))
        _ = filter.add(-90, at: Self.time(1))
        #expect(filter.add(-60, at: Self.time(5)) == -75)  // the sample at 0 is exactly 5 s old: gone
        #expect(filter.add(-60, at: Self.time(6.5)) == -60)
    }

    @Test func theWindowKeepsTheNewestSixtyFourSamples() {
        var filter = RSSIFilter(kind: .median, windowSeconds: 5)
        var value = 0.0
        for index in 0..<110 { value = filter.add(index < 60 ? -90 : -50, at: Self.time(Double(index) / 100)) }
        #expect(abs(value + 50.14) < 1e-9)  // 14 × -90 and 50 × -50; all 110 kept would give -90
    }

    @Test func theTrimmedMeanDropsTheTopAndBottomTenth() {
        var filter = RSSIFilter(kind: .mean, windowSeconds: 5)
        var value = 0.0
        for (index, rssi) in ([-30, -90] + Array(repeating: -60, count: 8) as [Int8]).enumerated() {
            value = filter.add(rssi, at: Self.time(Double(index) / 10))
        }
        #expect(value == -60)
        // 11 samples: still one dropped each side (-90 and -30).
        #expect(filter.add(-71, at: Self.time(1.5)) == -551.0 / 9)
    }

    @Test func theKalmanFilterFollowsAStepInAboutAWindow() {
        var filter = RSSIFilter(kind: .kalman, windowSeconds: 5)
        var value = 0.0
        for second in 0..<10 { value = filter.add(-60, at: Self.time(Double(second))) }
        #expect(value == -60)
        value = filter.add(-80, at: Self.time(10))
        #expect(value < -60.5 && value > -75)
        for second in 11..<25 { value = filter.add(-80, at: Self.time(Double(second))) }
        #expect(abs(value + 80) < 1)
    }

    @Test func noneIsTheLastSample() {
        var filter = RSSIFilter(kind: .none, windowSeconds: 5)
        _ = filter.add(-40, at: Self.time(0))
        #expect(filter.add(-77, at: Self.time(0.1)) == -77)
    }

    /// Class changes, after the first 5 s window, of a beacon sitting on the near/far boundary,
    /// advertising at 10 Hz for ten minutes, each sample's RSSI moved by `noise`. The boundary is
    /// put at √10 m, where the RSSI is a whole -69 dBm, so that rounding to whole dB (as radios
    /// report) does not move the beacon off it.
    static func classChanges(
        filter: RSSIFilterKind,
        hysteresis: Double = 0.15,
        noise: (inout SeededGenerator, Int) -> Double
    ) -> Int {
        var run = MonitorHarness(["101=1,1,1"]) {
            $0.rssiFilter = filter
            $0.hysteresis = hysteresis
            $0.near = 10.0.squareRoot()
        }
        var random = SeededGenerator(seed: 1)
        let boundary = -69.0
        for step in 0..<6000 {
            run.see("101", at: Double(step) / 10, rssi: Int8((boundary + noise(&random, step)).rounded()))
        }
        // Changes once the first window has filled: the first few samples alone may still swing.
        return run.take(["location"]).filter { Double($0.split(separator: " ")[0])! >= 5 }.count
    }

    /// Noise bounded by ±3 dB: each run of seven samples holds every offset from -3 to +3 once.
    static func boundedNoise(_ random: inout SeededGenerator, _ step: Int) -> Double {
        var offsets = Array(-3...3)
        var cycle = SeededGenerator(seed: UInt64(step / 7) &+ 1)
        offsets.shuffle(using: &cycle)
        return Double(offsets[step % 7])
    }

    @Test(arguments: [RSSIFilterKind.median, .mean, .kalman])
    func aBeaconOnABoundaryWithThreeDecibelsOfNoiseDoesNotFlap(_ filter: RSSIFilterKind) {
        #expect(Self.classChanges(filter: filter, noise: Self.boundedNoise) == 0)
    }

    @Test(arguments: [RSSIFilterKind.median, .mean, .kalman])
    func withoutHysteresisTheSameBeaconFlaps(_ filter: RSSIFilterKind) {
        #expect(Self.classChanges(filter: filter, hysteresis: 0, noise: Self.boundedNoise) > 20)
    }

    /// Uniform random noise within ±3 dB has tails a 5 s window cannot always average away; the
    /// filters keep a boundary beacon to at most one change in five minutes (unfiltered: hundreds).
    @Test(arguments: [RSSIFilterKind.median, .mean, .kalman])
    func randomNoiseRarelyMovesABoundaryBeacon(_ filter: RSSIFilterKind) {
        let changes = Self.classChanges(filter: filter) { random, _ in Double.random(in: -3...3, using: &random) }
        #expect(changes <= 2)
    }

    @Test func withoutAFilterRandomNoiseFlaps() {
        let changes = Self.classChanges(filter: .none) { random, _ in Double.random(in: -3...3, using: &random) }
        #expect(changes > 100)
    }
}
