import Foundation
import TestSupport
import Testing

/// `check` says the occupancy (docs/behaviour.md §23): its settings, each sensor, and each
/// region's rule in one line a person reads.
@Suite struct CheckOccupancyTests {
    static let building = """
        LocationBaseBeacon.101 = E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,1,1
        LocationBaseBeacon.102 = E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,2,1
        LocationBaseBeacon.103 = E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,3,1
        LocationAreaName.E2C56DB5-DFFB-48D2-B060-D0F5A71096E0 = Flat
        LocationZoneName.E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1 = Lab
        LocationZoneName.E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:2 = Hall
        Tag.trolley.occupant = false

        """

    static func check(_ ini: String) async throws -> [String] {
        let file = try TemporaryFile(contents: Data(ini.utf8))
        let run = try await DecodeCommandTests.beaconwatch(["check", "--config", file.path])
        #expect(run.status == 0, "\(run.stderr)")
        return run.stdout.split(separator: "\n").map(String.init)
    }

    @Test func checkListsTheSensorsAndEachZonesRule() async throws {
        let lines = try await Self.check(
            Self.building + """
                Sensor.lab-pir = zigbee2mqtt/lab/pir, motion, Lab
                Sensor.lab-radar = lab-radar/binary_sensor/presence/state, presence, E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1
                Sensor.lab-radar.silence = 0
                Sensor.lab-cam = tele/lab-cam/SENSOR, count, Lab, LD2450.Targets
                Sensor.lab-pir.hold = 90
                Sensor.hall-radar = office/hall-radar, presence, Hall
                Sensor.hall-fp1 = z2m/hall-fp1, presence, Hall, presence
                Sensor.hall-fp1.status = z2m/hall-fp1/availability
                Sensor.hall-pir = zigbee2mqtt/hall/pir, motion, Hall
                Sensor.hall-pir.status = none
                Occupancy.vacantAfter = 45

                """)
        let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
        let expected = [
            "  occupancy: per Zone (Occupancy.count), vacant after 45 s of nothing (Occupancy.vacantAfter); 6 sensors; "
                + "not counted (occupant = false): trolley",
            "  sensor lab-pir: motion in zone \(uuid):1 (Lab), topic zigbee2mqtt/lab/pir, field occupancy (of a JSON "
                + "object; a plain payload is read whole), holds 90 s; liveness: offline when "
                + "zigbee2mqtt/lab/pir/availability says offline (zigbee2mqtt's, by its state topic); until it says "
                + "anything, offline after 900 s without a message",
            "  sensor lab-radar: presence in zone \(uuid):1 (Lab), topic lab-radar/binary_sensor/presence/state, field "
                + "occupancy (of a JSON object; a plain payload is read whole); liveness: offline when lab-radar/status "
                + "says offline (ESPHome's, by its state topic)",
            "  sensor lab-cam: count in zone \(uuid):1 (Lab), topic tele/lab-cam/SENSOR, field LD2450.Targets (of a "
                + "JSON object; a plain payload is read whole); liveness: offline when tele/lab-cam/LWT says offline "
                + "(Tasmota's, by its state topic)",
            "  sensor hall-radar: presence in zone \(uuid):2 (Hall), topic office/hall-radar, field occupancy (of a "
                + "JSON object; a plain payload is read whole); liveness: never offline (no status topic, silence 0): "
                + "Sensor.hall-radar.status names one",
            "  sensor hall-fp1: presence in zone \(uuid):2 (Hall), topic z2m/hall-fp1, field presence (of a JSON "
                + "object; a plain payload is read whole); liveness: offline when z2m/hall-fp1/availability says "
                + "offline (Sensor.hall-fp1.status)",
            "  sensor hall-pir: motion in zone \(uuid):2 (Hall), topic zigbee2mqtt/hall/pir, field occupancy (of a "
                + "JSON object; a plain payload is read whole), holds 120 s; liveness: offline after 900 s without a "
                + "message (no status topic; Sensor.hall-pir.status names one)",
            "  occupancy Lab: occupied when a device is inside, or lab-pir (motion, 90 s hold) or lab-radar (presence) "
                + "says so, or lab-cam counts anyone; people: the devices inside or lab-cam's count, whichever is more; "
                + "vacant after 45 s of nothing",
            "  occupancy Hall: occupied when a device is inside, or hall-radar (presence) or hall-fp1 (presence) or "
                + "hall-pir (motion, 120 s hold) says so; vacant after 45 s of nothing",
        ]
        let start = try #require(lines.firstIndex { $0.hasPrefix("  occupancy:") }, "\(lines)")
        #expect(Array(lines[start..<min(lines.count, start + expected.count)]) == expected)
        #expect(!lines.contains { $0.hasPrefix("  occupancy Flat") })
    }

    /// Areas too (`Occupancy.count = both`): an Area's rule has the sensors of its Zones; with no
    /// occupancy key at all, `check` says nothing of it.
    /// A door contact occupies nothing: `check` says it holds the room, not that it "says so".
    @Test func checkSaysADoorHoldsItsRoom() async throws {
        let lines = try await Self.check(
            Self.building + """
                Sensor.lab-pir = zigbee2mqtt/lab/pir, motion, Lab
                Sensor.lab-door = zigbee2mqtt/lab/door, door, Lab

                """)
        let rule = try #require(lines.first { $0.contains("occupancy Lab") }, "\(lines)")
        #expect(rule.contains("lab-pir (motion, 120 s hold) says so"), "\(rule)")
        #expect(rule.contains("held while lab-door stay closed after someone moved inside"), "\(rule)")
        #expect(!rule.contains("lab-door (presence)"), "\(rule)")
    }

    @Test func checkShowsAreasWhenCountedAndNothingWithoutOccupancy() async throws {
        let lines = try await Self.check(
            Self.building + "Occupancy.count = both\nOccupancy.vacantAfter = 0\n"
                + "Sensor.hall-pir = z2m/hall, motion, Hall\n")
        #expect(lines.contains { $0.hasPrefix("  occupancy: per Zone and per Area (Occupancy.count)") })
        #expect(
            lines.contains(
                "  occupancy Flat (area): occupied when a device is inside, or hall-pir (motion, 120 s hold) says so; "
                    + "people: its Zones' together, or the devices inside when more; "
                    + "vacant as soon as nothing says anyone is there"), "\(lines)")
        #expect(
            lines.contains(
                "  occupancy Lab: occupied when a device is inside; vacant as soon as nothing says anyone is there"))
        let without = try await Self.check(
            Self.building.replacingOccurrences(of: "Tag.trolley.occupant = false\n", with: ""))
        #expect(!without.contains { $0.contains("occupancy") })
    }
}
