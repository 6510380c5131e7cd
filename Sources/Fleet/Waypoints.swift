import BeaconCore
import RegionMonitor

/// The regions an OwnTracks phone monitors, as its waypoints (SPEC 15.1): the commands that keep
/// them equal to the device's monitored set (5.2). Pure: sets in, JSON out.
///
/// Each region is a beacon waypoint (`rad` 0) with `desc` = `bw:` + its canonical form and a `tst`
/// fixed by the region (OwnTracks knows a waypoint by its `tst`), so the same region is always
/// the same waypoint and can be deleted (`lat` = -1000000) by a later command.
public enum Waypoints {
    /// The latitude OwnTracks reads as "delete this waypoint".
    public static let deleteLatitude = -1_000_000

    /// The `setWaypoints` command taking a phone from `current` to `next` (in `next`'s order):
    /// deletes first, then additions; `nil` when there is nothing to change.
    public static func command(from current: Set<Region>, to next: [Region]) -> String? {
        let wanted = Set(next)
        let deleted = current.subtracting(wanted).sorted()
        let added = next.filter { !current.contains($0) }
        guard !deleted.isEmpty || !added.isEmpty else { return nil }
        let items = deleted.map { waypoint($0, delete: true) } + added.map { waypoint($0, delete: false) }
        var list = JSONObjectWriter()
        list.add("_type", "waypoints")
        list.add("waypoints", rawJSON: "[" + items.joined(separator: ",") + "]")
        var command = JSONObjectWriter()
        command.add("_type", "cmd")
        command.add("action", "setWaypoints")
        command.add("waypoints", rawJSON: list.text)
        return command.text
    }

    /// One waypoint object.
    static func waypoint(_ region: Region, delete: Bool) -> String {
        var object = JSONObjectWriter()
        object.add("_type", "waypoint")
        object.add("desc", "bw:\(region)")
        object.add("lat", delete ? deleteLatitude : 0)
        object.add("lon", 0)
        object.add("rad", 0)
        object.add("tst", Int(tst(of: region)))
        object.add("uuid", region.uuid.text)
        switch region {
        case .area: break
        case .zone(_, let major): object.add("major", Int(major))
        case .beacon(let beacon):
            object.add("major", Int(beacon.major))
            object.add("minor", Int(beacon.minor))
        }
        return object.text
    }

    /// The waypoint's `tst`: a second from 2001-09-09 on, fixed by the region (FNV-1a-64 of its
    /// `desc`), so that it names the same waypoint on the phone across restarts.
    public static func tst(of region: Region) -> Int64 {
        1_000_000_000 + Int64(FNV1a64.hash("bw:\(region)") % 1_000_000_000)
    }
}
