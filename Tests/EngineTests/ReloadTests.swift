import BeaconCore
import BeaconConfiguration
import Engine
import Foundation
import RegionMonitor
import Rules
import Testing

/// docs/behaviour.md §13: a reload (SIGHUP, `cmd/reload`) carries presence over. Regions that stay inside see
/// no exit and no enter, and the current Area and Zone never read `none` in between (Home
/// Assistant's tracker would show `not_home` for a moment).
@Suite struct ReloadTests {
    static let uuid = "ACFD165E-C0C0-11E3-9BBE-1A514932AC01"
    static let other = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"

    static func configuration(_ text: String) throws -> Configuration {
        try Configuration.load(Array(text.utf8), path: "/tmp/hsyco.ini").get()
    }

    struct Walk {
        var engine: Engine
        var outputs: [MonitorOutput] = []

        init(_ configuration: Configuration) {
            engine = Engine(configuration: configuration, identity: EngineTests.identity)
        }

        static func time(_ seconds: Double) -> Timestamp { Timestamp(secondsSinceEpoch: 1_700_000_000 + seconds)! }

        mutating func see(_ uuid: String, major: UInt16, minor: UInt16, at seconds: Double) {
            let advertisement = Advertisement(
                format: .ibeacon, beacon: BeaconID(uuid: UUID(uuidString: uuid)!, major: major, minor: minor),
                power: -59, rssi: -60, address: nil)
            outputs += engine.handle(.advertisement(advertisement), at: Self.time(seconds)).outputs
        }

        /// The outputs of a reload to `configuration` at `seconds`, as `type region` lines.
        mutating func reload(_ configuration: Configuration, at seconds: Double) throws -> [String] {
            let start = outputs.count
            outputs +=
                engine.handle(
                    .reconfigure(configuration, rules: nil, settings: RuleSettings()), at: Self.time(seconds)
                ).outputs
            return Array(outputs[start...]).map(ReloadTests.describe)
        }

        mutating func advance(to seconds: Double) -> [String] {
            let start = outputs.count
            outputs += engine.advance(to: Self.time(seconds)).outputs
            return Array(outputs[start...]).map(ReloadTests.describe)
        }
    }

    static func describe(_ output: MonitorOutput) -> String {
        switch output {
        case .monitoring(_, let change): "monitoring \(change.mode.rawValue)"
        case .transition(_, let transition):
            "\(transition.direction.rawValue) \(transition.region)" + (transition.dwell.map { " \($0)" } ?? "")
        default: output.type
        }
    }

    static let beaconsIni = """
        LocationBaseBeacon.1 = \(uuid),1,1
        LocationBaseBeacon.2 = \(uuid),2,1
        Monitor.mode = foreground
        """

    @Test func aReloadWhileInsideSaysOnlyTheNewMonitoringAndTheVisitGoesOn() throws {
        var walk = Walk(try Self.configuration(Self.beaconsIni))
        walk.see(Self.uuid, major: 1, minor: 1, at: 0)
        walk.see(Self.uuid, major: 1, minor: 1, at: 4)
        let renamed = try Self.configuration(Self.beaconsIni + "\nLocationZoneName.\(Self.uuid):1 = Kitchen\n")
        #expect(try walk.reload(renamed, at: 5) == ["monitoring beacons"])
        #expect(walk.engine.monitor.currentZoneName == "Kitchen")
        #expect(walk.engine.monitor.currentArea == .area(UUID(uuidString: Self.uuid)!))
        // The visit that began before the reload ends 10 s after its last sighting, its dwell
        // whole; the beacon reported before the reload is reported `off` then.
        #expect(
            walk.advance(to: 20) == [
                "exit \(Self.uuid):1:1 14.0", "exit \(Self.uuid):1 14.0", "exit \(Self.uuid) 14.0", "location",
                "nearest",
            ])
    }

    @Test func aReloadInTheHierarchicalPlanStaysOnTheZonesOfTheAreaItIsIn() throws {
        let ini = """
            LocationBaseBeacon.1 = \(Self.uuid),1,1
            LocationBaseBeacon.2 = \(Self.uuid),2,1
            LocationBaseBeacon.3 = \(Self.other),1,1
            Monitor.maxRegions = 1
            """
        var walk = Walk(try Self.configuration(ini))
        walk.see(Self.uuid, major: 2, minor: 1, at: 0)
        #expect(walk.outputs.map(Self.describe).contains("enter \(Self.uuid):2"))
        #expect(try walk.reload(Self.configuration(ini + "\nMonitor.enterRssi = -90\n"), at: 3) == ["monitoring zones"])
        #expect(walk.engine.monitor.currentZone == .zone(UUID(uuidString: Self.uuid)!, major: 2))
        guard case .monitoring(_, let change) = walk.outputs.last else {
            Issue.record("no monitoring output")
            return
        }
        #expect(change.area == UUID(uuidString: Self.uuid))
    }

    @Test func aReloadWithAShorterExitTimeoutExitsWhatItNoLongerHolds() throws {
        var walk = Walk(try Self.configuration(Self.beaconsIni))
        walk.see(Self.uuid, major: 1, minor: 1, at: 0)
        let shorter = try Self.configuration(Self.beaconsIni + "\nMonitor.exitTimeout = 2\n")
        #expect(
            try walk.reload(shorter, at: 5) == [
                "monitoring beacons", "exit \(Self.uuid):1:1 5.0", "exit \(Self.uuid):1 5.0", "exit \(Self.uuid) 5.0",
            ])
        #expect(walk.engine.monitor.currentArea == nil)
    }

    @Test func aRegionNoLongerConfiguredIsDroppedWithoutAnExitAndTheRestStayInside() throws {
        var walk = Walk(try Self.configuration(Self.beaconsIni))
        walk.see(Self.uuid, major: 1, minor: 1, at: 0)
        walk.see(Self.uuid, major: 2, minor: 1, at: 1)
        let fewer = try Self.configuration("LocationBaseBeacon.2 = \(Self.uuid),2,1\nMonitor.mode = foreground\n")
        #expect(try walk.reload(fewer, at: 2) == ["monitoring beacons"])
        #expect(walk.engine.monitor.currentZone == .zone(UUID(uuidString: Self.uuid)!, major: 2))
        #expect(walk.engine.monitor.insideRegions.count == 3)
    }
}
