import BeaconConfiguration
import BeaconCore
import Crypto
import Engine
import Fleet
import Foundation
import RegionMonitor
import TestSupport
import Testing

/// Tags heard by fixed scanners (docs/behaviour.md §19): who a report is of, and what the tag's engine
/// makes of it.
@Suite struct TagTests {
    static let area = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
    static let badge = "FDA50693-A4E2-4FB1-AFCF-C6EB07647825"
    /// The Bluetooth Core Specification's sample IRK (Vol 3, Part H, Appendix D.7).
    static let sampleIRK = "ec0234a357c8ad05341010a60a397d9b"

    /// Three rooms of one Area, a scanner in each, and tags; tags leave 10 s after their last report.
    static func configuration(_ extra: String = "") throws -> Configuration {
        try Configuration.load(Array((configurationText + "Tags.exitTimeout = 10\n" + extra).utf8), path: "hsyco.ini")
            .get()
    }

    /// Three rooms of one Area, a scanner in each, and tags (the exit `auto`, the default).
    static let configurationText = """
        LocationBaseBeacon.101 = \(area),1,1
        LocationBaseBeacon.102 = \(area),2,1
        LocationBaseBeacon.103 = \(area),3,1
        LocationZoneName.\(area):1 = Kitchen
        LocationZoneName.\(area):2 = Hall
        LocationZoneName.\(area):3 = Office
        MQTT.host = 127.0.0.1
        Monitor.rssiFilter = none
        LocationScanner.101 = kitchen
        LocationScanner.102 = hall
        LocationScanner.103 = office
        Scanner.office.rssiOffset = 10
        Tag.badge-1 = ibeacon:\(badge):7:1, Badge one, anna
        Tag.keys = mac:AA:BB:CC:DD:EE:FF
        Tag.watch = irk:\(sampleIRK), Watch

        """

    static func table(_ extra: String = "") throws -> Devices {
        Devices(
            configuration: try configuration(extra), identity: MonitorIdentity(session: "s", address: "a", userid: "u"))
    }

    static func time(_ seconds: Double) -> Timestamp { Timestamp(secondsSinceEpoch: 1_700_000_000 + seconds)! }

    /// The zone transitions in `actions`, as `<device> <enter|exit> <Zone name>`.
    static func rooms(_ actions: [Devices.Action]) -> [String] {
        actions.compactMap { action in
            guard case .engine(let device, .output(.transition(_, let transition))) = action,
                transition.region.kind == .zone
            else { return nil }
            return "\(device) \(transition.direction.rawValue) \(transition.name ?? "?")"
        }
    }

    @Test func aTagWalksRoomToRoomOneRoomAtATime() throws {
        var table = try Self.table()
        var actions: [Devices.Action] = []
        table.start(at: Self.time(0), into: &actions)
        func hear(_ scanner: String, _ rssi: Double, at seconds: Double, tag: String = "badge-1") -> [String] {
            var actions: [Devices.Action] = []
            let refusal = table.handle(
                ScannerReport(scanner: scanner, tag: tag, rssi: rssi), at: Self.time(seconds), into: &actions)
            #expect(refusal == nil)
            return Self.rooms(actions)
        }
        #expect(hear("kitchen", -60, at: 1) == ["badge-1 enter Kitchen"])
        #expect(hear("hall", -75, at: 2) == [])
        #expect(hear("hall", -58, at: 4) == [])  // its level rises to -4 dB: a doorway
        #expect(hear("hall", -40, at: 5) == ["badge-1 exit Kitchen", "badge-1 enter Hall"])  // 12 dB: 13 ahead
        // The office's scanner hears 10 dB quieter than the others: its offset evens it out.
        #expect(hear("office", -62, at: 6) == [])  // -52 with its offset: 5 dB behind the hall's level
        #expect(hear("office", -35, at: 7) == ["badge-1 exit Hall", "badge-1 enter Office"])
        #expect(table.engine("badge-1")?.monitor.currentRoom == .zone(UUID(uuidString: Self.area)!, major: 3))
        #expect(table["badge-1"]?.source == .scanners)
        #expect(table.engine("badge-1")?.monitor.identity.userid == "anna")
        // Silence: it leaves its room and the Area after the exit timeout.
        actions = []
        table.advance(to: Self.time(30), into: &actions)
        #expect(Self.rooms(actions) == ["badge-1 exit Office"])
        #expect(table.engine("badge-1")?.monitor.insideRegions.isEmpty == true)
    }

    /// `Tags.exitTimeout = auto` (the default): a tag heard by three scanners, each missing one
    /// advertisement in five on its own, leaves within seconds of its last report; the same
    /// silence under the fixed 10 s waits 10 s (docs/behaviour.md §18, §19).
    @Test func aTagLeavesSecondsAfterItsOwnAdvertisementsStopUnderAuto() throws {
        func exit(_ extra: String) throws -> Double? {
            let text = Self.configurationText
            var table = Devices(
                configuration: try Configuration.load(Array((text + extra).utf8), path: "hsyco.ini").get(),
                identity: MonitorIdentity(session: "s", address: "a", userid: "u"))
            var actions: [Devices.Action] = []
            table.start(at: Self.time(0), into: &actions)
            var random = SeededGenerator(seed: 5)
            var last = 0.0
            for second in 1...120 {
                for (offset, scanner) in ["kitchen", "hall", "office"].enumerated()
                where Int.random(in: 0..<5, using: &random) != 0 {
                    last = Double(second) + Double(offset) * 0.01
                    table.handle(
                        ScannerReport(scanner: scanner, tag: "badge-1", rssi: -60 - Double(offset) * 5),
                        at: Self.time(last), into: &actions)
                }
            }
            actions = []
            table.advance(to: Self.time(200), into: &actions)
            guard
                let left = actions.lazy.compactMap({ action -> Timestamp? in
                    guard case .engine(_, .output(.transition(let time, let transition))) = action,
                        transition.region.kind == .area, transition.direction == .exit
                    else { return nil }
                    return time
                }).first
            else { return nil }
            return Double(left.microseconds - Self.time(last).microseconds) / 1_000_000
        }
        let auto = try #require(try exit(""))
        #expect(auto > 1 && auto < 6, "\(auto)")  // 5.1 s: five rounds of all three missing is below 1e-6
        let fixed = try #require(try exit("Tags.exitTimeout = 10\n"))
        #expect(abs(fixed - 10) < 0.01, "\(fixed)")
    }

    /// The Area exits of a tag under `auto` over a run of reports (`(seconds, scanner, rssi)`), and
    /// the instant the last report came.
    static func areaExits(
        _ extra: String, tag: String, reports: [(Double, String, Double)], until end: Double
    ) throws -> [Double] {
        var table = Devices(
            configuration: try Configuration.load(Array((configurationText + extra).utf8), path: "hsyco.ini").get(),
            identity: MonitorIdentity(session: "s", address: "a", userid: "u"))
        var actions: [Devices.Action] = []
        table.start(at: time(0), into: &actions)
        var exits: [Double] = []
        func collect() {
            for action in actions {
                guard case .engine(_, .output(.transition(let at, let transition))) = action,
                    transition.region.kind == .area, transition.direction == .exit
                else { continue }
                exits.append(Double(at.microseconds - time(0).microseconds) / 1_000_000)
            }
            actions.removeAll()
        }
        for (seconds, scanner, rssi) in reports {
            table.advance(to: time(seconds), into: &actions)
            collect()
            table.handle(
                ScannerReport(scanner: scanner, tag: tag, rssi: rssi, via: .espresense), at: time(seconds),
                into: &actions)
            collect()
        }
        table.advance(to: time(end), into: &actions)
        collect()
        return exits
    }

    /// Issue 47, as ESPresense's firmware reports (`BleFingerprint::report()`, docs/espresense.md): a
    /// badge walking about the office for a minute is reported by the three nodes every 0.5 s
    /// before each 5 s boundary; standing still, once per boundary, the three reports 10 ms apart.
    /// It is not taken away while it stands (it was, ~3 s after each burst, 4 times in 20 s), and
    /// it is within 15 s of the last report once the reports stop.
    @Test func aStillBadgeReportedAtTheFirmwaresCadenceStays() throws {
        var reports: [(Double, String, Double)] = []
        let nodes = [("office", -62.0), ("hall", -75.0), ("kitchen", -80.0)]
        for boundary in stride(from: 5.0, through: 60, by: 5) {
            for early in [1.5, 1.0, 0.5, 0.0] {
                for (offset, (node, rssi)) in nodes.enumerated() {
                    reports.append((boundary - early + Double(offset) * 0.01, node, rssi + early * 4))
                }
            }
        }
        for boundary in stride(from: 65.0, through: 180, by: 5) {
            for (offset, (node, rssi)) in nodes.enumerated() {
                reports.append((boundary + 0.2 + Double(offset) * 0.01, node, rssi))
            }
        }
        let exits = try Self.areaExits(
            "Scanners.espresense = espresense/devices/+/+\n", tag: "badge-1", reports: reports, until: 240)
        #expect(exits.count == 1, "\(exits)")
        let last = reports.last?.0 ?? 0
        #expect(exits.allSatisfy { $0 > last && $0 - last < 15 }, "\(exits) after \(last)")
    }

    /// Issue 47: a phone or watch (`irk:`, here Ben's watch) that goes quiet for 25 s in its room (iOS's transmit outages,
    /// Bermuda #375) is not taken away: an outage shorter than `Monitor.exitTimeoutMax` is waited
    /// out; once it has gone it is away within that and a second. A badge that stops the same
    /// way is away in seconds.
    @Test func aPhoneThatGoesQuietIsNotTakenAway() throws {
        var reports: [(Double, String, Double)] = []
        var random = SeededGenerator(seed: 5)
        for second in stride(from: 1.0, through: 300, by: 1) where !(100..<125).contains(second) {
            // Each of three scanners misses one advertisement in five on its own.
            for (offset, (scanner, rssi)) in [("office", -60.0), ("hall", -72.0), ("kitchen", -78.0)].enumerated()
            where Int.random(in: 0..<5, using: &random) != 0 {
                reports.append((second + Double(offset) * 0.01, scanner, rssi))
            }
        }
        let phone = try Self.areaExits(
            "Scanners.theengs = home/+/BTtoMQTT/#\n", tag: "watch", reports: reports, until: 400)
        let last = reports.last?.0 ?? 0
        #expect(phone.count == 1 && phone[0] > last && phone[0] - last <= 31.01, "\(phone) after \(last)")
        let badge = try Self.areaExits(
            "Scanners.theengs = home/+/BTtoMQTT/#\n", tag: "badge-1", reports: reports, until: 400)
        #expect(badge.first.map { $0 > 99 && $0 < 110 } == true, "\(badge)")
    }

    /// Reports name a tag by its id, its identity as written, or ESPresense's forms; an unplaced
    /// scanner and something that is no tag are refused, a hierarchy beacon is never a tag.
    @Test func aReportFindsItsTagByAnyOfItsNames() throws {
        var table = try Self.table()
        var actions: [Devices.Action] = []
        table.start(at: Self.time(0), into: &actions)
        let names = [
            "badge-1", "ibeacon:\(Self.badge):7:1", "iBeacon:\(Self.badge.lowercased())-7-1",
            "mac:aa:bb:cc:dd:ee:ff", "aabbccddeeff", "known:aabbccddeeff",
        ]
        for (offset, name) in names.enumerated() {
            let report = ScannerReport(scanner: "hall", tag: name, rssi: -60)
            #expect(table.handle(report, at: Self.time(Double(offset + 1)), into: &actions) == nil, "\(name)")
        }
        #expect(Set(table.fleet.keys) == ["badge-1", "keys"])
        #expect(
            table.handle(ScannerReport(scanner: "attic", tag: "badge-1", rssi: -60), at: Self.time(9), into: &actions)
                == .unplacedScanner("attic"))
        for stranger in [
            "ibeacon:\(Self.area):1:1", "ibeacon:\(Self.badge):7:2", "apple:1005:9-26", "mac:01:02:03:04:05:06",
        ] {
            #expect(
                table.handle(ScannerReport(scanner: "hall", tag: stranger, rssi: -60), at: Self.time(9), into: &actions)
                    == .unknownTag, "\(stranger)")
        }
    }

    /// `Tags.autoAdd = ibeacon`: any iBeacon that is not a hierarchy beacon is a tag, named by
    /// its identity; a hierarchy beacon still is not.
    @Test func autoAddTracksEveryOtherIBeacon() throws {
        var table = try Self.table("Tags.autoAdd = ibeacon\n")
        var actions: [Devices.Action] = []
        table.start(at: Self.time(0), into: &actions)
        let stranger = "iBeacon:\(Self.badge.lowercased())-9-9"
        #expect(
            table.handle(ScannerReport(scanner: "hall", tag: stranger, rssi: -60), at: Self.time(1), into: &actions)
                == nil)
        #expect(table.fleet.keys.contains("ibeacon:\(Self.badge):9:9"))
        #expect(
            table.handle(
                ScannerReport(scanner: "hall", tag: "ibeacon:\(Self.area):1:1", rssi: -60), at: Self.time(2),
                into: &actions)
                == .unknownTag)
    }

    /// `Tags.rooms = heard`: every Zone whose scanners hear the tag is inside.
    @Test func heardRoomsAreEveryRoomThatHearsTheTag() throws {
        var table = try Self.table("Tags.rooms = heard\n")
        var actions: [Devices.Action] = []
        table.start(at: Self.time(0), into: &actions)
        table.handle(ScannerReport(scanner: "kitchen", tag: "badge-1", rssi: -60), at: Self.time(1), into: &actions)
        table.handle(ScannerReport(scanner: "hall", tag: "badge-1", rssi: -80), at: Self.time(2), into: &actions)
        #expect(table.engine("badge-1")?.monitor.insideRegions.filter { $0.kind == .zone }.count == 2)
    }

    /// A restart resumes a tag in its room: a weaker report of another room changes nothing, a
    /// clearly stronger one moves it (out of the room it was in before the restart).
    @Test func aRestartResumesTheTagInItsRoom() throws {
        var link = PhoneLink(fleet: try Self.table(), start: 1_700_000_000)
        try link.perform(Self.start(&link.fleet), at: 0)
        func hear(_ scanner: String, _ rssi: Double, at seconds: Double) throws -> [String] {
            var actions: [Devices.Action] = []
            link.fleet.handle(
                ScannerReport(scanner: scanner, tag: "badge-1", rssi: rssi), at: link.time(seconds), into: &actions)
            let mark = link.transcript.count
            try link.perform(actions, at: seconds)
            return link.transcript[mark...].filter {
                $0.hasPrefix("badge-1 ") && $0.contains(":") && !$0.contains("monitoring")
            }
        }
        _ = try hear("kitchen", -60, at: 1)
        let moved = try hear("hall", -45, at: 2)
        #expect(moved.contains { $0.hasPrefix("badge-1 enter") && $0.hasSuffix(":2") }, "\(moved)")
        #expect(try link.restart(at: 3) == [])
        #expect(link.fleet.engine("badge-1")?.monitor.currentRoom == .zone(UUID(uuidString: Self.area)!, major: 2))
        #expect(try hear("office", -58, at: 4) == [])
        let back = try hear("kitchen", -20, at: 5)
        #expect(back.contains { $0.hasPrefix("badge-1 exit") && $0.hasSuffix(":2") }, "\(back)")
        #expect(back.contains { $0.hasPrefix("badge-1 enter") && $0.hasSuffix(":1") }, "\(back)")
        let zones = link.fleet.engine("badge-1")?.monitor.insideRegions.filter { $0.kind == .zone }
        #expect(zones == [.zone(UUID(uuidString: Self.area)!, major: 1)])
    }

    /// A restart keeps the levels the scanners gave, but one whose report was not kept with it (a
    /// scanner of another room) is no evidence: its old level never takes the tag away from the
    /// room it is still heard in, however weak that becomes (docs/behaviour.md §19).
    @Test func aLevelFromBeforeARestartNeverWins() throws {
        var link = PhoneLink(fleet: try Self.table(), start: 1_700_000_000)
        try link.perform(Self.start(&link.fleet), at: 0)
        func hear(_ scanner: String, _ rssi: Double, at seconds: Double) throws {
            var actions: [Devices.Action] = []
            link.fleet.handle(
                ScannerReport(scanner: scanner, tag: "badge-1", rssi: rssi), at: link.time(seconds), into: &actions)
            try link.perform(actions, at: seconds)
        }
        try hear("kitchen", -58, at: 1)
        try hear("hall", -60, at: 2)
        _ = try link.restart(at: 3)
        for second in 4...12 { try hear("kitchen", -80, at: Double(second)) }
        #expect(link.fleet.engine("badge-1")?.monitor.currentRoom == .zone(UUID(uuidString: Self.area)!, major: 1))
    }

    /// Both models in one daemon: an OwnTracks phone walking the building and two tags heard by
    /// the scanners, each with its own outputs.
    @Test func aPhoneAndTwoTagsInOneDaemon() throws {
        var link = PhoneLink(
            fleet: try Self.table("Fleet.owntracks = owntracks/+/+\nTag.badge-2 = ibeacon:\(Self.badge):7:2\n"),
            start: 1_700_000_000)
        try link.perform(Self.start(&link.fleet), at: 0)
        link.add(SimulatedPhone(base: "owntracks/alice/phone", lastFix: 1_700_000_000))
        _ = try link.locate("alice-phone", at: 1)
        let area = UUID(uuidString: Self.area)!
        let phone = try link.move("alice-phone", to: [BeaconID(uuid: area, major: 1, minor: 1): 1], at: 2)
        #expect(phone.contains("enter \(area):1"), "\(phone)")
        for (tag, scanner, seconds) in [("badge-1", "hall", 3.0), ("badge-2", "office", 4.0)] {
            var actions: [Devices.Action] = []
            link.fleet.handle(
                ScannerReport(scanner: scanner, tag: tag, rssi: -60), at: link.time(seconds), into: &actions)
            try link.perform(actions, at: seconds)
        }
        func zones(_ device: String) -> [String] {
            link.transcript.filter { $0.hasPrefix(device + " enter") && $0.split(separator: ":").count == 2 }
        }
        #expect(zones("alice-phone") == ["alice-phone enter \(area):1"])
        #expect(zones("badge-1") == ["badge-1 enter \(area):2"])
        #expect(zones("badge-2") == ["badge-2 enter \(area):3"])
        #expect(Set(link.fleet.fleet.keys) == ["alice-phone", "badge-1", "badge-2"])
        #expect(link.fleet["alice-phone"]?.source == .owntracks && link.fleet["badge-2"]?.source == .scanners)
    }

    static func start(_ table: inout Devices) -> [Devices.Action] {
        var actions: [Devices.Action] = []
        table.start(at: time(0), into: &actions)
        return actions
    }

    /// `Monitor.scanner`: what the own radio hears of a tag is that scanner's report; a hierarchy
    /// beacon it hears stays its own sighting.
    @Test func theOwnRadioAsAScannerReportsTheTagsItHears() throws {
        var table = try Self.table("Monitor.scanner = hall\n")
        var actions: [Devices.Action] = []
        table.start(at: Self.time(0), into: &actions)
        let badge = BeaconID(uuid: UUID(uuidString: Self.badge)!, major: 7, minor: 1)
        actions = []
        table.handle(
            .advertisement(Advertisement(format: .ibeacon, beacon: badge, power: -59, rssi: -60, address: nil)),
            at: Self.time(1), into: &actions)
        #expect(Self.rooms(actions) == ["badge-1 enter Hall"])
        #expect(table.scanners["hall"]?.reports == 1)
        let desk = BeaconID(uuid: UUID(uuidString: Self.area)!, major: 1, minor: 1)
        table.handle(
            .advertisement(Advertisement(format: .ibeacon, beacon: desk, power: -59, rssi: -60, address: nil)),
            at: Self.time(2), into: &actions)
        #expect(table.own.monitor.insideRegions.contains(.zone(UUID(uuidString: Self.area)!, major: 1)))
        #expect(table.scanners["hall"]?.reports == 1)
    }

    /// A scanner is online while it reports within `Scanners.silence` and did not say it is
    /// offline; a report after its `offline` brings it back; one never heard is offline.
    @Test func aScannersHealthFollowsItsReportsAndWhatItSays() throws {
        var table = try Self.table()
        var actions: [Devices.Action] = []
        table.start(at: Self.time(0), into: &actions)
        #expect(table.scanners.keys.sorted() == ["hall", "kitchen", "office"])
        #expect(table.scanners["hall"]?.isOnline(at: Self.time(0), silence: 60) == false)
        table.handle(ScannerReport(scanner: "hall", tag: "nobody", rssi: -60), at: Self.time(1), into: &actions)
        #expect(table.scanners["hall"]?.reports == 1)
        #expect(table.scanners["hall"]?.isOnline(at: Self.time(61), silence: 60) == true)
        #expect(table.scanners["hall"]?.isOnline(at: Self.time(61.5), silence: 60) == false)
        table.scannerStatus("hall", online: false)
        #expect(table.scanners["hall"]?.isOnline(at: Self.time(2), silence: 60) == false)
        table.handle(ScannerReport(scanner: "hall", tag: "badge-1", rssi: -60), at: Self.time(3), into: &actions)
        #expect(table.scanners["hall"]?.isOnline(at: Self.time(3), silence: 60) == true)
        table.scannerStatus("attic", online: true)
        #expect(table.scanners["attic"] == nil)
    }

    // MARK: - IRK

    /// ah(k, r) with the specification's sample data: IRK ec0234a3…, prand 708194, hash 0dfbaa.
    @Test func theSpecificationsSampleHashes() throws {
        let key = SymmetricKey(data: try #require(Hex.decode(Self.sampleIRK)))
        #expect(IRK.hash(key, prand: 0x70_8194) == 0x0D_FBAA)
        let address = try #require(BluetoothAddress("70:81:94:0D:FB:AA"))
        #expect(IRK.isResolvable(address) && IRK.resolves(address, key: key))
        #expect(!IRK.resolves(try #require(BluetoothAddress("70:81:94:0D:FB:AB")), key: key))
    }

    /// Addresses made by Python's `cryptography` (OpenSSL's AES, Tests/rooms/rpa.py) resolve to
    /// the tag of their IRK as they rotate, and an address of another IRK does not.
    @Test func aRotatingPrivateAddressIsOneTag() throws {
        let other = "00112233445566778899aabbccddeeff"
        let mine = try Self.python([Self.sampleIRK, "123456", "3abcde", "000001", "2f0f0f"])
        let theirs = try Self.python([other, "123456", "3abcde"])
        #expect(mine.count == 4 && theirs.count == 2)
        var table = try Self.table()
        var actions: [Devices.Action] = []
        table.start(at: Self.time(0), into: &actions)
        for (offset, text) in mine.enumerated() {
            let address = try #require(BluetoothAddress(text))
            // As ESPresense names an unresolved one (the bare address), and as a trace line gives it.
            let report = ScannerReport(scanner: "hall", tag: "apple:1005:9-26", rssi: -60, address: address)
            #expect(table.handle(report, at: Self.time(Double(offset + 1)), into: &actions) == nil, "\(text)")
            let named = ScannerReport(scanner: "hall", tag: "mac:\(text)", rssi: -60)
            #expect(table.handle(named, at: Self.time(Double(offset + 1)), into: &actions) == nil, "\(text)")
        }
        #expect(Array(table.fleet.keys) == ["watch"])
        for text in theirs {
            let report = ScannerReport(scanner: "hall", tag: "mac:\(text)", rssi: -60)
            #expect(table.handle(report, at: Self.time(9), into: &actions) == .unknownTag, "\(text)")
        }
        // Our own addresses of the sample IRK resolve as Python's do.
        let key = SymmetricKey(data: try #require(Hex.decode(Self.sampleIRK)))
        #expect(IRK.address(key: key, prand: 0x12_3456)?.description == mine[0])
    }

    /// Tests/rooms/rpa.py's addresses.
    static func python(_ arguments: [String]) throws -> [String] {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("rooms/rpa.py")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [script.path] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "rpa.py needs python3-cryptography (scripts/setup installs it)")
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }
}
