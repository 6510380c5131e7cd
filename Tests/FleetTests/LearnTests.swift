import BeaconConfiguration
import BeaconCore
import Engine
import Fleet
import Floorplan
import Foundation
import RegionMonitor
import TestSupport
import Testing

/// "Learn this room" on the table of devices (docs/behaviour.md §22): sessions, what they take,
/// the building's fingerprints they replace or forget, refusals that change nothing, and a tag
/// placed by them in a room with no scanner.
@Suite struct LearnTests {
    static let area = TagTests.area
    /// TagTests' three rooms with a fourth, the Bathroom, that has no scanner; and a second badge.
    static let extra = """
        LocationBaseBeacon.104 = \(area),4,1
        LocationZoneName.\(area):4 = Bathroom
        Tag.ben = ibeacon:\(TagTests.badge):7:2, Ben

        """
    static let bathroom = Region.zone(UUID(uuidString: area)!, major: 4)

    static func table() throws -> Devices {
        var table = try TagTests.table(extra)
        var actions: [Devices.Action] = []
        table.start(at: TagTests.time(0), into: &actions)
        return table
    }

    /// Mean levels (RSSI) at kitchen, hall and office from each room; the office's receiver is
    /// 10 dB quiet (its offset is in the configuration).
    static let profiles: [String: [String: Double]] = [
        "Kitchen": ["kitchen": -60, "hall": -76, "office": -98],
        "Hall": ["kitchen": -74, "hall": -58, "office": -84],
        "Bathroom": ["kitchen": -71, "hall": -67, "office": -98],
        "Office": ["kitchen": -90, "hall": -75, "office": -70],
    ]

    /// `tag` in `room` from `from` for `seconds`: each scanner once a second, a fixed pattern of
    /// ±2 dB about the profile, `quieter` dB less.
    static func stay(
        _ table: inout Devices, _ tag: String, in room: String, from: Double, seconds: Int, quieter: Double = 0
    ) -> [Devices.Action] {
        var actions: [Devices.Action] = []
        let wobble = [0.0, 1.5, -2, 0.5, -1, 2, -1.5]
        for second in 0..<seconds {
            for (index, (scanner, mean)) in (profiles[room] ?? [:]).sorted(by: { $0.key < $1.key }).enumerated() {
                let rssi = mean - quieter + wobble[(second * 3 + index) % wobble.count]
                table.handle(
                    ScannerReport(scanner: scanner, tag: tag, rssi: rssi),
                    at: TagTests.time(from + Double(second) + 0.1 + Double(index) * 0.3), into: &actions)
            }
        }
        return actions
    }

    static func learn(
        _ table: inout Devices, _ text: String, device: String? = nil, at seconds: Double
    ) throws -> (refusal: String?, actions: [Devices.Action]) {
        let command = try LearnCommand.parse(text: text, device: device).get()
        var actions: [Devices.Action] = []
        let refusal = table.learn(command, at: TagTests.time(seconds), into: &actions)
        return (refusal, actions)
    }

    static func learned(_ actions: [Devices.Action]) -> [LearnedReport] {
        actions.compactMap { action in
            if case .engine(_, .output(.learned(_, let report))) = action { report } else { nil }
        }
    }

    /// A session takes every reading of its tag as a sample of its room, ends after its seconds
    /// with a `learned` output (samples, scanners) and the room's fingerprints kept; it does not
    /// move the tag.
    @Test func aSessionTakesTheReadingsOfItsRoomAndEndsWithLearned() throws {
        var table = try Self.table()
        _ = Self.stay(&table, "badge-1", in: "Hall", from: 1, seconds: 3)
        let (refusal, _) = try Self.learn(&table, #"{"room": "Bathroom", "seconds": 10}"#, device: "badge-1", at: 4)
        #expect(refusal == nil)
        #expect(table.learningSessions.map(\.device) == ["badge-1"])
        var actions = Self.stay(&table, "badge-1", in: "Bathroom", from: 4, seconds: 10)
        #expect(TagTests.rooms(actions).allSatisfy { !$0.contains("Bathroom") }, "training moves no tag")
        var end: [Devices.Action] = []
        table.advance(to: TagTests.time(20), into: &end)
        actions += end
        let report = try #require(Self.learned(actions).first)
        #expect(report.name == "Bathroom" && report.samples == 30 && report.scanners == 3 && !report.stopped)
        #expect(table.learningSessions.isEmpty)
        let kept = try #require(table.fingerprints.rooms[Self.bathroom.description])
        #expect(kept.samples.count == 30 && kept.device == "badge-1")
        #expect(
            kept.samples.allSatisfy { $0.at >= TagTests.time(4).microseconds && $0.at < TagTests.time(14).microseconds }
        )
        #expect(
            actions.contains {
                if case .fingerprints(let room, let training?) = $0 {
                    room == Self.bathroom.description && training.samples.count == 30
                } else {
                    false
                }
            })
    }

    /// Trained, a tag in the room with no scanner is in it (its nearest scanner's room without
    /// training); a tag that hears 4 dB quieter than the one that trained is too.
    @Test func aTrainedRoomWithNoScannerIsEntered() throws {
        var table = try Self.table()
        // Heard first: a tag never heard is not trained.
        _ = Self.stay(&table, "badge-1", in: "Kitchen", from: 0, seconds: 1)
        var start = 1.0
        for room in ["Kitchen", "Bathroom", "Office"] {
            #expect(
                try Self.learn(&table, #"{"room": "\#(room)", "seconds": 30}"#, device: "badge-1", at: start).refusal
                    == nil)
            _ = Self.stay(&table, "badge-1", in: room, from: start, seconds: 30)
            start += 32
        }
        var end: [Devices.Action] = []
        table.advance(to: TagTests.time(start), into: &end)
        #expect(table.fingerprints.rooms.count == 3)
        let status = table.fingerprintStatus
        #expect(status.count == 3 && status.allSatisfy { ($0.accuracy ?? 0) >= 0.9 && !$0.tooFew }, "\(status)")
        // Ben, 4 dB quieter, walks kitchen, hall, bathroom.
        start += 20
        var rooms: [String] = []
        for room in ["Kitchen", "Hall", "Bathroom"] {
            rooms += TagTests.rooms(Self.stay(&table, "ben", in: room, from: start, seconds: 20, quieter: 4)).filter {
                $0.hasPrefix("ben ")
            }
            start += 20
        }
        #expect(
            rooms == [
                "ben enter Kitchen", "ben exit Kitchen", "ben enter Hall",
                "ben exit Hall", "ben enter Bathroom",
            ], "\(rooms)")
        // His own offset is learned as he moves.
        let offset = try #require(table.engine("ben")?.monitor.rooms.prints.offset)
        #expect(offset < -1.5 && offset > -6, "\(offset)")
    }

    /// Without training the bathroom is never entered: the hall's scanner hears it best.
    @Test func untrainedTheRoomWithNoScannerIsNeverEntered() throws {
        var table = try Self.table()
        let rooms = TagTests.rooms(Self.stay(&table, "ben", in: "Bathroom", from: 1, seconds: 20))
        #expect(rooms.first?.contains("enter") == true && !rooms.contains { $0.contains("Bathroom") }, "\(rooms)")
    }

    /// Retraining a room replaces its samples; forgetting a room forgets it, `*` every room; a
    /// stop ends a session early with what it took.
    @Test func retrainingReplacesForgettingForgetsAndStopEndsEarly() throws {
        var table = try Self.table()
        _ = Self.stay(&table, "badge-1", in: "Kitchen", from: 0, seconds: 1)
        _ = try Self.learn(&table, #"{"room": "Kitchen", "seconds": 10}"#, device: "badge-1", at: 1)
        _ = Self.stay(&table, "badge-1", in: "Kitchen", from: 1, seconds: 12)
        let first = try #require(
            table.fingerprints.rooms[Region.zone(UUID(uuidString: Self.area)!, major: 1).description])
        _ = try Self.learn(&table, #"{"room": "kitchen", "seconds": 5}"#, device: "badge-1", at: 20)
        var actions = Self.stay(&table, "badge-1", in: "Kitchen", from: 20, seconds: 2)
        let (stop, stopped) = try Self.learn(&table, #"{"stop": true}"#, device: "badge-1", at: 22.5)
        #expect(stop == nil)
        actions += stopped
        let report = try #require(Self.learned(actions).first)
        #expect(report.stopped && report.samples == 6, "\(report)")
        let second = try #require(
            table.fingerprints.rooms[Region.zone(UUID(uuidString: Self.area)!, major: 1).description])
        #expect(second.samples.count == 6 && second.samples.allSatisfy { $0.at >= TagTests.time(20).microseconds })
        #expect(first.samples.count == 30)
        _ = try Self.learn(&table, #"{"room": "Office", "seconds": 5}"#, device: "badge-1", at: 30)
        _ = Self.stay(&table, "badge-1", in: "Office", from: 30, seconds: 7)
        #expect(table.fingerprints.rooms.count == 2)
        let (forget, forgot) = try Self.learn(&table, #"{"room": "Kitchen", "forget": true}"#, at: 40)
        #expect(forget == nil)
        #expect(table.fingerprints.rooms.count == 1 && table.fingerprintModel != nil)
        #expect(forgot.contains { if case .fingerprints(_, nil) = $0 { true } else { false } })
        _ = try Self.learn(&table, #"{"room": "*", "forget": true}"#, at: 41)
        #expect(table.fingerprints.isEmpty && table.fingerprintModel == nil)
    }

    /// Bad input: an unknown room or device, a second session for a tag, a stop with none: one
    /// line naming the cause and the fix, and nothing changed.
    @Test func badCommandsAreRefusedAndChangeNothing() throws {
        var table = try Self.table()
        _ = Self.stay(&table, "badge-1", in: "Hall", from: 1, seconds: 2)
        #expect(try Self.learn(&table, #"{"room": "Kitchen"}"#, device: "badge-1", at: 3).refusal == nil)
        let version = table.fingerprints.version
        let cases: [(String, String?, String)] = [
            (#"{"room": "Cellar"}"#, "badge-1", "no room \"Cellar\""),
            (#"{"room": "Kitchen"}"#, "nobody", "no tag \"nobody\""),
            (#"{"room": "Office"}"#, "badge-1", "is training"),
            (#"{"stop": true}"#, "ben", "no tag \"ben\""),
            (#"{"room": "Cellar", "forget": true}"#, nil, "no room"),
        ]
        for (text, device, expected) in cases {
            let (refusal, actions) = try Self.learn(&table, text, device: device, at: 4)
            #expect(refusal?.contains(expected) == true, "\(text): \(refusal ?? "taken")")
            #expect(refusal?.contains("\n") == false)
            #expect(Self.learned(actions).isEmpty)
        }
        #expect(
            table.learningSessions.count == 1 && table.learningSessions.first?.room.description.hasSuffix(":1") == true)
        #expect(table.fingerprints.version == version)
        // Ben, heard once, then quiet: a session for him is taken, and a stop of it.
        _ = Self.stay(&table, "ben", in: "Hall", from: 4, seconds: 1)
        #expect(try Self.learn(&table, #"{"room": "Hall", "seconds": 5}"#, device: "ben", at: 5).refusal == nil)
        #expect(try Self.learn(&table, #"{"stop": true}"#, device: "ben", at: 6).refusal == nil)
        #expect(
            try Self.learn(&table, #"{"stop": true}"#, device: "ben", at: 7).refusal?.contains("no session") == true)
        // Ben's stop took no samples: nothing was learned for the hall.
        #expect(table.fingerprints.rooms.isEmpty)
    }

    /// A session that takes no sample (its tag not heard) changes nothing, ended or stopped: the
    /// room keeps its training, nothing is kept or shipped, and its `learned` says 0 samples.
    @Test func aSessionThatTakesNoSampleKeepsTheRoomsTraining() throws {
        var table = try Self.table()
        _ = Self.stay(&table, "badge-1", in: "Kitchen", from: 1, seconds: 1)
        #expect(try Self.learn(&table, #"{"room": "Kitchen", "seconds": 10}"#, device: "badge-1", at: 2).refusal == nil)
        _ = Self.stay(&table, "badge-1", in: "Kitchen", from: 2, seconds: 12)
        let kitchen = Region.zone(UUID(uuidString: Self.area)!, major: 1).description
        let trained = try #require(table.fingerprints.rooms[kitchen])
        #expect(trained.samples.count == 30)
        let version = table.fingerprints.version
        // The badge is quiet from now on: a session that ends, and one that is stopped.
        #expect(try Self.learn(&table, #"{"room": "Kitchen", "seconds": 5}"#, device: "badge-1", at: 20).refusal == nil)
        var actions: [Devices.Action] = []
        table.advance(to: TagTests.time(30), into: &actions)
        #expect(try Self.learn(&table, #"{"room": "Kitchen", "seconds": 5}"#, device: "badge-1", at: 31).refusal == nil)
        let (stop, stopped) = try Self.learn(&table, #"{"stop": true}"#, device: "badge-1", at: 32)
        #expect(stop == nil)
        actions += stopped
        #expect(Self.learned(actions).map(\.samples) == [0, 0])
        #expect(table.fingerprints.rooms[kitchen] == trained && table.fingerprints.version == version)
        #expect(!actions.contains { if case .fingerprints = $0 { true } else { false } })
        #expect(table.fingerprintModel != nil)
    }

    /// A declared tag that was never heard is refused with one line (a session of it would take
    /// nothing); once heard, it is taken.
    @Test func aDeclaredTagNeverHeardIsRefused() throws {
        var table = try Self.table()
        let (refusal, actions) = try Self.learn(&table, #"{"room": "Hall", "seconds": 5}"#, device: "ben", at: 1)
        #expect(
            refusal
                == "learn: \"ben\" has not been heard by any scanner yet, so a session would take nothing; bring the "
                + "tag into the room, check that a scanner hears it (its page /devices/ben), and try again")
        #expect(Self.learned(actions).isEmpty && table.learningSessions.isEmpty && !table.ids.contains(.fleet("ben")))
        _ = Self.stay(&table, "ben", in: "Hall", from: 2, seconds: 1)
        #expect(try Self.learn(&table, #"{"room": "Hall", "seconds": 5}"#, device: "ben", at: 3).refusal == nil)
        #expect(table.learningSessions.map(\.device) == ["ben"])
    }

    /// Forgetting a room that was never trained (or every room, with none) says there was nothing
    /// to forget, and changes nothing.
    @Test func forgettingARoomNeverTrainedSaysThereIsNothingToForget() throws {
        var table = try Self.table()
        let (none, _) = try Self.learn(&table, #"{"room": "*", "forget": true}"#, at: 1)
        #expect(none == "learn: no room is trained; nothing to forget")
        _ = Self.stay(&table, "badge-1", in: "Kitchen", from: 1, seconds: 1)
        _ = try Self.learn(&table, #"{"room": "Kitchen", "seconds": 5}"#, device: "badge-1", at: 2)
        _ = Self.stay(&table, "badge-1", in: "Kitchen", from: 2, seconds: 7)
        #expect(table.fingerprints.rooms.count == 1)
        let version = table.fingerprints.version
        let (refusal, actions) = try Self.learn(&table, #"{"room": "bathroom", "forget": true}"#, at: 10)
        #expect(refusal == "learn: Bathroom is not trained; nothing to forget")
        #expect(!actions.contains { if case .fingerprints = $0 { true } else { false } })
        #expect(table.fingerprints.rooms.count == 1 && table.fingerprints.version == version)
    }

    /// A second session for a tag is refused naming the room it trains by its name, with the time
    /// left, in words every door (command line, page, MQTT) can act on.
    @Test func aSecondSessionIsRefusedNamingTheRoomByItsName() throws {
        var table = try Self.table()
        _ = Self.stay(&table, "badge-1", in: "Hall", from: 1, seconds: 2)
        #expect(try Self.learn(&table, #"{"room": "Kitchen", "seconds": 60}"#, device: "badge-1", at: 3).refusal == nil)
        let (refusal, _) = try Self.learn(&table, #"{"room": "Office"}"#, device: "badge-1", at: 12.5)
        #expect(
            refusal
                == "learn: \"badge-1\" is training Kitchen already (51 s left); wait for its end, or stop its session first"
        )
    }
}
