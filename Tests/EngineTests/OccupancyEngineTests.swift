import BeaconCore
import BeaconConfiguration
import Engine
import Foundation
import RegionMonitor
import Rules
import Testing

/// docs/behaviour.md §23 through the own radio's engine: where devices are and what sensors say
/// come in as inputs, the occupancy's deadlines fire on the engine's (virtual) clock, rules see
/// its flips, and a reload carries it over.
@Suite struct OccupancyEngineTests {
    static let uuid = EngineTests.uuid
    static let lab = Region.zone(UUID(uuidString: uuid)!, major: 1)
    static let hall = Region.zone(UUID(uuidString: uuid)!, major: 2)
    static let floor = Region.area(UUID(uuidString: uuid)!)

    static let ini = """
        LocationBaseBeacon.1 = \(uuid),1,1
        LocationBaseBeacon.2 = \(uuid),2,1
        LocationZoneName.\(uuid):1 = Lab
        LocationZoneName.\(uuid):2 = Hall
        Monitor.exitTimeout = 5
        Sensor.lab-radar = lab-radar/binary_sensor/radar_target/state, presence, Lab
        Sensor.lab-pir = zigbee2mqtt/lab/pir, motion, Lab
        Sensor.lab-pir.silence = 0
        Device.trolley.occupant = false

        """

    static func configuration(_ extra: String = "") throws -> Configuration {
        try EngineTests.configuration(ini + extra)
    }

    static func time(_ seconds: Double) -> Timestamp { EngineTests.time(seconds) }

    static func seconds(_ time: Timestamp) -> Double {
        Double(time.microseconds - Self.time(0).microseconds) / 1_000_000
    }

    /// The own radio's engine, started at 0, with its actions.
    struct Run {
        var engine: Engine
        var actions: [EngineAction] = []

        init(_ configuration: Configuration, rules: [RuleRegion]? = nil, occupancy: Bool = true) {
            engine = Engine(
                configuration: configuration, identity: EngineTests.identity, rules: rules,
                ruleSettings: RuleSettings(configuration, machineID: nil), occupancy: occupancy)
            engine.start(at: OccupancyEngineTests.time(0), into: &actions)
        }

        mutating func handle(_ input: EngineInput, at seconds: Double) {
            engine.handle(input, at: OccupancyEngineTests.time(seconds), into: &actions)
        }

        mutating func place(_ device: String, _ regions: [Region], at seconds: Double) {
            handle(.occupants(device: device, regions: regions), at: seconds)
        }

        mutating func sensor(_ id: String, _ payload: String, at seconds: Double) {
            handle(.sensor(SensorMessage(sensor: id, payload: Array(payload.utf8))), at: seconds)
        }

        mutating func advance(to seconds: Double) {
            engine.advance(to: OccupancyEngineTests.time(seconds), into: &actions)
        }

        /// The occupancy outputs as `<seconds> <name> occupied|vacant <count> [devices]`, `*` after a flip.
        var occupancy: [String] {
            actions.outputs.compactMap { output in
                guard case .occupancy(let time, let change) = output else { return nil }
                let seconds = OccupancyEngineTests.seconds(time)
                return "\(seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds))"
                    + " \(change.name ?? change.region.description) \(change.occupied ? "occupied" : "vacant")"
                    + " \(change.count) \(change.devices)\(change.flipped ? " *" : "")"
            }
        }

        var verdicts: [String] {
            actions.outputs.compactMap { output in
                guard case .rule(let time, let evaluation) = output else { return nil }
                return
                    "\(Int(OccupancyEngineTests.seconds(time))) \(evaluation.rule) \(evaluation.reason?.rawValue ?? "fired")"
            }
        }

        mutating func take() -> [String] {
            defer { actions.removeAll() }
            return occupancy
        }
    }

    @Test func aDeviceInsideAZoneMakesItOccupiedAndItsVacancyFiresOnTheClock() throws {
        var run = Run(try Self.configuration())
        #expect(run.take().isEmpty)
        run.place("anna", [Self.lab, Self.floor], at: 2)
        #expect(run.take() == ["2 Lab occupied 1 [\"anna\"]"])
        run.place("anna", [], at: 40)
        #expect(run.take() == ["30 Hall vacant 0 []", "40 Lab occupied 1 []"])
        #expect(run.engine.nextDeadline == Self.time(70))
        run.advance(to: 69.999)
        #expect(run.take().isEmpty)
        run.advance(to: 500)
        #expect(run.take() == ["70 Lab vacant 0 [] *"])
        #expect(run.engine.nextDeadline == nil)
    }

    /// A Zone with nothing in it is announced vacant vacantAfter after the start, on a timer of
    /// its own: the engine's clock fires it with no input, as one step.
    @Test func aZoneWithNothingInItIsAnnouncedVacantVacantAfterTheStart() throws {
        var run = Run(try Self.configuration())
        #expect(run.engine.nextDeadline == Self.time(30))
        run.actions.removeAll()
        run.advance(to: 30)
        #expect(run.actions.map(EngineTests.describe) == ["occupancy", "occupancy", "persist"])
        #expect(run.take() == ["30 Lab vacant 0 []", "30 Hall vacant 0 []"])
    }

    @Test func aDeviceThatIsNotAPersonIsNotCounted() throws {
        var run = Run(try Self.configuration())
        run.place("trolley", [Self.lab], at: 2)
        run.advance(to: 100)
        #expect(run.take() == ["30 Lab vacant 0 []", "30 Hall vacant 0 []"])
    }

    @Test func aSensorsMessageIsAnInput() throws {
        var run = Run(try Self.configuration())
        run.sensor("lab-radar", #"{"occupancy":true,"linkquality":87}"#, at: 3)
        #expect(run.take() == ["3 Lab occupied 1 []"])
        run.sensor("lab-radar", "OFF", at: 10)
        run.advance(to: 100)
        #expect(run.take() == ["10 Lab occupied 1 []", "30 Hall vacant 0 []", "40 Lab vacant 0 [] *"])
        // The PIR holds 120 s on the engine's clock.
        run.sensor("lab-pir", "ON", at: 200)
        run.advance(to: 349.9)
        #expect(run.take() == ["200 Lab occupied 1 [] *", "320 Lab occupied 1 []"])
        run.advance(to: 350)
        #expect(run.take() == ["350 Lab vacant 0 [] *"])
    }

    /// A sensor's garbage is a notice for the log, once an hour; nothing else happens.
    @Test func eachKindOfGarbageIsANoticeOnce() throws {
        var run = Run(try Self.configuration())
        run.sensor("lab-radar", "Online", at: 3)
        run.sensor("lab-radar", "Offline", at: 4)
        #expect(run.take().isEmpty)
        #expect(
            run.engine.takeNotices() == [
                #"sensor lab-radar: "Online" is neither on nor off; its state is unchanged"#
            ])
        #expect(run.engine.takeNotices().isEmpty)
        run.sensor("lab-radar", "Offline", at: 3603)
        #expect(run.engine.takeNotices().isEmpty, "the same kind is said once")
        run.sensor("lab-radar", "{", at: 3604)
        #expect(run.engine.takeNotices() == ["sensor lab-radar: JSON that does not parse; its state is unchanged"])
        // A sensor nobody configured is no notice either.
        run.sensor("nobody", "Online", at: 3604)
        #expect(run.engine.takeNotices().isEmpty)
    }

    /// A replay at the end of its input runs the clock on until the occupancy's last deadline.
    @Test func aReplayDrainsTheOccupancysDeadlines() throws {
        var run = Run(try Self.configuration())
        run.place("anna", [Self.lab], at: 2)
        run.place("anna", [], at: 3)
        while run.engine.advanceToNextDeadline(notAfter: nil, into: &run.actions) {}
        #expect(
            run.take() == [
                "2 Lab occupied 1 [\"anna\"]", "3 Lab occupied 1 []", "30 Hall vacant 0 []", "33 Lab vacant 0 [] *",
            ])
        #expect(run.engine.nextOutputDeadline == nil)
    }

    /// A reload carries the occupancy over: nothing is said again when nothing changed, the
    /// running vacancy keeps its start, and new settings apply.
    @Test func aReloadCarriesTheOccupancyOver() throws {
        var run = Run(try Self.configuration())
        run.place("anna", [Self.lab], at: 2)
        run.sensor("lab-radar", "ON", at: 3)
        run.advance(to: 31)
        run.actions.removeAll()
        run.handle(.reconfigure(try Self.configuration(), rules: nil, settings: RuleSettings()), at: 32)
        #expect(run.take().isEmpty)
        #expect(run.engine.occupancy?.current.map(\.devices) == [["anna"], []])
        // vacantAfter 10 from now on; anna becomes a thing, not a person.
        run.sensor("lab-radar", "OFF", at: 40)
        run.handle(
            .reconfigure(
                try Self.configuration("Occupancy.vacantAfter = 10\nDevice.anna.occupant = false\n"), rules: nil,
                settings: RuleSettings()), at: 45)
        run.advance(to: 100)
        #expect(run.take() == ["40 Lab occupied 1 [\"anna\"]", "45 Lab occupied 1 []", "55 Lab vacant 0 [] *"])
        // A configuration without occupancy keys has none.
        let plain = try EngineTests.configuration("LocationBaseBeacon.1 = \(Self.uuid),1,1\n")
        run.handle(.reconfigure(plain, rules: nil, settings: RuleSettings()), at: 101)
        #expect(run.engine.occupancy == nil)
    }

    /// Only the engine built to count (the own radio's) keeps the occupancy: a fleet device's
    /// engine on the same configuration has none.
    @Test func onlyTheCountingEngineKeepsTheOccupancy() throws {
        var fleet = Run(try Self.configuration(), occupancy: false)
        #expect(fleet.engine.occupancy == nil)
        fleet.place("anna", [Self.lab], at: 2)
        fleet.sensor("lab-radar", "ON", at: 3)
        fleet.advance(to: 100)
        #expect(fleet.occupancy.isEmpty)
        #expect(try Run(Self.configuration()).engine.occupancy != nil)
        #expect(Run(try EngineTests.configuration("LocationBaseBeacon.1 = \(Self.uuid),1,1\n")).engine.occupancy == nil)
    }

    /// "Lights off 5 minutes after the room is vacant": the rule's latch and the occupancy's
    /// vacancy on one clock, each instant in order.
    @Test func aVacantRuleFiresFiveMinutesAfterTheVacancy() throws {
        let document = """
            {"u_beacons": [{"id": "lab", "name": "Lab", "proximity_uid": "\(Self.uuid)", "major": 1, "minor": null,
              "rules_actions": [{"id": "lights-off", "rule": {"trigger": "vacant", "latch_time": 300},
                "action": {"notify_user": "Lights off"}}]}]}
            """
        let regions = try RulesDocument.load(Array(document.utf8), name: "rules").get().regions
        var run = Run(try Self.configuration(), rules: regions)
        run.place("anna", [Self.lab], at: 2)
        run.place("anna", [], at: 10)
        run.advance(to: 339.9)
        #expect(run.verdicts.isEmpty)
        run.advance(to: 340)
        #expect(run.verdicts == ["340 lights-off fired"])
        run.place("anna", [Self.lab], at: 400)
        run.place("anna", [], at: 410)
        run.place("anna", [Self.lab], at: 700)
        run.advance(to: 2000)
        #expect(run.verdicts == ["340 lights-off fired"], "occupied again within the latch")
    }

    /// The wall clock stepped: the occupancy's deadlines move with it.
    @Test func aClockStepMovesTheOccupancysDeadlines() throws {
        var run = Run(try Self.configuration())
        run.advance(to: 31)
        run.place("anna", [Self.lab], at: 40)
        run.place("anna", [], at: 50)
        run.engine.shiftClock(by: 3_600_000_000)
        #expect(run.engine.nextDeadline == Self.time(3680))
        run.advance(to: 3679)
        run.actions.removeAll()
        run.advance(to: 3680)
        #expect(run.take() == ["3680 Lab vacant 0 [] *"])
    }
}
