import BeaconConfiguration
import BeaconCore
import Fleet
import Foundation
import Testing

/// Fixed scanners' messages to reports (docs/behaviour.md §19; docs/espresense.md): what each source's
/// payload says, and garbage refused in one line naming the topic and the reason.
@Suite struct ScannerReportsTests {
    static let espresense = TopicFilter("espresense/devices/+/+")!
    static let theengs = TopicFilter("home/+/BTtoMQTT/#")!
    static let forward = TopicFilter("beaconwatch/+/sightings")!

    static func parse(_ source: ScannerSource, _ topic: String, _ payload: String) -> Result<
        [ScannerReport]?, FleetError
    > {
        let filter =
            switch source {
            case .espresense: espresense
            case .theengs: theengs
            case .forward: forward
            }
        return ScannerReports.parse(source: source, filter: filter, topic: topic, payload: Array(payload.utf8))
    }

    /// As `BleFingerprint::fill` writes it: `rssi` with two decimals, `rssi@1m`, `mac` as 12 hex.
    @Test func anESPresenseReportNamesItsTagAndScannerByTheTopic() throws {
        let topic = "espresense/devices/iBeacon:fda50693-a4e2-4fb1-afcf-c6eb07647825-7-1/kitchen"
        let payload =
            #"{"mac":"4a1b2c3d4e5f","id":"iBeacon:fda50693-a4e2-4fb1-afcf-c6eb07647825-7-1","rssi@1m":-61,"rssi":-71.50,"rxAdj":0,"distance":2.41,"int":1021}"#
        let reports = try #require(try Self.parse(.espresense, topic, payload).get())
        #expect(
            reports == [
                ScannerReport(
                    scanner: "kitchen", tag: "iBeacon:fda50693-a4e2-4fb1-afcf-c6eb07647825-7-1", rssi: -71.5,
                    power: -61,
                    address: BluetoothAddress("4A:1B:2C:3D:4E:5F"), via: .espresense)
            ])
        // Without the optional fields.
        let bare = try #require(
            try Self.parse(.espresense, "espresense/devices/apple:1005:9-26/hall", #"{"rssi":-80}"#).get())
        #expect(bare == [ScannerReport(scanner: "hall", tag: "apple:1005:9-26", rssi: -80, via: .espresense)])
        // A query's answer one level deeper, and other topics, are not reports.
        #expect(try Self.parse(.espresense, topic + "/battery", #"{"battery":90}"#).get() == nil)
        #expect(try Self.parse(.espresense, "espresense/rooms/kitchen/status", "online").get() == nil)
    }

    /// A Theengs gateway placed as a scanner: an iBeacon by its identity, anything else by its
    /// address; the scanner is the topic's `+`.
    @Test func aTheengsGatewayReportsIBeaconsAndAddresses() throws {
        let ibeacon =
            #"{"id":"0A:0B:0C:0D:0E:0F","mfid":"4c00","uuid":"fda50693a4e24fb1afcfc6eb07647825","major":7,"minor":1,"txpower":-60,"rssi":-70}"#
        let reports = try #require(try Self.parse(.theengs, "home/lounge/BTtoMQTT/0A0B0C0D0E0F", ibeacon).get())
        #expect(
            reports == [
                ScannerReport(
                    scanner: "lounge", tag: "ibeacon:FDA50693-A4E2-4FB1-AFCF-C6EB07647825:7:1", rssi: -70, power: -60,
                    address: BluetoothAddress("0A:0B:0C:0D:0E:0F"))
            ])
        let watch = #"{"id":"4A:0B:0C:0D:0E:0F","name":"Watch","rssi":-66}"#
        #expect(
            try Self.parse(.theengs, "home/lounge/BTtoMQTT/4A0B0C0D0E0F", watch).get() == [
                ScannerReport(
                    scanner: "lounge", tag: "mac:4A:0B:0C:0D:0E:0F", rssi: -66,
                    address: BluetoothAddress("4A:0B:0C:0D:0E:0F"))
            ])
        // A gateway's own messages without an address are not reports.
        #expect(try Self.parse(.theengs, "home/lounge/BTtoMQTT/SYStoMQTT", #"{"uptime":12}"#).get() == nil)
    }

    /// A `forward` node placed as a scanner: its sightings, with their addresses.
    @Test func aForwardNodesSightingsAreItsReports() throws {
        let line =
            #"{"t": 1700000000.5, "uuid": "FDA50693-A4E2-4FB1-AFCF-C6EB07647825", "major": 7, "minor": 1, "rssi": -62, "power": -59, "address": "0A:0B:0C:0D:0E:0F"}"#
        let reports = try #require(try Self.parse(.forward, "beaconwatch/office/sightings", line + "\n" + line).get())
        #expect(reports.count == 2)
        #expect(reports[0].scanner == "office" && reports[0].tag == "ibeacon:FDA50693-A4E2-4FB1-AFCF-C6EB07647825:7:1")
        #expect(reports[0].address == BluetoothAddress("0A:0B:0C:0D:0E:0F") && reports[0].rssi == -62)
    }

    @Test(arguments: [
        (ScannerSource.espresense, "espresense/devices/badge/kitchen", "", "not a JSON object"),
        (.espresense, "espresense/devices/badge/kitchen", "[1]", "not a JSON object"),
        (.espresense, "espresense/devices/badge/kitchen", #"{"id":"badge"}"#, "\"rssi\""),
        (.espresense, "espresense/devices/badge/kitchen", #"{"rssi":"-60"}"#, "\"rssi\""),
        (.espresense, "espresense/devices/badge/kitchen", #"{"rssi":-500}"#, "\"rssi\""),
        (.espresense, "espresense/devices/badge/kitchen", #"{"rssi":-60,"rssi@1m":"x"}"#, "\"rssi@1m\""),
        (.espresense, "espresense/devices/badge/kitchen", #"{"rssi":-60,"mac":"xyz"}"#, "\"mac\""),
        (.espresense, "espresense/devices/badge/kitchen", #"{"rssi":-60,"mac":12}"#, "\"mac\""),
        (.espresense, "espresense/devices/badge/kit chen", #"{"rssi":-60}"#, "scanner id"),
        (.espresense, "espresense/devices//kitchen", #"{"rssi":-60}"#, "device id"),
        (.theengs, "home/lounge/BTtoMQTT/X", #"{"id":"0A:0B:0C:0D:0E:0F","rssi":"loud"}"#, "\"rssi\""),
        (.theengs, "home/lounge/BTtoMQTT/X", "{", "not a JSON object"),
        (.forward, "beaconwatch/office/sightings", "nonsense", "line 1"),
    ])
    func garbageIsOneLineNamingTopicAndReason(source: ScannerSource, topic: String, payload: String, reason: String) {
        guard case .failure(let error) = Self.parse(source, topic, payload) else {
            Issue.record("taken: \(payload)")
            return
        }
        #expect(error.description.hasPrefix("ignored a message on \(topic)"), "\(error)")
        #expect(error.description.contains(reason), "\(error)")
    }

    @Test func aPayloadOver64KiBIsRefusedUnread() {
        let payload = #"{"rssi":-60,"pad":""# + String(repeating: "x", count: 70_000) + #""}"#
        guard case .failure(let error) = Self.parse(.espresense, "espresense/devices/badge/kitchen", payload) else {
            Issue.record("taken")
            return
        }
        #expect(error.description.contains("over 64 KiB"))
    }

    /// ESPresense's id forms name the identity a `Tag.<id>` line gives (docs/espresense.md).
    @Test func espresenseIDsNameIdentities() {
        #expect(
            TagDirectory.identity("iBeacon:fda50693-a4e2-4fb1-afcf-c6eb07647825-100-65535")
                == .ibeacon(
                    BeaconID(uuid: UUID(uuidString: "FDA50693-A4E2-4FB1-AFCF-C6EB07647825")!, major: 100, minor: 65535))
        )
        #expect(
            TagDirectory.identity("irk:0123456789abcdef0123456789abcdef").description
                == "irk:0123456789abcdef0123456789abcdef")
        #expect(TagDirectory.identity("4a1b2c3d4e5f") == .mac(BluetoothAddress("4A:1B:2C:3D:4E:5F")!))
        #expect(TagDirectory.identity("known:4a1b2c3d4e5f") == .mac(BluetoothAddress("4A:1B:2C:3D:4E:5F")!))
        for other in [
            "apple:1005:9-26", "iBeacon:nonsense-1-2", "iBeacon:fda50693-a4e2-4fb1-afcf-c6eb07647825-70000-1",
            "name:my-watch",
        ] {
            #expect(TagDirectory.identity(other) == .espresense(other), "\(other)")
        }
    }
}
