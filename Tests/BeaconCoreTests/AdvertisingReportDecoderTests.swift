import BeaconCore
import Testing
import TestSupport

@Suite struct AdvertisingReportDecoderTests {
    @Test func everyConformanceAdvertDecodesExactlyAsListed() throws {
        let adverts = try Conformance.load(Conformance.Adverts.self, from: "adverts.json")
        #expect(adverts.cases.count >= 12)
        for item in adverts.cases {
            let bytes = try #require(Hex.decode(item.hci), "\(item.name): hci is not hex")
            var decoder = AdvertisingReportDecoder()
            let decoded = decoder.decode(event: bytes)
            #expect(decoded.count == item.sightings.count, "\(item.name)")
            for (want, got) in zip(item.sightings, decoded) {
                #expect(want.mismatches(got) == [], "\(item.name)")
            }
        }
    }

    @Test func twoReportsInOneEventComeOutInReportOrder() throws {
        let bytes = try #require(Hex.decode(Self.twoReports))
        var decoder = AdvertisingReportDecoder()
        let decoded = decoder.decode(event: bytes)
        #expect(decoded.map(\.beacon.major) == [73, 52428])
        #expect(decoder.statistics.reports == 2)
        #expect(decoder.statistics.beacons == 2)
    }

    @Test func rssiNotAvailableIsDroppedAndCounted() throws {
        var decoder = AdvertisingReportDecoder()
        let decoded = decoder.decode(event: try #require(Hex.decode(Self.ibeaconRSSI127)))
        #expect(decoded.isEmpty)
        #expect(decoder.statistics.rssiUnavailable == 1)
        #expect(decoder.statistics.malformed == 0)
    }

    @Test func incompleteExtendedDataIsCountedNotDecoded() throws {
        var decoder = AdvertisingReportDecoder()
        #expect(decoder.decode(event: try #require(Hex.decode(Self.extendedIncomplete))).isEmpty)
        #expect(decoder.statistics.incomplete == 1)
    }

    @Test func adLengthPastTheEndIsCountedMalformed() throws {
        var decoder = AdvertisingReportDecoder()
        #expect(decoder.decode(event: try #require(Hex.decode(Self.adPastEnd))).isEmpty)
        #expect(decoder.statistics.malformed == 1)
    }

    @Test func truncatedEventKeepsTheWholeReportsBeforeTheCut() throws {
        // The two-report event cut in the middle of its second report.
        let whole = try #require(Hex.decode(Self.twoReports))
        var decoder = AdvertisingReportDecoder()
        let decoded = decoder.decode(event: Array(whole.prefix(60)))
        #expect(decoded.map(\.beacon.major) == [73])
        #expect(decoder.statistics.malformed >= 1)
    }

    @Test func eventsOtherThanAdvertisingReportsAreCountedAsOther() {
        var decoder = AdvertisingReportDecoder()
        // Command Complete for LE Set Scan Enable, and an LE Connection Complete subevent.
        #expect(decoder.decode(event: [0x0E, 0x04, 0x01, 0x0C, 0x20, 0x00]).isEmpty)
        #expect(decoder.decode(event: [0x3E, 0x02, 0x01, 0x00]).isEmpty)
        #expect(decoder.statistics.otherEvents == 2)
        #expect(decoder.statistics.malformed == 0)
    }

    @Test func zeroLengthStructureEndsTheData() throws {
        // Flags, then a zero length (padding), then bytes that would be an iBeacon: not read.
        var data: [UInt8] = [0x02, 0x01, 0x06, 0x00]
        data += try #require(Hex.decode("1aff4c000215b9407f30f5f8466eaff925556b57fe6d0049000ac5"))
        let event = Self.legacyEvent(data: data, rssi: 0xBF)
        var decoder = AdvertisingReportDecoder()
        #expect(decoder.decode(event: event).isEmpty)
        #expect(decoder.statistics.notBeacons == 1)
    }

    @Test func iBeaconWithTrailingBytesStillDecodes() throws {
        var data = try #require(Hex.decode("0201061bff4c000215b9407f30f5f8466eaff925556b57fe6d0049000ac5ee"))
        data += [0x03, 0x03, 0xAA, 0xFE]
        var decoder = AdvertisingReportDecoder()
        let decoded = decoder.decode(event: Self.legacyEvent(data: data, rssi: 0xC0))
        #expect(decoded.count == 1)
        #expect(decoded.first?.rssi == -64)
        #expect(decoded.first?.power == -59)
    }

    /// An LE Advertising Report event with one report of `data`.
    static func legacyEvent(data: [UInt8], rssi: UInt8) -> [UInt8] {
        let report: [UInt8] = [0x03, 0x01, 0x0F, 0x0E, 0x0D, 0x0C, 0x0B, 0x0A, UInt8(data.count)] + data + [rssi]
        let parameters: [UInt8] = [0x02, 0x01] + report
        return [0x3E, UInt8(parameters.count)] + parameters
    }

    static let twoReports =
        "3e52020203010f0e0d0c0b0a1e0201061aff4c000215b9407f30f5f8466eaff925556b57fe6d0049000ac5bf0000010000eeffc01e"
        + "02011a1aff4c000215f2a74fc4762544db9b08cb7e130b2029cccceeeec5b9"
    static let ibeaconRSSI127 =
        "3e2a020103010f0e0d0c0b0a1e0201061aff4c000215b9407f30f5f8466eaff925556b57fe6d0049000ac57f"
    static let extendedIncomplete =
        "3e380d013000010f0e0d0c0b0a0100ff7fb00000000000000000001e0201061aff4c000215b9407f30f5f8466eaff925556b57fe6d"
        + "0049000ac5"
    static let adPastEnd =
        "3e2a020103010f0e0d0c0b0a1e02010630ff4c000215b9407f30f5f8466eaff925556b57fe6d0049000ac5bf"
}
