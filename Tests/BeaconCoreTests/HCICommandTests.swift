import BeaconCore
import Foundation
import Testing

/// Every command beaconwatch sends, byte for byte, against the layouts of Bluetooth Core v5.4,
/// Vol 4 Part E: the packet is type 0x01, opcode (OGF 0x08 << 10 | OCF) little-endian, parameter
/// length, parameters (§5.4.1).
@Suite struct HCICommandTests {
    static func bytes(_ hex: String) -> [UInt8] { Hex.decode(hex.replacingOccurrences(of: " ", with: ""))! }

    @Test func leSetScanParameters() {
        // §7.8.10, OCF 0x000B: LE_Scan_Type 0x00 (passive), LE_Scan_Interval 0x0010,
        // LE_Scan_Window 0x0010, Own_Address_Type 0x00, Scanning_Filter_Policy 0x00.
        #expect(HCICommand.setScanParameters(.init()).packet == Self.bytes("01 0b20 07 00 1000 1000 00 00"))
        let active = HCICommand.ScanParameters(active: true, interval: 0x0060, window: 0x0030, ownAddressType: 0x01)
        #expect(HCICommand.setScanParameters(active).packet == Self.bytes("01 0b20 07 01 6000 3000 01 00"))
    }

    @Test func leSetScanEnable() {
        // §7.8.11, OCF 0x000C: LE_Scan_Enable, Filter_Duplicates.
        #expect(HCICommand.setScanEnable(true).packet == Self.bytes("01 0c20 02 01 00"))
        #expect(HCICommand.setScanEnable(false).packet == Self.bytes("01 0c20 02 00 00"))
        #expect(HCICommand.setScanEnable(true, filterDuplicates: true).packet == Self.bytes("01 0c20 02 01 01"))
    }

    @Test func leSetExtendedScanParameters() {
        // §7.8.64, OCF 0x0041: Own_Address_Type, Scanning_Filter_Policy, Scanning_PHYs 0x01 (LE 1M),
        // then for LE 1M: Scan_Type, Scan_Interval, Scan_Window.
        #expect(HCICommand.setExtendedScanParameters(.init()).packet == Self.bytes("01 4120 08 00 00 01 00 1000 1000"))
    }

    @Test func leSetExtendedScanEnable() {
        // §7.8.65, OCF 0x0042: Enable, Filter_Duplicates, Duration 0x0000, Period 0x0000.
        #expect(HCICommand.setExtendedScanEnable(true).packet == Self.bytes("01 4220 06 01 00 0000 0000"))
        #expect(HCICommand.setExtendedScanEnable(false).packet == Self.bytes("01 4220 06 00 00 0000 0000"))
    }

    @Test func leSetAdvertisingParameters() {
        // §7.8.5, OCF 0x0006: Advertising_Interval_Min, Advertising_Interval_Max (0x00A0 = 100 ms),
        // Advertising_Type 0x03 (ADV_NONCONN_IND), Own_Address_Type 0x00, Peer_Address_Type 0x00,
        // Peer_Address (6 bytes), Advertising_Channel_Map 0x07, Advertising_Filter_Policy 0x00.
        #expect(
            HCICommand.setAdvertisingParameters(interval: 0x00A0).packet
                == Self.bytes("01 0620 0f a000 a000 03 00 00 000000000000 07 00"))
    }

    @Test func leSetAdvertisingDataAndEnable() throws {
        // §7.8.7, OCF 0x0008: Advertising_Data_Length, then 31 octets of Advertising_Data.
        let beacon = BeaconID(uuid: UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, major: 1, minor: 258)
        let data = AdvertisingData.iBeacon(beacon, power: -59)
        #expect(
            data
                == Self.bytes(
                    "020106 1aff4c00 0215 e2c56db5dffb48d2b060d0f5a71096e0 0001 0102 c5"))
        #expect(HCICommand.setAdvertisingData(data).packet == Self.bytes("01 0820 20 1e") + data + [0])
        // §7.8.9, OCF 0x000A: Advertising_Enable.
        #expect(HCICommand.setAdvertisingEnable(true).packet == Self.bytes("01 0a20 01 01"))
        #expect(HCICommand.setAdvertisingEnable(false).packet == Self.bytes("01 0a20 01 00"))
    }

    @Test func theIBeaconDataWeAdvertiseDecodesBackThroughOurDecoder() throws {
        let beacon = BeaconID(uuid: UUID(uuidString: "ACFD165E-C0C0-11E3-9BBE-1A514932AC01")!, major: 65535, minor: 7)
        let data = AdvertisingData.iBeacon(beacon, power: -71)
        // An LE Advertising Report carrying it: 0x3E, length, subevent 0x02, 1 report, event type
        // 0x03, public address, the data, RSSI -50.
        let parameters: [UInt8] = [0x02, 0x01, 0x03, 0x00, 1, 2, 3, 4, 5, 6, UInt8(data.count)] + data + [0xCE]
        var decoder = AdvertisingReportDecoder()
        var decoded: [Advertisement] = []
        decoder.decode(event: [0x3E, UInt8(parameters.count)] + parameters) { decoded.append($0) }
        #expect(decoded.count == 1)
        #expect(decoded.first?.beacon == beacon)
        #expect(decoded.first?.power == -71)
        #expect(decoded.first?.format == .ibeacon)
    }

    @Test func commandsPrintAsNamedHex() {
        #expect(HCICommand.setScanEnable(true).description == "LE Set Scan Enable: 01 0c 20 02 01 00")
        #expect(HCICommand.setScanEnable(true).ogf == 0x08)
        #expect(HCICommand.setScanEnable(true).ocf == 0x000C)
    }

    @Test func commandCompleteAndCommandStatusAreRead() {
        // §7.7.14 Command Complete: Num_HCI_Command_Packets, Command_Opcode, Return_Parameters (status first).
        #expect(
            HCICommandResponse(event: Self.bytes("0e 04 01 0b20 00"))
                == HCICommandResponse(opcode: 0x200B, status: .success))
        // §7.7.15 Command Status: Status, Num_HCI_Command_Packets, Command_Opcode.
        #expect(
            HCICommandResponse(event: Self.bytes("0f 04 0c 01 0c20"))
                == HCICommandResponse(opcode: 0x200C, status: .commandDisallowed))
        #expect(HCIStatus(rawValue: 0x12).description == "Invalid HCI Command Parameters (0x12)")
        #expect(HCIStatus(rawValue: 0x99).description == "error 0x99")
    }

    @Test func otherEventsAndGarbageAreNotResponses() {
        for hex in ["", "0e", "0e 04 01 0b20", "0e 05 01 0b20 00", "0f 03 00 01 0b", "3e 04 01 0b20 00", "0e 02 01 0b"]
        {
            #expect(HCICommandResponse(event: Self.bytes(hex)) == nil, "\(hex)")
        }
        var random = SeededGenerator(seed: 5)
        for _ in 0..<20_000 {
            let length = Int.random(in: 0...12, using: &random)
            var event = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
            if length > 1, Bool.random(using: &random) { event[0] = Bool.random(using: &random) ? 0x0E : 0x0F }
            if length > 1, Bool.random(using: &random) { event[1] = UInt8(length - 2) }
            _ = HCICommandResponse(event: event)
        }
    }
}
