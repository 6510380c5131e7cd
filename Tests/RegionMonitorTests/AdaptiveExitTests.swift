import BeaconCore
import Foundation
import RegionMonitor
import Testing

/// docs/behaviour.md §18: `Monitor.exitTimeout = auto` exits after the silence the region's beacons make
/// improbable, and says which in the `exit`.
@Suite struct AdaptiveExitTests {
    static let transitions: Set<String> = ["enter", "exit"]

    /// A Zone of three beacons at 1 Hz, monitored as a Zone (two regions at most), heard for 100 s.
    static func zoneOfThree() -> MonitorHarness {
        var run = MonitorHarness(["101=1,1,1", "102=1,1,2", "103=1,1,3"]) {
            $0.maxRegions = 2
            $0.adaptiveExit = true
        }
        for second in 0..<100 {
            for (index, id) in ["101", "102", "103"].enumerated() {
                run.see(id, at: Double(second) + 0.3 * Double(index))
            }
        }
        return run
    }

    @Test func aZoneOfThreeBeaconsAtOneHertzExitsAfterTwoSeconds() throws {
        var run = Self.zoneOfThree()
        _ = run.take()
        // The three beacons' next advertisements all lost (1 s) is improbable enough after 300
        // clean ones; two intervals at least.
        run.advance(to: 101.599)
        #expect(run.take(Self.transitions) == [])
        run.advance(to: 101.6)
        #expect(
            run.take(Self.transitions) == [
                "101.600 exit A1:1 zone monitored dwell 101.6", "101.600 exit A1 area derived dwell 101.6",
            ])
        // Each exit says the silence its own beacons allowed.
        let exits = run.outputs.filter { $0.type == "exit" }
        #expect(exits.count == 2)
        #expect(exits.allSatisfy { $0.json.contains(#""timeout":2.0"#) })
    }

    @Test func tooFewSightingsWaitExitTimeoutMax() {
        var run = MonitorHarness(["101=1,1,1"]) {
            $0.adaptiveExit = true
            $0.exitTimeoutMax = 12
        }
        for second in 0..<5 { run.see("101", at: Double(second)) }
        _ = run.take()
        run.advance(to: 15.999)
        #expect(run.take(Self.transitions) == [])
        run.advance(to: 16)
        #expect(run.take(Self.transitions).first == "16.000 exit A1:1:1 beacon monitored dwell 16.0")
        #expect(run.outputs.first { $0.type == "exit" }?.json.contains(#""timeout":12.0"#) == true)
    }

    @Test func aFastBeaconGoesOffAndExitsWithinItsOwnSilence() {
        // 10 Hz, every fifth advertisement lost (59 of 298): the runs of losses are all one long,
        // so each loss counts alike (59.5 / 299 ≈ 0.199, 1.5 standard deviations up: 0.234); ten in
        // a row are improbable below 1e-6, 1 s after the last sighting at 29.8 s, plus 20 ms for
        // jitter. The beacon goes `off` with its region.
        var run = MonitorHarness(["101=1,1,1"]) { $0.adaptiveExit = true }
        for tick in 0..<300 where tick % 5 != 4 { run.see("101", at: Double(tick) / 10) }
        _ = run.take()
        run.advance(to: 30.819)
        #expect(run.take() == [])
        run.advance(to: 30.82)
        let lines = run.take()
        #expect(lines.contains("30.820 exit A1:1:1 beacon monitored dwell 30.82"))
        #expect(lines.contains("30.820 location 101 off fg"))
        #expect(run.outputs.first { $0.type == "exit" }?.json.contains(#""timeout":1.02"#) == true)
    }

    @Test func aSingleBeaconThatNeverLosesWaitsTheMaximum() {
        // No loss seen: whether a loss would start a long run is unknown, so one beacon alone
        // cannot make a silence improbable enough before exitTimeoutMax.
        var run = MonitorHarness(["101=1,1,1"]) { $0.adaptiveExit = true }
        for tick in 0..<100 { run.see("101", at: Double(tick) / 10) }
        _ = run.take()
        run.advance(to: 39.899)
        #expect(run.take(Self.transitions) == [])
        run.advance(to: 39.9)
        #expect(run.take(Self.transitions).first == "39.900 exit A1:1:1 beacon monitored dwell 39.9")
    }

    @Test func aNumberKeepsTheFixedTimeoutAndNoTimeoutField() {
        var run = MonitorHarness(["101=1,1,1"]) { $0.exitTimeout = 3 }
        for tick in 0..<100 { run.see("101", at: Double(tick) / 10) }
        run.advance(to: 12.899)
        #expect(!run.outputs.contains { $0.type == "exit" })
        run.advance(to: 12.9)
        #expect(run.outputs.first { $0.type == "exit" }.map { !$0.json.contains("timeout") } == true)
    }

    @Test func eachVisitIsEstimatedAfresh() {
        // A second visit starts with no history: its first exit waits the maximum again.
        var run = Self.zoneOfThree()
        run.advance(to: 150)
        _ = run.take()
        run.see("101", at: 200)
        run.see("101", at: 201)
        _ = run.take()
        run.advance(to: 230.999)
        #expect(run.take(Self.transitions) == [])
        run.advance(to: 231)
        #expect(run.take(Self.transitions).first == "231.000 exit A1:1 zone monitored dwell 31.0")
    }
}
