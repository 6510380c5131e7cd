import BeaconCore
import RegionMonitor
import Testing

/// docs/behaviour.md §9.2: the nearest beacon, handed over only to a clearly stronger one.
@Suite struct NearestTests {
    /// Three beacons in one zone, raw RSSI (no filter), the default 5 dB margin.
    static func harness(_ configure: @escaping (inout MonitorSettings) -> Void = { _ in }) -> MonitorHarness {
        MonitorHarness(["101=1,1,1", "102=1,1,2", "103=1,1,3"]) { settings in
            settings.rssiFilter = .none
            settings.exitTimeout = 10
            configure(&settings)
        }
    }

    @Test func theFirstBeaconHeardIsNearestAndAClearlyStrongerOneTakesOver() {
        var run = Self.harness()
        run.see("101", at: 0, rssi: -70)
        #expect(run.take(["nearest"]) == ["0.000 nearest 101"])
        run.see("102", at: 1, rssi: -66)  // 4 dB stronger: not clearly closer
        run.see("102", at: 2, rssi: -65)  // exactly the margin: takes over
        #expect(run.take(["nearest"]) == ["2.000 nearest 102"])
        #expect(run.monitor.nearestLocationID == "102")
    }

    @Test func anAmbiguousBeaconChangesNothing() {
        var run = Self.harness()
        run.see("101", at: 0, rssi: -60)
        run.see("102", at: 1, rssi: -57)
        run.see("103", at: 2, rssi: -56)
        run.see("101", at: 3, rssi: -60)
        #expect(run.take(["nearest"]) == ["0.000 nearest 101"])
    }

    @Test func whenTheNearestWeakensAClearlyStrongerOneTakesOverAtOnce() {
        var run = Self.harness()
        run.see("101", at: 0, rssi: -50)
        run.see("102", at: 1, rssi: -58)
        run.see("101", at: 2, rssi: -70)  // 102 is now 12 dB stronger
        #expect(run.take(["nearest"]) == ["0.000 nearest 101", "2.000 nearest 102"])
    }

    @Test func measuredPowerCountsAStrongTransmitterAsFarther() {
        // 102 is louder, but its 1 m power is 10 dB higher: 101 is closer by 6 dB.
        var run = Self.harness()
        run.see("101", at: 0, rssi: -62, power: -70)
        run.see("102", at: 1, rssi: -58, power: -60)
        #expect(run.take(["nearest"]) == ["0.000 nearest 101"])
        run.see("102", at: 2, rssi: -52, power: -60)  // now 8 - 8 = 0 dB... not clearly
        run.see("102", at: 3, rssi: -46, power: -60)  // 14 vs 8: takes over
        #expect(run.take(["nearest"]) == ["3.000 nearest 102"])
    }

    @Test func aLostNearestHandsOverToTheStrongestLeftThenNone() {
        var run = Self.harness()
        run.see("101", at: 0, rssi: -50)
        run.see("102", at: 1, rssi: -60)
        run.see("103", at: 1.5, rssi: -65)
        for second in stride(from: 2.0, through: 14, by: 2) {
            run.see("102", at: second, rssi: -60)
            run.see("103", at: second, rssi: -65)
        }
        run.advance(to: 30)
        // 101 goes off 10 s after its last sighting; 102 and 103 at 24.
        #expect(run.take(["nearest"]) == ["0.000 nearest 101", "10.000 nearest 102", "24.000 nearest none"])
    }

    /// The nearest is kept across a restart, as the classes are (docs/behaviour.md §6), so a restart does not
    /// say it again; not heard within the grace, it becomes none.
    static func restarted() -> MonitorHarness {
        var run = MonitorHarness(
            ["101=1,1,1", "102=1,1,2", "103=1,1,3"], restored: ["101": .near, "102": .far], restoredNearest: "101"
        ) { settings in
            settings.rssiFilter = .none
            settings.exitTimeout = 10
        }
        run.start()
        return run
    }

    @Test func aRestoredNearestHeardAgainIsNotSaidAgain() {
        var run = Self.restarted()
        #expect(run.monitor.nearestLocationID == "101")
        run.setMode(.foreground, at: 1)  // a step with nothing heard holds it
        run.see("101", at: 2, rssi: -60)
        run.see("102", at: 3, rssi: -62)
        #expect(run.take(["nearest"]).isEmpty)
        #expect(run.monitor.nearestLocationID == "101")
    }

    @Test func anotherBeaconHeardFirstTakesOverFromARestoredNearest() {
        var run = Self.restarted()
        run.see("103", at: 2, rssi: -80)
        #expect(run.take(["nearest"]) == ["2.000 nearest 103"])
    }

    @Test func aRestoredNearestNotHeardWithinTheGraceBecomesNone() {
        var run = Self.restarted()
        run.advance(to: 9.5)
        #expect(run.monitor.nearestLocationID == "101")
        run.advance(to: 10)
        #expect(run.take(["nearest"]) == ["10.000 nearest none"])
    }

    @Test func aRestoredNearestWhoseClassWasOffIsNotRestored() {
        let run = MonitorHarness(["101=1,1,1"], restored: ["101": .off], restoredNearest: "101")
        #expect(run.monitor.nearestLocationID == nil)
        let unknown = MonitorHarness(["101=1,1,1"], restored: ["101": .near], restoredNearest: "999")
        #expect(unknown.monitor.nearestLocationID == nil)
    }
}
