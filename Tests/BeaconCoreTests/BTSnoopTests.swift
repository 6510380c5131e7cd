import BeaconCore
import Foundation
import Testing
import TestSupport

@Suite struct BTSnoopTests {
    @Test(arguments: [(1001, BTSnoop.Datalink.h1), (1002, .h4), (2001, .monitor)])
    func headerNamesTheDatalink(number: Int, datalink: BTSnoop.Datalink) throws {
        let bytes = try Self.capture(number)
        #expect(BTSnoop.parseHeader(bytes) == .success(datalink))
    }

    @Test func recordsCarryTimestampsFromTheYearZeroEpoch() throws {
        let bytes = try Self.capture(1001)
        let first = try #require(BTSnoop.parseRecord(bytes, at: BTSnoop.headerSize)).get()
        #expect(first.record.time == Timestamp(microseconds: 1_700_000_000_250_000))
        #expect(first.record.packet.first == 0x3E)
        #expect(BTSnoop.event(in: first.record, datalink: .h1)?.count == 44)
    }

    @Test func h4RecordsLoseTheirPacketTypeByte() throws {
        let bytes = try Self.capture(1002)
        let first = try #require(BTSnoop.parseRecord(bytes, at: BTSnoop.headerSize)).get()
        #expect(first.record.packet.first == 0x04)
        #expect(BTSnoop.event(in: first.record, datalink: .h4)?.first == 0x3E)
    }

    @Test func commandsAndDataAreNotEvents() {
        let packet: ArraySlice<UInt8> = [0x01, 0x0C, 0x20, 0x02, 0x01, 0x00]
        let sent = BTSnoop.Record(time: Timestamp(microseconds: 0), flags: 0b10, packet: packet)
        #expect(BTSnoop.event(in: sent, datalink: .h1) == nil)
        let acl = BTSnoop.Record(time: Timestamp(microseconds: 0), flags: 0b01, packet: packet)
        #expect(BTSnoop.event(in: acl, datalink: .h1) == nil)
        #expect(BTSnoop.event(in: sent, datalink: .h4) == nil)
        let monitorCommand = BTSnoop.Record(time: Timestamp(microseconds: 0), flags: 0x0000_0002, packet: packet)
        #expect(BTSnoop.event(in: monitorCommand, datalink: .monitor) == nil)
        let secondAdapterEvent = BTSnoop.Record(time: Timestamp(microseconds: 0), flags: 0x0001_0003, packet: packet)
        #expect(BTSnoop.event(in: secondAdapterEvent, datalink: .monitor) != nil)
    }

    @Test func garbageHeadersAreRejectedWithTheirReason() {
        #expect(BTSnoop.parseHeader([]) == .failure(.notBTSnoop))
        #expect(BTSnoop.parseHeader(Array("{\"t\": 1700000000}\n".utf8)) == .failure(.notBTSnoop))
        var header = Array("btsnoop\0".utf8) + [0, 0, 0, 2, 0, 0, 0x03, 0xE9]
        #expect(BTSnoop.parseHeader(header) == .failure(.unsupportedVersion(2)))
        header[11] = 1
        header[15] = 0xEB  // 1003: HCI BSCP, not read
        #expect(BTSnoop.parseHeader(header) == .failure(.unsupportedDatalink(1003)))
    }

    @Test func aRecordCutShortAsksForMoreInsteadOfReadingPastTheEnd() throws {
        let bytes = try Self.capture(1001)
        for cut in BTSnoop.headerSize..<(BTSnoop.headerSize + BTSnoop.recordHeaderSize + 44) {
            #expect(BTSnoop.parseRecord(Array(bytes.prefix(cut)), at: BTSnoop.headerSize) == nil)
        }
    }

    @Test func aRecordLongerThanItsPacketIsCorruption() {
        var record = [UInt8](repeating: 0, count: BTSnoop.recordHeaderSize + 8)
        record[3] = 4  // original 4
        record[7] = 8  // included 8
        let result = BTSnoop.parseRecord(record, at: 0)
        #expect(result.map { (try? $0.get()) == nil } == true)
    }

    @Test func mutatedCapturesNeverCrashTheReader() throws {
        var random = SeededGenerator(seed: 2001)
        let seeds = try [1001, 1002, 2001].map(Self.capture)
        var records = 0
        for round in 0..<10_000 {
            var bytes = seeds[round % seeds.count].overwritingRandomBytes(times: 1...6, using: &random)
            if Bool.random(using: &random) { bytes.removeLast(Int.random(in: 0..<bytes.count, using: &random)) }
            guard case .success(let datalink) = BTSnoop.parseHeader(bytes) else { continue }
            var offset = BTSnoop.headerSize
            var decoder = AdvertisingReportDecoder()
            while let parsed = BTSnoop.parseRecord(bytes, at: offset), case .success(let (record, next)) = parsed {
                #expect(next > offset)
                offset = next
                records += 1
                if let event = BTSnoop.event(in: record, datalink: datalink) { _ = decoder.decode(event: Array(event)) }
            }
        }
        #expect(records > 10_000)
    }

    static func capture(_ datalink: Int) throws -> [UInt8] {
        try Array(Data(contentsOf: Conformance.url("capture-\(datalink).btsnoop")))
    }

    /// Records from 1900 to 2100 are taken as they are (docs/behaviour.md §3.2): a phone whose clock was never
    /// set dates them around 1970, some just before it.
    @Test func aRecordTimeOutsideTheTwoCenturiesIsAProblemAtEitherEnd() {
        func record(_ microseconds: Int64) -> BTSnoop.Record {
            BTSnoop.Record(time: Timestamp(microseconds: microseconds), flags: 0, packet: [])
        }
        #expect(BTSnoop.problem(with: record(1_700_000_000_000_000)) == nil)
        #expect(BTSnoop.problem(with: record(0)) == nil)
        #expect(BTSnoop.problem(with: record(-86_400_000_000)) == nil)
        #expect(BTSnoop.problem(with: record(Timestamp.captureRange.lowerBound.microseconds)) == nil)
        #expect(BTSnoop.problem(with: record(Timestamp.captureRange.upperBound.microseconds)) == nil)
        #expect(BTSnoop.problem(with: record(Timestamp.captureRange.lowerBound.microseconds - 1)) != nil)
        #expect(BTSnoop.problem(with: record(Timestamp.captureRange.upperBound.microseconds + 1)) != nil)
        #expect(BTSnoop.problem(with: record(.min))?.contains("1900-01-01 to 2100-01-01") == true)
    }
}
