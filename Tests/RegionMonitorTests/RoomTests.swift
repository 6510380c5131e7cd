import BeaconCore
import RegionMonitor
import Testing

/// docs/behaviour.md §19, `Tags.rooms = nearest`: a tag heard by the scanners of three rooms (Zones 1, 2, 3
/// of Area 1) and a fourth in another Area is in one room at a time (``RoomRule``).
@Suite struct RoomTests {
    static func harness(_ configure: @escaping (inout MonitorSettings) -> Void = { _ in }) -> MonitorHarness {
        MonitorHarness(["101=1,1,1", "102=1,2,1", "103=1,3,1", "201=2,1,1"]) { settings in
            settings.rssiFilter = .none
            settings.exitTimeout = 10
            settings.powerFromSighting = true
            settings.rooms = RoomRule()
            configure(&settings)
        }
    }

    static let transitions: Set<String> = ["enter", "exit"]

    /// The Zone transitions since the last take (the building is small enough that its scanners'
    /// locations are what is monitored, and Zones and Areas derived from them).
    static func rooms(_ run: inout MonitorHarness) -> [String] {
        run.take(transitions).filter { $0.contains(" zone ") }
    }

    @Test func aTagEntersTheRoomThatHeardItAndMovesOnlyOnClearEvidence() {
        var run = Self.harness()
        run.see("101", at: 0, rssi: -60)
        #expect(Self.rooms(&run) == ["0.000 enter A1:1 zone derived"])
        // Another room 4 dB stronger: not clear, the tag stays (a doorway).
        run.see("102", at: 1, rssi: -56)
        run.see("101", at: 2, rssi: -60)
        run.see("102", at: 3, rssi: -56)
        #expect(Self.rooms(&run) == [])
        #expect(run.monitor.currentRoom == .zone(MonitorHarness.uuid(1), major: 1))
        // 5 dB: it moves, leaving the first room at once; the Area stays.
        run.see("102", at: 4, rssi: -55)
        #expect(Self.rooms(&run) == ["4.000 exit A1:1 zone derived dwell 4.0", "4.000 enter A1:2 zone derived"])
        #expect(run.monitor.roomChange?.previous == -1 && run.monitor.roomChange?.evidence == 4)
        #expect(run.monitor.roomChange?.why.contains("against -1 dB") == true)
    }

    /// The present room's own scanner hearing the tag weaker is evidence too: the best other
    /// room takes over at once when it is now clearly stronger.
    @Test func aWeakerReportOfThePresentRoomHandsOverToTheBestOther() {
        var run = Self.harness()
        run.see("101", at: 0, rssi: -60)
        run.see("102", at: 1, rssi: -62)
        run.see("103", at: 1.5, rssi: -70)
        #expect(Self.rooms(&run) == ["0.000 enter A1:1 zone derived"])
        run.see("101", at: 2, rssi: -75)
        #expect(Self.rooms(&run) == ["2.000 exit A1:1 zone derived dwell 2.0", "2.000 enter A1:2 zone derived"])
        #expect(run.monitor.roomChange?.scanner == "102" && run.monitor.roomChange?.previous == -16)
    }

    /// A report older than the rule's `fresh` is no evidence: the old room's scanner went quiet,
    /// so a weaker report of another room wins; a stale report never does.
    @Test func aStaleReportNeverWins() {
        var run = Self.harness()
        run.see("101", at: 0, rssi: -50)
        run.see("102", at: 5, rssi: -70)
        #expect(run.monitor.currentRoom == .zone(MonitorHarness.uuid(1), major: 1))
        // 101 last heard at 0: at 10.5 it is stale, 102 (heard now) takes over although weaker.
        run.see("103", at: 9, rssi: -75)
        #expect(run.monitor.currentRoom == .zone(MonitorHarness.uuid(1), major: 1))
        run.see("102", at: 10.5, rssi: -70)
        #expect(run.monitor.currentRoom == .zone(MonitorHarness.uuid(1), major: 2))
        #expect(run.monitor.roomChange?.previous == nil)
    }

    /// Scanners of the same Area keep the room: the tag leaves it, and the Area, when none of
    /// them has heard it for the exit timeout.
    @Test func theAreasScannersHoldTheRoomUntilTheExitTimeout() {
        var run = Self.harness()
        run.see("101", at: 0, rssi: -60)
        run.see("103", at: 8, rssi: -80)
        run.advance(to: 15)
        #expect(Self.rooms(&run) == ["0.000 enter A1:1 zone derived"])
        run.advance(to: 30)
        let exits = run.take(Self.transitions)
        #expect(exits.count == 3 && exits.allSatisfy { $0.hasPrefix("18.000 exit A1") }, "\(exits)")
        #expect(run.monitor.insideRegions.isEmpty)
    }

    /// A move to a room of another Area leaves the old Area too: one place at a time.
    @Test func aMoveToAnotherAreaLeavesTheOldArea() {
        var run = Self.harness()
        run.see("101", at: 0, rssi: -70)
        run.see("201", at: 1, rssi: -55)
        let a2 = MonitorHarness.uuid(2)
        #expect(
            run.monitor.insideRegions == [
                .area(a2), .zone(a2, major: 1), .beacon(BeaconID(uuid: a2, major: 1, minor: 1)),
            ])
        let lines = run.take(Self.transitions)
        #expect(lines.contains("1.000 exit A1 area derived dwell 1.0"), "\(lines)")
        #expect(lines.last?.hasPrefix("1.000 enter A2") == true, "\(lines)")
    }

    /// Reports of one instant are taken in order under the same rule as any others (a live run
    /// takes a burst at one instant, a trace spreads it): the first enters at once, a second
    /// moves the tag only when clearly stronger.
    @Test func reportsOfOneInstantFollowTheSameRule() {
        var run = Self.harness()
        run.see("101", at: 0, rssi: -70)
        run.see("102", at: 0, rssi: -68)
        #expect(run.monitor.currentRoom == .zone(MonitorHarness.uuid(1), major: 1))
        run.see("103", at: 0, rssi: -64)
        #expect(run.monitor.currentRoom == .zone(MonitorHarness.uuid(1), major: 3))
    }

    /// `Tags.rooms = heard`: every Zone sighted is inside (5.1).
    @Test func heardPutsTheTagInEveryRoomThatHearsIt() {
        var run = Self.harness { $0.rooms = nil }
        run.see("101", at: 0, rssi: -70)
        run.see("102", at: 1, rssi: -80)
        #expect(run.monitor.insideRegions.filter { $0.kind == .zone }.count == 2)
    }
}
