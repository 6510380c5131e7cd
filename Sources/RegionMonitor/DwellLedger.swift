import BeaconCore
import Foundation

/// A region's dwell on one local day: the canonical region and `YYYY-MM-DD`.
public struct DwellKey: Sendable, Hashable {
    public var region: String
    public var date: String

    public init(region: String, date: String) {
        self.region = region
        self.date = date
    }
}

/// Time inside every Area and Zone, summed per local day (SPEC 9.3): each visit, on its exit, is
/// split at local midnights and added to the days it spans. Pure; the time zone is given.
public struct DwellLedger: Sendable {
    public let timeZone: TimeZone
    /// Seconds inside, per region and day.
    public private(set) var totals: [DwellKey: Double]
    private var changed: Set<DwellKey> = []

    public init(timeZone: TimeZone, restored: [DwellKey: Double] = [:]) {
        self.timeZone = timeZone
        totals = restored
    }

    /// A visit of `seconds` to `region` ended at `time`: adds it, day by day; returns the seconds
    /// inside on `time`'s local day.
    public mutating func exit(_ region: Region, at time: Timestamp, after seconds: Double) -> Double {
        let name = region.description
        let end = time.microseconds
        var start = end - Int64((max(seconds, 0) * 1_000_000).rounded())
        var day = LocalDay(containing: Timestamp(microseconds: start), in: timeZone)
        while true {
            let dayEnd = day.midnight.microseconds + Int64(day.length) * 1_000_000
            let part = min(end, dayEnd) - start
            let key = DwellKey(region: name, date: day.date.description)
            if part > 0 || end <= dayEnd {
                totals[key, default: 0] += Double(part) / 1_000_000
                changed.insert(key)
            }
            guard end > dayEnd else { return totals[key] ?? 0 }
            start = dayEnd
            day = day.next
        }
    }

    /// Seconds inside `region` on the local day of `time`.
    public func today(_ region: Region, at time: Timestamp) -> Double {
        totals[DwellKey(region: region.description, date: LocalDay(containing: time, in: timeZone).date.description)]
            ?? 0
    }

    /// The totals changed since the last call: to keep with the step's outputs.
    public mutating func takeChanges() -> [DwellKey: Double] {
        guard !changed.isEmpty else { return [:] }
        defer { changed.removeAll() }
        return Dictionary(uniqueKeysWithValues: changed.map { ($0, totals[$0] ?? 0) })
    }
}
