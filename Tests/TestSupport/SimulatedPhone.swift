import BeaconCore
import Crypto
import Foundation
import RegionMonitor

/// An iPhone running the OwnTracks app, as it behaves on the wire: a test double written from the
/// app's source, not from our contract (docs/owntracks-app.md says where each behaviour is decided).
///
/// - Commands (`<base>/cmd`) are taken only with remote commands on; `setWaypoints` only with
///   remote configuration on (`OwnTracksAppDelegate handleMessage`). `waypoints` is answered on
///   `<base>/waypoints` either way.
/// - `setWaypoints` (`Settings setWaypoints:inMOC:`): each waypoint's region comes from its `desc`
///   alone, split on `:` as `name:UUID:major:minor` (a missing or non-numeric major or minor is
///   0); its `rid` is the JSON `rid`, else the first 6 hex digits of SHA-1 of `<name>-<tst>`; the
///   region the app holds under that `rid` is removed, and one is added unless the coordinate is
///   invalid.
/// - iOS monitors a region per identifier, the waypoint's `name` (`Region CLregion`): a circle when
///   `rad` > 0, else a beacon region of the UUID (and major, minor when not 0); a second region of
///   the same name replaces the first. Asked for more than ``iOSLimit`` regions, iOS refuses the
///   rest (the phone records that it was asked).
/// - A region added while the phone is inside it is settled silently, with no `enter`
///   (`LocationManager didDetermineState`); crossing a region's edge sends a `transition` on
///   `<base>/event` with `desc` the name, `rid`, `wtst`, `tst` of the last fix and `created_at`
///   when that fix is more than a second old (`regionEvent:enter:`), for every region the app holds
///   under that identifier.
/// - With ranging on, the beacons of the beacon regions it is inside are ranged; a `beacon`
///   message (`tst` the last fix, no `created_at`) goes when a beacon is first ranged, and again
///   only when its accuracy changes by more than a fifth (`didRangeBeacons`); the list of ranged
///   beacons is never emptied.
package struct SimulatedPhone: Sendable {
    /// iOS's cap on the regions one app monitors.
    package static let iOSLimit = 20

    /// A message the phone publishes.
    package struct Published: Sendable, Hashable {
        package var topic: String
        package var payload: String
    }

    /// A region the app holds (its Core Data `Region`).
    package struct AppRegion: Sendable, Hashable {
        package var rid: String
        package var name: String
        package var tst: Double
        package var uuid: UUID?
        package var major: UInt32
        package var minor: UInt32
        package var rad: Double
        package var lat: Double
        package var lon: Double

        /// What iOS monitors for it, `nil` for nothing (`Region CLregion`).
        var monitored: Monitored? {
            guard !name.isEmpty else { return nil }
            if rad > 0 { return .circle }
            guard let uuid else { return nil }
            return .beacon(
                uuid, major: major > 0 ? UInt16(truncatingIfNeeded: major) : nil,
                minor: major > 0 && minor > 0 ? UInt16(truncatingIfNeeded: minor) : nil)
        }
    }

    /// A region as iOS monitors it.
    package enum Monitored: Sendable, Hashable {
        case circle
        case beacon(UUID, major: UInt16?, minor: UInt16?)

        func matches(_ beacon: BeaconID) -> Bool {
            guard case .beacon(let uuid, let major, let minor) = self else { return false }
            return beacon.uuid == uuid && (major.map { $0 == beacon.major } ?? true)
                && (minor.map { $0 == beacon.minor } ?? true)
        }

        /// The beaconwatch region it stands for.
        package var region: Region? {
            guard case .beacon(let uuid, let major, let minor) = self else { return nil }
            guard let major else { return .area(uuid) }
            guard let minor else { return .zone(uuid, major: major) }
            return .beacon(BeaconID(uuid: uuid, major: major, minor: minor))
        }
    }

    /// `owntracks/<user>/<device>`.
    package let base: String
    package var ranging: Bool
    package var remoteCommands: Bool
    package var remoteConfiguration: Bool
    /// The app's regions, in the order it added them.
    package private(set) var regions: [AppRegion] = []
    /// What iOS monitors, by identifier.
    package private(set) var iOS: [String: Monitored] = [:]
    /// The most regions iOS was asked to monitor at once.
    package private(set) var most = 0
    /// How many `waypoints` requests it answered.
    package private(set) var waypointsAnswers = 0
    /// The identifiers iOS says it is inside.
    package private(set) var inside: Set<String> = []
    /// The beacons around the phone, with their accuracy (metres).
    package private(set) var around: [BeaconID: Double] = [:]
    /// Every beacon ranged so far, with the accuracy last sent.
    private var ranged: [BeaconID: Double] = [:]
    /// The time of the phone's last location fix (seconds since the epoch).
    package var lastFix: Double

    package init(
        base: String = "owntracks/alice/phone", lastFix: Double, ranging: Bool = true, remoteCommands: Bool = true,
        remoteConfiguration: Bool = true, geofences: [String] = []
    ) {
        self.base = base
        self.lastFix = lastFix
        self.ranging = ranging
        self.remoteCommands = remoteCommands
        self.remoteConfiguration = remoteConfiguration
        for (n, name) in geofences.enumerated() {
            let tst = 1_600_000_000 + Double(n)
            add(
                AppRegion(
                    rid: Self.derivedRID(name: name, tst: tst), name: name, tst: tst, uuid: nil, major: 0, minor: 0,
                    rad: 100, lat: 45.4 + Double(n) / 100, lon: 9.1),
                now: lastFix)
        }
    }

    /// The beaconwatch regions iOS monitors.
    package var beaconRegions: Set<Region> { Set(iOS.values.compactMap(\.region)) }

    /// The first 6 hex digits of SHA-1 of `<name>-<tst>` (`Region ridFromTst:andName:`).
    package static func derivedRID(name: String, tst: Double) -> String {
        let digest = Insecure.SHA1.hash(data: Array((name + "-" + String(format: "%.0f", tst)).utf8))
        return digest.prefix(3).map { String(format: "%02x", $0) }.joined()
    }

    // MARK: - Commands

    /// A message on `topic` reaches the phone at `now`; returns what it publishes.
    package mutating func receive(topic: String, payload: String, now: Double) -> [Published] {
        guard topic == base + "/cmd", remoteCommands,
            let object = (try? JSONSerialization.jsonObject(with: Data(payload.utf8))) as? [String: Any],
            object["_type"] as? String == "cmd", let action = object["action"] as? String
        else { return [] }
        switch action {
        case "waypoints":
            waypointsAnswers += 1
            let list = regions.map(Self.json)
            let answer: [String: Any] = ["_type": "waypoints", "waypoints": list]
            return [Published(topic: base + "/waypoints", payload: Self.text(answer))]
        case "setWaypoints":
            guard remoteConfiguration,
                let container = object["waypoints"] as? [String: Any], container["_type"] as? String == "waypoints",
                let list = container["waypoints"] as? [Any]
            else { return [] }
            var published: [Published] = []
            for item in list {
                published += setWaypoint(item, now: now)
            }
            return published
        default:
            return []
        }
    }

    /// One waypoint of a `setWaypoints`.
    mutating func setWaypoint(_ item: Any, now: Double) -> [Published] {
        guard let waypoint = item as? [String: Any], waypoint["_type"] as? String == "waypoint",
            let desc = waypoint["desc"] as? String, let tst = (waypoint["tst"] as? NSNumber)?.doubleValue
        else { return [] }
        let parts = desc.components(separatedBy: ":")
        let name = parts[0]
        let uuid = parts.count >= 2 ? UUID(uuidString: parts[1]) : nil
        let major = parts.count >= 3 ? UInt32(parts[2]) ?? 0 : 0
        let minor = parts.count >= 4 ? UInt32(parts[3]) ?? 0 : 0
        let rid = waypoint["rid"] as? String ?? Self.derivedRID(name: name, tst: tst)
        if let index = regions.firstIndex(where: { $0.rid == rid }) { remove(at: index) }
        let lat = (waypoint["lat"] as? NSNumber)?.doubleValue ?? 0
        let lon = (waypoint["lon"] as? NSNumber)?.doubleValue ?? 0
        guard (-90...90).contains(lat), (-180...180).contains(lon) else { return [] }
        let rad = (waypoint["rad"] as? NSNumber)?.doubleValue ?? 0
        return add(
            AppRegion(
                rid: rid, name: name, tst: tst, uuid: uuid, major: major, minor: minor, rad: rad, lat: lat,
                lon: lon), now: now)
    }

    /// The app adds a region and iOS starts monitoring it: settled silently when inside.
    @discardableResult
    mutating func add(_ region: AppRegion, now: Double) -> [Published] {
        regions.append(region)
        guard let monitored = region.monitored else { return [] }
        iOS[region.name] = monitored
        most = max(most, iOS.count)
        inside.remove(region.name)
        if around.keys.contains(where: monitored.matches) { inside.insert(region.name) }
        return range(now: now)
    }

    /// The app removes a region; iOS stops monitoring its identifier.
    mutating func remove(at index: Int) {
        let region = regions.remove(at: index)
        guard region.monitored != nil else { return }
        iOS[region.name] = nil
        inside.remove(region.name)
    }

    // MARK: - Moving

    /// The phone is now among `beacons` (with their accuracy in metres) at `now`: it reports the
    /// edges it crossed, enters before leaves (iOS reports an exit only after some seconds without
    /// the beacons, an entry at once), then what its ranging sees.
    package mutating func move(to beacons: [BeaconID: Double], now: Double) -> [Published] {
        around = beacons
        var published: [Published] = []
        var nowInside: Set<String> = []
        for (name, monitored) in iOS where beacons.keys.contains(where: monitored.matches) { nowInside.insert(name) }
        for name in nowInside.subtracting(inside).sorted() { published += transition(name, entered: true, now: now) }
        for name in inside.subtracting(nowInside).sorted() { published += transition(name, entered: false, now: now) }
        inside = nowInside
        return published + range(now: now)
    }

    /// What `regionEvent:enter:` publishes for identifier `name`.
    func transition(_ name: String, entered: Bool, now: Double) -> [Published] {
        regions.filter { $0.name == name }.map { region in
            var json: [String: Any] = [
                "_type": "transition", "tid": "ph", "lat": 45.46, "lon": 9.19, "tst": Int(lastFix), "acc": 10,
                "event": entered ? "enter" : "leave", "t": region.rad > 0 ? "c" : "b",
                "desc": name.components(separatedBy: "|")[0], "wtst": Int(region.tst), "rid": region.rid,
            ]
            if abs(lastFix - now) > 1 { json["created_at"] = Int(now) }
            return Published(topic: base + "/event", payload: Self.text(json))
        }
    }

    /// Ranging of the beacon regions it is inside (with ranging on).
    mutating func range(now: Double) -> [Published] {
        guard ranging else { return [] }
        var published: [Published] = []
        for (beacon, accuracy) in around.sorted(by: { $0.key.description < $1.key.description }) {
            guard let name = inside.sorted().first(where: { iOS[$0]?.matches(beacon) == true }) else { continue }
            if let sent = ranged[beacon], abs(sent / accuracy - 1) <= 0.2 { continue }
            ranged[beacon] = accuracy
            let prox = accuracy < 0.5 ? 1 : accuracy < 4 ? 2 : 3
            let rssi = Int((-59 - 20 * log10(max(accuracy, 0.1))).rounded())
            let json: [String: Any] = [
                "_type": "beacon", "tid": "ph", "tst": Int(lastFix), "uuid": beacon.uuid.uuidString,
                "major": Int(beacon.major), "minor": Int(beacon.minor), "prox": prox, "acc": Int(accuracy.rounded()),
                "rssi": rssi, "desc": name,
            ]
            published.append(Published(topic: base + "/beacon", payload: Self.text(json)))
        }
        return published
    }

    /// A location message with the last fix (`created_at` when it is old).
    package func location(now: Double) -> Published {
        var json: [String: Any] = ["_type": "location", "lat": 45.46, "lon": 9.19, "acc": 10, "tst": Int(lastFix)]
        if abs(lastFix - now) > 1 { json["created_at"] = Int(now) }
        return Published(topic: base, payload: Self.text(json))
    }

    /// `regionAsJSON`.
    static func json(_ region: AppRegion) -> [String: Any] {
        var desc = region.name
        if let uuid = region.uuid { desc += ":\(uuid.uuidString)" }
        if region.major > 0 { desc += ":\(region.major)" }
        if region.minor > 0 { desc += ":\(region.minor)" }
        return [
            "_type": "waypoint", "lat": region.lat, "lon": region.lon, "rad": region.rad, "tst": Int(region.tst),
            "rid": region.rid, "desc": desc,
        ]
    }

    static func text(_ object: [String: Any]) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}
