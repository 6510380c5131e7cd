import BeaconCore
import Fleet
import Foundation
import RegionMonitor
import Testing

/// Why a tag's room changed when the room's training placed it (issue 72): without a floor plan
/// the fingerprints decided, and the explanation says so, not "its position puts it there".
@Suite struct LearnExplanationTests {
    @Test func aRoomEnteredByItsTrainingSaysTheFingerprintsPlacedIt() throws {
        var table = try LearnTests.table()
        _ = LearnTests.stay(&table, "badge-1", in: "Kitchen", from: 0, seconds: 1)
        var start = 1.0
        for room in ["Kitchen", "Bathroom", "Office"] {
            let refusal = try LearnTests.learn(
                &table, #"{"room": "\#(room)", "seconds": 30}"#, device: "badge-1", at: start
            ).refusal
            #expect(refusal == nil)
            _ = LearnTests.stay(&table, "badge-1", in: room, from: start, seconds: 30)
            start += 32
        }
        var end: [Devices.Action] = []
        table.advance(to: TagTests.time(start), into: &end)
        start += 20
        _ = LearnTests.stay(&table, "ben", in: "Kitchen", from: start, seconds: 20)
        let rooms = TagTests.rooms(LearnTests.stay(&table, "ben", in: "Bathroom", from: start + 20, seconds: 20))
        #expect(rooms.contains("ben enter Bathroom"), "\(rooms)")
        let change = try #require(table.engine("ben")?.monitor.roomChange)
        #expect(change.to == LearnTests.bathroom && change.byFingerprints)
        #expect(change.why.hasPrefix("moved from "), "\(change.why)")
        #expect(change.why.contains("to \(LearnTests.bathroom.description): its readings match the room's training"))
        #expect(change.why.contains("learned fingerprints") && !change.why.contains("position"), "\(change.why)")
    }

    /// The hand-over rule's and the floor plan's explanations are as before.
    @Test func otherChangesSayWhatDecidedThem() throws {
        let area = try #require(UUID(uuidString: LearnTests.area))
        let (kitchen, hall) = (Region.zone(area, major: 1), Region.zone(area, major: 2))
        let at = TagTests.time(0)
        let position = RoomChange(
            from: kitchen, to: hall, at: at, scanner: "102", evidence: 10, probability: 0.82, previousProbability: 0.1)
        #expect(position.why.contains("its position puts it there at 82 % against 10 %"), "\(position.why)")
        let nearest = RoomChange(from: kitchen, to: hall, at: at, scanner: "102", evidence: 13, previous: -1)
        #expect(nearest.why.contains("heard it at 13 dB against -1 dB"), "\(nearest.why)")
    }
}
