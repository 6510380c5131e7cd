import BeaconCore
import Foundation
import RegionMonitor
import Testing

/// docs/behaviour.md §23 on the pure state machine: who is in each Zone (and Area), fused with
/// the presence sensors, on a clock driven by hand.
@Suite struct OccupancyMonitorTests {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    static let otherUUID = UUID(uuidString: "FDA50693-A4E2-4FB1-AFCF-C6EB07647825")!
    static let lab = Region.zone(uuid, major: 1)
    static let hall = Region.zone(uuid, major: 2)
    static let floor = Region.area(uuid)
    static let annex = Region.zone(otherUUID, major: 7)
    static let annexArea = Region.area(otherUUID)

    static let hierarchy = Hierarchy(
        beacons: [
            .init(locationID: "1", id: BeaconID(uuid: uuid, major: 1, minor: 1)),
            .init(locationID: "2", id: BeaconID(uuid: uuid, major: 2, minor: 1)),
            .init(locationID: "3", id: BeaconID(uuid: otherUUID, major: 7, minor: 1)),
        ], areaNames: [uuid: "Floor"], zoneNames: [lab: "Lab", hall: "Hall", annex: "Annex"])

    static func radar(silence: Double = SensorDefinition.defaultSilence) -> SensorDefinition {
        SensorDefinition(
            id: "lab-radar", topic: "lab-radar/binary_sensor/radar_target/state", kind: .presence, zone: lab,
            silence: silence)
    }

    static func pir(hold: Double = SensorDefinition.defaultHold, silence: Double = 0) -> SensorDefinition {
        SensorDefinition(
            id: "lab-pir", topic: "zigbee2mqtt/lab/pir", kind: .motion, zone: lab, hold: hold, silence: silence)
    }

    static func counter(_ id: String = "lab-count", silence: Double = 0) -> SensorDefinition {
        SensorDefinition(
            id: id, topic: "lab-radar/sensor/\(id)/state", kind: .count, zone: lab, silence: silence)
    }

    /// Seconds from an arbitrary origin.
    static func time(_ seconds: Double) -> Timestamp { Timestamp(secondsSinceEpoch: 1_700_000_000 + seconds)! }
    static func seconds(_ time: Timestamp) -> Double {
        Double(time.microseconds - time0.microseconds) / 1_000_000
    }
    static let time0 = time(0)

    /// A monitor started at 0 with its outputs, driven by hand.
    struct Harness {
        var monitor: OccupancyMonitor
        var outputs: [MonitorOutput] = []

        init(
            _ sensors: [SensorDefinition] = [], vacantAfter: Double = 30, scope: OccupancyScope = .zones,
            nonOccupants: Set<String> = [], start: Bool = true
        ) {
            let settings = OccupancySettings(
                scope: scope, vacantAfter: vacantAfter, sensors: sensors, nonOccupants: nonOccupants)
            monitor = OccupancyMonitor(settings: settings, hierarchy: OccupancyMonitorTests.hierarchy)
            if start { monitor.start(at: OccupancyMonitorTests.time0, into: &outputs) }
        }

        mutating func place(_ device: String, _ regions: [Region], at seconds: Double) {
            monitor.place(device, inside: regions, at: OccupancyMonitorTests.time(seconds), into: &outputs)
        }

        @discardableResult
        mutating func sensor(_ id: String, _ payload: String, at seconds: Double) -> String? {
            monitor.sensor(id, payload: Array(payload.utf8), at: OccupancyMonitorTests.time(seconds), into: &outputs)
        }

        mutating func advance(to seconds: Double) {
            monitor.advance(to: OccupancyMonitorTests.time(seconds), into: &outputs)
        }

        var changes: [(seconds: Double, change: OccupancyChange)] {
            outputs.compactMap {
                guard case .occupancy(let time, let change) = $0 else { return nil }
                return (OccupancyMonitorTests.seconds(time), change)
            }
        }

        /// Each announcement as `<seconds> <name> occupied|vacant <count>`, `*` after a flip.
        var lines: [String] {
            changes.map { seconds, change in
                let number = seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
                return
                    "\(number) \(change.name ?? change.region.description) \(change.occupied ? "occupied" : "vacant")"
                    + " \(change.count)\(change.flipped ? " *" : "")"
            }
        }

        /// The announcements since the last call.
        mutating func take() -> [String] {
            defer { outputs.removeAll() }
            return lines
        }

        var nextDeadline: Double? { monitor.nextDeadline.map(OccupancyMonitorTests.seconds) }
    }

    // MARK: - The rule

    @Test func eachSignalAloneMakesTheZoneOccupiedAtOnce() {
        var device = Harness()
        device.place("anna", [Self.lab, Self.floor], at: 5)
        #expect(device.take() == ["5 Lab occupied 1"])

        var presence = Harness([Self.radar()])
        presence.sensor("lab-radar", "ON", at: 5)
        #expect(presence.take() == ["5 Lab occupied 1"])

        var motion = Harness([Self.pir()])
        motion.sensor("lab-pir", #"{"occupancy":true}"#, at: 5)
        #expect(motion.take() == ["5 Lab occupied 1"])

        var count = Harness([Self.counter()])
        count.sensor("lab-count", "2", at: 5)
        #expect(count.take() == ["5 Lab occupied 2"])
    }

    @Test func eachSignalSayingNobodyLeavesTheZoneVacant() {
        var harness = Harness([Self.radar(), Self.pir(), Self.counter()])
        harness.sensor("lab-radar", "OFF", at: 1)
        harness.sensor("lab-pir", #"{"occupancy":false}"#, at: 2)
        harness.sensor("lab-count", "0", at: 3)
        #expect(harness.take().isEmpty)
        harness.advance(to: 100)
        #expect(harness.take() == ["30 Lab vacant 0", "30 Hall vacant 0", "30 Annex vacant 0"])
        guard let lab = harness.monitor.current.first(where: { $0.region == Self.lab }) else {
            Issue.record("the lab was not announced")
            return
        }
        #expect(
            lab.sensors == ["lab-radar": .detected(false), "lab-pir": .detected(false), "lab-count": .count(0)])
    }

    /// A false "vacant" is worse than a false "occupied": when signals disagree, occupied wins.
    @Test func whenSignalsDisagreeOccupiedWins() {
        var harness = Harness([Self.radar(silence: 0), Self.counter()])
        harness.sensor("lab-radar", "OFF", at: 1)
        harness.sensor("lab-count", "0", at: 1)
        harness.place("anna", [Self.lab], at: 2)
        #expect(harness.take() == ["2 Lab occupied 1"])
        harness.advance(to: 1000)
        #expect(harness.take() == ["30 Hall vacant 0", "30 Annex vacant 0"], "the lab stays occupied")

        var sensors = Harness([Self.radar(), Self.counter()])
        sensors.sensor("lab-count", "0", at: 1)
        sensors.sensor("lab-radar", "ON", at: 2)
        sensors.advance(to: 100)
        #expect(sensors.changes.filter { $0.change.region == Self.lab }.map(\.change.occupied) == [true])
    }

    @Test func theCountIsTheLargestSignal() {
        var harness = Harness([Self.radar(), Self.counter(), Self.counter("door-count")])
        harness.sensor("lab-radar", "ON", at: 1)
        #expect(harness.take() == ["1 Lab occupied 1"], "a presence sensor alone counts 1")
        harness.place("anna", [Self.lab], at: 2)
        #expect(harness.take() == ["2 Lab occupied 1"], "one person either way: who changed")
        #expect(harness.monitor.current.first?.devices == ["anna"])
        harness.place("bob", [Self.lab], at: 3)
        #expect(harness.take() == ["3 Lab occupied 2"])
        harness.sensor("lab-count", "3", at: 4)
        #expect(harness.take() == ["4 Lab occupied 3"])
        harness.sensor("door-count", "5", at: 5)
        #expect(harness.take() == ["5 Lab occupied 5"])
        harness.sensor("door-count", "1", at: 6)
        #expect(harness.take() == ["6 Lab occupied 3"])
        harness.sensor("lab-count", "0", at: 7)
        #expect(harness.take() == ["7 Lab occupied 2"])
    }

    @Test func aMotionSensorAloneCountsOne() {
        var harness = Harness([Self.pir(), Self.counter()])
        harness.sensor("lab-count", "0", at: 1)
        harness.sensor("lab-pir", "ON", at: 2)
        #expect(harness.take() == ["2 Lab occupied 1"])
    }

    // MARK: - vacantAfter

    /// Vacancy is announced at the last signal + vacantAfter, to the microsecond, not before;
    /// a clock moved late still announces it at its own instant.
    @Test func vacancyComesExactlyVacantAfterTheLastSignal() {
        for late in [false, true] {
            var harness = Harness()
            harness.place("anna", [Self.lab], at: 10)
            harness.place("anna", [], at: 50)
            let left = harness.changes.last?.change
            #expect(left?.occupied == true && left?.devices == [] && left?.count == 1 && left?.flipped == false)
            #expect(left?.explanation() == "Lab is occupied: nobody is seen now; vacant once that has lasted")
            if !late {
                harness.advance(to: 79.999_999)
                #expect(!harness.lines.contains { $0.contains("Lab vacant") })
                #expect(harness.nextDeadline == 80)
            }
            harness.advance(to: late ? 10_000 : 80)
            #expect(harness.lines.last(where: { $0.contains("Lab") }) == "80 Lab vacant 0 *", "late: \(late)")
            #expect(harness.nextDeadline == nil)
        }
    }

    @Test func aSignalWithinVacantAfterKeepsTheZoneOccupiedAndRestartsTheWait() {
        var harness = Harness([Self.radar()])
        harness.place("anna", [Self.lab], at: 10)
        harness.place("anna", [], at: 50)
        harness.sensor("lab-radar", "ON", at: 70)
        harness.sensor("lab-radar", "OFF", at: 75)
        harness.advance(to: 104.9)
        #expect(!harness.lines.contains { $0.contains("Lab vacant") })
        harness.advance(to: 200)
        #expect(harness.lines.filter { $0.contains("Lab") && $0.hasSuffix("*") } == ["105 Lab vacant 0 *"])
    }

    @Test func vacantAfterZeroMakesTheZoneVacantWhenTheLastSignalEnds() {
        var harness = Harness(vacantAfter: 0)
        harness.place("anna", [Self.lab], at: 10)
        harness.place("anna", [], at: 20)
        #expect(
            harness.lines.filter { $0.contains("Lab") } == [
                "0 Lab vacant 0", "10 Lab occupied 1 *", "20 Lab vacant 0 *",
            ])
    }

    // MARK: - Motion

    /// A PIR's detection holds 120 s (default), each `true` re-arms it, and a `false` does not
    /// end it (zigbee2mqtt's own `false` 90 s after the last detection is a guess).
    @Test func motionHoldsFor120SecondsReArmedByEachTrue() {
        var harness = Harness([Self.pir()])
        harness.sensor("lab-pir", #"{"occupancy":true}"#, at: 10)
        harness.sensor("lab-pir", #"{"occupancy":true}"#, at: 100)
        harness.sensor("lab-pir", #"{"occupancy":false}"#, at: 190)
        #expect(harness.nextDeadline == 220)
        harness.advance(to: 219.9)
        #expect(harness.lines.filter { $0.contains("Lab") } == ["10 Lab occupied 1"])
        #expect(harness.monitor.current.first?.sensors["lab-pir"] == .detected(true))
        harness.advance(to: 220)
        // The hold ran out: the sensor says false, the Zone waits vacantAfter.
        #expect(harness.monitor.current.first?.sensors["lab-pir"] == .detected(false))
        #expect(harness.monitor.current.first?.occupied == true)
        harness.advance(to: 249.9)
        #expect(harness.monitor.current.first?.occupied == true)
        harness.advance(to: 250)
        #expect(harness.lines.last == "250 Lab vacant 0 *")
    }

    @Test func aConfiguredHoldIsWhatCounts() {
        var harness = Harness([Self.pir(hold: 5)], vacantAfter: 1)
        harness.sensor("lab-pir", "ON", at: 10)
        harness.advance(to: 100)
        #expect(
            harness.lines.filter { $0.contains("Lab") } == [
                "1 Lab vacant 0", "10 Lab occupied 1 *", "15 Lab occupied 1", "16 Lab vacant 0 *",
            ])
    }

    // MARK: - Silence

    /// A sensor silent for `silence` is offline: shown `null`, counting for nothing.
    @Test func aSilentSensorIsOfflineAndCountsForNothing() {
        var harness = Harness([Self.radar(silence: 60)])
        harness.sensor("lab-radar", "ON", at: 10)
        harness.advance(to: 69.9)
        #expect(harness.nextDeadline == 70)
        #expect(harness.monitor.current.first?.sensors == ["lab-radar": .detected(true)])
        harness.advance(to: 70)
        let offline = harness.changes.last?.change
        #expect(offline?.sensors == ["lab-radar": SensorShown.offline] && offline?.occupied == true)
        harness.advance(to: 100)
        #expect(harness.lines.last == "100 Lab vacant 0 *")
        #expect(harness.nextDeadline == nil)
    }

    @Test func aSilentCountSensorCountsNothing() {
        var harness = Harness([Self.counter(silence: 60)])
        harness.place("anna", [Self.lab], at: 1)
        harness.sensor("lab-count", "4", at: 2)
        harness.advance(to: 62)
        #expect(
            harness.lines.filter { $0.contains("Lab") } == [
                "1 Lab occupied 1", "2 Lab occupied 4", "62 Lab occupied 1",
            ])
        #expect(harness.monitor.current.first?.sensors == ["lab-count": SensorShown.offline])
    }

    @Test func silenceZeroIsNeverOffline() {
        var harness = Harness([Self.radar(silence: 0)])
        harness.sensor("lab-radar", "ON", at: 10)
        harness.advance(to: 30)
        #expect(harness.nextDeadline == nil)
        harness.advance(to: 400 * 86_400)
        #expect(harness.lines.filter { $0.contains("Lab") } == ["10 Lab occupied 1"])
    }

    /// A JSON message without the field (a battery report) keeps the sensor alive and changes
    /// nothing else.
    @Test func aHeartbeatKeepsTheSensorAliveAndChangesNothing() {
        var harness = Harness([Self.radar(silence: 60)])
        harness.sensor("lab-radar", #"{"occupancy":true,"battery":100}"#, at: 10)
        harness.advance(to: 40)
        harness.outputs.removeAll()
        #expect(harness.sensor("lab-radar", #"{"battery":97,"linkquality":60}"#, at: 50) == nil)
        #expect(harness.outputs.isEmpty)
        #expect(harness.nextDeadline == 110)
        harness.advance(to: 109)
        #expect(harness.monitor.current.first?.sensors == ["lab-radar": .detected(true)])
        harness.advance(to: 110)
        #expect(harness.monitor.current.first?.sensors == ["lab-radar": SensorShown.offline])
    }

    // MARK: - Count sensors

    @Test func aCountSensorsNumbers() {
        var harness = Harness([Self.counter()])
        harness.sensor("lab-count", "0", at: 1)
        harness.advance(to: 31)
        #expect(harness.take().contains("30 Lab vacant 0"))
        harness.sensor("lab-count", "2", at: 40)
        #expect(harness.take() == ["40 Lab occupied 2 *"])
        // Garbage: said, the state unchanged.
        #expect(harness.sensor("lab-count", "-1", at: 41)?.contains("negative") == true)
        #expect(harness.sensor("lab-count", "-2", at: 42) == nil, "each kind said once")
        #expect(harness.sensor("lab-count", "1.5", at: 42)?.contains("not a count of people") == true)
        #expect(harness.take().isEmpty)
        #expect(harness.monitor.current.first?.sensors == ["lab-count": .count(2)])
        harness.sensor("lab-count", "1.0", at: 43)
        #expect(harness.take() == ["43 Lab occupied 1"])
        // nan: unknown, shown null, counting nothing: the Zone waits vacantAfter.
        harness.sensor("lab-count", "nan", at: 44)
        #expect(harness.monitor.current.first?.sensors == ["lab-count": SensorShown.none])
        harness.advance(to: 73.9)
        #expect(harness.monitor.current.first?.occupied == true)
        harness.advance(to: 74)
        #expect(harness.take().last == "74 Lab vacant 0 *")
    }

    // MARK: - Garbage

    @Test func eachKindOfGarbageIsSaidOncePerSensorAndChangesNothing() {
        var harness = Harness([Self.radar(silence: 60), Self.pir()])
        harness.sensor("lab-radar", "ON", at: 10)
        let said = harness.changes.count
        let first = harness.sensor("lab-radar", "Online", at: 20)
        #expect(first == #"sensor lab-radar: "Online" is neither on nor off; its state is unchanged"#)
        #expect(harness.sensor("lab-radar", "maybe", at: 21) == nil, "the same kind, another word")
        // Another kind of garbage in the same hour is said too.
        #expect(
            harness.sensor("lab-radar", "{", at: 30)
                == "sensor lab-radar: JSON that does not parse; its state is unchanged")
        #expect(harness.sensor("lab-radar", "[", at: 31) == nil)
        #expect(harness.sensor("lab-radar", "-1", at: 32)?.contains("a negative reading, -1") == true)
        #expect(harness.sensor("lab-pir", "maybe", at: 31) != nil, "another sensor's garbage is its own")
        #expect(harness.changes.count(where: { $0.change.region == Self.lab }) == said)
        // Garbage is not a sign of life: the radar goes offline 60 s after its last reading.
        harness.advance(to: 70)
        #expect(harness.monitor.current.first?.sensors["lab-radar"] == .offline)
        #expect(harness.sensor("lab-radar", "Online", at: 3620) == nil, "said once, not once an hour")
    }

    @Test func anUnknownSensorIsIgnored() {
        var harness = Harness([Self.radar()])
        #expect(harness.sensor("nobody", "garbage", at: 1) == nil)
        #expect(harness.outputs.isEmpty)
    }

    // MARK: - Start

    /// After a start a Zone is announced occupied as soon as anything says so (a retained state
    /// arriving), vacant only after vacantAfter of nothing; neither is a flip.
    @Test func afterAStartOccupiedIsAnnouncedAtOnceAndVacantAfterVacantAfter() {
        var harness = Harness([Self.radar()])
        #expect(harness.outputs.isEmpty)
        #expect(harness.nextDeadline == 30)
        harness.sensor("lab-radar", "ON", at: 3)
        harness.advance(to: 29.9)
        #expect(harness.take() == ["3 Lab occupied 1"])
        harness.advance(to: 30)
        #expect(harness.take() == ["30 Hall vacant 0", "30 Annex vacant 0"])
        harness.sensor("lab-radar", "OFF", at: 40)
        harness.advance(to: 70)
        #expect(harness.take() == ["40 Lab occupied 1", "70 Lab vacant 0 *"])
    }

    @Test func theFirstInputStartsTheClockWhenNothingDid() {
        var harness = Harness(start: false)
        harness.place("anna", [Self.hall], at: 100)
        harness.advance(to: 200)
        #expect(harness.lines == ["100 Hall occupied 1", "130 Lab vacant 0", "130 Annex vacant 0"])
    }

    @Test func onlyAFlipIsAFlip() {
        var harness = Harness([Self.radar()])
        harness.place("anna", [Self.lab], at: 1)
        harness.place("bob", [Self.lab], at: 2)
        harness.sensor("lab-radar", "ON", at: 3)
        harness.place("bob", [], at: 4)
        harness.place("anna", [], at: 5)
        harness.sensor("lab-radar", "OFF", at: 6)
        harness.advance(to: 100)
        harness.place("anna", [Self.lab], at: 200)
        #expect(
            harness.changes.filter { $0.change.region == Self.lab }.map { "\(Int($0.seconds)) \($0.change.flipped)" }
                == [
                    "1 false", "2 false", "3 false", "4 false", "5 false", "6 false", "36 true", "200 true",
                ])
    }

    // MARK: - Devices

    @Test func aDeviceThatIsNotAPersonCountsNowhere() {
        var harness = Harness(nonOccupants: ["trolley-7"])
        harness.place("trolley-7", [Self.lab, Self.floor], at: 1)
        harness.advance(to: 100)
        #expect(harness.lines == ["30 Lab vacant 0", "30 Hall vacant 0", "30 Annex vacant 0"])
        harness.place("anna", [Self.lab], at: 101)
        #expect(harness.monitor.current.first?.devices == ["anna"])
    }

    @Test func aDeviceMovesFromZoneToZoneInOneInstant() {
        var harness = Harness(vacantAfter: 10)
        harness.place("anna", [Self.lab, Self.floor], at: 1)
        harness.place("anna", [Self.hall, Self.floor], at: 50)
        harness.advance(to: 100)
        #expect(
            harness.lines == [
                "1 Lab occupied 1", "10 Hall vacant 0", "10 Annex vacant 0", "50 Lab occupied 1",
                "50 Hall occupied 1 *",
                "60 Lab vacant 0 *",
            ])
    }

    // MARK: - Areas

    @Test func anAreasOccupancyIsItsZonesDevicesAndSensors() {
        var harness = Harness([Self.radar()], scope: .areas)
        harness.sensor("lab-radar", "ON", at: 1)
        #expect(harness.take() == ["1 Floor occupied 1"])
        harness.place("anna", [Self.hall, Self.floor], at: 2)
        harness.place("bob", [Self.annex, Self.annexArea], at: 2)
        // The radar's person in the Lab and anna in the Hall: the Area holds both.
        #expect(harness.take() == ["2 Floor occupied 2", "2 \(Self.annexArea) occupied 1"])
        harness.sensor("lab-radar", "OFF", at: 3)
        harness.place("anna", [], at: 4)
        harness.advance(to: 100)
        #expect(harness.monitor.current.map(\.region) == [Self.floor, Self.annexArea])
        #expect(harness.monitor.current.map(\.occupied) == [false, true])
        #expect(harness.changes.last.map { "\(Int($0.seconds)) \($0.change.region)" } == "34 \(Self.floor)")
    }

    /// With `both`, one instant's announcements come Zones first, then Areas, each in the
    /// hierarchy's order, whatever order the regions and devices came in.
    @Test func oneInstantsAnnouncementsComeInAStableOrder() {
        func run(_ regions: [Region], devices: [String]) -> (lines: [String], current: [OccupancyChange]) {
            var harness = Harness([Self.radar()], scope: .both)
            for device in devices { harness.place(device, regions, at: 5) }
            harness.sensor("lab-radar", "ON", at: 5)
            harness.advance(to: 100)
            return (harness.lines, harness.monitor.current)
        }
        let one = run([Self.annex, Self.annexArea, Self.hall, Self.floor], devices: ["anna"])
        #expect(one.lines == run([Self.floor, Self.hall, Self.annexArea, Self.annex], devices: ["anna"]).lines)
        #expect(
            one.lines == [
                "5 Hall occupied 1", "5 Annex occupied 1", "5 Floor occupied 1", "5 \(Self.annexArea) occupied 1",
                "5 Lab occupied 1", "5 Floor occupied 2",
            ])
        let two = run([Self.annex, Self.annexArea, Self.hall, Self.floor], devices: ["bob", "anna"])
        #expect(
            two.current == run([Self.floor, Self.hall, Self.annexArea, Self.annex], devices: ["anna", "bob"]).current)
        #expect(
            two.current.map(\.devices) == [[], ["anna", "bob"], ["anna", "bob"], ["anna", "bob"], ["anna", "bob"]])
        #expect(
            OccupancyMonitor(settings: OccupancySettings(scope: .both), hierarchy: Self.hierarchy).regions == [
                Self.lab, Self.hall, Self.annex, Self.floor, Self.annexArea,
            ])
    }

    // MARK: - Time

    /// A hold and a silence of a year, at any instant up to the end of time: no overflow, the
    /// deadlines saturate.
    @Test func aYearsHoldAndSilenceNeverOverflow() {
        let year = 31_536_000.0
        var harness = Harness([Self.pir(hold: year, silence: year)])
        harness.advance(to: 40)
        harness.sensor("lab-pir", "ON", at: 40)
        #expect(harness.nextDeadline == 40 + year)
        harness.advance(to: 40 + year - 1)
        #expect(harness.monitor.current.first?.sensors["lab-pir"] == .detected(true))
        harness.advance(to: 40 + year + 30)
        #expect(harness.lines.last == "\(Int(40 + year + 30)) Lab vacant 0 *")

        for start in [Int64.max - 1_000_000, Int64.max - 1, Int64.max] {
            let settings = OccupancySettings(vacantAfter: year, sensors: [Self.pir(hold: year, silence: year)])
            var monitor = OccupancyMonitor(settings: settings, hierarchy: Self.hierarchy)
            var outputs: [MonitorOutput] = []
            monitor.start(at: Timestamp(microseconds: start), into: &outputs)
            monitor.sensor("lab-pir", payload: Array("ON".utf8), at: Timestamp(microseconds: start), into: &outputs)
            monitor.place("anna", inside: [Self.hall], at: Timestamp(microseconds: start), into: &outputs)
            monitor.advance(to: Timestamp(microseconds: .max), into: &outputs)
            monitor.shiftClock(by: -1_000_000)
            monitor.shiftClock(by: .min)
            monitor.shiftClock(by: .max)
            monitor.advance(to: Timestamp(microseconds: .max), into: &outputs)
            #expect(outputs.allSatisfy { if case .occupancy = $0 { true } else { false } })
        }
    }

    /// A wall clock stepped back: every instant held moves with it, so the vacancy keeps its
    /// distance from the last signal.
    @Test func aClockStepMovesTheDeadlines() {
        var harness = Harness()
        harness.place("anna", [Self.lab], at: 10)
        harness.place("anna", [], at: 50)
        harness.monitor.shiftClock(by: -3_600_000_000)
        #expect(harness.monitor.nextDeadline == Self.time(-3520))
        harness.advance(to: 80 - 3600)
        #expect(harness.lines.last == "\(80 - 3600) Lab vacant 0 *")
    }

    @Test func theNextDeadlineIsOneSomethingIsDueAt() {
        var harness = Harness()
        harness.advance(to: 40)
        harness.place("anna", [Self.lab], at: 41)
        harness.place("anna", [], at: 50)
        #expect(harness.nextDeadline == 80)
        harness.place("anna", [Self.lab], at: 60)
        #expect(harness.nextDeadline == nil, "the vacancy at 80 was called off")
    }

    // MARK: - Reload

    /// A reload carries over who is inside, what each sensor said and what was announced: nothing
    /// is said again when nothing changed.
    @Test func aReloadCarriesTheStateOverSilently() {
        var harness = Harness([Self.radar(), Self.pir()])
        harness.place("anna", [Self.lab], at: 1)
        harness.sensor("lab-radar", "ON", at: 2)
        harness.sensor("lab-pir", "ON", at: 3)
        harness.advance(to: 40)
        harness.outputs.removeAll()
        var next = OccupancyMonitor(
            reloading: harness.monitor, settings: harness.monitor.settings, hierarchy: Self.hierarchy)
        next.start(at: Self.time(41), into: &harness.outputs)
        #expect(harness.outputs.isEmpty)
        #expect(next.current == harness.monitor.current)
        #expect(next.nextDeadline == Self.time(123), "the PIR's hold goes on")
    }

    @Test func aReloadAppliesNewSettingsToTheStateItCarries() {
        var harness = Harness([Self.radar(), Self.pir()], nonOccupants: ["trolley"])
        harness.place("anna", [Self.lab], at: 1)
        harness.place("trolley", [Self.hall], at: 1)
        harness.sensor("lab-radar", "ON", at: 2)
        harness.advance(to: 40)
        harness.outputs.removeAll()
        // anna is not a person any more, the trolley is; the radar is now a count sensor (its
        // state is dropped); the PIR is gone; vacancy takes 10 s.
        let settings = OccupancySettings(
            vacantAfter: 10,
            sensors: [SensorDefinition(id: "lab-radar", topic: "x", kind: .count, zone: Self.lab)],
            nonOccupants: ["anna"])
        harness.monitor = OccupancyMonitor(reloading: harness.monitor, settings: settings, hierarchy: Self.hierarchy)
        harness.monitor.start(at: Self.time(41), into: &harness.outputs)
        harness.advance(to: 100)
        #expect(harness.lines == ["41 Lab occupied 1", "41 Hall occupied 1 *", "51 Lab vacant 0 *"])
        #expect(harness.monitor.current.map(\.devices) == [[], ["trolley"], []])
    }

    @Test func aReloadDropsAZoneThatIsGoneAndWaitsForANewOne() {
        var harness = Harness()
        harness.place("anna", [Self.annex], at: 1)
        harness.advance(to: 40)
        harness.outputs.removeAll()
        let smaller = Hierarchy(
            beacons: [
                .init(locationID: "1", id: BeaconID(uuid: Self.uuid, major: 1, minor: 1)),
                .init(locationID: "4", id: BeaconID(uuid: Self.uuid, major: 4, minor: 1)),
            ], zoneNames: [Self.lab: "Lab"])
        harness.monitor = OccupancyMonitor(
            reloading: harness.monitor, settings: harness.monitor.settings, hierarchy: smaller)
        harness.monitor.start(at: Self.time(41), into: &harness.outputs)
        harness.advance(to: 100)
        #expect(harness.lines == ["71 \(Region.zone(Self.uuid, major: 4)) vacant 0"])
        #expect(harness.monitor.regions == [Self.lab, .zone(Self.uuid, major: 4)])
    }

    // MARK: - For people and shells

    @Test func theExplanationReadsAsASentence() {
        var harness = Harness([Self.radar(), Self.counter()])
        harness.place("anna", [Self.lab], at: 1)
        harness.sensor("lab-radar", "ON", at: 2)
        harness.sensor("lab-count", "2", at: 3)
        let lab = harness.monitor.current.first
        #expect(
            lab?.explanation(names: { $0 == "anna" ? "anna's badge" : $0 })
                == "Lab is occupied: anna's badge, lab-count counts 2, and lab-radar says present")
        harness.place("anna", [], at: 4)
        harness.sensor("lab-count", "0", at: 4)
        #expect(harness.monitor.current.first?.explanation() == "Lab is occupied: lab-radar says present")
        harness.sensor("lab-radar", "OFF", at: 5)
        harness.advance(to: 100)
        #expect(harness.monitor.current.first?.explanation() == "Lab is vacant")
    }

    @Test func sensorsAreFoundByTheirTopic() {
        let shared = SensorDefinition(
            id: "lab-radar-count", topic: Self.radar().topic, kind: .count, zone: Self.hall)
        let monitor = OccupancyMonitor(
            settings: OccupancySettings(sensors: [Self.radar(), Self.pir(), shared]), hierarchy: Self.hierarchy)
        #expect(monitor.sensors(on: Self.radar().topic) == ["lab-radar", "lab-radar-count"])
        #expect(monitor.sensors(on: "zigbee2mqtt/lab/pir") == ["lab-pir"])
        #expect(monitor.sensors(on: "zigbee2mqtt/lab") == [])
        #expect(monitor.topics == ["lab-radar/binary_sensor/radar_target/state", "zigbee2mqtt/lab/pir"])
    }
}
