import BeaconCore
import Foundation
import RegionMonitor
import Testing

/// docs/behaviour.md §9.3: time inside each Area and Zone per local day.
@Suite struct DwellTests {
    static let paris = TimeZone(identifier: "Europe/Paris")!
    static let zone = Region.zone(UUID(uuidString: "ACFD165E-C0C0-11E3-9BBE-1A514932AC01")!, major: 1)

    static func at(_ text: String) -> Timestamp { Timestamp(iso8601: text)! }

    @Test func aVisitAcrossLocalMidnightIsSplitBetweenTheDays() {
        var ledger = DwellLedger(timeZone: Self.paris)
        // 23:50 to 00:10 Paris time (UTC+1 in November).
        let today = ledger.exit(Self.zone, at: Self.at("2013-11-04T23:10:00Z"), after: 1200)
        #expect(today == 600)
        #expect(ledger.totals[DwellKey(region: Self.zone.description, date: "2013-11-04")] == 600)
        #expect(ledger.totals[DwellKey(region: Self.zone.description, date: "2013-11-05")] == 600)
        // A later visit the same day adds up.
        #expect(ledger.exit(Self.zone, at: Self.at("2013-11-05T08:00:30Z"), after: 30.5) == 630.5)
        #expect(ledger.today(Self.zone, at: Self.at("2013-11-05T12:00:00Z")) == 630.5)
        #expect(ledger.takeChanges().count == 2)
        #expect(ledger.takeChanges().isEmpty)
    }

    @Test func theDayTheClocksGoBackHas25Hours() {
        var ledger = DwellLedger(timeZone: Self.paris)
        // From Saturday 23:00 CEST (21:00Z) to Monday 00:30 CET (2013-10-27T23:30Z): 1 h, 25 h, 30 min.
        let today = ledger.exit(Self.zone, at: Self.at("2013-10-27T23:30:00Z"), after: 26.5 * 3600)
        #expect(today == 1800)
        #expect(ledger.totals[DwellKey(region: Self.zone.description, date: "2013-10-26")] == 3600.0)
        #expect(ledger.totals[DwellKey(region: Self.zone.description, date: "2013-10-27")] == 90_000.0)
    }

    @Test func keptTotalsCarryOn() {
        let key = DwellKey(region: Self.zone.description, date: "2013-11-05")
        var ledger = DwellLedger(timeZone: Self.paris, restored: [key: 100])
        #expect(ledger.exit(Self.zone, at: Self.at("2013-11-05T10:00:00Z"), after: 20) == 120)
        // The store adds what was added: a restart between the two days' parts counts each once.
        #expect(ledger.takeChanges() == [key: 20])
    }

    @Test func bDwellShowsKeptRegionsAtTheStartAndTheNewDayAfterLocalMidnight() {
        let other = Region.zone(Self.zone.uuid, major: 2)
        let key = DwellKey(region: Self.zone.description, date: "2013-11-05")
        var ledger = DwellLedger(timeZone: Self.paris, restored: [key: 100], regions: [other.description])
        // At the start: today's total, and 0 for a region kept from an earlier day only.
        let first = ledger.published(at: Self.at("2013-11-05T10:00:00Z"))
        #expect(first == [Self.zone.description: 100, other.description: 0])
        // The same day: nothing more to say (exits say their own).
        let later = ledger.published(at: Self.at("2013-11-05T22:59:59Z"))
        #expect(later.isEmpty)
        #expect(ledger.exit(other, at: Self.at("2013-11-05T22:00:00Z"), after: 60) == 60)
        // 00:00 Paris time: both regions had dwell on the 5th, so both show the 6th's 0.
        let midnight = ledger.published(at: Self.at("2013-11-05T23:00:00Z"))
        #expect(midnight == [Self.zone.description: 0, other.description: 0])
        // The 5th is forgotten (the store has it); the next midnight has nothing to zero.
        #expect(ledger.totals.isEmpty)
        #expect(ledger.exit(Self.zone, at: Self.at("2013-11-06T09:00:00Z"), after: 30) == 30)
        let nextMidnight = ledger.published(at: Self.at("2013-11-06T23:00:00Z"))
        #expect(nextMidnight == [Self.zone.description: 0])
        let quiet = ledger.published(at: Self.at("2013-11-07T23:00:00Z"))
        #expect(quiet.isEmpty)
    }

    @Test func aVisitEndingJustAfterMidnightShowsTheNewDaysPart() {
        var ledger = DwellLedger(timeZone: Self.paris)
        _ = ledger.published(at: Self.at("2013-11-05T20:00:00Z"))
        #expect(ledger.exit(Self.zone, at: Self.at("2013-11-05T22:30:00Z"), after: 60) == 60)
        // The exit at 00:00:10 comes before the step's midnight check: it shows 10 s, not 0.
        #expect(ledger.exit(Self.zone, at: Self.at("2013-11-05T23:00:10Z"), after: 20) == 10)
        let shown = ledger.published(at: Self.at("2013-11-05T23:00:10Z"))
        #expect(shown == [Self.zone.description: 10])
        #expect(
            ledger.takeChanges() == [
                key("2013-11-05"): 70, key("2013-11-06"): 10,
            ])
    }

    private func key(_ date: String) -> DwellKey { DwellKey(region: Self.zone.description, date: date) }
}
