import Foundation
import RegionMonitor

/// An OwnTracks iPhone as the daemon sees it on the wire (SPEC 15.1), without the phone: it
/// takes `setWaypoints` commands, refuses more than 20 regions (as iOS does), and reports `enter`
/// and `leave` of the regions it holds as it moves, entries at once and exits after (iOS delays
/// an exit, never an entry).
public struct SimulatedPhone: Sendable {
    /// iOS's cap on the regions one app monitors.
    public static let cap = 20

    /// What the phone was refused.
    public struct Refused: Error, CustomStringConvertible {
        public var description: String
    }

    /// The regions it monitors, by waypoint `tst`.
    public private(set) var regions: [Int64: Region] = [:]
    /// The most regions it held at once.
    public private(set) var most = 0
    /// Where it is: the regions around its position.
    public private(set) var place: Set<Region> = []
    /// The held regions it has said it is inside.
    public private(set) var inside: Set<Region> = []

    public init() {}

    /// Applies a `setWaypoints` command; returns the transitions it then reports.
    public mutating func apply(_ command: String) throws -> [(Region, entered: Bool)] {
        guard let object = try JSONSerialization.jsonObject(with: Data(command.utf8)) as? [String: Any],
            object["action"] as? String == "setWaypoints",
            let list = (object["waypoints"] as? [String: Any])?["waypoints"] as? [[String: Any]]
        else { throw Refused(description: "not a setWaypoints command: \(command)") }
        for item in list {
            guard let tst = (item["tst"] as? NSNumber)?.int64Value, let desc = item["desc"] as? String,
                desc.hasPrefix("bw:"), let region = Region(desc.dropFirst(3))
            else { throw Refused(description: "a waypoint without tst or a bw: desc: \(item)") }
            if (item["lat"] as? NSNumber)?.intValue == -1_000_000 {
                if regions.removeValue(forKey: tst) != nil { inside.remove(region) }
            } else {
                regions[tst] = region
            }
        }
        most = max(most, regions.count)
        guard regions.count <= Self.cap else {
            throw Refused(description: "asked to monitor \(regions.count) regions, more than iOS allows")
        }
        return report()
    }

    /// Moves to `place`; returns the transitions it reports.
    public mutating func move(to place: Set<Region>) -> [(Region, entered: Bool)] {
        self.place = place
        return report()
    }

    /// Enters first (outside-in), then leaves (inside-out).
    mutating func report() -> [(Region, entered: Bool)] {
        let nowInside = Set(regions.values).intersection(place)
        let left = inside.subtracting(nowInside).sorted(by: >).map { ($0, entered: false) }
        let entered = nowInside.subtracting(inside).sorted().map { ($0, entered: true) }
        inside = nowInside
        return entered + left
    }

    /// A transition as OwnTracks publishes it on `…/event`.
    public static func transition(_ region: Region, entered: Bool, tst: Int) -> String {
        #"{"_type":"transition","event":"\#(entered ? "enter" : "leave")","t":"b","desc":"bw:\#(region)","tst":\#(tst),"acc":5}"#
    }
}
