import BeaconCore
import Floorplan
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A floor plan end to end (docs/behaviour.md §20): the commands, not the engine. One walk of
/// scanner reports through `replay` and through `run` against a real mosquitto, on a floor given
/// by the ini's keys and by an ESPresense companion `config.yaml`.
@Suite(.serialized) struct FloorPlanRunTests {
    typealias Subscriber = MQTTRunTests.Subscriber
    static let area = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
    static let badge = "FDA50693-A4E2-4FB1-AFCF-C6EB07647825"

    /// Office (0–4 m), Lab (4–8 m) and Hall (8–12 m) in a row, 4 m deep. The lab's scanner sits
    /// just across the office's wall, 0.8 m from the office's desk; the office's is in its far
    /// corner.
    static let scanners: [(id: String, point: PlanPoint)] = [
        ("office", PlanPoint(0.3, 0.3)), ("lab", PlanPoint(4.4, 2)), ("hall", PlanPoint(11.7, 2)),
    ]

    /// The building without its shapes: three Zones of one Area, a scanner in each.
    static func building(port: Int32) -> String {
        """
        LocationAreaName.\(area) = Floor
        LocationBaseBeacon.101 = \(area),1,1
        LocationBaseBeacon.102 = \(area),2,1
        LocationBaseBeacon.103 = \(area),3,1
        LocationZoneName.\(area):1 = Office
        LocationZoneName.\(area):2 = Lab
        LocationZoneName.\(area):3 = Hall
        LocationScanner.101 = office
        LocationScanner.102 = lab
        LocationScanner.103 = hall
        Scanners.espresense = espresense/devices/+/+
        Tag.badge = ibeacon:\(badge):7:1, Badge
        Tags.exitTimeout = 10
        Monitor.source = none
        Monitor.userid = floor
        Monitor.rssiFilter = none
        MQTT.host = 127.0.0.1
        MQTT.port = \(port)
        MQTT.keepalive = 5
        State.database = state.sqlite

        """
    }

    /// The floor in the ini's own keys.
    static let shapes = """
        LocationZoneShape.\(area):1 = 0,0; 4,0; 4,4; 0,4
        LocationZoneShape.\(area):2 = 4,0; 8,0; 8,4; 4,4
        LocationZoneShape.\(area):3 = 8,0; 12,0; 12,4; 8,4
        LocationScannerPoint.office = 0.3,0.3,1
        LocationScannerPoint.lab = 4.4,2,1
        LocationScannerPoint.hall = 11.7,2,1

        """

    /// The same floor as the companion writes it (its rooms closed or not, names in any case).
    static let companion = """
        floors:
          - id: floor
            name: Floor
            bounds: [[0, 0, 0], [12, 4, 3]]
            rooms:
              - name: office
                points: [[0, 0], [4, 0], [4, 4], [0, 4], [0, 0]]
              - name: LAB
                points: [[4, 0], [8, 0], [8, 4], [4, 4]]
              - name: Hall
                points: [[8, 0], [12, 0], [12, 4], [8, 4]]
        nodes:
          - name: Office
            point: [0.3, 0.3, 1]
            floors: ["floor"]
          - name: Lab
            point: [4.4, 2, 1]
          - name: hall
            point: [11.7, 2, 1]
        """

    /// Where the badge is at `second`: at the office's desk by the lab's wall for 40 s, then
    /// walking 0.32 m/s through the lab into the hall, where it stays.
    static func spot(_ second: Int) -> PlanPoint {
        let walked = Double(min(max(second - 40, 0), 20)) * 0.32
        return PlanPoint(3.6 + walked, 2)
    }

    /// Walls between the badge and a scanner: the room edges at x = 4 and x = 8 a path crosses.
    static func walls(_ a: PlanPoint, _ b: PlanPoint) -> Int {
        [4.0, 8.0].filter { (a.x - $0) * (b.x - $0) < 0 }.count
    }

    /// A report a node makes each second (staggered): exponent 2.5, walls of 6 dB, a wobble of a
    /// dB or two that repeats. The hall's scanner dies at 90 s, with the badge under it.
    static func trace() -> String {
        let wobble: [Double] = [0, 1, -1, 2, -2, 1, 0, -1]
        var lines: [String] = []
        for second in 0..<120 {
            let spot = spot(second)
            for (n, scanner) in scanners.enumerated() where !(scanner.id == "hall" && second >= 90) {
                let distance = max(0.25, spot.distance(to: scanner.point))
                let rssi =
                    (-59 - 25 * log10(distance) - 6 * Double(walls(spot, scanner.point))
                    + wobble[(second * 3 + n) % wobble.count]).rounded()
                let t = 1_700_000_000 + Double(second) + Double(n) * 0.3
                lines.append(
                    #"{"t": \#(t), "scanner": "\#(scanner.id)", "tag": "ibeacon:\#(badge):7:1", "rssi": \#(rssi), "power": -59}"#
                )
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A folder with the trace and both forms of the floor: `shapes.ini` (the ini's keys),
    /// `companion.ini` (`Floorplan.file = config.yaml`) and `nearest.ini` (no floor plan).
    static func folder(port: Int32) throws -> URL {
        let folder = try scratchFolder("floorplan")
        let building = building(port: port)
        try (building + shapes).write(
            to: folder.appendingPathComponent("shapes.ini"), atomically: true, encoding: .utf8)
        try (building + "Floorplan.file = config.yaml\n").write(
            to: folder.appendingPathComponent("companion.ini"), atomically: true, encoding: .utf8)
        try building.write(to: folder.appendingPathComponent("nearest.ini"), atomically: true, encoding: .utf8)
        try companion.write(to: folder.appendingPathComponent("config.yaml"), atomically: true, encoding: .utf8)
        try trace().write(to: folder.appendingPathComponent("walk.jsonl"), atomically: true, encoding: .utf8)
        return folder
    }

    static func replay(_ config: String, in folder: URL) async throws -> String {
        let run = try await DecodeCommandTests.beaconwatch(
            ["replay", "--config", config, "trace:walk.jsonl", "--state", "\(config).sqlite"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        return ReplayCommandTests.withoutSession(run.stdout)
    }

    /// The Zones the badge entered, in order, and the time of each (seconds into the walk).
    static func rooms(_ output: String) -> [(room: String, second: Double)] {
        output.split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                object["type"] as? String == "enter", object["kind"] as? String == "zone",
                let name = object["name"] as? String, let t = (object["t"] as? String).flatMap(Timestamp.init(iso8601:))
            else { return nil }
            return (name, t.secondsSinceEpoch - 1_700_000_000)
        }
    }

    /// The desk by the lab's louder scanner is in the office with the floor plan and in the lab by
    /// the nearest rule; the walk reaches the hall, and the hall's scanner dying leaves the badge
    /// there (or in no room), never next door. Both forms of the floor give the same outputs.
    @Test func theDeskIsInItsOwnRoomAndBothFormsReplayAlike() async throws {
        let folder = try Self.folder(port: 1883)
        let shapes = try await Self.replay("shapes.ini", in: folder)
        let companion = try await Self.replay("companion.ini", in: folder)
        let nearest = try await Self.replay("nearest.ini", in: folder)
        #expect(shapes == companion)
        let positioned = Self.rooms(shapes)
        #expect(positioned.first?.room == "Office", "\(positioned)")
        #expect(positioned.filter { $0.second < 40 }.map(\.room) == ["Office"], "\(positioned)")
        #expect(positioned.map(\.room).suffix(2) == ["Lab", "Hall"], "\(positioned)")
        #expect(!positioned.contains { $0.second > 70 && $0.room != "Hall" }, "\(positioned)")
        #expect(shapes.contains(#""type":"position""#))
        // Section 19's rule: the lab from its scanner's first report on, and the lab again when
        // the hall's scanner dies under the badge.
        let ruled = Self.rooms(nearest)
        #expect(ruled.filter { $0.second < 40 }.map(\.room).last == "Lab", "\(ruled)")
        #expect(ruled.filter { $0.second > 90 }.map(\.room) == ["Lab"], "\(ruled)")
        #expect(!nearest.contains(#""type":"position""#))
    }

    /// `run` fed the same reports publishes to a real mosquitto, and writes, byte for byte what
    /// `replay` prints up to the trace's end (`replay` then runs its clock on until the last exit
    /// falls due; `run` stops with its source); the last position is retained on `B/position`.
    @Test func runThroughABrokerGivesWhatReplayGives() async throws {
        let broker = try Broker()
        let folder = try Self.folder(port: broker.port)
        let expected = try await Self.replay("shapes.ini", in: folder)
        let watcher = try await Subscriber(port: broker.port, filter: "beaconwatch/#")
        let (run, events) = try await DecodeCommandTests.runTrace(config: "shapes.ini", trace: "walk.jsonl", in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        let end = 119.6
        let upToTheEnd = expected.split(separator: "\n").filter { line in
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            let t = (object?["t"] as? String).flatMap(Timestamp.init(iso8601:))?.secondsSinceEpoch ?? 0
            return t - 1_700_000_000 <= end
        }
        #expect(upToTheEnd.count > 20 && upToTheEnd.count < expected.split(separator: "\n").count)
        #expect(ReplayCommandTests.withoutSession(events) == upToTheEnd.joined(separator: "\n") + "\n")
        let positions = expected.split(separator: "\n").filter { $0.contains(#""type":"position""#) }
        #expect(positions.count > 5)
        try await Subscriber.until("every position on the broker") {
            watcher.payloads("badge/position").count >= positions.count
                && watcher.payloads("floor/status").last == "offline"
        }
        #expect(
            watcher.payloads("badge/position").map { ReplayCommandTests.withoutSession($0) }
                == positions.map(String.init))
        let later = try await Subscriber(port: broker.port, filter: "beaconwatch/badge/position")
        try await Subscriber.until("the retained position") { !later.messages.isEmpty }
        #expect(later.messages.first?.retained == true)
        #expect(
            later.messages.first.map { ReplayCommandTests.withoutSession($0.payload) }
                == positions.last.map(String.init))
        watcher.client.shutdown()
        later.client.shutdown()
    }
}
