import BeaconCore
import BeaconConfiguration
import Foundation
import RegionMonitor
import Testing

/// `LocationScanner.*`, `Scanner.*`, `Scanners.*`, `Monitor.scanner`, `Tag.*`, `Tags.*`
/// (docs/behaviour.md §19).
@Suite struct ScannerConfigurationTests {
    static let base = """
        LocationBaseBeacon.101 = E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,1,1
        LocationBaseBeacon.102 = E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,2,1
        MQTT.host = 127.0.0.1

        """

    static func load(_ text: String) -> Result<Configuration, ConfigurationErrors> {
        Configuration.load(Array(text.utf8), path: "conf/hsyco.ini")
    }

    @Test func scannersAndTagsLoadWithTheirDefaults() throws {
        let configuration = try Self.load(
            Self.base + """
                LocationScanner.101 = kitchen
                LocationScanner.102 = hall
                Scanner.hall.rssiOffset = -3.5
                Scanners.espresense = espresense/devices/+/+
                Monitor.scanner = kitchen
                Tag.badge-1 = ibeacon:FDA50693-A4E2-4FB1-AFCF-C6EB07647825:7:1, Badge one, anna
                Tag.keys = mac:aa:bb:cc:dd:ee:ff
                Tag.watch = irk:0123456789abcdef0123456789ABCDEF, Watch
                Tag.phone = espresense:apple:1005:9-26
                """
        ).get()
        let scanners = try #require(configuration.scanners)
        #expect(scanners.scanners.map(\.id) == ["kitchen", "hall"])
        #expect(scanners.scanner("hall")?.rssiOffset == -3.5 && scanners.scanner("kitchen")?.rssiOffset == 0)
        #expect(scanners.scanner("hall")?.beacon.major == 2 && scanners.scanner("hall")?.locationID == "102")
        #expect(scanners.espresense == "espresense/devices/+/+" && scanners.theengs == nil)
        #expect(scanners.own == "kitchen" && scanners.silence == 60)
        #expect(
            scanners.autoAdd == .none && scanners.rooms == nil && scanners.effectiveRooms == .nearest
                && scanners.exitTimeout == nil)
        #expect(scanners.tags.map(\.id) == ["badge-1", "keys", "watch", "phone"])
        #expect(scanners.tags[0].name == "Badge one" && scanners.tags[0].userid == "anna")
        #expect(scanners.tags[1].identity == .mac(BluetoothAddress("AA:BB:CC:DD:EE:FF")!))
        #expect(scanners.tags[2].identity.description == "irk:0123456789abcdef0123456789abcdef")
        #expect(scanners.tags[3].identity == .espresense("apple:1005:9-26"))
        #expect(try Self.load(Self.base).get().scanners == nil)
    }

    /// `Scanners.calibrate` (`auto`, the default, or `off`) and `Scanner.<id>.address`; a scanner
    /// given an `rssiOffset` keeps it under `auto`.
    @Test func scannersCalibrateThemselvesUnlessTurnedOff() throws {
        let text =
            Self.base
            + "LocationScanner.101 = kitchen\nLocationScanner.102 = hall\nScanners.espresense = espresense/devices/+/+\n"
        let defaults = try #require(try Self.load(text).get().scanners)
        #expect(defaults.calibrate == .auto && defaults.scanners.allSatisfy { !$0.hasOffset && $0.address == nil })
        let set = try #require(
            try Self.load(
                text
                    + "Scanners.calibrate = off\nScanner.hall.address = 02:aa:bb:cc:dd:ee\nScanner.kitchen.rssiOffset = 0\n"
            ).get().scanners)
        #expect(set.calibrate == .off && set.scanner("hall")?.address == BluetoothAddress("02:AA:BB:CC:DD:EE"))
        #expect(set.scanner("kitchen")?.hasOffset == true && set.scanner("hall")?.hasOffset == false)
    }

    /// `Tags.exitTimeout`: `auto` (the default) or seconds.
    @Test func tagsLeaveAfterTheirOwnExitTimeout() throws {
        let text = Self.base + "LocationScanner.101 = kitchen\nScanners.espresense = espresense/devices/+/+\n"
        #expect(try Self.load(text + "Tags.exitTimeout = 20\n").get().scanners?.exitTimeout == 20)
        #expect(try Self.load(text + "Tags.exitTimeout = AUTO\n").get().scanners?.exitTimeout == nil)
    }

    @Test(arguments: [
        ("LocationScanner.102 = kit chen", "scanner id"),
        ("Scanner.hall.rssiOffset = 3", "names no scanner"),
        ("Scanner.kitchen.rssiOffset = loud", "decibels"),
        ("Scanner.kitchen.rssiOffset = 60", "decibels"),
        ("Scanners.espresense = espresense/devices/+", "two + levels"),
        ("Scanners.theengs = home/BTtoMQTT", "a + level"),
        ("Scanners.forward = beaconwatch/+/sightings", "also a Fleet.* filter"),
        ("Scanners.silence = never", "Scanners.silence"),
        ("Scanners.calibrate = sometimes", "expected one of auto, off"),
        ("Scanner.kitchen.address = 02:00:00", "not a Bluetooth address"),
        ("Monitor.scanner = attic", "names no scanner"),
        ("Tag.badge = ibeacon:not-a-uuid:1:1", "expected an identity"),
        ("Tag.badge = irk:0123", "expected an identity"),
        ("Tag.badge = bluetooth:1", "expected an identity"),
        ("Tag.bad ge = mac:AA:BB:CC:DD:EE:FF", "tag id"),
        ("Tag.badge = mac:AA:BB:CC:DD:EE:FF, Badge, an/na", "userid"),
        ("Tag.cart-7 = mac:AA:BB:CC:DD:EE:FF", "already names"),
        ("Tags.autoAdd = everything", "expected one of none, ibeacon"),
        ("Tags.rooms = closest", "expected one of nearest, heard"),
        ("Tags.exitTimeout = soon", "Tags.exitTimeout"),
        ("Tags.exitTimeout = -5", "Tags.exitTimeout"),
        ("LocationScanner.102 = kitchen", "already at location 101"),
    ])
    func aBadSettingIsAnErrorOnItsLine(line: String, message: String) {
        let text =
            Self.base
            + "Fleet.forward = beaconwatch/+/sightings\nDevice.cart-7 = Cart\nLocationScanner.101 = kitchen\n" + line
        guard case .failure(let failure) = Self.load(text) else {
            Issue.record("\(line) was taken")
            return
        }
        #expect(failure.errors.map(\.line) == [7], "\(failure)")
        #expect(failure.description.contains(message), "\(failure)")
    }

    /// A scanner source with no broker loads (`replay` takes the reports from a trace), and is what
    /// `run` stops on, at its line.
    @Test func aScannerSourceNeedsABrokerToRun() throws {
        let text = "LocationBaseBeacon.101 = E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,1,1\nScanners.espresense = a/+/+\n"
        let configuration = try Self.load(text).get()
        #expect(
            configuration.scannersWithoutBroker?.description
                == "conf/hsyco.ini:2: scanners report over MQTT: set MQTT.host (and MQTT.port) to the broker they use")
        #expect(try Self.load(text + "MQTT.host = 127.0.0.1\n").get().scannersWithoutBroker == nil)
    }

    /// Warnings, with their lines: a scanner at no known location, a tag that is a hierarchy
    /// beacon (never tracked as a tag).
    @Test func doubtfulScannersAndTagsAreWarnedAbout() throws {
        let configuration = try Self.load(
            Self.base + """
                LocationScanner.999 = attic
                Tag.desk = ibeacon:E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:1
                Tag.same = ibeacon:E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:9:9
                """
        ).get()
        let warnings = configuration.warnings.map(\.description)
        #expect(warnings.contains { $0.hasPrefix("conf/hsyco.ini:4: LocationScanner.999 names no known location") })
        #expect(warnings.contains { $0.hasPrefix("conf/hsyco.ini:5: Tag.desk is the hierarchy beacon") })
        #expect(configuration.scanners?.scanners.isEmpty == true)
        #expect(configuration.scanners?.tags.map(\.id) == ["same"])
    }

    /// Garbage in every value: never a crash, always errors with lines.
    @Test func garbageValuesAreErrors() {
        let garbage = [
            "", ":", "ibeacon:", "mac:", "irk:zz", String(repeating: "x", count: 5000), "\u{7}", "ibeacon:::",
        ]
        for value in garbage {
            let text =
                Self.base + "LocationScanner.101 = kitchen\nTag.t = \(value)\nScanner.kitchen.rssiOffset = \(value)\n"
            guard case .failure(let failure) = Self.load(text) else {
                Issue.record("'\(value)' was taken")
                continue
            }
            #expect(failure.errors.allSatisfy { $0.line != nil }, "\(failure)")
        }
    }
}
