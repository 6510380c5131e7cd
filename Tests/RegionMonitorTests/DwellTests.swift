import BeaconCore
import Foundation
import RegionMonitor
import Testing

/// SPEC 9.3: time inside each Area and Zone per local day.
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
        #expect(ledger.takeChanges() == [key: 120])
    }
}
