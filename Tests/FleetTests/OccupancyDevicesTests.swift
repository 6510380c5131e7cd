import BeaconConfiguration
import BeaconCore
import Engine
import Fleet
import Foundation
import RegionMonitor
import Testing

/// docs/behaviour.md §23 through the table of devices: a tag heard by scanners, a phone and the
/// own radio are counted where their engines say they are (the own radio by its userid), a tag
/// that is not a person is not, and sensor messages reach the own radio's engine, whose garbage
/// notices come out as log lines.
@Suite struct OccupancyDevicesTests {
    static let area = TagTests.area

    static let occupancy = """
        Sensor.kitchen-radar = kitchen-radar/binary_sensor/radar_target/state, presence, Kitchen
        Tag.keys.occupant = false

        """

    static func table(_ extra: String = "") throws -> Devices {
        try TagTests.table(occupancy + extra)
    }

    static func time(_ seconds: Double) -> Timestamp { TagTests.time(seconds) }

    /// The own radio's occupancy outputs as `<seconds> <Zone name> occupied|vacant [devices]`.
    static func occupancy(_ actions: [Devices.Action]) -> [String] {
        actions.compactMap { action in
            guard case .engine(.own, .output(.occupancy(let time, let change))) = action else { return nil }
            let seconds = Int((Double(time.microseconds) / 1_000_000 - 1_700_000_000).rounded())
            return "\(seconds) \(change.name ?? change.region.description) \(change.occupied ? "occupied" : "vacant")"
                + " \(change.devices)"
        }
    }

    /// The shell wakes at each device's next timer (``Devices/nextWake``): the tag leaves 10 s
    /// after its last report (Tags.exitTimeout), and the Kitchen is vacant 30 s later.
    @Test func aTagEnteringAZoneMakesItOccupiedAndItsExitVacant() throws {
        var table = try Self.table()
        var actions: [Devices.Action] = []
        table.start(at: Self.time(0), into: &actions)
        table.handle(ScannerReport(scanner: "kitchen", tag: "badge-1", rssi: -60), at: Self.time(1), into: &actions)
        #expect(Self.occupancy(actions) == ["1 Kitchen occupied [\"badge-1\"]"])
        actions = []
        while let wake = table.nextWake, wake <= Self.time(100) { table.advance(to: wake, into: &actions) }
        #expect(
            Self.occupancy(actions) == [
                "11 Kitchen occupied []", "30 Hall vacant []", "30 Office vacant []", "41 Kitchen vacant []",
            ])
    }

    /// A file run moves the clock to each record's time: a tag's exit between two records must
    /// reach the occupancy at its own instant, not at the next record's.
    @Test func aTagsExitBetweenTwoRecordsCountsFromItsOwnInstant() throws {
        var table = try Self.table()
        var actions: [Devices.Action] = []
        table.start(at: Self.time(0), into: &actions)
        table.handle(
            .report(Self.time(1), ScannerReport(scanner: "kitchen", tag: "badge-1", rssi: -60)), into: &actions)
        actions = []
        table.handle(.report(Self.time(50), ScannerReport(scanner: "hall", tag: "keys", rssi: -60)), into: &actions)
        #expect(Self.occupancy(actions).first == "11 Kitchen occupied []")
        #expect(Self.occupancy(actions).contains("41 Kitchen vacant []"))
    }

    @Test func aTagThatIsNotAPersonIsNotCounted() throws {
        var table = try Self.table()
        var actions: [Devices.Action] = []
        table.start(at: Self.time(0), into: &actions)
        table.handle(ScannerReport(scanner: "kitchen", tag: "keys", rssi: -60), at: Self.time(1), into: &actions)
        table.handle(ScannerReport(scanner: "hall", tag: "badge-1", rssi: -60), at: Self.time(2), into: &actions)
        #expect(TagTests.rooms(actions) == ["keys enter Kitchen", "badge-1 enter Hall"])
        #expect(Self.occupancy(actions) == ["2 Hall occupied [\"badge-1\"]"])
        table.advance(to: Self.time(30), into: &actions)
        #expect(table.engine(.own)?.occupancy?.current.first?.devices == [])
    }

    /// The own radio is a device like any other: counted by its userid where its engine is.
    @Test func theOwnRadioIsCountedByItsUserid() throws {
        var table = try Self.table()
        var actions: [Devices.Action] = []
        table.start(at: Self.time(0), into: &actions)
        let kitchen = Advertisement(
            format: .ibeacon, beacon: BeaconID(uuid: UUID(uuidString: Self.area)!, major: 1, minor: 1), power: -59,
            rssi: -60, address: nil)
        table.handle(.advertisement(kitchen), at: Self.time(1), into: &actions)
        #expect(Self.occupancy(actions) == ["1 Kitchen occupied [\"u\"]"])
    }

    /// A sensor's message is the daemon's input; its garbage is a notice of the own radio, once.
    @Test func aSensorsMessageReachesTheOccupancyAndGarbageIsANotice() throws {
        var table = try Self.table()
        var actions: [Devices.Action] = []
        table.start(at: Self.time(0), into: &actions)
        let radar = "kitchen-radar"
        table.handle(.sensor(SensorMessage(sensor: radar, payload: Array("ON".utf8))), at: Self.time(1), into: &actions)
        #expect(Self.occupancy(actions) == ["1 Kitchen occupied []"])
        actions = []
        for second in 2...4 {
            table.handle(
                .sensor(SensorMessage(sensor: radar, payload: Array("Online".utf8))), at: Self.time(Double(second)),
                into: &actions)
        }
        let notices = actions.compactMap { action -> String? in
            guard case .notice(.own, let line) = action else { return nil }
            return line
        }
        #expect(notices == [#"sensor kitchen-radar: "Online" is neither on nor off; its state is unchanged"#])
        #expect(Self.occupancy(actions).isEmpty)
    }
}
