import BeaconCore
import Foundation
import RegionMonitor
import Testing

/// docs/behaviour.md §6: what is reported, when, and after a restart.
@Suite struct LocationEventTests {
    static let locations: Set<String> = ["location"]

    @Test func foregroundReportsEveryClassChangeAndOffAtTheTimeout() {
        var run = MonitorHarness(["101=1,1,1"]) { $0.rssiFilter = .none }
        run.see("101", at: 0, rssi: -59)
        run.see("101", at: 1, rssi: -50)
        run.see("101", at: 1.5, rssi: -51)
        run.see("101", at: 2, rssi: -75)
        run.drain()
        #expect(
            run.take(Self.locations) == [
                "0.000 location 101 near fg", "1.000 location 101 immediate fg", "2.000 location 101 far fg",
                "12.000 location 101 off fg",
            ])
    }

    @Test func theEventCarriesTheSixHSYCOFieldsFirst() throws {
        var run = MonitorHarness(["101=1,1,1"])
        run.see("101", at: 0, rssi: -65, power: -59)
        let location = try #require(run.outputs.first { $0.type == "location" })
        let json = location.json
        let keys = [
            "t", "type", "session", "address", "userid", "zone", "distance", "background", "uuid", "major",
            "minor", "name", "area", "zoneName", "rssi", "meters",
        ]
        let positions = keys.map { json.range(of: "\"\($0)\":")?.lowerBound }
        #expect(positions.allSatisfy { $0 != nil })
        #expect(positions.compactMap { $0 } == positions.compactMap { $0 }.sorted())
        #expect(
            json.contains(
                #""session":"s","address":"10.0.0.1","userid":"u","zone":"101","distance":"near","background":false"#))
        #expect(json.contains(#""rssi":-65.0,"meters":2.0"#))
    }

    @Test func aCalibratedPowerOverridesTheAdvertisedOne() throws {
        let hierarchy = Hierarchy(beacons: [
            Hierarchy.Beacon(
                locationID: "101",
                id: BeaconID(uuid: MonitorHarness.uuid(1), major: 1, minor: 1),
                power: -79
            )
        ])
        var run = MonitorHarness(hierarchy: hierarchy)
        run.see("101", at: 0, rssi: -79, power: -59)
        let location = try #require(run.outputs.first { $0.type == "location" })
        #expect(location.json.contains(#""meters":1.0"#))
    }

    @Test func backgroundReportsOnlyInsideTheWindowsThatEntersAndExitsOpen() {
        var run = MonitorHarness(["101=1,1,1", "102=1,1,2"]) {
            $0.mode = .background
            $0.rssiFilter = .none
        }
        run.see("101", at: 0, rssi: -59)  // enter: window 0–10
        run.see("101", at: 5, rssi: -50)
        run.see("101", at: 12, rssi: -75)  // far, but no window open
        #expect(run.take(Self.locations) == ["0.000 location 101 near bg", "5.000 location 101 immediate bg"])
        run.see("102", at: 14)  // enter 102: a window opens and reports what changed meanwhile
        #expect(run.take(Self.locations) == ["14.000 location 101 far bg", "14.000 location 102 near bg"])
        run.drain()
        #expect(run.take(Self.locations) == ["22.000 location 101 off bg", "24.000 location 102 off bg"])
    }

    @Test func backgroundReportsOffWhenTheRegionHoldingTheBeaconExits() {
        // Zones are monitored (3 beacons, cap 2): 101 goes unsighted while 102 keeps the zone inside.
        var run = MonitorHarness(["101=1,1,1", "102=1,1,2", "201=1,2,1"]) {
            $0.mode = .background
            $0.maxRegions = 2
            $0.backgroundRanging = 3
        }
        run.see("101", at: 0)
        run.see("102", at: 0)
        for second in 1...15 { run.see("102", at: Double(second)) }
        #expect(run.take(Self.locations) == ["0.000 location 101 near bg", "0.000 location 102 near bg"])
        run.drain()
        #expect(run.take(Self.locations) == ["25.000 location 101 off bg", "25.000 location 102 off bg"])
    }

    @Test func switchingToForegroundReportsWhatTheWindowsMissed() {
        var run = MonitorHarness(["101=1,1,1"]) {
            $0.mode = .background
            $0.rssiFilter = .none
        }
        run.see("101", at: 0, rssi: -59)
        run.see("101", at: 4, rssi: -59)
        run.see("101", at: 8, rssi: -59)
        run.see("101", at: 12, rssi: -75)  // far, outside the window that closed at 10
        run.setMode(.foreground, at: 13)
        run.see("101", at: 14, rssi: -50)
        #expect(
            run.take(Self.locations) == [
                "0.000 location 101 near bg", "13.000 location 101 far fg", "14.000 location 101 immediate fg",
            ])
    }

    @Test func nothingIsSaidOfBeaconsNeverSeen() {
        var run = MonitorHarness(["101=1,1,1", "102=1,1,2"])
        run.start(at: 0)
        run.see("101", at: 1)
        run.drain()
        #expect(run.take(Self.locations) == ["1.000 location 101 near fg", "11.000 location 101 off fg"])
    }

    @Test func aRestartRepeatsNoEventForABeaconStillThere() {
        var run = MonitorHarness(["101=1,1,1"], restored: ["101": .near])
        run.start(at: 0)
        run.see("101", at: 3)
        run.see("101", at: 8)
        run.drain()
        #expect(run.take(Self.locations) == ["18.000 location 101 off fg"])
    }

    @Test(arguments: [RangingMode.foreground, .background])
    func aRestartReportsOffForBeaconsGoneMeanwhile(_ mode: RangingMode) {
        var run = MonitorHarness(
            ["101=1,1,1", "102=1,1,2", "103=1,1,3"], restored: ["101": .near, "102": .far, "999": .near]
        ) {
            $0.mode = mode
        }
        run.start(at: 0)
        run.advance(to: 9.999)
        #expect(run.take(Self.locations) == [])
        run.drain()
        let flag = mode == .background ? "bg" : "fg"
        #expect(run.take(Self.locations) == ["10.000 location 101 off \(flag)", "10.000 location 102 off \(flag)"])
    }

    @Test func aRestoredBeaconSeenInAnotherClassIsReportedAtOnce() {
        var run = MonitorHarness(["101=1,1,1"], restored: ["101": .far]) { $0.rssiFilter = .none }
        run.start(at: 0)
        run.see("101", at: 2, rssi: -50)
        run.drain()
        #expect(run.take(Self.locations) == ["2.000 location 101 immediate fg", "12.000 location 101 off fg"])
    }
}
