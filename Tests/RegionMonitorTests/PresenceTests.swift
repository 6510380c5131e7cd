import BeaconCore
import Foundation
import RegionMonitor
import Testing

/// docs/behaviour.md §5.1 and 5.3: presence, exit timing, derived regions, ordering, dwell, current Area/Zone.
@Suite struct PresenceTests {
    static let transitions: Set<String> = ["enter", "exit"]

    @Test func exitFiresExactlyAtLastSightingPlusTimeout() {
        var run = MonitorHarness(["101=1,1,1"]) { $0.exitTimeout = 7.5 }
        run.see("101", at: 0.123)
        run.see("101", at: 3.456)
        _ = run.take()
        run.advance(to: 10.955)
        #expect(run.take(Self.transitions) == [])
        run.advance(to: 10.956)
        #expect(
            run.take(Self.transitions) == [
                "10.956 exit A1:1:1 beacon monitored dwell 10.833",
                "10.956 exit A1:1 zone derived dwell 10.833",
                "10.956 exit A1 area derived dwell 10.833",
            ])
        let exit = run.outputs.first { $0.type == "exit" }!
        #expect(exit.time.microseconds == MonitorHarness.time(3.456).microseconds + 7_500_000)
    }

    @Test func enterHappensAtTheFirstSightingWithNoDelay() {
        var run = MonitorHarness(["101=1,1,1"])
        run.start(at: 0)
        _ = run.take()
        run.see("101", at: 4.25)
        #expect(
            run.take(Self.transitions) == [
                "4.250 enter A1 area derived", "4.250 enter A1:1 zone derived", "4.250 enter A1:1:1 beacon monitored",
            ])
    }

    /// Inside while sighted *less than* exitTimeout ago: a sighting exactly at the exit deadline
    /// finds the region inside (sighted 0 s ago), so it never was outside; no exit, no enter.
    @Test func aSightingAtTheExitInstantKeepsTheRegionInside() {
        var run = MonitorHarness(["101=1,1,1"])
        run.see("101", at: 0)
        _ = run.take()
        run.see("101", at: 10)
        #expect(run.take(Self.transitions) == [])
        #expect(run.monitor.currentZone != nil)
        // The exit moves on to 20; one microsecond after it the next sighting enters again.
        run.advance(to: 19.999_999)
        #expect(run.take(Self.transitions) == [])
        run.see("101", at: 20.000_001)
        #expect(
            run.take(Self.transitions) == [
                "20.000 exit A1:1:1 beacon monitored dwell 20.0", "20.000 exit A1:1 zone derived dwell 20.0",
                "20.000 exit A1 area derived dwell 20.0", "20.000 enter A1 area derived",
                "20.000 enter A1:1 zone derived", "20.000 enter A1:1:1 beacon monitored",
            ])
    }

    /// The same for the Area: a Zone's exit and another Zone's sighting at one instant leave the
    /// Area inside, and the new Zone enters before the old one exits.
    @Test func aSightingInAnotherZoneAtAnExitInstantKeepsTheAreaInside() {
        var run = MonitorHarness(["101=1,1,1", "201=1,2,1"])
        run.see("101", at: 0)
        _ = run.take()
        run.see("201", at: 10)
        #expect(
            run.take(Self.transitions) == [
                "10.000 enter A1:2 zone derived", "10.000 enter A1:2:1 beacon monitored",
                "10.000 exit A1:1:1 beacon monitored dwell 10.0", "10.000 exit A1:1 zone derived dwell 10.0",
            ])
        #expect(run.monitor.currentZone == .zone(MonitorHarness.uuid(1), major: 2))
    }

    /// No `off` either: the beacon was sighted at the instant it would have gone off.
    @Test func aSightingAtTheOffInstantReportsNoOff() {
        var run = MonitorHarness(["101=1,1,1"])
        run.see("101", at: 0)
        _ = run.take()
        run.see("101", at: 10)
        #expect(run.take(["location"]) == [])
    }

    @Test func aDerivedZoneStaysInsideWhileAnyMonitoredBeaconInItIs() {
        var run = MonitorHarness(["101=1,1,1", "102=1,1,2", "201=1,2,1"])
        run.see("101", at: 0)
        run.see("102", at: 5)
        run.see("201", at: 12)
        run.drain()
        #expect(
            run.take(Self.transitions) == [
                "0.000 enter A1 area derived", "0.000 enter A1:1 zone derived", "0.000 enter A1:1:1 beacon monitored",
                "5.000 enter A1:1:2 beacon monitored",
                "10.000 exit A1:1:1 beacon monitored dwell 10.0",
                "12.000 enter A1:2 zone derived", "12.000 enter A1:2:1 beacon monitored",
                "15.000 exit A1:1:2 beacon monitored dwell 10.0", "15.000 exit A1:1 zone derived dwell 15.0",
                "22.000 exit A1:2:1 beacon monitored dwell 10.0", "22.000 exit A1:2 zone derived dwell 10.0",
                "22.000 exit A1 area derived dwell 22.0",
            ])
    }

    @Test func exitsAtOneInstantNestInsideOutAndEntersOutsideIn() {
        var run = MonitorHarness(["101=1,1,1", "201=1,2,1", "301=2,1,1"])
        run.see("101", at: 0)
        run.see("201", at: 0)
        run.see("301", at: 0)
        run.drain()
        #expect(
            run.take(Self.transitions) == [
                "0.000 enter A1 area derived", "0.000 enter A1:1 zone derived", "0.000 enter A1:1:1 beacon monitored",
                "0.000 enter A1:2 zone derived", "0.000 enter A1:2:1 beacon monitored",
                "0.000 enter A2 area derived", "0.000 enter A2:1 zone derived", "0.000 enter A2:1:1 beacon monitored",
                "10.000 exit A1:1:1 beacon monitored dwell 10.0", "10.000 exit A1:2:1 beacon monitored dwell 10.0",
                "10.000 exit A2:1:1 beacon monitored dwell 10.0", "10.000 exit A1:1 zone derived dwell 10.0",
                "10.000 exit A1:2 zone derived dwell 10.0", "10.000 exit A2:1 zone derived dwell 10.0",
                "10.000 exit A1 area derived dwell 10.0", "10.000 exit A2 area derived dwell 10.0",
            ])
    }

    @Test func sightingsWeakerThanEnterRssiNeverEnterButStillRange() {
        var run = MonitorHarness(["101=1,1,1"]) { $0.enterRSSI = -70 }
        run.see("101", at: 0, rssi: -80)
        #expect(run.take() == ["0.000 monitoring beacons - [A1:1:1]", "0.000 location 101 far fg"])
        run.see("101", at: 1, rssi: -70)
        run.see("101", at: 5, rssi: -80)
        run.see("101", at: 10, rssi: -80)
        run.advance(to: 30)
        #expect(
            run.take(Self.transitions) == [
                "1.000 enter A1 area derived", "1.000 enter A1:1 zone derived", "1.000 enter A1:1:1 beacon monitored",
                "11.000 exit A1:1:1 beacon monitored dwell 10.0", "11.000 exit A1:1 zone derived dwell 10.0",
                "11.000 exit A1 area derived dwell 10.0",
            ])
    }

    @Test func theCurrentZoneIsTheMostRecentlyEnteredOneStillInside() {
        var run = MonitorHarness(["101=1,1,1", "201=1,2,1", "301=2,1,1"])
        #expect(run.monitor.currentZone == nil)
        run.see("101", at: 0)
        run.see("201", at: 2)
        run.see("301", at: 3)
        run.see("101", at: 5)
        run.advance(to: 4)
        #expect(run.monitor.currentZone.map(MonitorHarness.label) == "A2:1")
        #expect(run.monitor.currentArea.map(MonitorHarness.label) == "A2")
        run.advance(to: 12.5)  // A1:2 left at 12
        #expect(run.monitor.currentZone.map(MonitorHarness.label) == "A2:1")
        run.advance(to: 13.5)  // A2 left at 13
        #expect(run.monitor.currentZone.map(MonitorHarness.label) == "A1:1")
        #expect(run.monitor.currentArea.map(MonitorHarness.label) == "A1")
        run.advance(to: 15)
        #expect(run.monitor.currentZone == nil)
        #expect(run.monitor.currentArea == nil)
    }

    @Test func advertisementsOfUnconfiguredBeaconsMoveNothing() {
        var run = MonitorHarness(["101=1,1,1"])
        run.start(at: 0)
        _ = run.take()
        let stranger = Advertisement(
            format: .ibeacon,
            beacon: BeaconID(uuid: MonitorHarness.uuid(1), major: 1, minor: 2),
            power: -59,
            rssi: -40,
            address: nil
        )
        #expect(!run.monitor.sighting(stranger, at: MonitorHarness.time(1), into: &run.outputs))
        run.drain()
        #expect(run.take() == [])
    }
}
