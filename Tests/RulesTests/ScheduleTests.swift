import BeaconCore
import Foundation
import JSONText
import Rules
import TestSupport
import Testing

/// docs/behaviour.md §8, on the conformance vectors and beyond.
@Suite struct ScheduleTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var timezone: JSONValue
        var schedule: JSONValue
        var at: String
        var open: Bool
        var testDescription: String { name }
    }

    static func cases() throws -> [Case] {
        let data = try Data(contentsOf: Conformance.url("schedule.json"))
        guard case .array(let cases)? = JSONValue.parse(data)?["cases"] else { return [] }
        return cases.map { item in
            guard case .string(let name)? = item["name"], case .string(let at)? = item["at"],
                case .bool(let open)? = item["open"]
            else { return Case(name: "unreadable case", timezone: .null, schedule: .null, at: "", open: false) }
            return Case(
                name: name, timezone: item["timezone"] ?? .null, schedule: item["schedule"] ?? .null, at: at, open: open
            )
        }
    }

    @Test func theConformanceFileHasItsCases() throws {
        #expect(try Self.cases().count >= 30)
    }

    @Test(arguments: try ScheduleTests.cases())
    func conformance(_ item: Case) throws {
        var warnings: [String] = []
        let schedule = try Schedule(ubudu: item.schedule, warn: { warnings.append($0) })
        let zone = try #require(RegionTimeZone.resolve(item.timezone))
        let time = try #require(Timestamp(iso8601: item.at))
        #expect(schedule.isOpen(at: time, in: zone) == item.open)
        if item.name.contains("thi") { #expect(warnings == ["schedule.week.thi is read as thu (Thursday)"]) }
    }

    static let paris = TimeZone(identifier: "Europe/Paris")!

    func at(_ text: String) -> Timestamp { Timestamp(iso8601: text)! }

    @Test func theNextChangeCrossesDaysBreaksAndTheClockGoingBack() throws {
        // Weekdays 09:00–15:00 elapsed, a break 13:00–14:00 on Mondays, closed at weekends.
        var week: [Weekday: Hours] = [:]
        for day in [Weekday.mon, .tue, .wed, .thu, .fri] { week[day] = Hours(open: 32400, close: 54000) }
        let schedule = Schedule(week: week, breaks: [.mon: Hours(open: 46800, close: 50400)])
        // Sunday 2013-10-27 (25 hours): closed until Monday 09:00.
        #expect(
            schedule.nextChange(after: at("2013-10-27T07:59:59+01:00"), in: Self.paris)
                == at("2013-10-28T09:00:00+01:00"))
        #expect(
            schedule.nextChange(after: at("2013-10-28T09:00:00+01:00"), in: Self.paris)
                == at("2013-10-28T13:00:00+01:00"))
        #expect(
            schedule.nextChange(after: at("2013-10-28T13:30:00+01:00"), in: Self.paris)
                == at("2013-10-28T14:00:00+01:00"))
        #expect(
            schedule.nextChange(after: at("2013-10-28T14:00:00+01:00"), in: Self.paris)
                == at("2013-10-28T15:00:00+01:00"))
        #expect(Schedule().nextChange(after: at("2013-10-28T14:00:00+01:00"), in: Self.paris) == nil)
        let shut = Schedule(week: [.mon: Hours(open: 0, close: 0)])
        #expect(!shut.isOpen(at: at("2013-10-28T12:00:00+01:00"), in: Self.paris))
        #expect(shut.nextChange(after: at("2013-10-28T12:00:00+01:00"), in: Self.paris, horizon: 30) == nil)
    }

    @Test func hoursPastMidnightEndOnTheNextDayAndTheNextChangeFindsThem() throws {
        let schedule = Schedule(week: [.fri: Hours(open: 72000, close: 93600)])  // Fri 20:00 to Sat 02:00
        #expect(schedule.isOpen(at: at("2013-12-07T01:59:59+01:00"), in: Self.paris))
        #expect(
            schedule.nextChange(after: at("2013-12-07T01:00:00+01:00"), in: Self.paris)
                == at("2013-12-07T02:00:00+01:00"))
    }

    @Test(arguments: [
        ("Z", 0), ("+02:00", 7200), ("-1000", -36000), ("+03", 10800), ("-03:30", -12600),
    ])
    func isoDesignators(_ text: String, seconds: Int) {
        #expect(RegionTimeZone.zone(named: text)?.secondsFromGMT() == seconds)
    }

    @Test(arguments: ["", "Mars/Olympus", "+25", "+0260", "0200", "+02:0", "++02", "+٠٢"])
    func badZoneNamesAreRefused(_ text: String) {
        #expect(RegionTimeZone.zone(named: text) == nil)
    }

    @Test func theOffsetIsTheFallback() throws {
        let zone = RegionTimeZone.resolve(JSONValue.parse(Array(#"{"zone": "Nowhere/Else", "offset": "-3600"}"#.utf8)))
        #expect(zone?.secondsFromGMT() == -3600)
        #expect(RegionTimeZone.resolve(JSONValue.parse(Array(#"{"zone": null}"#.utf8))) == nil)
    }

    @Test(arguments: [
        (#"[1]"#, "must be an object"),
        (#"{"week": []}"#, "schedule.week must be an object"),
        (#"{"week": {"funday": {"open": 1, "close": 2}}}"#, "\"funday\" is not a weekday"),
        (#"{"week": {"mon": {"open": 1, "close": 172801}}}"#, "0 to 172800"),
        (#"{"week": {"mon": {"open": "nine", "close": 2}}}"#, "0 to 172800"),
        (#"{"week": {"mon": {"open": -1, "close": 2}}}"#, "0 to 172800"),
        (#"{"week": {"mon": 5}}"#, "must be {\"open\""),
        (#"{"specific_days": {"2013-13-01": {"open": 0, "close": 0}}}"#, "not a date"),
        (#"{"specific_days": [1]}"#, "specific_days must be an object"),
    ])
    func garbageIsRejectedWithWhere(_ json: String, reason: String) {
        #expect {
            try Schedule(ubudu: JSONValue.parse(Array(json.utf8)))
        } throws: { error in
            "\(error)".contains(reason)
        }
    }

    @Test func untidyButValidSchedulesLoad() throws {
        let json =
            #"{"week": {"mon": {"open": "32400", "close": "54000"}, "tue": {"open": "", "close": null}}, "breaks": null, "specific_days": null}"#
        let schedule = try Schedule(ubudu: JSONValue.parse(Array(json.utf8)))
        #expect(schedule.week?[.mon] == Hours(open: 32400, close: 54000))
        #expect(schedule.week?[.tue] == Hours(open: 0, close: 0))
        #expect(schedule.breaks.isEmpty && schedule.specificDays.isEmpty)
        #expect(try Schedule(ubudu: .string("")).isEmpty)
        #expect(try Schedule(ubudu: nil).isEmpty)
    }
}
