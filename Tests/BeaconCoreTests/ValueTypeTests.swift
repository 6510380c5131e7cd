import BeaconCore
import Foundation
import JSONText
import Testing

@Suite struct TimestampTests {
    @Test func formatsUTCWithMilliseconds() {
        #expect(Timestamp(microseconds: 1_700_000_000_250_000).iso8601 == "2023-11-14T22:13:20.250Z")
        #expect(Timestamp(microseconds: 0).iso8601 == "1970-01-01T00:00:00.000Z")
        #expect(Timestamp(microseconds: -1).iso8601 == "1969-12-31T23:59:59.999Z")
        #expect(Timestamp(microseconds: 951_782_400_000_000).iso8601 == "2000-02-29T00:00:00.000Z")
        #expect(Timestamp(microseconds: 1_700_000_000_999_999).iso8601 == "2023-11-14T22:13:20.999Z")
        // Total: an instant the format cannot write is written as the nearest end of years 1–9999.
        #expect(Timestamp(microseconds: .min).iso8601 == "0001-01-01T00:00:00.000Z")
        #expect(Timestamp(microseconds: .max).iso8601 == "9999-12-31T23:59:59.999Z")
    }

    @Test func formattingAgreesWithFoundationOverManyInstants() {
        let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        var seconds: Int64 = -2_000_000_000
        while seconds < 4_000_000_000 {
            // .5 s is exact in binary; Foundation truncates a Double, so .123 would print as .122 there.
            let stamp = Timestamp(microseconds: seconds * 1_000_000 + 500_000)
            #expect(stamp.iso8601 == style.format(stamp.date))
            seconds += 7_777_777
        }
    }

    @Test func secondsRoundToTheMicrosecond() {
        #expect(Timestamp(secondsSinceEpoch: 1_700_000_000.1)?.microseconds == 1_700_000_000_100_000)
        #expect(Timestamp(secondsSinceEpoch: .nan) == nil)
        #expect(Timestamp(secondsSinceEpoch: .infinity) == nil)
        #expect(Timestamp(microseconds: 5).adding(seconds: 10).microseconds == 10_000_005)
    }
}

@Suite struct SmallTypeTests {
    @Test func bluetoothAddressesPrintMostSignificantByteFirst() {
        #expect(BluetoothAddress(value: 0x0A0B_0C0D_0E0F).description == "0A:0B:0C:0D:0E:0F")
        #expect(BluetoothAddress("c0:ff:ee:00:00:01")?.value == 0xC0FF_EE00_0001)
        #expect(BluetoothAddress("C0-FF-EE-00-00-01")?.value == 0xC0FF_EE00_0001)
        for bad in ["", "C0:FF:EE:00:00", "C0:FF:EE:00:00:01:02", "G0:FF:EE:00:00:01", "C0:FF:EE:00:00:1"] {
            #expect(BluetoothAddress(bad) == nil, "\(bad)")
        }
    }

    @Test func hexRoundTripsAndRejectsGarbage() {
        #expect(Hex.decode("3E2a00ff") == [0x3E, 0x2A, 0x00, 0xFF])
        #expect(Hex.encode([0x3E, 0x2A, 0x00, 0xFF]) == "3e2a00ff")
        #expect(Hex.decode("") == [])
        #expect(Hex.decode("3") == nil)
        #expect(Hex.decode("3g") == nil)
        #expect(Hex.decode("3e 2a") == nil)
    }

    @Test func uuidTextIsFoundationsUUIDString() {
        #expect(
            UUID(uuid: (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 255)).text
                == "00010203-0405-0607-0809-0A0B0C0D0EFF")
        for _ in 0..<1_000 {
            let uuid = UUID()
            #expect(uuid.text == uuid.uuidString)
        }
    }

    @Test func jsonWriterKeepsKeyOrderAndEscapes() throws {
        var object = JSONObjectWriter()
        object.add("t", "2023")
        object.add("name", "Kitchen \"A\"\\\n\u{1}é")
        object.add("n", 3)
        object.add("x", Double.nan)
        object.add("ok", true)
        object.add("none", String?.none)
        #expect(object.text == #"{"t":"2023","name":"Kitchen \"A\"\\\n\u0001é","n":3,"x":null,"ok":true,"none":null}"#)
        let parsed = try JSONSerialization.jsonObject(with: Data(object.text.utf8)) as? [String: Any]
        #expect(parsed?["name"] as? String == "Kitchen \"A\"\\\n\u{1}é")
    }

    @Test func sourceSpecsParseTheThreeForms() {
        #expect(SourceSpec("hci0") == .adapter("hci0"))
        #expect(SourceSpec("hci12") == .adapter("hci12"))
        #expect(SourceSpec("btsnoop:a/b.log") == .btsnoop(path: "a/b.log"))
        #expect(SourceSpec("trace:-") == .trace(path: "-"))
        #expect(SourceSpec("trace:-")?.displayName == "stdin")
        #expect(SourceSpec("walk.jsonl") == .trace(path: "walk.jsonl"))
        #expect(SourceSpec("capture.btsnoop") == .btsnoop(path: "capture.btsnoop"))
        for bad in ["", "hci", "hcix", "hci+1", "hci-0", "btsnoop:", "trace:", "usb0", "readme.txt"] {
            #expect(SourceSpec(bad) == nil, "\(bad)")
        }
    }
}

@Suite struct LocalDayTests {
    /// Calendar arithmetic never traps, whatever instant reaches it (docs/behaviour.md §13): the day of an
    /// instant the calendar cannot place is still a day.
    @Test(arguments: [Int64.min, Int64.min / 2, -62_135_596_800_000_000, 0, 253_402_300_799_000_000, Int64.max])
    func anyInstantHasADayWithoutTrapping(microseconds: Int64) {
        for zone in ["UTC", "Europe/Paris", "Pacific/Kiritimati", "America/Adak"] {
            let day = LocalDay(containing: Timestamp(microseconds: microseconds), in: TimeZone(identifier: zone)!)
            #expect((3600...172_800).contains(day.length))
            _ = day.next
            _ = day.previous
            _ = day.elapsed(at: Timestamp(microseconds: microseconds))
        }
    }

    @Test func movingATimestampSaturatesInsteadOfTrapping() {
        #expect(Timestamp(microseconds: .max).adding(seconds: 10).microseconds == .max)
        #expect(Timestamp(microseconds: .min).adding(seconds: -10).microseconds == .min)
        #expect(Timestamp(microseconds: 0).adding(seconds: .infinity).microseconds == .max)
        #expect(Timestamp(microseconds: 5).adding(seconds: .nan).microseconds == 5)
        #expect(Timestamp(microseconds: 0).adding(seconds: 1.5).microseconds == 1_500_000)
    }

    @Test func weekdayNumbersOutsideOneToSevenWrapAround() {
        #expect(Weekday(calendarWeekday: 1) == .sun)
        #expect(Weekday(calendarWeekday: 0) == .sat)
        #expect(Weekday(calendarWeekday: -6) == .sun)
        #expect(Weekday(calendarWeekday: 9) == .mon)
    }
}
