import BeaconConfiguration
import BeaconCore
import Foundation
import RegionMonitor
import Testing

/// `Occupancy.*`, `Sensor.*` and the `occupant` keys (docs/behaviour.md §23).
@Suite struct OccupancyConfigurationTests {
    static let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
    static let lab = Region.zone(UUID(uuidString: uuid)!, major: 1)
    static let hall = Region.zone(UUID(uuidString: uuid)!, major: 2)

    /// Two named Zones; three lines, so that the next line is line 4.
    static let base = """
        LocationBaseBeacon.1 = \(uuid),1,1
        LocationBaseBeacon.2 = \(uuid),2,1
        LocationZoneName.\(uuid):1 = Lab

        """

    static func load(_ text: String) -> Result<Configuration, ConfigurationErrors> {
        Configuration.load(Array((base + text).utf8), path: "conf/hsyco.ini")
    }

    @Test func withoutAnyOfItsKeysThereIsNoOccupancy() throws {
        #expect(try Self.load("").get().occupancy == nil)
        #expect(try Self.load("Device.alice = Alice\n").get().occupancy == nil)
    }

    @Test func occupancyCountZonesTurnsItOnWithTheDefaults() throws {
        let occupancy = try #require(try Self.load("Occupancy.count = zones\n").get().occupancy)
        #expect(occupancy == OccupancySettings())
        #expect(occupancy.scope == .zones && occupancy.vacantAfter == 30 && occupancy.sensors.isEmpty)
    }

    @Test func everySettingIsRead() throws {
        let configuration = try Self.load(
            """
            Occupancy.count = both
            Occupancy.vacantAfter = 45
            Sensor.lab-pir = zigbee2mqtt/lab/pir, motion, Lab
            Sensor.lab-pir.hold = 90
            Sensor.lab-radar = lab-radar/binary_sensor/radar_target/state, Presence, \(Self.uuid):1
            Sensor.lab-radar.silence = 0
            Sensor.hall-ld2410 = tele/tasmota_1A2B3C/SENSOR, presence, \(Self.uuid):2, LD2410.Energy[0]
            Sensor.hall-count = lab-radar/sensor/target_count/state, count, \(Self.uuid):2,
            Device.cart-7.occupant = false
            Tag.badge-1.occupant = no
            Tag.badge-2.occupant = true

            """
        ).get()
        let occupancy = try #require(configuration.occupancy)
        #expect(occupancy.scope == .both && occupancy.vacantAfter == 45)
        #expect(occupancy.nonOccupants == ["cart-7", "badge-1"])
        #expect(
            occupancy.sensors == [
                SensorDefinition(
                    id: "lab-pir", topic: "zigbee2mqtt/lab/pir", kind: .motion, zone: Self.lab, hold: 90,
                    status: SensorStatus(topic: "zigbee2mqtt/lab/pir/availability", firmware: .zigbee2mqtt), line: 6),
                SensorDefinition(
                    id: "lab-radar", topic: "lab-radar/binary_sensor/radar_target/state", kind: .presence,
                    zone: Self.lab, silence: 0, status: SensorStatus(topic: "lab-radar/status", firmware: .esphome),
                    line: 8),
                SensorDefinition(
                    id: "hall-ld2410", topic: "tele/tasmota_1A2B3C/SENSOR", kind: .presence, zone: Self.hall,
                    field: "LD2410.Energy[0]",
                    status: SensorStatus(topic: "tele/tasmota_1A2B3C/LWT", firmware: .tasmota), line: 10),
                SensorDefinition(
                    id: "hall-count", topic: "lab-radar/sensor/target_count/state", kind: .count, zone: Self.hall,
                    status: SensorStatus(topic: "lab-radar/status", firmware: .esphome), line: 11),
            ])
        #expect(occupancy.sensors.map(\.path) == ["occupancy", "occupancy", "LD2410.Energy[0]", "occupancy"])
        #expect(configuration.warnings.isEmpty, "\(configuration.warnings)")
    }

    /// Each mistake is one error, on its line, naming the cause and the fix.
    @Test(arguments: [
        ("Sensor.pir = z/lab/pir, motion, Kitchen", ["no Zone 'Kitchen'", "UUID:major or by its LocationZoneName"]),
        ("Sensor.pir = z/lab/pir, motion, \(uuid):9", ["no Zone '\(uuid):9'"]),
        ("Sensor.pir = z/lab/pir, motion, \(uuid)", ["no Zone"]),
        ("Sensor.pir = z/lab/pir, radar, Lab", ["no sensor kind 'radar'", "give one of motion, presence, count"]),
        (
            "Sensor.door = z/lab/door, contact, Lab",
            ["no sensor kind 'contact'", "give one of motion, presence, count, door"]
        ),
        ("Sensor.pir = zigbee2mqtt/+/pir, motion, Lab", ["without + or #"]),
        ("Sensor.pir = zigbee2mqtt/#, motion, Lab", ["without + or #"]),
        ("Sensor.pir = , motion, Lab", ["must be one topic"]),
        ("Sensor.pir = z/lab/pir, motion", ["expected <topic>, <kind>, <Zone>[, <field>]"]),
        ("Sensor.pir = z/lab/pir, motion, Lab, a, b", ["expected <topic>, <kind>, <Zone>[, <field>]"]),
        ("Sensor.pir = z/lab/pir, motion, Lab, Switch1..Action", ["the field 'Switch1..Action'", "LD2410.Energy[0]"]),
        ("Sensor.pir = z/lab/pir, motion, Lab, Energy[x]", ["the field 'Energy[x]'"]),
        ("Sensor.p ir = z/lab/pir, motion, Lab", ["sensor id 'p ir'", "such as Sensor.lab-pir"]),
        ("Sensor.pir.hold = 10", ["no Sensor.pir = <topic>, <kind>, <Zone> for this hold setting"]),
        ("Sensor. = z, motion, Lab", ["names no sensor"]),
        ("Occupancy.count = rooms", ["Occupancy.count = 'rooms'", "expected one of zones, areas, both"]),
        ("Occupancy.vacantAfter = -1", ["Occupancy.vacantAfter = '-1'", "expected seconds"]),
        ("Occupancy.vacantAfter = soon", ["expected seconds"]),
        (
            "Occupancy.vacantafter = 30",
            ["no setting Occupancy.vacantafter", "count (zones, areas, both) and vacantAfter"]
        ),
        ("Occupancy.enabled = true", ["no setting Occupancy.enabled"]),
        ("Device.cart-7.occupant = maybe", ["expected true or false"]),
        ("Device..occupant = false", ["names no device"]),
    ])
    func aMistakeIsOneErrorOnItsLine(line: String, fragments: [String]) {
        guard case .failure(let failure) = Self.load(line + "\n") else {
            Issue.record("\(line) was taken")
            return
        }
        #expect(failure.errors.count == 1, "\(failure)")
        #expect(failure.errors.first?.line == 4, "\(failure)")
        #expect(failure.description.hasPrefix("conf/hsyco.ini:4: "), "\(failure)")
        #expect(!failure.description.contains("\n"))
        for fragment in fragments { #expect(failure.description.contains(fragment), "\(failure)") }
    }

    /// A sensor's settings: the hold above 0, the silence 0 (never) or more, up to a year.
    @Test(arguments: [
        ("Sensor.pir.hold = 0", "expected seconds above 0"), ("Sensor.pir.hold = -5", "above 0"),
        ("Sensor.pir.hold = nan", "expected seconds"), ("Sensor.pir.hold = 31536001", "expected seconds"),
        ("Sensor.pir.status = a/+/status", "must be one topic without + or #"),
        ("Sensor.pir.status =", "must be one topic without + or #"),
        ("Sensor.pir.silence = -1", "expected seconds"), ("Sensor.pir.silence = forever", "expected seconds"),
        ("Sensor.pir.timeout = 10", "no sensor setting 'timeout'; a sensor takes hold, silence and status"),
    ])
    func aBadSensorSettingIsAnErrorOnItsLine(line: String, fragment: String) {
        guard case .failure(let failure) = Self.load("Sensor.pir = z/lab/pir, motion, Lab\n" + line + "\n") else {
            Issue.record("\(line) was taken")
            return
        }
        #expect(failure.errors.map(\.line) == [5], "\(failure)")
        #expect(failure.description.contains(fragment), "\(failure)")
    }

    @Test func aYearIsTheLongestHoldAndSilence() throws {
        let occupancy = try #require(
            try Self.load(
                "Sensor.pir = z/lab/pir, motion, Lab\nSensor.pir.hold = 31536000\nSensor.pir.silence = 31536000\n"
            ).get().occupancy)
        #expect(occupancy.sensors.first?.hold == 31_536_000 && occupancy.sensors.first?.silence == 31_536_000)
    }

    @Test func aSensorGivenTwiceIsAnErrorOnTheSecondLine() {
        guard
            case .failure(let failure) = Self.load(
                "Sensor.pir = z/lab/pir, motion, Lab\nSensor.pir = z/hall/pir, motion, \(Self.uuid):2\n")
        else {
            Issue.record("taken")
            return
        }
        #expect(failure.errors.map(\.line) == [5])
        #expect(failure.description.contains("duplicate key Sensor.pir, first set on line 4"), "\(failure)")
    }

    /// A sensor whose line was refused says no more: its `.hold` is not a second error.
    @Test func aRefusedSensorsSettingsSayNothingMore() {
        guard
            case .failure(let failure) = Self.load(
                "Sensor.pir = z/lab/pir, wave, Lab\nSensor.pir.hold = 30\nSensor.pir.silence = 60\n")
        else {
            Issue.record("taken")
            return
        }
        #expect(failure.errors.map(\.line) == [4], "\(failure)")
    }

    @Test func aZoneNameTwoZonesShareIsAskedAsUUIDMajor() {
        let text = "LocationZoneName.\(Self.uuid):2 = Lab\nSensor.pir = z/lab/pir, motion, Lab\n"
        guard case .failure(let failure) = Self.load(text) else {
            Issue.record("taken")
            return
        }
        #expect(failure.errors.map(\.line) == [5])
        #expect(failure.description.contains("2 Zones are named 'Lab'; give the Zone as UUID:major"), "\(failure)")
    }

    /// A door contact: zigbee2mqtt's `contact` unless a field is named, never silent by default.
    @Test func aDoorIsRead() throws {
        let occupancy = try #require(
            try Self.load(
                """
                Sensor.lab-door = zigbee2mqtt/lab-door, door, Lab
                Sensor.hall-door = tele/tasmota_D00R/SENSOR, Door, \(Self.uuid):2, Switch1

                """
            ).get().occupancy)
        #expect(
            occupancy.sensors == [
                SensorDefinition(
                    id: "lab-door", topic: "zigbee2mqtt/lab-door", kind: .door, zone: Self.lab,
                    status: SensorStatus(topic: "zigbee2mqtt/lab-door/availability", firmware: .zigbee2mqtt), line: 4),
                SensorDefinition(
                    id: "hall-door", topic: "tele/tasmota_D00R/SENSOR", kind: .door, zone: Self.hall, field: "Switch1",
                    status: SensorStatus(topic: "tele/tasmota_D00R/LWT", firmware: .tasmota), line: 5),
            ])
        #expect(occupancy.sensors.map(\.path) == ["contact", "Switch1"])
        #expect(occupancy.sensors.map(\.silence) == [0, 0])
    }

    /// Two sensors may share a topic (an ESPHome node's, a Tasmota's SENSOR read through two fields).
    @Test func twoSensorsMayShareATopic() throws {
        let occupancy = try #require(
            try Self.load(
                """
                Sensor.switch = tele/t/SENSOR, motion, Lab, Switch1
                Sensor.radar = tele/t/SENSOR, presence, Lab, LD2410.Energy[0]

                """
            ).get().occupancy)
        #expect(occupancy.sensors.map(\.topic) == ["tele/t/SENSOR", "tele/t/SENSOR"])
    }

    /// The keys are known: no "unknown key" warning beside them, and `check` can name them.
    @Test func theKeysAreKnown() throws {
        #expect(Configuration.knownKeys.contains("Occupancy.count"))
        #expect(Configuration.knownKeys.contains("Occupancy.vacantAfter"))
        #expect(Configuration.keyPrefixes.contains("Sensor."))
        let configuration = try Self.load(
            "Occupancy.vacantAfter = 0\nSensor.pir = z/lab/pir, motion, Lab\nDevice.x.occupant = false\n"
        ).get()
        #expect(configuration.warnings.isEmpty, "\(configuration.warnings)")
        #expect(configuration.occupancy?.vacantAfter == 0)
    }
}
