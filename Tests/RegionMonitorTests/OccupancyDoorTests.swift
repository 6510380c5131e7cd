import BeaconCore
import Foundation
import RegionMonitor
import Testing

/// Door contacts (docs/occupancy.md, "Doors"): someone who moved in a room whose doors are all
/// closed is still there until a door opens ("wasp in a box"). On the hand-driven clock of
/// ``OccupancyMonitorTests``.
@Suite struct OccupancyDoorTests {
    typealias Harness = OccupancyMonitorTests.Harness
    static let lab = OccupancyMonitorTests.lab

    /// A zigbee2mqtt contact sensor (an Aqara MCCGQ11LM): `"contact": true` when closed.
    static func door(_ id: String = "lab-door") -> SensorDefinition {
        SensorDefinition(
            id: id, topic: "zigbee2mqtt/\(id)", kind: .door, zone: lab,
            status: SensorStatus.derived(from: "zigbee2mqtt/\(id)"))
    }

    static let closed = #"{"battery":100,"contact":true,"voltage":3025}"#
    static let open = #"{"battery":100,"contact":false,"voltage":3025}"#
    static let moved = #"{"occupancy":true}"#

    /// The Lab's announcements, as `<seconds> <state> <count>`, `*` after a flip.
    static func lab(_ harness: Harness) -> [String] {
        harness.lines.filter { $0.contains(" Lab ") }
    }

    static func current(_ harness: Harness) -> OccupancyChange? {
        harness.monitor.current.first { $0.region == lab }
    }

    @Test func aDoorDefaultsToTheContactFieldAndNeverGoesSilent() {
        #expect(Self.door().path == "contact")
        #expect(Self.door().silence == 0)
        #expect(SensorKind(rawValue: "door") == .door)
    }

    /// zigbee2mqtt's `contact` (true: closed), and plain payloads: `true` and `ON` are closed,
    /// as are the words `closed` and `open` a door only reads.
    @Test func aDoorsPayloads() {
        let path = Self.door().path
        #expect(SensorPayload.parse(Self.closed, kind: .door, path: path) == .reading(.detected(true)))
        #expect(SensorPayload.parse(Self.open, kind: .door, path: path) == .reading(.detected(false)))
        #expect(SensorPayload.parse(#"{"battery":97}"#, kind: .door, path: path) == .heartbeat)
        #expect(SensorPayload.parse("Closed", kind: .door, path: path) == .reading(.detected(true)))
        #expect(SensorPayload.parse("open", kind: .door, path: path) == .reading(.detected(false)))
        #expect(SensorPayload.parse("ON", kind: .door, path: path) == .reading(.detected(true)))
        #expect(SensorPayload.parse("open", kind: .presence, path: "occupancy") != .reading(.detected(false)))
    }

    @Test func motionInsideClosedDoorsKeepsTheRoomOccupiedPastVacantAfter() {
        var harness = Harness([OccupancyMonitorTests.pir(), Self.door()])
        harness.sensor("lab-door", Self.open, at: 1)
        harness.sensor("lab-door", Self.closed, at: 5)
        harness.sensor("lab-pir", Self.moved, at: 10)
        harness.advance(to: 5000)
        // The PIR's hold ended at 130: only the closed door holds the room since.
        #expect(Self.lab(harness) == ["10 Lab occupied 1", "130 Lab occupied 1"])
        #expect(harness.nextDeadline == nil, "no vacancy is due while the door is closed")
        let lab = Self.current(harness)
        #expect(lab?.occupied == true && lab?.heldBy == ["lab-door"] && lab?.doors == ["lab-door"])
        #expect(lab?.sensors["lab-door"] == .detected(true))
        #expect(
            lab?.explanation()
                == "Lab is occupied: its door lab-door is closed since someone moved inside (held until a door opens)")
        // A report that repeats "closed" (a battery level) changes nothing.
        harness.sensor("lab-door", Self.closed, at: 6000)
        harness.sensor("lab-door", #"{"battery":99}"#, at: 6001)
        harness.advance(to: 9000)
        #expect(Self.current(harness)?.occupied == true)
    }

    @Test func aDoorOpeningLetsTheRoomGoVacantAfterVacantAfterFromThen() {
        var harness = Harness([OccupancyMonitorTests.pir(hold: 20), Self.door()])
        harness.sensor("lab-door", Self.closed, at: 5)
        harness.sensor("lab-pir", Self.moved, at: 10)
        harness.advance(to: 500)
        harness.sensor("lab-door", Self.open, at: 500)
        #expect(harness.nextDeadline == 530)
        harness.advance(to: 529)
        #expect(Self.current(harness)?.occupied == true)
        #expect(Self.current(harness)?.heldBy == [])
        #expect(
            Self.current(harness)?.explanation() == "Lab is occupied: nobody is seen now; vacant once that has lasted")
        harness.advance(to: 600)
        #expect(Self.lab(harness).last == "530 Lab vacant 0 *")
        #expect(Self.lab(harness).count(where: { $0.contains("vacant") }) == 1)
        // Closed again with nobody moving inside: it stays vacant.
        harness.sensor("lab-door", Self.closed, at: 700)
        harness.advance(to: 2000)
        #expect(Self.current(harness)?.occupied == false)
    }

    /// Someone who walks out and closes the door behind them: the motion came before the door
    /// closed, and holds nothing.
    @Test func motionBeforeTheDoorClosedHoldsNothing() {
        var harness = Harness([OccupancyMonitorTests.pir(), Self.door()])
        harness.sensor("lab-pir", Self.moved, at: 5)
        harness.sensor("lab-door", Self.closed, at: 10)
        harness.advance(to: 1000)
        #expect(Self.lab(harness).last == "155 Lab vacant 0 *")
    }

    @Test func aDoorAloneOccupiesNothing() {
        var harness = Harness([Self.door()])
        harness.sensor("lab-door", Self.open, at: 1)
        harness.sensor("lab-door", Self.closed, at: 2)
        harness.sensor("lab-door", Self.open, at: 3)
        harness.sensor("lab-door", Self.closed, at: 4)
        harness.advance(to: 1000)
        #expect(Self.lab(harness) == ["30 Lab vacant 0"])
        #expect(Self.current(harness)?.sensors == ["lab-door": .detected(true)])
        #expect(Self.current(harness)?.explanation() == "Lab is vacant")
    }

    @Test func aRoomWithTwoDoorsNeedsBothClosed() {
        // One closed, the other open: the motion's hold and vacantAfter, as without doors.
        var ajar = Harness([OccupancyMonitorTests.pir(), Self.door(), Self.door("lab-door-2")])
        ajar.sensor("lab-door", Self.closed, at: 5)
        ajar.sensor("lab-door-2", Self.open, at: 5)
        ajar.sensor("lab-pir", Self.moved, at: 10)
        ajar.advance(to: 1000)
        #expect(Self.lab(ajar).last == "160 Lab vacant 0 *")

        // A door never heard from is not known to be closed.
        var unheard = Harness([OccupancyMonitorTests.pir(), Self.door(), Self.door("lab-door-2")])
        unheard.sensor("lab-door", Self.closed, at: 5)
        unheard.sensor("lab-pir", Self.moved, at: 10)
        unheard.advance(to: 1000)
        #expect(Self.lab(unheard).last == "160 Lab vacant 0 *")

        // Both closed: held until either opens.
        var shut = Harness([OccupancyMonitorTests.pir(), Self.door(), Self.door("lab-door-2")])
        shut.sensor("lab-door", Self.closed, at: 5)
        shut.sensor("lab-door-2", Self.closed, at: 6)
        shut.sensor("lab-pir", Self.moved, at: 10)
        shut.advance(to: 1000)
        #expect(Self.current(shut)?.occupied == true)
        #expect(Self.current(shut)?.heldBy == ["lab-door", "lab-door-2"])
        #expect(
            Self.current(shut)?.explanation()
                == "Lab is occupied: its doors lab-door, lab-door-2 are closed since someone moved inside (held until a door opens)"
        )
        shut.sensor("lab-door-2", "false", at: 1000)
        shut.advance(to: 2000)
        #expect(Self.lab(shut).last == "1030 Lab vacant 0 *")
    }

    @Test func presenceInsideClosedDoorsHoldsTheRoomOnceItClears() {
        var harness = Harness([OccupancyMonitorTests.radar(silence: 0), Self.door()])
        harness.sensor("lab-door", Self.closed, at: 5)
        harness.sensor("lab-radar", "ON", at: 10)
        // A still person the radar loses: the closed door keeps the room.
        harness.sensor("lab-radar", "OFF", at: 100)
        harness.advance(to: 1000)
        #expect(Self.current(harness)?.occupied == true)
        #expect(Self.current(harness)?.heldBy == ["lab-door"])
    }

    @Test func anAreaIsHeldByItsZonesDoors() {
        var harness = Harness([OccupancyMonitorTests.pir(hold: 20), Self.door()], scope: .both)
        harness.sensor("lab-door", Self.closed, at: 5)
        harness.sensor("lab-pir", Self.moved, at: 10)
        harness.advance(to: 1000)
        let floor = harness.monitor.current.first { $0.region == OccupancyMonitorTests.floor }
        #expect(floor?.occupied == true && floor?.heldBy == ["lab-door"])
        harness.sensor("lab-door", Self.open, at: 1000)
        harness.advance(to: 2000)
        #expect(harness.monitor.current.allSatisfy { !$0.occupied })
    }

    /// A door offline may have opened unseen: it holds nothing, and back online it does not
    /// bring back a room that went vacant meanwhile.
    @Test func aDoorOfflineHoldsNothingAndBackOnlineBringsNothingBack() {
        var harness = Harness([OccupancyMonitorTests.pir(hold: 20), Self.door()])
        harness.sensor("lab-door", Self.closed, at: 5)
        harness.sensor("lab-pir", Self.moved, at: 10)
        harness.advance(to: 500)
        #expect(Self.current(harness)?.heldBy == ["lab-door"])
        harness.monitor.sensorStatus(
            "lab-door", payload: Array("offline".utf8), at: OccupancyMonitorTests.time(500), into: &harness.outputs)
        harness.advance(to: 600)
        #expect(Self.lab(harness).last == "530 Lab vacant 0 *")
        harness.monitor.sensorStatus(
            "lab-door", payload: Array("online".utf8), at: OccupancyMonitorTests.time(700), into: &harness.outputs)
        harness.sensor("lab-door", Self.closed, at: 701)
        harness.advance(to: 2000)
        #expect(Self.current(harness)?.occupied == false)
    }

    @Test func garbageOnTheDoorTopicIsSaidOnceAndChangesNothing() {
        var harness = Harness([OccupancyMonitorTests.pir(hold: 20), Self.door()])
        harness.sensor("lab-door", Self.closed, at: 5)
        harness.sensor("lab-pir", Self.moved, at: 10)
        let said = harness.sensor("lab-door", "maybe", at: 100)
        #expect(said == #"sensor lab-door: "maybe" is neither on nor off; its state is unchanged"#)
        #expect(harness.sensor("lab-door", #"{"contact":"ajar"}"#, at: 101) == nil, "the same kind, said once")
        #expect(
            harness.sensor("lab-door", "{", at: 102)
                == "sensor lab-door: JSON that does not parse; its state is unchanged")
        #expect(harness.sensor("lab-door", "[", at: 103) == nil)
        harness.advance(to: 1000)
        #expect(Self.current(harness)?.occupied == true && Self.current(harness)?.heldBy == ["lab-door"])
    }

    @Test func aClockStepMovesWhenTheDoorClosed() {
        var harness = Harness([OccupancyMonitorTests.pir(hold: 20), Self.door()])
        harness.sensor("lab-door", Self.closed, at: 5)
        harness.monitor.shiftClock(by: 100_000_000)
        // The motion at 50 is after the door's close, now at 105.
        harness.sensor("lab-pir", Self.moved, at: 50)
        harness.advance(to: 1000)
        #expect(Self.current(harness)?.occupied == false)
    }
}
