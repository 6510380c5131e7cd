import BeaconCore
import Foundation
import Testing
import TestSupport

/// The trace parser's quick path (issue 19) reads the lines it takes exactly as the general way
/// (`JSONReader`, then the record's fields) reads them, and leaves every other line to it.
@Suite struct TraceQuickPathTests {
    static let office = "ACFD165E-C0C0-11E3-9BBE-1A514932AC01"

    func quick(_ line: String) -> (Timestamp, TraceRecord)? {
        Array(line.utf8).withUnsafeBufferPointer { TraceParser.quickRecord($0) }
    }

    /// Both ways' records of `line`; the quick one must equal the general one when it exists.
    func agree(_ line: String, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        guard let quick = quick(line) else { return false }
        let general = TraceParser.generalRecord(Array(line.utf8))
        #expect(general?.0 == quick.0, "\(line)", sourceLocation: sourceLocation)
        #expect(general?.1 == quick.1, "\(line)", sourceLocation: sourceLocation)
        return true
    }

    @Test func theLinesSimulateAndDecodeWriteTakeTheQuickPath() {
        let lines = [
            #"{"t":"2023-11-14T22:13:20.015Z","format":"ibeacon","uuid":"\#(Self.office)","major":1,"minor":17082,"power":-59,"rssi":-57,"address":null}"#,
            #"{"t":"2023-11-14T22:13:20Z","format":"altbeacon","uuid":"acfd165e-c0c0-11e3-9bbe-1a514932ac01","major":65535,"minor":0,"power":-128,"rssi":126,"address":"0a:0b:0c:0d:0e:0f"}"#,
            #"{ "t" : 1700000000.5 , "uuid" : "\#(Self.office)", "major": 1, "minor": 2, "rssi": -70 }"#,
            #"{"t": 1700000000, "uuid": "\#(Self.office)", "major": 1.0, "minor": 2e0, "rssi": -7e1, "power": null}"#,
            #"{"t":"2023-11-14T22:13:20.123456Z","hci":"3e2a02010300"}"#,
            #"{"t":"2024-02-29T23:59:59.9Z","mode":"background"}"#,
            #"{"t": "2023-11-14T23:13:20.250+01:00", "mode": "foreground"}"#,
            #"{"t": "2023-11-14T20:43:20.250-01:30", "mode": "foreground"}"#,
        ]
        for line in lines { #expect(agree(line), "\(line)") }
    }

    @Test func everyOtherLineIsLeftToTheGeneralWay() {
        let lines = [
            #"{"t": 1700000000, "command": "alert/done", "id": "17081"}"#,  // commands keep every field
            #"{"t": 1700000000, "uuid": "\#(Self.office)", "major": 1, "minor": 2, "rssi": -70, "extra": 1}"#,
            #"{"t": 1700000000, "uuid": "\#(Self.office)", "major": 1, "major": 2, "minor": 2, "rssi": -70}"#,
            #"{"t": 1700000000, "uuid": "\#(Self.office)", "major": 1, "minor": 2, "rssi": -70,}"#,
            #"{"t": 1700000000, "uuid": "ACFD165E\u002DC0C0-11E3-9BBE-1A514932AC01", "major": 1, "minor": 2, "rssi": -70}"#,
            #"{"t": "2023-11-14T22:13:20.1234567Z", "mode": "foreground"}"#,
            #"{"t": "2023-02-29T22:13:20Z", "mode": "foreground"}"#,
            #"{"t": "2023-11-14T24:00:00Z", "mode": "foreground"}"#,
            #"{"t": "2023-11-14T22:13:20", "mode": "foreground"}"#,
            #"{"t": "2023-11-14T22:13:20.Z", "mode": "foreground"}"#,
            #"{"t": "2023-11-14T22:13:20+0100", "mode": "foreground"}"#,
            #"{"t": 1700000000, "uuid": "\#(Self.office)", "major": 65536, "minor": 2, "rssi": -70}"#,
            #"{"t": 1700000000, "uuid": "\#(Self.office)", "major": 1, "minor": 2, "rssi": 127}"#,
            #"{"t": 1700000000, "uuid": "\#(Self.office)", "major": 1.5, "minor": 2, "rssi": -70}"#,
            #"{"t": 1700000000, "uuid": "\#(Self.office)", "major": 1, "minor": 2, "rssi": -70, "hci": "3e00"}"#,
            #"{"t": 1700000000, "uuid": "\#(Self.office)", "major": 1, "minor": 2, "rssi": -70, "format": "eddystone"}"#,
            #"{"t": 1700000000, "uuid": "\#(Self.office)", "major": 1, "minor": 2, "rssi": -70, "address": "0A:0B"}"#,
            #"{"t": -1, "mode": "foreground"}"#,
            #"{"t": 1700000000, "mode": "sideways"}"#,
            #"{"t": 1700000000, "hci": "3e"}"#,
            #"{"t": 1700000000, "mode": true}"#,
            #"{"t": 1700000000, "mode": "foreground"} x"#,
            "\u{FEFF}{\"t\": 1700000000, \"mode\": \"foreground\"}",
            #"{"t": 1700000000, "mode": "foregröund"}"#,
            "", "   ", "[]", "{}", "{", "null",
        ]
        for line in lines { #expect(quick(line) == nil, "\(line)") }
    }

    /// Exact to the microsecond, where Foundation's parser (through a `Date`) is sometimes one
    /// off; and every offset names the same instant as `Z`.
    @Test func timesAreReadExactly() throws {
        var generator = SeededGenerator(seed: 19)
        let start = Timestamp.traceRange.lowerBound.microseconds
        let span = Timestamp.traceRange.upperBound.microseconds - start
        for _ in 0..<20_000 {
            let digits = Int.random(in: 0...6, using: &generator)
            var unit: Int64 = 1_000_000
            for _ in 0..<digits { unit /= 10 }
            let instant = Timestamp(microseconds: start + Int64.random(in: 0..<span, using: &generator) / unit * unit)
            let whole = String(instant.iso8601.prefix(19))
            let fraction =
                digits == 0 ? "" : "." + String(instant.microseconds % 1_000_000).leftPadded(6).prefix(digits)
            let line = #"{"t":"\#(whole)\#(fraction)Z","mode":"foreground"}"#
            #expect(agree(line), "\(line)")
            #expect(quick(line)?.0 == instant, "\(line)")
        }
        #expect(Timestamp(iso8601: "2047-09-07T11:08:13.890Z")?.microseconds == 2_451_467_293_890_000)
        #expect(Timestamp(iso8601: "2023-11-14T23:43:20.25+01:30") == Timestamp(iso8601: "2023-11-14T22:13:20.250Z"))
        #expect(Timestamp(iso8601: "2023-11-14T20:13:20.25-02:00") == Timestamp(iso8601: "2023-11-14T22:13:20.250Z"))
        #expect(Timestamp(iso8601: "2023-11-14T22:13:20.2500001Z") != nil)  // left to Foundation
    }

    @Test func bytesChangedAtRandomAreReadTheSameOrLeft() {
        var generator = SeededGenerator(seed: 7)
        let seed = Array(
            #"{"t":"2023-11-14T22:13:20.015Z","format":"ibeacon","uuid":"\#(Self.office)","major":1,"minor":17082,"power":-59,"rssi":-57,"address":null}"#
                .utf8)
        let alphabet = Array(#"0123456789-.:,"{} abcdefABCDEFZTtn\e+"#.utf8)
        var taken = 0
        for _ in 0..<20_000 {
            var line = seed
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                let position = Int.random(in: 0..<line.count, using: &generator)
                line[position] = alphabet.randomElement(using: &generator) ?? 0
            }
            guard let quick = line.withUnsafeBufferPointer({ TraceParser.quickRecord($0) }) else { continue }
            taken += 1
            let general = TraceParser.generalRecord(line)
            #expect(general?.0 == quick.0 && general?.1 == quick.1, "\(String(decoding: line, as: UTF8.self))")
        }
        #expect(taken > 1000)
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
