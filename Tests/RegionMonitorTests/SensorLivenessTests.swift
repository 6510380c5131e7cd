import BeaconCore
import Foundation
import RegionMonitor
import Testing

/// Issue 73 on the pure state machine: a sensor's liveness from its firmware's status topic
/// (docs/occupancy.md, "Liveness"), the warning for a field never seen, each kind of garbage said
/// once, and an Area's count as its Zones' sum.
@Suite struct SensorLivenessTests {
    typealias Harness = OccupancyMonitorTests.Harness
    static let lab = OccupancyMonitorTests.lab
    static let hall = OccupancyMonitorTests.hall
    static let floor = OccupancyMonitorTests.floor

    /// An ESPHome mmWave in the Lab: `<node>/binary_sensor/<x>/state`, its status `<node>/status`.
    static let radar = SensorDefinition(
        id: "lab-radar", topic: "lab-radar/binary_sensor/presence/state", kind: .presence, zone: lab,
        status: SensorStatus.derived(from: "lab-radar/binary_sensor/presence/state"))

    // MARK: - Where the status topic is

    @Test(arguments: [
        ("lab-radar/binary_sensor/presence/state", "lab-radar/status", SensorStatus.Firmware.esphome),
        ("home/lab-radar/sensor/target_count/state", "home/lab-radar/status", .esphome),
        ("zigbee2mqtt/lab/pir", "zigbee2mqtt/lab/pir/availability", .zigbee2mqtt),
        ("zigbee2mqtt/Aqara FP1", "zigbee2mqtt/Aqara FP1/availability", .zigbee2mqtt),
        ("tele/tasmota_1A2B3C/SENSOR", "tele/tasmota_1A2B3C/LWT", .tasmota),
        ("stat/tasmota_1A2B3C/RESULT", "tele/tasmota_1A2B3C/LWT", .tasmota),
    ])
    func eachFirmwaresStatusTopicIsDerivedFromItsStateTopic(
        state: String, status: String, firmware: SensorStatus.Firmware
    ) {
        #expect(SensorStatus.derived(from: state) == SensorStatus(topic: status, firmware: firmware))
    }

    @Test(arguments: [
        "office/radar", "z2m/lab/pir", "zigbee2mqtt/bridge/state", "zigbee2mqtt/lab/pir/availability",
        "tele/tasmota_1A2B3C/LWT", "lab-radar/binary_sensor/presence", "zigbee2mqtt//x",
    ])
    func aTopicOfNoKnownConventionHasNoStatusTopic(state: String) {
        #expect(SensorStatus.derived(from: state) == nil)
    }

    /// The payloads as each firmware sends them (docs/occupancy.md quotes their source).
    @Test func eachFirmwaresPayloadsAreRead() {
        func read(_ text: String) -> Bool? { SensorStatus.parse(Array(text.utf8)) }
        #expect(read("online") == true && read("offline") == false)  // ESPHome, zigbee2mqtt legacy
        #expect(read("Online") == true && read("Offline") == false)  // Tasmota's LWT
        #expect(read(#"{"state":"online"}"#) == true && read(#"{"state": "offline"}"#) == false)  // zigbee2mqtt
        #expect(read(#""offline""#) == false)
        #expect(read("") == nil && read("maybe") == nil && read(#"{"state":1}"#) == nil && read("1") == nil)
    }

    // MARK: - Liveness

    /// An ESPHome radar says present once (it publishes on change only): the room stays occupied
    /// however long it is silent; its firmware's `offline` ends that after vacantAfter, its
    /// `online` brings its last state back.
    @Test func aSensorIsOfflineExactlyWhenItsFirmwareSaysSo() {
        var harness = Harness([Self.radar])
        #expect(harness.status("lab-radar", "online", at: 1) == nil, "the first online is no news")
        harness.sensor("lab-radar", "ON", at: 2)
        #expect(harness.take() == ["2 Lab occupied 1"])
        harness.advance(to: 7200)
        #expect(harness.take() == ["30 Hall vacant 0", "30 Annex vacant 0"], "a silent presence sensor is not dead")
        #expect(harness.monitor.current.first?.sensors == ["lab-radar": .detected(true)])

        let offline = harness.status("lab-radar", "offline", at: 7201)
        #expect(
            offline
                == "sensor lab-radar is offline: lab-radar/status says so; it counts for nothing until it is online")
        #expect(harness.take() == ["7201 Lab occupied 1"], "its state shown offline")
        #expect(harness.monitor.current.first?.sensors == ["lab-radar": .offline])
        harness.advance(to: 7231)
        #expect(harness.take() == ["7231 Lab vacant 0 *"])
        #expect(harness.status("lab-radar", "offline", at: 7240) == nil, "said once")
        #expect(harness.sensor("lab-radar", "ON", at: 7250) == nil)
        #expect(harness.take().isEmpty, "an offline sensor's reading counts for nothing")

        #expect(
            harness.status("lab-radar", "online", at: 7260) == "sensor lab-radar is online again (lab-radar/status)")
        #expect(harness.take() == ["7260 Lab occupied 1 *"])
        #expect(harness.status("lab-radar", "perhaps", at: 7261)?.contains("neither online nor offline") == true)
        #expect(harness.status("lab-radar", "whatever", at: 7262) == nil, "each kind said once")
    }

    /// A zigbee2mqtt PIR keeps its silence until its availability has said anything (the
    /// feature is off by default in zigbee2mqtt); from then on its firmware alone says.
    @Test func theSilenceAppliesUntilTheStatusTopicSpeaks() {
        let pir = SensorDefinition(
            id: "lab-pir", topic: "zigbee2mqtt/lab/pir", kind: .motion, zone: Self.lab, hold: 60,
            status: SensorStatus.derived(from: "zigbee2mqtt/lab/pir"))
        #expect(pir.silence == 900)
        var quiet = Harness([pir])
        quiet.sensor("lab-pir", #"{"occupancy":false}"#, at: 1)
        quiet.advance(to: 902)
        #expect(quiet.monitor.current.first?.sensors == ["lab-pir": .offline])

        var spoken = Harness([pir])
        spoken.status("lab-pir", #"{"state":"online"}"#, at: 0.5)
        spoken.sensor("lab-pir", #"{"occupancy":false}"#, at: 1)
        spoken.advance(to: 5000)
        #expect(spoken.monitor.current.first?.sensors == ["lab-pir": .detected(false)])
    }

    /// A reload that names another status topic forgets what the old one said; one that keeps it
    /// keeps the sensor offline.
    @Test func aReloadKeepsTheLivenessOfTheSameStatusTopic() {
        var harness = Harness([Self.radar])
        harness.sensor("lab-radar", "ON", at: 1)
        harness.status("lab-radar", "offline", at: 2)
        func reload(_ sensor: SensorDefinition) -> OccupancyMonitor {
            OccupancyMonitor(
                reloading: harness.monitor, settings: OccupancySettings(sensors: [sensor]),
                hierarchy: OccupancyMonitorTests.hierarchy)
        }
        var outputs: [MonitorOutput] = []
        var same = reload(Self.radar)
        same.advance(to: OccupancyMonitorTests.time(3), into: &outputs)
        #expect(same.current.first?.sensors == ["lab-radar": .offline])
        var renamed = Self.radar
        renamed.status = SensorStatus(topic: "lab/radar-status")
        var other = reload(renamed)
        other.advance(to: OccupancyMonitorTests.time(3), into: &outputs)
        #expect(other.current.first?.sensors == ["lab-radar": .detected(true)])
    }

    /// A sensor taken for dead by its silence is said in the log, once, and again when it speaks.
    @Test func aSilenceRunningOutIsSaid() {
        let pir = SensorDefinition(id: "lab-pir", topic: "z/lab/pir", kind: .motion, zone: Self.lab, silence: 60)
        var harness = Harness([pir], scope: .both)
        harness.sensor("lab-pir", #"{"occupancy":false}"#, at: 1)
        harness.advance(to: 60.9)
        #expect(harness.monitor.takeNotices().isEmpty)
        harness.advance(to: 200)
        #expect(
            harness.monitor.takeNotices() == [
                "sensor lab-pir is offline: no message for 60 s (Sensor.lab-pir.silence); it counts for nothing until it speaks"
            ])
        harness.sensor("lab-pir", #"{"occupancy":true}"#, at: 300)
        #expect(harness.monitor.takeNotices() == ["sensor lab-pir speaks again after its silence"])
        #expect(harness.monitor.takeNotices().isEmpty)
    }

    @Test func thePresenceAndCountKindsHaveNoSilenceByDefault() {
        let zone = Self.lab
        #expect(SensorDefinition(id: "a", topic: "a", kind: .presence, zone: zone).silence == 0)
        #expect(SensorDefinition(id: "a", topic: "a", kind: .count, zone: zone).silence == 0)
        #expect(SensorDefinition(id: "a", topic: "a", kind: .motion, zone: zone).silence == 900)
        #expect(
            SensorDefinition(id: "a", topic: "a", kind: .presence, zone: zone).liveness
                == "never offline (no status topic, silence 0): Sensor.a.status names one")
        #expect(Self.radar.liveness == "offline when lab-radar/status says offline (ESPHome's, by its state topic)")
    }

    // MARK: - Every mistake said

    /// An Aqara FP1 says `presence`, not the default `occupancy`: after a minute of its messages
    /// the warning names the sensor, the fields seen and the key to set, once.
    @Test func aFieldNeverSeenInAMinuteIsSaidOnce() {
        let fp1 = SensorDefinition(id: "fp1", topic: "zigbee2mqtt/fp1", kind: .presence, zone: Self.lab)
        var harness = Harness([fp1])
        let message = #"{"presence":true,"presence_event":"enter","linkquality":90}"#
        #expect(harness.sensor("fp1", message, at: 1) == nil)
        #expect(harness.sensor("fp1", #"{"battery":90}"#, at: 30) == nil)
        #expect(
            harness.sensor("fp1", message, at: 61)
                == #"sensor fp1: no "occupancy" in a minute of its messages (they hold battery, linkquality, "#
                + #"presence, presence_event); name the field as the fourth part of its key, such as "#
                + "Sensor.fp1 = zigbee2mqtt/fp1, presence, <Zone>, presence")
        #expect(harness.sensor("fp1", message, at: 200) == nil, "said once")

        // A sensor whose field came once is never warned of.
        var fine = Harness([SensorDefinition(id: "pir", topic: "zigbee2mqtt/pir", kind: .motion, zone: Self.lab)])
        fine.sensor("pir", #"{"occupancy":true}"#, at: 1)
        #expect(fine.sensor("pir", #"{"battery":90}"#, at: 2) == nil)
        #expect(fine.sensor("pir", #"{"battery":90}"#, at: 100) == nil)
    }

    // MARK: - An Area's count

    /// `count = both`: the Area's count is its Zones' sum (the Lab's radar counts 2, anna is in
    /// the Hall), not the larger of them.
    @Test func anAreasCountIsTheSumOfItsZones() {
        let counter = OccupancyMonitorTests.counter()
        for scope in [OccupancyScope.both, .areas] {
            var harness = Harness([counter], scope: scope)
            harness.sensor("lab-count", "2", at: 1)
            harness.place("anna", [Self.hall, Self.floor], at: 2)
            let area = harness.monitor.current.first { $0.region == Self.floor }
            #expect(area?.count == 3, "\(scope)")
            #expect(
                harness.monitor.current.map(\.region)
                    == (scope == .both ? [Self.lab, Self.hall, Self.floor] : [Self.floor]), "only counted regions")
            harness.sensor("lab-count", "0", at: 3)
            harness.advance(to: 40)
            #expect(harness.monitor.current.first { $0.region == Self.floor }?.count == 1)
        }
    }
}

extension OccupancyMonitorTests.Harness {
    @discardableResult
    mutating func status(_ id: String, _ payload: String, at seconds: Double) -> String? {
        monitor.sensorStatus(
            id, payload: Array(payload.utf8), at: OccupancyMonitorTests.time(seconds), into: &outputs)
    }
}
