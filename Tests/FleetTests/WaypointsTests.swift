import BeaconCore
import BeaconConfiguration
import Fleet
import Foundation
import RegionMonitor
import Testing

/// OwnTracks waypoints (SPEC 15.1): the commands that keep a phone's regions equal to its
/// monitored set.
@Suite struct WaypointsTests {
    static let uuid = UUID(uuidString: "112EBB9D-B8C9-4ABD-9EB3-43578BF86A41")!
    static let area = Region.area(uuid)
    static let zone = Region.zone(uuid, major: 3)
    static let beacon = Region.beacon(BeaconID(uuid: uuid, major: 3, minor: 7))

    /// The waypoints of a command, as `(desc, deleted)`.
    static func waypoints(_ command: String?) throws -> [(String, Bool)] {
        let text = try #require(command)
        let object = try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(object["_type"] as? String == "cmd" && object["action"] as? String == "setWaypoints")
        let list = try #require((object["waypoints"] as? [String: Any])?["waypoints"] as? [[String: Any]])
        return list.map { ($0["desc"] as? String ?? "", ($0["lat"] as? Int) == Waypoints.deleteLatitude) }
    }

    @Test func aCommandAddsNewRegionsAndDeletesDroppedOnesByTheirFixedTst() throws {
        let first = Waypoints.command(from: [], to: [Self.area, Self.zone])
        #expect(try Self.waypoints(first).map(\.0) == ["bw:\(Self.area)", "bw:\(Self.zone)"])
        #expect(try Self.waypoints(first).allSatisfy { !$0.1 })
        let next = Waypoints.command(from: [Self.area, Self.zone], to: [Self.zone, Self.beacon])
        let items = try Self.waypoints(next)
        #expect(items.map(\.0) == ["bw:\(Self.area)", "bw:\(Self.beacon)"])
        #expect(items.map(\.1) == [true, false])
        #expect(Waypoints.command(from: [Self.zone], to: [Self.zone]) == nil)
        // The beacon's waypoint carries what identifies it; the tst names it for good.
        let text = try #require(next)
        #expect(text.contains(#""tst":\#(Waypoints.tst(of: Self.area))"#))
        #expect(text.contains(#""uuid":"\#(Self.uuid.uuidString)","major":3,"minor":7"#), "\(text)")
        #expect(text.contains(#""rad":0"#))
    }

    /// Every region of the example office gets its own waypoint `tst`, the same every time.
    @Test func everyRegionOfTheExampleOfficeHasItsOwnTst() throws {
        let ini = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("etc/hsyco.ini").path
        let hierarchy = try Configuration.load(contentsOf: ini).get().hierarchy
        var regions: [Region] = hierarchy.areas.map { .area($0.uuid) }
        regions += hierarchy.beacons.map { .beacon($0.id) }
        regions += hierarchy.beacons.map { .zone($0.id.uuid, major: $0.id.major) }
        let unique = Set(regions)
        let stamps = Set(unique.map(Waypoints.tst(of:)))
        #expect(stamps.count == unique.count)
        #expect(
            unique.allSatisfy {
                Waypoints.tst(of: $0) == Waypoints.tst(of: $0)
                    && (1_000_000_000..<2_000_000_000).contains(Waypoints.tst(of: $0))
            })
    }
}

/// A forward node's batches (SPEC 15): at most 50 ms late, always under 64 KiB.
@Suite struct ForwardBatchTests {
    @Test func aBatchIsDue50msAfterItsFirstLineAndNeverTooBig() {
        var batch = ForwardBatch()
        #expect(batch.add("a", at: 1_000) == nil && batch.add("b", at: 30_000) == nil)
        #expect(batch.due == 51_000)
        #expect(batch.take(at: 50_999) == nil)
        #expect(batch.take(at: 51_000) == "a\nb\n")
        #expect(batch.due == nil && batch.take(at: 0, force: true) == nil)
        let line = String(repeating: "x", count: 1000)
        var sent: [String] = []
        for n in 0..<200 { if let full = batch.add(line, at: Int64(n)) { sent.append(full) } }
        if let rest = batch.take(at: 0, force: true) { sent.append(rest) }
        #expect(sent.allSatisfy { $0.utf8.count <= ForwardBatch.sizeLimit })
        #expect(sent.joined().utf8.count == 200 * 1001)
    }
}
