import BeaconCore
import Foundation

/// A region's dwell on one local day: the canonical region and `YYYY-MM-DD`.
package struct DwellKey: Sendable, Hashable {
    package var region: String
    package var date: String

    package init(region: String, date: String) {
        self.region = region
        self.date = date
    }
}

/// Time inside every Area and Zone, summed per local day (docs/behaviour.md §9.3): each visit, on its exit, is
/// split at local midnights and added to the days it spans. Pure; the time zone is given.
///
/// It also says what `B/dwell/<region>` ("seconds inside today") should show: at the first
/// ``published(at:)`` every kept region's total for that day (0 for one kept from earlier days
/// only), and after each local midnight the new day's totals of the regions that had dwell on the
/// day before, which is 0 unless a visit has ended since. Totals of days before the day shown are
/// forgotten then: the store keeps the history, and a visit's earlier days reach it as additions
/// (``takeChanges()``), so memory holds about one day.
package struct DwellLedger: Sendable {
    package let timeZone: TimeZone
    /// Seconds inside, per region and day, from the day shown on (and what was restored).
    package private(set) var totals: [DwellKey: Double]
    /// Seconds added since the last ``takeChanges()``.
    private var added: [DwellKey: Double] = [:]
    /// Regions kept from earlier runs, shown (as their day's totals) at the first ``published(at:)``.
    private var keptRegions: Set<String>
    /// The local day `B/dwell` shows, once shown.
    private var shown: LocalDay?
    /// The end of ``shown`` in microseconds: passing it changes the day shown.
    private var shownEnd = Int64.min

    /// A ledger in `timeZone` that goes on from `restored` totals; `regions` are the regions with
    /// any kept dwell, whose `B/dwell` is set at the first ``published(at:)``.
    package init(timeZone: TimeZone, restored: [DwellKey: Double] = [:], regions: Set<String> = []) {
        self.timeZone = timeZone
        totals = restored
        keptRegions = regions.union(restored.keys.map(\.region))
    }

    /// A visit of `seconds` to `region` ended at `time`: adds it, day by day; returns the seconds
    /// inside on `time`'s local day.
    package mutating func exit(_ region: Region, at time: Timestamp, after seconds: Double) -> Double {
        exit(named: region.description, at: time, after: seconds)
    }

    /// ``exit(_:at:after:)`` for the dwell key `name` (a canonical region, or a geofence's
    /// ``Geofence/dwellKey``).
    package mutating func exit(named name: String, at time: Timestamp, after seconds: Double) -> Double {
        let end = time.microseconds
        var start = end - Int64((max(seconds, 0) * 1_000_000).rounded())
        var day = LocalDay(containing: Timestamp(microseconds: start), in: timeZone)
        while true {
            let dayEnd = day.midnight.microseconds + Int64(day.length) * 1_000_000
            let part = min(end, dayEnd) - start
            let key = DwellKey(region: name, date: day.date.description)
            if part > 0 || end <= dayEnd {
                let partSeconds = Double(part) / 1_000_000
                totals[key, default: 0] += partSeconds
                added[key, default: 0] += partSeconds
            }
            guard end > dayEnd else { return totals[key] ?? 0 }
            start = dayEnd
            day = day.next
        }
    }

    /// Seconds inside `region` on the local day of `time`.
    package func today(_ region: Region, at time: Timestamp) -> Double {
        today(region.description, on: LocalDay(containing: time, in: timeZone).date)
    }

    private func today(_ region: String, on date: LocalDate) -> Double {
        totals[DwellKey(region: region, date: date.description)] ?? 0
    }

    /// Whether ``takeChanges()`` has anything.
    package var hasChanges: Bool { !added.isEmpty }

    /// The seconds added since the last call, per region and day: to add to the kept totals with
    /// the step's outputs.
    package mutating func takeChanges() -> [DwellKey: Double] {
        guard !added.isEmpty else { return [:] }
        defer { added.removeAll() }
        return added
    }

    /// The next local midnight after the day shown, when ``published(at:)`` has something new to
    /// say; `nil` before the first call.
    package var nextMidnight: Timestamp? { shown == nil ? nil : Timestamp(microseconds: shownEnd) }

    /// What `B/dwell/<region>` should now show beyond what exits set, by canonical region: every
    /// kept region's total at the first call; after a local midnight, the new day's totals of the
    /// regions that had dwell on the day before; otherwise nothing. Cheap when the day is the same.
    package mutating func published(at time: Timestamp) -> [String: Double] {
        guard time.microseconds >= shownEnd else { return [:] }
        let day = LocalDay(containing: time, in: timeZone)
        let regions: Set<String>
        if let previous = shown {
            let date = previous.date.description
            regions = Set(totals.lazy.filter { $0.key.date == date && $0.value > 0 }.map(\.key.region))
        } else {
            regions = keptRegions.union(totals.keys.map(\.region))
            keptRegions = []
        }
        shown = day
        shownEnd = day.midnight.microseconds + Int64(day.length) * 1_000_000
        let date = day.date.description
        totals = totals.filter { $0.key.date >= date }
        return Dictionary(uniqueKeysWithValues: regions.map { ($0, today($0, on: day.date)) })
    }
}
