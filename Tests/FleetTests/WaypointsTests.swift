import BeaconCore
import BeaconConfiguration
import Fleet
import Foundation
import RegionMonitor
import Testing

/// OwnTracks waypoints (docs/behaviour.md §15.1): the commands that keep a phone's regions equal to its
/// monitored set, in the form the app reads (docs/owntracks-app.md).
@Suite struct WaypointsTests {
    static let uuid = UUID(uuidString: "112EBB9D-B8C9-4ABD-9EB3-43578BF86A41")!
    static let area = Region.area(uuid)
    static let zone = Region.zone(uuid, major: 3)
    static let beacon = Region.beacon(BeaconID(uuid: uuid, major: 3, minor: 7))
    static let names = WaypointNames(
        Hierarchy(beacons: [Hierarchy.Beacon(locationID: "1003", id: BeaconID(uuid: uuid, major: 3, minor: 7))]))

    /// The waypoints of a command, as objects.
    static func waypoints(_ command: String?) throws -> [[String: Any]] {
        let text = try #require(command)
        let object = try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(object["_type"] as? String == "cmd" && object["action"] as? String == "setWaypoints")
        let list = try #require((object["waypoints"] as? [String: Any])?["waypoints"] as? [[String: Any]])
        return list
    }

    @Test func theDescIsNameUUIDMajorMinorWithARidAndDeletesComeFirst() throws {
        let names = Self.names
        let first = try Self.waypoints(Waypoints.command(from: [], to: [Self.area, Self.zone], names: names))
        let areaName = names.name(of: Self.area)
        let zoneName = names.name(of: Self.zone)
        #expect(
            first.map { $0["desc"] as? String } == [
                "\(areaName):\(Self.uuid.uuidString)", "\(zoneName):\(Self.uuid.uuidString):3",
            ])
        #expect(first.map { $0["rid"] as? String } == [names.rid(of: Self.area), names.rid(of: Self.zone)])
        #expect(first.allSatisfy { ($0["lat"] as? Int) == 0 && ($0["lon"] as? Int) == 0 && ($0["rad"] as? Int) == 0 })
        // No uuid, major or minor fields: the app reads the desc alone.
        #expect(first.allSatisfy { $0["uuid"] == nil && $0["major"] == nil && $0["minor"] == nil })
        let next = try Self.waypoints(
            Waypoints.command(from: [Self.area, Self.zone], to: [Self.beacon, Self.zone], names: names))
        #expect(next.map { $0["rid"] as? String } == [names.rid(of: Self.area), names.rid(of: Self.beacon)])
        #expect(next.map { $0["lat"] as? Int } == [Waypoints.deleteLatitude, 0])
        #expect(next[1]["desc"] as? String == "bw1003:\(Self.uuid.uuidString):3:7")
        #expect(next[0]["tst"] as? Int == Int(Waypoints.tst(of: Self.area)))
        #expect(Waypoints.command(from: [Self.zone], to: [Self.zone], names: names) == nil)
    }

    @Test func namesAreUniqueLettersAndDigitsAndTransitionsFindTheirRegion() {
        let names = Self.names
        let all = [Self.area, Self.zone, Self.beacon]
        #expect(Set(all.map(names.name(of:))).count == 3 && Set(all.map(names.rid(of:))).count == 3)
        #expect(all.allSatisfy { WaypointNames.isPlain(names.name(of: $0)) })
        #expect(names.name(of: Self.beacon) == "bw1003")
        #expect(names.region(rid: names.rid(of: Self.zone), desc: "anything") == Self.zone)
        #expect(names.region(rid: nil, desc: "bw1003") == Self.beacon)
        #expect(names.region(rid: "unknown", desc: "bw1003|2|3") == Self.beacon)
        #expect(names.region(rid: "e1b527", desc: "home") == nil)
        #expect(names.isOurs(rid: names.rid(of: Self.area)) && !names.isOurs(rid: "e1b527"))
    }

    /// The rid the app derived for a waypoint sent without one: the first 6 hex digits of SHA-1 of
    /// `<name>-<tst>` (values from Python's hashlib).
    @Test func theLegacyRidIsTheAppsDerivedOne() throws {
        #expect(Waypoints.derivedRID(name: "bw", tst: 1_234_567_890) == "7550e0")
        #expect(Waypoints.derivedRID(name: "home", tst: 1_600_000_000) == "e1b527")
        let upgrade = try Self.waypoints(
            Waypoints.command(from: [], to: [Self.zone], names: Self.names, legacy: [Self.area]))
        #expect(upgrade.count == 2)
        #expect(upgrade[0]["rid"] as? String == Waypoints.derivedRID(name: "bw", tst: Waypoints.tst(of: Self.area)))
        #expect(upgrade[0]["lat"] as? Int == Waypoints.deleteLatitude)
        #expect(upgrade[1]["rid"] as? String == Self.names.rid(of: Self.zone))
    }

    /// Every region of the example office gets its own waypoint `tst`, name and rid, the same
    /// every time.
    @Test func everyRegionOfTheExampleOfficeHasItsOwnTstNameAndRid() throws {
        let ini = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("etc/hsyco.ini").path
        let hierarchy = try Configuration.load(contentsOf: ini).get().hierarchy
        var regions: [Region] = hierarchy.areas.map { .area($0.uuid) }
        regions += hierarchy.beacons.map { .beacon($0.id) }
        regions += hierarchy.beacons.map { .zone($0.id.uuid, major: $0.id.major) }
        let unique = Set(regions)
        let names = WaypointNames(hierarchy)
        let again = WaypointNames(hierarchy)
        #expect(Set(unique.map(Waypoints.tst(of:))).count == unique.count)
        #expect(Set(unique.map(names.name(of:))).count == unique.count)
        #expect(Set(unique.map(names.rid(of:))).count == unique.count)
        #expect(
            unique.allSatisfy { names.name(of: $0) == again.name(of: $0) && names.rid(of: $0) == again.rid(of: $0) })
        #expect(unique.allSatisfy { (1_000_000_000..<2_000_000_000).contains(Waypoints.tst(of: $0)) })
    }
}

/// A forward node's batches (docs/behaviour.md §15): at most 50 ms late, always under 64 KiB.
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
