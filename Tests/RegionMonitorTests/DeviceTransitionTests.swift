import BeaconCore
import Foundation
import RegionMonitor
import Testing

/// A device's own monitoring (an OwnTracks phone's transitions, docs/behaviour.md §15.1): a region is inside
/// while the device holds it or a recent sighting does; derived regions follow.
@Suite struct DeviceTransitionTests {
    static let transitions: Set<String> = ["enter", "exit"]

    mutating func phone(_ run: inout MonitorHarness, _ region: Region, entered: Bool, at seconds: Double) {
        run.monitor.deviceTransition(region, entered: entered, at: MonitorHarness.time(seconds), into: &run.outputs)
    }

    static let beacon = Region.beacon(BeaconID(uuid: MonitorHarness.uuid(1), major: 1, minor: 1))

    @Test mutating func anEnterHoldsTheRegionUntilTheLeaveWithNoTimeout() {
        var run = MonitorHarness(["101=1,1,1"]) { $0.exitTimeout = 5 }
        run.start(at: 0)
        _ = run.take()
        phone(&run, Self.beacon, entered: true, at: 1)
        #expect(
            run.take(Self.transitions) == [
                "1.000 enter A1 area derived", "1.000 enter A1:1 zone derived", "1.000 enter A1:1:1 beacon monitored",
            ])
        // No sighting at all, long past the exit timeout: still inside while held, and nothing is
        // due (no deadline from before any sighting, which a live loop would wait for).
        #expect(run.monitor.nextDeadline == nil || run.monitor.nextDeadline! > MonitorHarness.time(1))
        run.advance(to: 100)
        #expect(run.take(Self.transitions) == [])
        phone(&run, Self.beacon, entered: false, at: 120)
        #expect(
            run.take(Self.transitions) == [
                "120.000 exit A1:1:1 beacon monitored dwell 119.0", "120.000 exit A1:1 zone derived dwell 119.0",
                "120.000 exit A1 area derived dwell 119.0",
            ])
    }

    /// Inside while either holds: a leave with a fresh sighting waits for the sightings' timeout.
    @Test mutating func aLeaveWhileStillSightedExitsAtTheSightingsTimeout() {
        var run = MonitorHarness(["101=1,1,1"]) { $0.exitTimeout = 5 }
        run.start(at: 0)
        phone(&run, Self.beacon, entered: true, at: 1)
        run.see("101", at: 10)
        _ = run.take()
        phone(&run, Self.beacon, entered: false, at: 12)
        #expect(run.take(Self.transitions) == [])
        run.advance(to: 14.999)
        #expect(run.take(Self.transitions) == [])
        run.advance(to: 15)
        #expect(run.take(Self.transitions).first == "15.000 exit A1:1:1 beacon monitored dwell 14.0")
    }

    /// A region the device is not asked to monitor (a stale waypoint), or not configured, is not
    /// entered; a leave of what was never held changes nothing.
    @Test mutating func onlyMonitoredRegionsAreTakenFromTheDevice() {
        // 21 Zones in one Area: Areas are monitored first, so a Zone is not.
        var run = MonitorHarness((1...21).map { "\($0)=1,\($0),1" })
        run.start(at: 0)
        _ = run.take()
        phone(&run, .zone(MonitorHarness.uuid(1), major: 3), entered: true, at: 1)
        phone(&run, .area(MonitorHarness.uuid(9)), entered: true, at: 1)
        phone(&run, .area(MonitorHarness.uuid(1)), entered: false, at: 1)
        #expect(run.take(Self.transitions) == [])
        // The Area is monitored: entered, and the Zones take its place (areas then zones).
        phone(&run, .area(MonitorHarness.uuid(1)), entered: true, at: 2)
        let lines = run.take()
        #expect(lines.first == "2.000 enter A1 area monitored", "\(lines)")
        #expect(lines.contains { $0.hasPrefix("2.000 monitoring zones A1 [") }, "\(lines)")
        #expect(run.monitor.monitoredRegions.count == 20)
        #expect(run.monitor.monitoredRegions.allSatisfy { $0.kind == .zone })
    }

    /// The HSYCO model on a phone: the Area's `enter` switches monitoring to its Zones and
    /// deletes the Area's waypoint; the Area stays inside until the phone reports a Zone, and the
    /// Zone's `leave` takes the device out of both, back to monitoring Areas.
    @Test mutating func anAreaEnteredByThePhoneWaitsForItsZone() {
        var run = MonitorHarness((1...21).map { "\($0)=1,\($0),1" }) { $0.exitTimeout = 10 }
        run.start(at: 0)
        phone(&run, .area(MonitorHarness.uuid(1)), entered: true, at: 1)
        _ = run.take()
        // Nothing exits while the phone takes the Zones' waypoints, within exitTimeout.
        run.advance(to: 10.9)
        #expect(run.take() == [])
        let zone = Region.zone(MonitorHarness.uuid(1), major: 3)
        phone(&run, zone, entered: true, at: 5)
        #expect(run.take(Self.transitions) == ["10.900 enter A1:3 zone monitored"])
        // Past the hold, the Zone holds the Area.
        run.advance(to: 60)
        #expect(run.take() == [])
        phone(&run, zone, entered: false, at: 61)
        let lines = run.take()
        #expect(
            lines.prefix(2) == ["61.000 exit A1:3 zone monitored dwell 50.1", "61.000 exit A1 area derived dwell 60.0"])
        #expect(lines.last?.hasPrefix("61.000 monitoring areas - [") == true, "\(lines)")
    }

    /// No Zone follows the Area within exitTimeout: the Area exits, and Areas are monitored again.
    @Test mutating func anAreaWithNoZoneFollowingExitsAfterExitTimeout() {
        var run = MonitorHarness((1...21).map { "\($0)=1,\($0),1" }) { $0.exitTimeout = 10 }
        run.start(at: 0)
        phone(&run, .area(MonitorHarness.uuid(1)), entered: true, at: 1)
        _ = run.take()
        run.advance(to: 10.999)
        #expect(run.take() == [])
        run.advance(to: 11)
        let lines = run.take()
        #expect(
            lines.contains("11.000 exit A1 area monitored dwell 10.0")
                || lines.contains("11.000 exit A1 area derived dwell 10.0"), "\(lines)")
        #expect(run.monitor.monitoredRegions.allSatisfy { $0.kind == .area })
    }

    /// A phone's ranging (a `beacon` message) of a region it holds makes it inside until the
    /// phone's `leave`, not until exitTimeout (docs/behaviour.md §15.1); the leave ends it at once.
    @Test mutating func aPhonesRangingHoldsTheRegionUntilItsLeave() {
        var run = MonitorHarness((1...21).map { "\($0)=1,\($0),1" }) { $0.exitTimeout = 10 }
        run.start(at: 0)
        let beacon = BeaconID(uuid: MonitorHarness.uuid(1), major: 3, minor: 1)
        run.see("3", at: 1)
        run.monitor.phoneRanged(beacon, at: MonitorHarness.time(1), into: &run.outputs)
        let lines = run.take(Self.transitions)
        #expect(lines == ["1.000 enter A1 area monitored", "1.000 enter A1:3 zone monitored"], "\(lines)")
        // Long past exitTimeout with no message: the phone holds the Zone.
        run.advance(to: 100)
        #expect(run.take(Self.transitions) == [])
        phone(&run, .zone(MonitorHarness.uuid(1), major: 3), entered: false, at: 101)
        #expect(
            run.take(Self.transitions) == [
                "101.000 exit A1:3 zone monitored dwell 100.0", "101.000 exit A1 area derived dwell 100.0",
            ])
    }

    /// A phone's `beacon` message: the sighting, then the phone's ranging of it.
    mutating func ranged(_ run: inout MonitorHarness, zone: Int, at seconds: Double) {
        run.see("\(zone)", at: seconds)
        let beacon = BeaconID(uuid: MonitorHarness.uuid(1), major: UInt16(zone), minor: 1)
        run.monitor.phoneRanged(beacon, at: MonitorHarness.time(seconds), into: &run.outputs)
    }

    /// Issue 47 (docs/behaviour.md §15.1): the phone under a cap smaller than its Area's Zones walks from a Zone
    /// it holds into one it does not: its `leave` of the first comes a few milliseconds before the
    /// `beacon` message of the second. The Area stays inside (it was ranged 5 s before), nothing is
    /// published of Areas, and the second Zone comes in; without more messages the Area exits
    /// exitTimeout after the last one, not at the leave.
    @Test mutating func walkingIntoAZoneThePhoneDoesNotHoldKeepsTheArea() throws {
        var run = MonitorHarness((1...21).map { "\($0)=1,\($0),1" }) { $0.exitTimeout = 10 }
        run.start(at: 0)
        ranged(&run, zone: 3, at: 1)
        let monitored = run.monitor.monitoredRegions
        #expect(monitored.count == 20 && monitored.contains(.zone(MonitorHarness.uuid(1), major: 3)))
        let free = try #require(
            (1...21).first { !monitored.contains(.zone(MonitorHarness.uuid(1), major: UInt16($0))) })
        ranged(&run, zone: 3, at: 15)
        _ = run.take()
        phone(&run, .zone(MonitorHarness.uuid(1), major: 3), entered: false, at: 20)
        ranged(&run, zone: free, at: 20.006)
        let lines = run.take()
        #expect(lines.first == "20.000 exit A1:3 zone monitored dwell 19.0", "\(lines)")
        #expect(!lines.contains { $0.contains("A1 area") || $0.contains("monitoring areas") }, "\(lines)")
        #expect(lines.contains("20.006 enter A1:\(free) zone monitored"), "\(lines)")
        // The same walk with no message after the leave: the Area holds until 15 s + exitTimeout.
        var quiet = MonitorHarness((1...21).map { "\($0)=1,\($0),1" }) { $0.exitTimeout = 10 }
        quiet.start(at: 0)
        ranged(&quiet, zone: 3, at: 1)
        ranged(&quiet, zone: 3, at: 15)
        _ = quiet.take()
        phone(&quiet, .zone(MonitorHarness.uuid(1), major: 3), entered: false, at: 20)
        #expect(quiet.take(Self.transitions) == ["20.000 exit A1:3 zone monitored dwell 19.0"])
        quiet.advance(to: 24.999)
        #expect(quiet.take() == [])
        quiet.advance(to: 25)
        let end = quiet.take()
        #expect(end.first == "25.000 exit A1 area derived dwell 24.0", "\(end)")
        #expect(end.contains("25.000 monitoring areas - [A1]"), "\(end)")
        // What the phone ranged of the Area survives a restart as text.
        var held = MonitorHarness((1...21).map { "\($0)=1,\($0),1" }) { $0.exitTimeout = 10 }
        held.start(at: 0)
        ranged(&held, zone: 3, at: 1)
        ranged(&held, zone: 3, at: 15)
        phone(&held, .zone(MonitorHarness.uuid(1), major: 3), entered: false, at: 20)
        let presence = MonitorPresence(text: held.monitor.presence.text)
        #expect(presence.phoneAreaSightings == [.area(MonitorHarness.uuid(1)): MonitorHarness.time(15).microseconds])
        var resumed = MonitorHarness((1...21).map { "\($0)=1,\($0),1" }) { $0.exitTimeout = 10 }
        resumed.monitor.resume(presence)
        resumed.start(at: 21)
        resumed.advance(to: 24.9)
        #expect(resumed.take(Self.transitions) == [])
        resumed.advance(to: 25)
        #expect(resumed.take(Self.transitions).first == "25.000 exit A1 area derived dwell 24.0")
        // And across a reload whose file puts another Area first (the Areas' indices move).
        var reloaded = MonitorHarness(["999=2,1,1"] + (1...21).map { "\($0)=1,\($0),1" }) { $0.exitTimeout = 10 }
        reloaded.monitor = Monitor(
            reloading: held.monitor, hierarchy: reloaded.monitor.hierarchy, settings: reloaded.monitor.settings,
            identity: MonitorIdentity(session: "s", address: "10.0.0.1", userid: "u"))
        reloaded.start(at: 21)
        reloaded.advance(to: 24.9)
        #expect(!reloaded.take(Self.transitions).contains { $0.contains("exit A1 area") })
        reloaded.advance(to: 25)
        #expect(reloaded.take(Self.transitions).contains("25.000 exit A1 area derived dwell 24.0"))
    }

    /// A phone that entered the Area (its transition) at 1 s and ranged a beacon of Zone 3 under
    /// it at 1.5 s.
    mutating func rangedUnderTheArea() -> MonitorHarness {
        var run = MonitorHarness((1...21).map { "\($0)=1,\($0),1" }) { $0.exitTimeout = 10 }
        run.start(at: 0)
        phone(&run, .area(MonitorHarness.uuid(1)), entered: true, at: 1)
        run.see("3", at: 1.5)
        let beacon = BeaconID(uuid: MonitorHarness.uuid(1), major: 3, minor: 1)
        run.monitor.phoneRanged(beacon, at: MonitorHarness.time(1.5), into: &run.outputs)
        return run
    }

    /// A Zone given to the phone just after its ranging reported one of its beacons is settled by
    /// iOS as inside with no `enter`: it is held, and stays inside until its `leave`.
    @Test mutating func aZoneGivenRightAfterThePhoneRangedItIsHeld() {
        var run = rangedUnderTheArea()
        _ = run.take()
        run.advance(to: 200)
        #expect(run.take(Self.transitions) == [])
        #expect(run.monitor.insideRegions.contains(.zone(MonitorHarness.uuid(1), major: 3)))
    }

    /// A stepped clock moves every instant of where the device is, the phone's ranging among
    /// them: the presence after the step is the one before, moved by the step.
    @Test mutating func aClockStepMovesThePresenceWholeThePhonesRangingToo() {
        var run = rangedUnderTheArea()
        var expected = run.monitor.presence
        #expect(!expected.phoneSightings.isEmpty)
        let day: Int64 = -86_400_000_000
        expected.shiftClock(by: day)
        run.monitor.shiftClock(by: day)
        #expect(run.monitor.presence == expected)
        #expect(expected.latest == MonitorHarness.time(1.5).microseconds + day)
    }

    /// The Zone the phone just left keeps its place among the cap's candidates (docs/behaviour.md
    /// §5.2): its `leave` ends the presence its ranging gave (15.1), not the sighting. A Zone
    /// sighted next takes the slot of one never sighted, the same after a restart from the kept
    /// presence.
    @Test mutating func aZoneThePhoneLeftStaysAheadOfTheNeverSighted() {
        for restart in [false, true] {
            // 21 Zones in one Area, a cap of 20: the Area's Zones are 1 more than the cap.
            var run = MonitorHarness((1...21).map { "\($0)=1,\($0),1" }) { $0.exitTimeout = 10 }
            run.start(at: 0)
            phone(&run, .area(MonitorHarness.uuid(1)), entered: true, at: 1)
            // The last Zone in the ini's order, ranged by the phone at 2 s, left at 5 s.
            run.see("20", at: 2)
            let beacon = BeaconID(uuid: MonitorHarness.uuid(1), major: 20, minor: 1)
            run.monitor.phoneRanged(beacon, at: MonitorHarness.time(2), into: &run.outputs)
            phone(&run, .zone(MonitorHarness.uuid(1), major: 20), entered: false, at: 5)
            if restart {
                var resumed = MonitorHarness((1...21).map { "\($0)=1,\($0),1" }) { $0.exitTimeout = 10 }
                resumed.monitor.resume(MonitorPresence(text: run.monitor.presence.text))
                resumed.start(at: 5.5)
                run = resumed
            }
            run.see("21", at: 6)
            let kept = Set(run.monitor.monitoredRegions)
            #expect(kept.count == 20, "restart \(restart)")
            #expect(kept.contains(.zone(MonitorHarness.uuid(1), major: 20)), "restart \(restart)")
            #expect(kept.contains(.zone(MonitorHarness.uuid(1), major: 21)), "restart \(restart)")
            #expect(!kept.contains(.zone(MonitorHarness.uuid(1), major: 19)), "restart \(restart)")
        }
    }

    /// Where a device is survives as text and resumes without an `enter`: held regions stay
    /// held, the monitored set is the one before; garbage lines are skipped.
    @Test mutating func presenceResumesWithoutAnEnter() {
        var run = MonitorHarness((1...21).map { "\($0)=1,\($0),1" }) { $0.exitTimeout = 10 }
        run.start(at: 0)
        phone(&run, .area(MonitorHarness.uuid(1)), entered: true, at: 1)
        phone(&run, .zone(MonitorHarness.uuid(1), major: 7), entered: true, at: 2)
        let before = run.monitor.monitoredRegions
        let text = run.monitor.presence.text + "\nnonsense\ninside x y\nseen 12 \nheld not-a-region\nhold soon"
        let presence = MonitorPresence(text: text)
        #expect(presence == run.monitor.presence)
        var resumed = MonitorHarness((1...21).map { "\($0)=1,\($0),1" }) { $0.exitTimeout = 10 }
        resumed.monitor.resume(presence)
        resumed.start(at: 50)
        let lines = resumed.take()
        #expect(lines.filter { $0.contains(" enter ") || $0.contains(" exit ") } == [], "\(lines)")
        #expect(resumed.monitor.monitoredRegions == before)
        #expect(resumed.monitor.currentZone == .zone(MonitorHarness.uuid(1), major: 7))
        phone(&resumed, .zone(MonitorHarness.uuid(1), major: 7), entered: false, at: 60)
        #expect(
            resumed.take(Self.transitions) == [
                "60.000 exit A1:7 zone monitored dwell 58.0", "60.000 exit A1 area derived dwell 59.0",
            ])
    }
}
