import Foundation

/// Advertising data (AD structures) and the beacon layouts found in it.
///
/// An AD structure is a length byte, a type byte and `length - 1` bytes of data. A length of zero
/// ends the significant part (the rest is padding).
package enum AdvertisingData {
    package enum Result: Sendable, Hashable {
        case beacon(BeaconFormat, BeaconID, power: Int8)
        case none
        case malformed
    }

    static let manufacturerSpecific: UInt8 = 0xFF

    /// Scans the AD structures in `data` (a range of `bytes`) for the first beacon layout.
    ///
    /// iBeacon: company 0x004C, type 0x02, length 0x15, UUID (16), major and minor (big-endian),
    /// measured power (signed). AltBeacon: any company, code 0xBEAC, 20-byte ID read as UUID,
    /// major, minor, then the signed reference RSSI.
    package static func findBeacon(_ bytes: UnsafeRawBufferPointer, in data: Range<Int>) -> Result {
        precondition(data.lowerBound >= 0 && data.upperBound <= bytes.count)
        var offset = data.lowerBound
        while offset < data.upperBound {
            let length = Int(bytes[offset])
            if length == 0 { return .none }
            let next = offset + 1 + length
            guard next <= data.upperBound else { return .malformed }
            // Manufacturer data: type, company (2, little-endian), payload.
            if bytes[offset + 1] == manufacturerSpecific, length >= 3 {
                let payload = offset + 4
                let payloadCount = next - payload
                let company = UInt16(bytes[offset + 2]) | UInt16(bytes[offset + 3]) << 8
                if company == 0x004C, payloadCount >= 23, bytes[payload] == 0x02, bytes[payload + 1] == 0x15 {
                    let beacon = beaconID(bytes, at: payload + 2)
                    return .beacon(.ibeacon, beacon, power: Int8(bitPattern: bytes[payload + 22]))
                }
                if payloadCount >= 23, bytes[payload] == 0xBE, bytes[payload + 1] == 0xAC {
                    let beacon = beaconID(bytes, at: payload + 2)
                    return .beacon(.altbeacon, beacon, power: Int8(bitPattern: bytes[payload + 22]))
                }
            }
            offset = next
        }
        return .none
    }

    /// 16 bytes of UUID, then major and minor, big-endian. The caller has checked the bounds.
    @inline(__always)
    static func beaconID(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> BeaconID {
        let b = { (index: Int) in bytes[offset + index] }
        let uuid = UUID(
            uuid: (
                b(0), b(1), b(2), b(3), b(4), b(5), b(6), b(7),
                b(8), b(9), b(10), b(11), b(12), b(13), b(14), b(15)
            )
        )
        let major = UInt16(b(16)) << 8 | UInt16(b(17))
        let minor = UInt16(b(18)) << 8 | UInt16(b(19))
        return BeaconID(uuid: uuid, major: major, minor: minor)
    }
}
