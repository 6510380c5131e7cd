import BeaconConfiguration
import BeaconCore
import Fleet
import Floorplan
import Foundation
import RegionMonitor
import TestSupport
import Testing

/// Scanners that hear each other through steady paths (docs/behaviour.md §19, §20): the spread
/// learned of them says nothing of a carried tag's, and never hurries a still tag out of its room.
@Suite struct SteadyPairsTests {
    static let area = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"

    /// A placed scanner that also advertises (its `Scanner.<id>.address`), at `point`, 1.5 m high.
    struct Scanner {
        var id: String
        var point: PlanPoint
        var address: String
    }

    /// A still tag and the room it stands in.
    struct Still {
        var id: String
        var point: PlanPoint
        var room: String
    }

    /// An office floor of four rooms, 5 × 4 m each in a square (walls at x = 5 and y = 4, a door in
    /// each wall), a scanner near each room's middle.
    static let rooms = ["Office", "Lab", "Kitchen", "Lounge"]
    static let shapes = ["0,0; 5,0; 5,4; 0,4", "5,0; 10,0; 10,4; 5,4", "0,4; 5,4; 5,8; 0,8", "5,4; 10,4; 10,8; 5,8"]
    static let scanners = [
        Scanner(id: "office", point: PlanPoint(2.5, 2), address: "02:00:00:00:00:01"),
        Scanner(id: "lab", point: PlanPoint(7.5, 1.8), address: "02:00:00:00:00:02"),
        Scanner(id: "kitchen", point: PlanPoint(2.3, 6), address: "02:00:00:00:00:03"),
        Scanner(id: "lounge", point: PlanPoint(7.6, 6.2), address: "02:00:00:00:00:04"),
    ]
    static let scannerHeight = 1.5
    /// Four still tags, one a room, each 0.7–0.9 m from a shared wall (two facing each other
    /// across the office's wall with the lab).
    static let tags = [
        Still(id: "desk", point: PlanPoint(4.3, 2.6), room: "Office"),
        Still(id: "scope", point: PlanPoint(5.8, 2.4), room: "Lab"),
        Still(id: "fridge", point: PlanPoint(2.5, 4.7), room: "Kitchen"),
        Still(id: "sofa", point: PlanPoint(5.9, 6.4), room: "Lounge"),
    ]

    /// The floor's table: Theengs gateways that also advertise, `Scanners.calibrate = auto` (the
    /// default, said here), rooms by position. `learnsSpread`: the old default, the pairs' learned
    /// spread scaling every tag's contest (``PositionSettings/learnsSpread``).
    static func table(learnsSpread: Bool) throws -> Devices {
        var text = """
            MQTT.host = 127.0.0.1
            Scanners.theengs = home/+/BTtoMQTT/#
            Scanners.calibrate = auto
            Monitor.rssiFilter = none
            Tags.exitTimeout = 10
            Door.officeLab = 5,0.2; 5,1.0
            Door.kitchenLounge = 5,7.0; 5,7.8
            Door.officeKitchen = 4.0,4; 4.8,4
            Door.labLounge = 9.0,4; 9.8,4

            """
        for (index, room) in rooms.enumerated() {
            text += "LocationZoneName.\(area):\(index + 1) = \(room)\n"
            text += "LocationZoneShape.\(area):\(index + 1) = \(shapes[index])\n"
        }
        for (index, scanner) in scanners.enumerated() {
            let (x, y) = (scanner.point.x, scanner.point.y)
            text += "LocationBaseBeacon.\(101 + index) = \(area),\((y < 4 ? 1 : 3) + (x < 5 ? 0 : 1)),\(index + 1)\n"
            text += "LocationScanner.\(101 + index) = \(scanner.id)\n"
            text += "LocationScannerPoint.\(scanner.id) = \(x),\(y),\(scannerHeight)\n"
            text += "Scanner.\(scanner.id).address = \(scanner.address)\n"
        }
        for (index, tag) in tags.enumerated() {
            text += "Tag.\(tag.id) = ibeacon:FDA50693-A4E2-4FB1-AFCF-C6EB07647825:7:\(index + 1), \(tag.id)\n"
        }
        var configuration = try Configuration.load(Array(text.utf8), path: "hsyco.ini").get()
        if learnsSpread {
            var tuning = PositionSettings()
            tuning.learnsSpread = true
            configuration.scanners?.positionTuning = tuning
        }
        return Devices(configuration: configuration, identity: MonitorIdentity(session: "s", address: "a", userid: "u"))
    }

    static func time(_ seconds: Double) -> Timestamp {
        Timestamp(microseconds: 1_700_000_000_000_000 + Int64((seconds * 1_000_000).rounded()))
    }

    /// Gaussian draws of spread `sigma` (Box–Muller), seeded.
    static func gaussian(_ random: inout SeededGenerator, sigma: Double) -> Double {
        let u = Double.random(in: Double.ulpOfOne..<1, using: &random)
        let v = Double.random(in: 0..<1, using: &random)
        return sigma * (-2 * log(u)).squareRoot() * cos(2 * .pi * v)
    }

    /// The mean level (dBm, -59 at 1 m) between a transmitter at `a`, `az` high, and a receiver at
    /// `b`, `bz` high: exponent 2.5 and 5 dB a wall (the walls the floor's own map counts, doors
    /// left out).
    static func level(_ a: PlanPoint, _ az: Double, _ b: PlanPoint, _ bz: Double, map: FloorMap) -> Double {
        let flat = a.distance(to: b)
        let distance = (flat * flat + (az - bz) * (az - bz)).squareRoot()
        return -59 - 25 * log10(max(0.25, distance)) - 5 * Double(map.walls(from: a, to: b))
    }

    /// What an hour on the floor did: each tag's room changes after the first minute (every one,
    /// however soon undone), the share of its seconds after it in its own room, and the radio the
    /// table learned of its scanner pairs.
    struct Hour {
        var changes: [String: Int]
        var rightShare: [String: Double]
        var radio: RadioModel
    }

    /// An hour, seeded: every scanner hears every other once a second through a steady path (its
    /// level ±0.5 dB: nobody walks between fixed scanners); every scanner hears every tag once a
    /// second at the level of its distance and walls, plus shadowing that lasts (per path, 3 dB of
    /// spread correlated over 10 s: people passing, sitting down, the wearer turning; the
    /// benchmark's radio, docs/performance.md) and 2 dB of noise of each reading; whole dBm.
    static func hour(learnsSpread: Bool = false) throws -> Hour {
        var table = try table(learnsSpread: learnsSpread)
        let configuration = try #require(table.configuration)
        let map = try #require(configuration.floors.values.first)
        var actions: [Devices.Action] = []
        table.start(at: time(0), into: &actions)
        var random = SeededGenerator(seed: 1920)
        let (shadowing, correlation, noise) = (3.0, 10.0, 2.0)
        let keep = exp(-1 / correlation)
        let addresses = scanners.map { BluetoothAddress($0.address) }
        let pairs = scanners.map { receiver in
            scanners.map { level($0.point, scannerHeight, receiver.point, scannerHeight, map: map) }
        }
        let means = tags.map { tag in
            scanners.map { level(tag.point, FloorPlan.tagHeight, $0.point, scannerHeight, map: map) }
        }
        var shadows = tags.map { _ in scanners.map { _ in gaussian(&random, sigma: shadowing) } }
        var changes = Dictionary(uniqueKeysWithValues: tags.map { ($0.id, 0) })
        var right = Dictionary(uniqueKeysWithValues: tags.map { ($0.id, 0) })
        var rooms: [String: String] = [:]
        let seconds = 3600
        for second in 1...seconds {
            // The scanners hear each other, each 20 ms after the last.
            var at = Double(second)
            for (r, receiver) in scanners.enumerated() {
                for (t, transmitter) in scanners.enumerated() where t != r {
                    let rssi = (pairs[r][t] + Double.random(in: -0.5...0.5, using: &random)).rounded()
                    table.handle(
                        ScannerReport(
                            scanner: receiver.id, tag: transmitter.address, rssi: rssi, power: -59,
                            address: addresses[t]),
                        at: time(at), into: &actions)
                    at += 0.02
                }
            }
            // The tags, each reading 30 ms after the last.
            at = Double(second) + 0.5
            for (t, tag) in tags.enumerated() {
                for (s, scanner) in scanners.enumerated() {
                    shadows[t][s] =
                        shadows[t][s] * keep + (1 - keep * keep).squareRoot() * gaussian(&random, sigma: shadowing)
                    let rssi = (means[t][s] + shadows[t][s] + gaussian(&random, sigma: noise)).rounded()
                    table.handle(
                        ScannerReport(scanner: scanner.id, tag: tag.id, rssi: rssi, power: -59), at: time(at),
                        into: &actions)
                    at += 0.03
                    let room =
                        table.engine(tag.id)?.monitor.presentRoom.flatMap { configuration.hierarchy.name(of: $0) }
                        ?? "none"
                    if second > 60, let previous = rooms[tag.id], previous != room { changes[tag.id, default: 0] += 1 }
                    rooms[tag.id] = room
                }
                if second > 60, rooms[tag.id] == tag.room { right[tag.id, default: 0] += 1 }
            }
            actions.removeAll(keepingCapacity: true)
        }
        let counted = Double(seconds - 60)
        return Hour(changes: changes, rightShare: right.mapValues { Double($0) / counted }, radio: table.radio)
    }

    /// Still tags by shared walls keep their rooms for an hour where the scanners hear each other
    /// through steady paths. The pairs' learned spread (no shadowing, the least noise) once scaled
    /// every tag's contest to nothing (``PositionSettings/learnsSpread``, then on by default): with
    /// `hour(learnsSpread: true)` this floor's four tags change rooms 54 times in the hour (desk 4,
    /// scope 36, fridge 2, sofa 12), against 2 now (desk's one excursion).
    @Test func stillTagsKeepTheirRoomsWhereScannerPairsHearEachOtherSteadily() throws {
        let hour = try Self.hour()
        // The pairs were learned, and learned as calm: the radio that once shrank the contest.
        let steadiness = try #require(hour.radio.steadiness, "no spread learned of the pairs: \(hour.radio)")
        #expect(steadiness < 0.3 && hour.radio.pairs >= 3, "\(hour.radio)")
        // Fewer than one excursion a tag in the hour (out and back: two changes). A still tag's
        // true number is 0, but 3 dB of shadowing lasting 10 s by a wall 0.7 m away carries one
        // out now and then: three other seeds gave 2, 6 and 6 changes in all (54 to 108 with the
        // old default).
        let total = hour.changes.values.reduce(0, +)
        #expect(total < 2 * Self.tags.count, "room changes \(hour.changes.sorted { $0.key < $1.key })")
        for tag in Self.tags {
            let share = hour.rightShare[tag.id] ?? 0
            #expect(share >= 0.95, "\(tag.id) in the \(tag.room) \(Int(share * 100)) % of the hour")
        }
    }
}
