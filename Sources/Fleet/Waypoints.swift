import BeaconCore
import Crypto
import Foundation
import JSONText
import RegionMonitor

/// The regions an OwnTracks phone monitors, as its waypoints (docs/behaviour.md §15.1): the commands that keep
/// them equal to the device's monitored set (5.2), in the form the OwnTracks iOS app reads.
/// Pure: sets in, JSON out.
///
/// The app reads a waypoint's region from its `desc` alone, split on `:` as
/// `name:UUID[:major[:minor]]`, and uses `name` as the iOS region identifier (docs/owntracks-app.md
/// says where its source decides this). So each region gets a name of its own (``WaypointNames``),
/// a `rid` the app deletes it by, and a `tst` fixed by the region.
package enum Waypoints {
    /// The latitude OwnTracks reads as "not a coordinate": the app removes the waypoint with the
    /// same `rid` and adds nothing.
    package static let deleteLatitude = -1_000_000

    /// The `setWaypoints` command taking a phone from `current` to `next` (in `next`'s order):
    /// deletions first, then additions, so the phone never holds more than the cap; `nil` when
    /// there is nothing to change. `legacy` are regions the phone holds as waypoints of the form
    /// before this one (`desc` `bw:<region>`, no `rid`): deleted by the `rid` the app derived for
    /// them (``legacyRID(of:)``).
    package static func command(
        from current: Set<Region>, to next: [Region], names: WaypointNames, legacy: [Region] = []
    ) -> String? {
        let wanted = Set(next)
        let deleted = current.subtracting(wanted).sorted()
        let added = next.filter { !current.contains($0) }
        guard !deleted.isEmpty || !added.isEmpty || !legacy.isEmpty else { return nil }
        let items =
            legacy.sorted().map(legacyDeletion) + deleted.map { waypoint($0, names: names, delete: true) }
            + added.map { waypoint($0, names: names, delete: false) }
        return setWaypoints(items)
    }

    /// `{"_type":"cmd","action":"setWaypoints","waypoints":{"_type":"waypoints","waypoints":[…]}}`.
    static func setWaypoints(_ items: [String]) -> String {
        var list = JSONObjectWriter()
        list.add("_type", "waypoints")
        list.add("waypoints", rawJSON: "[" + items.joined(separator: ",") + "]")
        var command = JSONObjectWriter()
        command.add("_type", "cmd")
        command.add("action", "setWaypoints")
        command.add("waypoints", rawJSON: list.text)
        return command.text
    }

    /// The command asking the phone for its waypoints (its answer is a `_type: waypoints`).
    package static let request = #"{"_type":"cmd","action":"waypoints"}"#

    /// One waypoint object: `desc` = `name:UUID[:major[:minor]]`, `rid`, a `tst` fixed by the
    /// region, and the coordinate 0, 0 (or the delete latitude) with `rad` 0.
    static func waypoint(_ region: Region, names: WaypointNames, delete: Bool) -> String {
        var object = JSONObjectWriter()
        object.add("_type", "waypoint")
        object.add("desc", desc(region, name: names.name(of: region)))
        object.add("rid", names.rid(of: region))
        object.add("tst", Int(tst(of: region)))
        object.add("lat", delete ? deleteLatitude : 0)
        object.add("lon", 0)
        object.add("rad", 0)
        return object.text
    }

    /// `name:UUID`, `name:UUID:major` or `name:UUID:major:minor`, as the app splits it.
    package static func desc(_ region: Region, name: String) -> String {
        switch region {
        case .area(let uuid): "\(name):\(uuid.uuidString)"
        case .zone(let uuid, let major): "\(name):\(uuid.uuidString):\(major)"
        case .beacon(let beacon): "\(name):\(beacon.uuid.uuidString):\(beacon.major):\(beacon.minor)"
        }
    }

    /// The deletion of a waypoint of the earlier form, by the `rid` the app gave it.
    static func legacyDeletion(_ region: Region) -> String {
        var object = JSONObjectWriter()
        object.add("_type", "waypoint")
        object.add("desc", legacyName)
        object.add("rid", legacyRID(of: region))
        object.add("tst", Int(tst(of: region)))
        object.add("lat", deleteLatitude)
        object.add("lon", 0)
        object.add("rad", 0)
        return object.text
    }

    /// The waypoint's `tst`: a second from 2001-09-09 on, fixed by the region (FNV-1a-64 of
    /// `bw:<region>`), the same in every version, so that it names the same waypoint on the phone
    /// across restarts and upgrades.
    package static func tst(of region: Region) -> Int64 {
        1_000_000_000 + Int64(FNV1a64.hash("bw:\(region)") % 1_000_000_000)
    }

    /// The name the app read from the earlier form's `desc` (`bw:<region>` split on `:`).
    package static let legacyName = "bw"

    /// The `rid` the app derived for a waypoint sent without one (`Region ridFromTst:andName:` in
    /// its source): the first 6 hex digits of SHA-1 of `<name>-<tst>`.
    package static func legacyRID(of region: Region) -> String {
        derivedRID(name: legacyName, tst: tst(of: region))
    }

    /// The app's `rid` for a waypoint without one: SHA-1 of `<name>-<tst>` (tst in whole seconds),
    /// its first 6 hex digits.
    package static func derivedRID(name: String, tst: Int64) -> String {
        let digest = Insecure.SHA1.hash(data: Array("\(name)-\(tst)".utf8))
        return digest.prefix(3).map { String(format: "%02x", $0) }.joined()
    }
}

/// The name and `rid` of every region of a hierarchy as a waypoint (docs/behaviour.md §15.1): unique, stable
/// across restarts, letters and digits only (the app splits `desc` on `:`, cuts a transition's
/// `desc` at `|`, and gives a leading `-` or `+` meanings of its own).
///
/// The `rid` is `bw` and 12 hex digits of FNV-1a-64 of the canonical region: it depends on the
/// region alone. The name is `bw` and the Location ID for a Beacon whose Location ID is 1 to 32
/// letters and digits, else the `rid` (Areas, Zones, and Beacons with other IDs).
package struct WaypointNames: Sendable {
    private var names: [Region: String] = [:]
    private var byName: [String: Region] = [:]
    private var byRID: [String: Region] = [:]

    package init(_ hierarchy: Hierarchy) {
        var regions: [Region] = hierarchy.areas.map(\.region) + hierarchy.zones.map(\.region)
        regions += hierarchy.beacons.map { .beacon($0.id) }
        for region in regions {
            byRID[Self.rid(of: region)] = region
        }
        for region in regions {
            var name = Self.rid(of: region)
            if case .beacon(let id) = region, let index = hierarchy.index(of: id) {
                let location = hierarchy.beacons[index].locationID
                let candidate = "bw" + location
                // A Location ID shaped like another region's rid keeps the rid: names stay unique.
                if Self.isPlain(location), byRID[candidate] == nil, byName[candidate] == nil { name = candidate }
            }
            names[region] = name
            byName[name] = region
        }
    }

    /// Whether `text` is 1 to 32 ASCII letters and digits.
    package static func isPlain(_ text: String) -> Bool {
        (1...32).contains(text.utf8.count)
            && text.utf8.allSatisfy { (48...57).contains($0) || (65...90).contains($0) || (97...122).contains($0) }
    }

    /// `bw` and 12 hex digits of FNV-1a-64 of the canonical region.
    package static func rid(of region: Region) -> String {
        let hash = FNV1a64.hash("bw:\(region)") & 0xffff_ffff_ffff
        let hex = String(hash, radix: 16)
        return "bw" + String(repeating: "0", count: 12 - hex.count) + hex
    }

    package func rid(of region: Region) -> String { Self.rid(of: region) }

    /// The region's name on the phone (its iOS region identifier).
    package func name(of region: Region) -> String { names[region] ?? Self.rid(of: region) }

    /// The region a transition names: by its `rid`, else by its `desc` (the name; the app cuts
    /// it at `|`); `nil` for a region that is not one of this hierarchy's (the user's own).
    package func region(rid: String?, desc: String?) -> Region? {
        if let rid, let region = byRID[rid] { return region }
        guard let desc else { return nil }
        let name = desc.split(separator: "|", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init)
        return name.flatMap { byName[$0] }
    }

    /// Whether `rid` is one beaconwatch gives a region of this hierarchy.
    package func isOurs(rid: String) -> Bool { byRID[rid] != nil }
}
