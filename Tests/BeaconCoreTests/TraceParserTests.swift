import BeaconCore
import Foundation
import Testing
import TestSupport

@Suite struct TraceParserTests {
    let office = "ACFD165E-C0C0-11E3-9BBE-1A514932AC01"

    func parse(_ lines: [String]) -> [Result<(Timestamp, TraceRecord)?, TraceLineError>] {
        var parser = TraceParser()
        return lines.enumerated().map { parser.parse(Array($1.utf8), number: $0 + 1) }
    }

    func record(_ line: String) throws -> (Timestamp, TraceRecord) {
        try #require(try parse([line])[0].get())
    }

    @Test func sightingLineWithAllFields() throws {
        let (time, record) = try record(
            #"{"t": 1700000000.5, "uuid": "acfd165e-c0c0-11e3-9bbe-1a514932ac01", "major": 1, "minor": 17081, "rssi": -62, "power": -61, "address": "0a:0b:0c:0d:0e:0f", "extra": [1]}"#
        )
        #expect(time == Timestamp(microseconds: 1_700_000_000_500_000))
        guard case .sighting(let ad) = record else { Issue.record("not a sighting: \(record)"); return }
        #expect(ad.beacon.description == "\(office):1:17081")
        #expect(ad.rssi == -62)
        #expect(ad.power == -61)
        #expect(ad.address?.description == "0A:0B:0C:0D:0E:0F")
        #expect(ad.format == .ibeacon)
    }

    @Test func powerDefaultsToMinus59() throws {
        let (_, record) = try record(#"{"t": 1700000000, "uuid": "\#(office)", "major": 1, "minor": 2, "rssi": -70}"#)
        guard case .sighting(let ad) = record else { Issue.record("not a sighting"); return }
        #expect(ad.power == -59)
        #expect(ad.address == nil)
    }

    @Test func isoTimesWithOffsetsAreTheSameInstant() throws {
        let a = try record(#"{"t": "2023-11-14T22:13:20.25Z", "mode": "foreground"}"#).0
        let b = try record(#"{"t": "2023-11-14T23:13:20.250+01:00", "mode": "background"}"#).0
        let c = try record(#"{"t": 1700000000.25, "mode": "background"}"#).0
        #expect(a == b)
        #expect(a == c)
        #expect(
            try record(#"{"t": "2023-11-14T22:13:20Z", "mode": "background"}"#).0.microseconds == 1_700_000_000_000_000)
    }

    @Test func hciModeAndCommandLines() throws {
        guard case .hci(let bytes) = try record(#"{"t": 1700000000, "hci": "3E020200"}"#).1 else {
            Issue.record("not hci"); return
        }
        #expect(bytes == [0x3E, 0x02, 0x02, 0x00])
        #expect(try record(#"{"t": 1700000000, "mode": "foreground"}"#).1 == .mode(.foreground))
        let command = try record(#"{"t": 1700000000, "command": "alert/done", "id": 17081, "force": true}"#).1
        #expect(command == .command(TraceCommand(name: "alert/done", arguments: ["id": "17081", "force": "true"])))
    }

    @Test func positionLinesAreFixes() throws {
        // docs/behaviour.md §3.3's example line.
        let (time, record) = try record(#"{"t": 1700000009.0, "lat": 45.4642, "lng": 9.1900, "acc": 12}"#)
        #expect(time == Timestamp(secondsSinceEpoch: 1_700_000_009))
        #expect(record == .position(Position(latitude: 45.4642, longitude: 9.19, accuracy: 12)))
        // Accuracy may be left out or null; the poles and the antimeridian are positions.
        #expect(
            try self.record(#"{"t": 1700000010, "lat": -90, "lng": 180}"#).1
                == .position(Position(latitude: -90, longitude: 180, accuracy: nil)))
        #expect(
            try self.record(#"{"t": 1700000010, "lat": 0, "lng": 0, "acc": null}"#).1
                == .position(Position(latitude: 0, longitude: 0, accuracy: nil)))
    }

    /// A scanner's report of a tag (docs/behaviour.md §19): an RSSI may be fractional (a node's filtered
    /// estimate), power and address are optional.
    @Test func scannerLinesAreReports() throws {
        let (time, record) = try record(
            #"{"t": 1700000000.25, "scanner": "kitchen", "tag": "ibeacon:\#(office):1:2", "rssi": -71.5, "power": -61, "address": "4a:0b:0c:0d:0e:0f"}"#
        )
        #expect(time == Timestamp(microseconds: 1_700_000_000_250_000))
        #expect(
            record
                == .report(
                    ScannerReport(
                        scanner: "kitchen", tag: "ibeacon:\(office):1:2", rssi: -71.5, power: -61,
                        address: BluetoothAddress("4A:0B:0C:0D:0E:0F"))))
        let (_, bare) = try self.record(#"{"t": 1700000001, "scanner": "hall", "tag": "badge-1", "rssi": -60}"#)
        #expect(bare == .report(ScannerReport(scanner: "hall", tag: "badge-1", rssi: -60)))
    }

    @Test func blankLinesAreNotRecords() throws {
        #expect(try parse(["", "   ", "\r"]).allSatisfy { try $0.get() == nil })
    }

    @Test func anOutOfOrderLineIsAnErrorThatNamesTheEarlierLine() throws {
        let results = parse([
            #"{"t": 1700000010, "mode": "foreground"}"#,
            #"{"t": 1700000012, "mode": "foreground"}"#,
            #"{"t": 1700000011, "mode": "foreground"}"#,
            #"{"t": 1700000012, "mode": "background"}"#,
        ])
        #expect(try results[1].get() != nil)
        guard case .failure(let error) = results[2] else { Issue.record("line 3 accepted"); return }
        #expect(error.message.contains("line 2"))
        // The rejected line does not move the order check; equal times are in order.
        #expect(try results[3].get() != nil)
    }

    @Test(arguments: [
        ("not json", "not a JSON object"),
        ("[1, 2]", "not a JSON object"),
        ("{\"t\": 1", "not a JSON object"),
        (#"{"uuid": "x"}"#, "missing \"t\""),
        (#"{"t": true, "mode": "foreground"}"#, "\"t\" must be"),
        (#"{"t": "yesterday", "mode": "foreground"}"#, "not an ISO-8601"),
        (#"{"t": "2023-11-14T22:13:20", "mode": "foreground"}"#, "not an ISO-8601"),
        (#"{"t": 1e300, "mode": "foreground"}"#, "from 1970-01-01 to 2100-01-01"),
        (#"{"t": -62135596800, "mode": "foreground"}"#, "from 1970-01-01 to 2100-01-01"),
        (#"{"t": -0.1, "mode": "foreground"}"#, "from 1970-01-01 to 2100-01-01"),
        (#"{"t": 4102444800.000001, "mode": "foreground"}"#, "from 1970-01-01 to 2100-01-01"),
        (#"{"t": "1969-12-31T23:59:59Z", "mode": "foreground"}"#, "from 1970-01-01 to 2100-01-01"),
        (#"{"t": "9999-12-31T23:59:59Z", "mode": "foreground"}"#, "from 1970-01-01 to 2100-01-01"),
        (#"{"t": 1700000000}"#, "none of"),
        (#"{"t": 1700000000, "mode": "foreground", "hci": "3e00"}"#, "give only one"),
        (#"{"t": 1700000000, "uuid": "not-a-uuid", "major": 1, "minor": 1, "rssi": -60}"#, "\"uuid\""),
        (
            #"{"t": 1700000000, "uuid": "ACFD165E-C0C0-11E3-9BBE-1A514932AC01", "major": 70000, "minor": 1, "rssi": -60}"#,
            "\"major\""
        ),
        (
            #"{"t": 1700000000, "uuid": "ACFD165E-C0C0-11E3-9BBE-1A514932AC01", "major": 1.5, "minor": 1, "rssi": -60}"#,
            "\"major\""
        ),
        (
            #"{"t": 1700000000, "uuid": "ACFD165E-C0C0-11E3-9BBE-1A514932AC01", "major": 1, "minor": "2", "rssi": -60}"#,
            "\"minor\""
        ),
        (#"{"t": 1700000000, "uuid": "ACFD165E-C0C0-11E3-9BBE-1A514932AC01", "major": 1, "minor": 2}"#, "\"rssi\""),
        (
            #"{"t": 1700000000, "uuid": "ACFD165E-C0C0-11E3-9BBE-1A514932AC01", "major": 1, "minor": 2, "rssi": 127}"#,
            "\"rssi\""
        ),
        (
            #"{"t": 1700000000, "uuid": "ACFD165E-C0C0-11E3-9BBE-1A514932AC01", "major": 1, "minor": 2, "rssi": -1, "power": 300}"#,
            "\"power\""
        ),
        (
            #"{"t": 1700000000, "uuid": "ACFD165E-C0C0-11E3-9BBE-1A514932AC01", "major": 1, "minor": 2, "rssi": -1, "address": "xx"}"#,
            "\"address\""
        ),
        (#"{"t": 1700000000, "hci": "3e0"}"#, "\"hci\""),
        (#"{"t": 1700000000, "hci": "zz"}"#, "\"hci\""),
        (#"{"t": 1700000000, "mode": "sideways"}"#, "\"mode\""),
        (#"{"t": 1700000000, "command": ""}"#, "\"command\""),
        (#"{"t": 1700000000, "lat": 91, "lng": 9}"#, "\"lat\""),
        (#"{"t": 1700000000, "lat": "45", "lng": 9}"#, "\"lat\""),
        (#"{"t": 1700000000, "lat": 45}"#, "\"lng\""),
        (#"{"t": 1700000000, "lat": 45, "lng": -180.01}"#, "\"lng\""),
        (#"{"t": 1700000000, "lat": 45, "lng": 9, "acc": -1}"#, "\"acc\""),
        (#"{"t": 1700000000, "lat": 45, "lng": 9, "acc": "12"}"#, "\"acc\""),
        (#"{"t": 1700000000, "lat": 45, "lng": 9, "mode": "foreground"}"#, "give only one"),
        (#"{"t": 1700000000, "scanner": "", "tag": "badge", "rssi": -60}"#, "\"scanner\""),
        (#"{"t": 1700000000, "scanner": 7, "tag": "badge", "rssi": -60}"#, "\"scanner\""),
        (#"{"t": 1700000000, "scanner": "hall way", "tag": "badge", "rssi": -60}"#, "\"scanner\""),
        (#"{"t": 1700000000, "scanner": "hall", "rssi": -60}"#, "\"tag\""),
        (#"{"t": 1700000000, "scanner": "hall", "tag": "\u0007", "rssi": -60}"#, "\"tag\""),
        (#"{"t": 1700000000, "scanner": "hall", "tag": "badge"}"#, "\"rssi\""),
        (#"{"t": 1700000000, "scanner": "hall", "tag": "badge", "rssi": "-60"}"#, "\"rssi\""),
        (#"{"t": 1700000000, "scanner": "hall", "tag": "badge", "rssi": -200}"#, "\"rssi\""),
        (#"{"t": 1700000000, "scanner": "hall", "tag": "badge", "rssi": -60, "power": -59.5}"#, "\"power\""),
        (#"{"t": 1700000000, "scanner": "hall", "tag": "badge", "rssi": -60, "address": 1}"#, "\"address\""),
        (#"{"t": 1700000000, "scanner": "hall", "tag": "b", "rssi": -60, "lat": 45, "lng": 9}"#, "give only one"),
    ])
    func badLinesAreRejectedWithAReason(line: String, reason: String) {
        guard case .failure(let error) = parse([line])[0] else {
            Issue.record("accepted: \(line)")
            return
        }
        #expect(error.message.contains(reason), "\(error.message)")
    }

    @Test func theFirstAndLastInstantsOfTheTimeRangeAreAccepted() throws {
        #expect(try record(#"{"t": 0, "mode": "foreground"}"#).0 == Timestamp.traceRange.lowerBound)
        #expect(
            try record(#"{"t": "2100-01-01T00:00:00Z", "mode": "foreground"}"#).0 == Timestamp.traceRange.upperBound)
    }

    @Test func aLineOf64KiBIsReadAndOneByteMoreIsMalformed() throws {
        let head = #"{"t": 1700000000, "mode": "foreground", "pad": ""#
        let tail = #""}"#
        let fill = TraceParser.maximumLineLength - head.utf8.count - tail.utf8.count
        let longest = head + String(repeating: "x", count: fill) + tail
        #expect(longest.utf8.count == 65536)
        #expect(try record(longest).1 == .mode(.foreground))
        let over = head + String(repeating: "x", count: fill + 1) + tail
        guard case .failure(let error) = parse([over])[0] else {
            Issue.record("a line over 64 KiB was accepted")
            return
        }
        #expect(error == TraceParser.overlongLine)
    }

    @Test func mutatedLinesNeverCrashTheParser() {
        let seeds = [
            #"{"t": 1700000000.0, "uuid": "ACFD165E-C0C0-11E3-9BBE-1A514932AC01", "major": 1, "minor": 17081, "rssi": -62, "power": -59}"#,
            #"{"t": "2023-11-14T22:13:20.25+01:00", "hci": "3e2a0201030"}"#,
            #"{"t": 1700000007.0, "command": "alert/done", "id": "17081"}"#,
        ].map { Array($0.utf8) }
        var random = SeededGenerator(seed: 33)
        var parser = TraceParser()
        var accepted = 0
        for round in 0..<10_000 {
            let bytes = seeds[round % seeds.count].overwritingRandomBytes(times: 1...3, using: &random)
            if case .success(_?) = parser.parse(bytes, number: round + 1) { accepted += 1 }
        }
        #expect(accepted > 0)
        #expect(accepted < 10_000)
    }
}
