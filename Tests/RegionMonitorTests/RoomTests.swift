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

    /// At no instant is a tag in two rooms (§19): over random reports of four scanners in two
    /// Areas, with gaps long enough for the adaptive exit to take it away and bring it back, every
    /// `enter` of a room comes after the `exit` of the one before (issue 47: an `enter` came 0.1 s
    /// before the old room's `exit` when the Area's deadline had passed but its timer not fired).
    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func aTagIsNeverInTwoRoomsAtOnce(seed: UInt64) {
        var run = Self.harness {
            $0.adaptiveExit = true
            $0.exitTimeoutMax = 30
        }
        var random = SeededGenerator(seed: seed)
        var time = 0.0
        var inside: Set<String> = []
        let scanners = ["101", "102", "103", "201"]
        for _ in 0..<3000 {
            // Mostly a report a second; now and then a silence of a few seconds.
            time +=
                Double.random(in: 0..<1, using: &random) < 0.05
                ? Double.random(in: 2...14, using: &random) : Double.random(in: 0.05...1, using: &random)
            let scanner = scanners[
                Int.random(in: 0..<(Double.random(in: 0..<1, using: &random) < 0.7 ? 1 : 4), using: &random)]
            run.see(scanner, at: time, rssi: Int8(Int.random(in: -90 ... -50, using: &random)))
            for line in Self.rooms(&run) {
                let parts = line.split(separator: " ")
                guard parts.count >= 3 else { continue }
                let zone = String(parts[2])
                if parts[1] == "enter" {
                    #expect(inside.isEmpty, "seed \(seed): \(line) while in \(inside)")
                    inside.insert(zone)
                } else {
                    inside.remove(zone)
                }
            }
        }
    }

    /// A first report enters its room at once; a room whose level leads by the rule's margin
    /// (12 dB) takes over at once.
    @Test func aClearLeadWinsAtOnce() {
        var run = Self.harness()
        run.see("101", at: 0, rssi: -60)
        #expect(Self.rooms(&run) == ["0.000 enter A1:1 zone derived"])
        run.see("102", at: 1, rssi: -46)
        #expect(Self.rooms(&run) == ["1.000 exit A1:1 zone derived dwell 1.0", "1.000 enter A1:2 zone derived"])
        #expect(run.monitor.roomChange?.previous == -1 && run.monitor.roomChange?.evidence == 13)
        #expect(run.monitor.roomChange?.why.contains("against -1 dB") == true)
    }

    /// A hand-over: a lead under the margin wins when it lasts, its excess over the drift (4 dB)
    /// summed over the two rooms' reports reaching 12 dB: 8 dB ahead, three reports.
    @Test func aSmallerLeadWinsWhenItLasts() {
        var run = Self.harness()
        run.see("101", at: 0, rssi: -60)
        _ = Self.rooms(&run)
        run.see("102", at: 1, rssi: -52)
        run.see("101", at: 1.5, rssi: -60)
        #expect(Self.rooms(&run) == [])
        run.see("102", at: 2, rssi: -52)
        #expect(Self.rooms(&run) == ["2.000 exit A1:1 zone derived dwell 2.0", "2.000 enter A1:2 zone derived"])
        #expect(run.monitor.roomChange?.scanner == "102")
    }

    /// Under `auto`, a reading counts for the tag's advertising interval (at most a second): a
    /// 10 Hz tag whose new room's scanner leads by 8 dB moves after a second and a half of that
    /// lead (the two rooms' readings add up: 4 dB over the drift, twice a second of the tag's
    /// time), as a 1 Hz tag does (three readings), not after three of its tenths of a second; the
    /// new scanner's first readings count for the interval the old one has learned.
    @Test func aTenHertzTagIsJudgedPerSecond() throws {
        var run = Self.harness { $0.adaptiveExit = true }
        for tenth in 0..<100 { run.see("101", at: Double(tenth) / 10, rssi: -60) }
        #expect(Self.rooms(&run) == ["0.000 enter A1:1 zone derived"])
        var moved: Double?
        for tenth in 100..<200 where moved == nil {
            let time = Double(tenth) / 10
            run.see("101", at: time, rssi: -60)
            run.see("102", at: time + 0.05, rssi: -52)
            if run.monitor.currentRoom == .zone(MonitorHarness.uuid(1), major: 2) { moved = time + 0.05 }
        }
        let after = try #require(moved) - 10
        #expect(after > 1 && after < 3, "moved \(after) s after the lead began")
    }

    /// A tag in a doorway, its two rooms' scanners taking turns ahead by a few dB for ten minutes:
    /// it never moves.
    @Test func aDoorwayTagDoesNotFlap() {
        var run = Self.harness()
        for second in 0..<600 {
            run.see("101", at: Double(second), rssi: -60)
            run.see("102", at: Double(second) + 0.5, rssi: second % 2 == 0 ? -57 : -63)
        }
        #expect(Self.rooms(&run) == ["0.000 enter A1:1 zone derived"])
    }

    /// A multipath dip of its room's scanner (15 dB down for three readings) does not move the tag,
    /// though each dipped reading is 5 dB under the other room's.
    @Test func aMultipathDipDoesNotMoveTheRoom() {
        var run = Self.harness()
        for second in 0..<20 {
            let dipped = (10..<13).contains(second)
            run.see("101", at: Double(second), rssi: dipped ? -70 : -55)
            run.see("102", at: Double(second) + 0.5, rssi: -65)
        }
        #expect(Self.rooms(&run) == ["0.000 enter A1:1 zone derived"])
        #expect(run.monitor.currentRoom == .zone(MonitorHarness.uuid(1), major: 1))
    }

    /// A scanner that falls silent (offline, or a long run of losses) gives its room away
    /// gradually: its level holds 3 s, then loses 1 dB a second, and the other room's lead adds up.
    @Test func aSilentScannerGivesWayGradually() {
        var run = Self.harness()
        for second in 0...40 {
            if second <= 10 { run.see("101", at: Double(second), rssi: -60) }
            run.see("102", at: Double(second) + 0.5, rssi: -66)
            if second == 22 { #expect(run.monitor.currentRoom == .zone(MonitorHarness.uuid(1), major: 1)) }
        }
        #expect(run.monitor.currentRoom == .zone(MonitorHarness.uuid(1), major: 2))
        let moved = run.monitor.roomChange.map { $0.at.microseconds - MonitorHarness.time(0).microseconds } ?? 0
        #expect(moved > 22_000_000 && moved <= 30_500_000, "\(moved)")
        #expect(run.monitor.roomChange?.scanner == "102")
    }

    /// Under an adaptive exit, a scanner whose path loses advertisements in runs (here six seconds
    /// of every twelve) holds its level through a run its own losses make plausible: a tag whose
    /// room's scanner reads 4 dB under another room's, at the drift, stays for five minutes; held
    /// only the rule's 3 s, every run gives the other room a few dB and it moves.
    @Test func aScannerThatLosesInRunsHoldsItsRoomThroughThem() {
        func room(grace confidence: Double?) -> Region? {
            var run = Self.harness { settings in
                settings.adaptiveExit = true
                settings.rooms?.graceConfidence = confidence
            }
            for second in 0..<300 {
                if second % 12 < 6 { run.see("101", at: Double(second), rssi: -60) }
                run.see("102", at: Double(second) + 0.5, rssi: -56)
            }
            return run.monitor.currentRoom
        }
        #expect(room(grace: 1e-3) == .zone(MonitorHarness.uuid(1), major: 1))
        #expect(room(grace: nil) == .zone(MonitorHarness.uuid(1), major: 2))
    }

    /// A report older than the rule's `fresh` (10 s) is no evidence: a strong report of room 2
    /// long ago never wins; room 3, heard weakly all along, takes over once the silent room 1 has
    /// aged enough.
    @Test func aStaleReportNeverWins() {
        var run = Self.harness()
        run.see("101", at: 0, rssi: -60)
        run.see("102", at: 0.5, rssi: -55)
        for second in 1...36 {
            if second <= 5 { run.see("101", at: Double(second), rssi: -60) }
            run.see("103", at: Double(second) + 0.25, rssi: -80)
            if second == 25 { #expect(run.monitor.currentRoom == .zone(MonitorHarness.uuid(1), major: 1)) }
        }
        #expect(run.monitor.currentRoom == .zone(MonitorHarness.uuid(1), major: 3))
        #expect(run.monitor.roomChange?.scanner == "103")
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
        #expect(run.monitor.currentRoom == .zone(MonitorHarness.uuid(1), major: 1))
        run.see("103", at: 0, rssi: -55)
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

/// Issue 72: a tag's nearest scanner goes when the tag leaves, not at the next restart.
@Suite struct RoomNearestTests {
    /// A tag heard in two rooms by ESPresense nodes, then by nothing: each scanner goes `off` in
    /// turn, and with the last the nearest is none (its heard strength, kept for the room rule, no
    /// longer makes a scanner gone `off` the strongest: it stayed the nearest until a restart).
    @Test func theNearestIsClearedWhenTheTagLeaves() {
        // As a tag's engine runs (Fleet's deviceConfiguration): in the foreground, with the
        // adaptive exit of `Tags.exitTimeout = auto` (the default) and ESPresense's report period.
        var run = RoomTests.harness {
            $0.mode = .foreground
            $0.adaptiveExit = true
            $0.exitTimeoutMin = 3
            $0.reportPeriod = 5
        }
        for step in 0..<3 {
            run.see("101", at: Double(step) * 0.5, rssi: -55)
            run.see("102", at: Double(step) * 0.5 + 0.01, rssi: -80)
        }
        #expect(run.monitor.nearestLocationID == "101")
        for second in stride(from: 2.0, through: 120, by: 1) { run.advance(to: second) }
        #expect(run.monitor.currentZone == nil)
        let nearest = run.take(["nearest"])
        #expect(run.monitor.nearestLocationID == nil, "\(nearest)")
        #expect(nearest.last?.hasSuffix("nearest none") == true, "\(nearest)")
    }
}

/// Issue 72: after a restart, a room the tag was not in gives its scanner's class no deadline of
/// its own: a weak report of it was `far` and then `off` at the next report, a millisecond later,
/// at every burst.
@Suite struct RoomResumeTests {
    static func tag(_ settings: inout MonitorSettings) {
        settings.mode = .foreground
        settings.adaptiveExit = true
        settings.exitTimeoutMin = 3
        settings.reportPeriod = 5
    }

    @Test func aWeakScannerAfterARestartStaysAsLongAsItIsHeard() {
        var run = RoomTests.harness(Self.tag)
        for step in 0..<6 {
            run.see("101", at: Double(step) * 0.5, rssi: -55)
            run.see("102", at: Double(step) * 0.5 + 0.01, rssi: -70)
        }
        for step in 0..<6 {
            run.see("103", at: 3 + Double(step) * 0.5, rssi: -55)
            run.see("102", at: 3 + Double(step) * 0.5 + 0.01, rssi: -75)
        }
        for second in stride(from: 7.0, through: 60, by: 1) { run.advance(to: second) }
        #expect(run.monitor.currentZone == nil)
        let presence = MonitorPresence(text: run.monitor.presence.text)
        var resumed = RoomTests.harness(Self.tag)
        resumed.monitor.resume(presence)
        resumed.start(at: 61)
        for burst in 0..<8 {
            let time = 62 + Double(burst) * 1.5
            resumed.see("103", at: time, rssi: -60)
            resumed.see("102", at: time + 0.001, rssi: -78)
            resumed.see("101", at: time + 0.002, rssi: -85)
        }
        let kitchen = resumed.take(["location"]).filter { $0.contains(" 101 ") }
        #expect(kitchen.count == 1 && kitchen.first?.contains("101 far") == true, "\(kitchen)")
    }
}
