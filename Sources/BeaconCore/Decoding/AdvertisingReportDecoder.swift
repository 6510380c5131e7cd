import Foundation

/// Decodes HCI LE advertising report events into beacon advertisements (docs/behaviour.md §3.2).
///
/// Handles LE Advertising Report (LE meta event 0x3E, subevent 0x02; every report of the event)
/// and LE Extended Advertising Report (subevent 0x0D; complete data only). Input is an HCI event
/// from the event code on, without the H4 packet-type byte. Every read is bounds-checked: garbage
/// is skipped and counted in ``statistics``, never trapped on. The decoder allocates nothing per
/// report.
package struct AdvertisingReportDecoder: Sendable {
    package private(set) var statistics = DecodeStatistics()

    package init() {}

    static let leMetaEvent: UInt8 = 0x3E
    static let advertisingReport: UInt8 = 0x02
    static let extendedAdvertisingReport: UInt8 = 0x0D
    static let rssiUnavailable: UInt8 = 0x7F

    /// Decodes one event and calls `body` with each beacon advertisement in it, in report order.
    package mutating func decode(event bytes: [UInt8], _ body: (Advertisement) throws -> Void) rethrows {
        try bytes.withUnsafeBytes { try decode(event: $0, body) }
    }

    /// Decodes one event and returns its beacon advertisements (convenience for tests and tools).
    package mutating func decode(event bytes: [UInt8]) -> [Advertisement] {
        var found: [Advertisement] = []
        decode(event: bytes) { found.append($0) }
        return found
    }

    /// Decodes one event and calls `body` with each beacon advertisement in it, in report order.
    package mutating func decode(
        event bytes: UnsafeRawBufferPointer,
        _ body: (Advertisement) throws -> Void
    ) rethrows {
        statistics.events += 1
        guard bytes.count >= 2 else {
            statistics.malformed += 1
            return
        }
        guard bytes[0] == Self.leMetaEvent else {
            statistics.otherEvents += 1
            return
        }
        // Parameters run from offset 2 for the declared length; a short buffer is a truncated
        // event: decode the reports that are whole, and count the event as malformed.
        let declared = Int(bytes[1])
        var end = 2 + declared
        if end > bytes.count {
            statistics.malformed += 1
            end = bytes.count
        }
        guard end >= 4 else {
            if end == 3 && bytes[2] != Self.advertisingReport && bytes[2] != Self.extendedAdvertisingReport {
                statistics.otherEvents += 1
            } else {
                statistics.malformed += 1
            }
            return
        }
        let count = Int(bytes[3])
        switch bytes[2] {
        case Self.advertisingReport:
            try decodeLegacy(bytes, from: 4, end: end, reports: count, body)
        case Self.extendedAdvertisingReport:
            try decodeExtended(bytes, from: 4, end: end, reports: count, body)
        default:
            statistics.otherEvents += 1
        }
    }

    /// Report layout: event type, address type, address (6, LSB first), data length, data, RSSI.
    private mutating func decodeLegacy(
        _ bytes: UnsafeRawBufferPointer,
        from start: Int,
        end: Int,
        reports: Int,
        _ body: (Advertisement) throws -> Void
    ) rethrows {
        var offset = start
        for _ in 0..<reports {
            statistics.reports += 1
            guard offset + 9 <= end else {
                statistics.malformed += 1
                return
            }
            let address = Self.address(bytes, at: offset + 2)
            let length = Int(bytes[offset + 8])
            let dataStart = offset + 9
            let rssiOffset = dataStart + length
            guard rssiOffset < end else {
                statistics.malformed += 1
                return
            }
            offset = rssiOffset + 1
            try report(bytes, data: dataStart..<rssiOffset, rssi: bytes[rssiOffset], address: address, body)
        }
    }

    /// Report layout: event type (2), address type, address (6), primary PHY, secondary PHY, SID,
    /// TX power, RSSI, periodic interval (2), direct address type, direct address (6), data length,
    /// data: 24 bytes before the data.
    private mutating func decodeExtended(
        _ bytes: UnsafeRawBufferPointer,
        from start: Int,
        end: Int,
        reports: Int,
        _ body: (Advertisement) throws -> Void
    ) rethrows {
        var offset = start
        for _ in 0..<reports {
            statistics.reports += 1
            guard offset + 24 <= end else {
                statistics.malformed += 1
                return
            }
            let eventType = UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
            let address = Self.address(bytes, at: offset + 3)
            let rssi = bytes[offset + 13]
            let length = Int(bytes[offset + 23])
            let dataStart = offset + 24
            let dataEnd = dataStart + length
            guard dataEnd <= end else {
                statistics.malformed += 1
                return
            }
            offset = dataEnd
            // Data status, bits 5–6: 0 complete, 1 more to come, 2 truncated.
            guard (eventType >> 5) & 0b11 == 0 else {
                statistics.incomplete += 1
                continue
            }
            try report(bytes, data: dataStart..<dataEnd, rssi: rssi, address: address, body)
        }
    }

    private mutating func report(
        _ bytes: UnsafeRawBufferPointer,
        data: Range<Int>,
        rssi: UInt8,
        address: BluetoothAddress,
        _ body: (Advertisement) throws -> Void
    ) rethrows {
        guard rssi != Self.rssiUnavailable else {
            statistics.rssiUnavailable += 1
            return
        }
        switch AdvertisingData.findBeacon(bytes, in: data) {
        case .beacon(let format, let beacon, let power):
            statistics.beacons += 1
            try body(
                Advertisement(
                    format: format,
                    beacon: beacon,
                    power: power,
                    rssi: Int8(bitPattern: rssi),
                    address: address
                )
            )
        case .none:
            statistics.notBeacons += 1
        case .malformed:
            statistics.malformed += 1
        }
    }

    @inline(__always)
    static func address(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> BluetoothAddress {
        var value: UInt64 = 0
        for index in 0..<6 {
            value |= UInt64(bytes[offset + index]) << (UInt64(index) * 8)
        }
        return BluetoothAddress(value: value)
    }
}
