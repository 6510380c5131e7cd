import Foundation

/// An HCI command: opcode (OGF << 10 | OCF) and parameters, as Bluetooth Core Vol 4 Part E §5.4.1
/// lays the packet out. The LE Controller commands (OGF 0x08, §7.8) beaconwatch sends, and the
/// few others it needs when it owns a controller on H4.
package struct HCICommand: Sendable, Hashable, CustomStringConvertible {
    package static let leControllerGroup: UInt16 = 0x08

    package var name: String
    package var opcode: UInt16
    package var parameters: [UInt8]

    package init(name: String, opcode: UInt16, parameters: [UInt8]) {
        self.name = name
        self.opcode = opcode
        self.parameters = parameters
    }

    static func le(_ ocf: UInt16, _ name: String, _ parameters: [UInt8]) -> HCICommand {
        HCICommand(name: name, opcode: leControllerGroup << 10 | ocf, parameters: parameters)
    }

    package var ogf: UInt16 { opcode >> 10 }
    package var ocf: UInt16 { opcode & 0x3FF }

    /// The packet on an H4 transport or a raw HCI socket: type 0x01, opcode little-endian,
    /// parameter length, parameters.
    package var packet: [UInt8] {
        [0x01, UInt8(opcode & 0xFF), UInt8(opcode >> 8), UInt8(parameters.count)] + parameters
    }

    /// `name: 01 0b 20 07 …`, the packet in hex.
    package var description: String {
        "\(name): " + packet.map { Hex.encode([$0]) }.joined(separator: " ")
    }

    // MARK: - Scanning (§7.8.10, §7.8.11, §7.8.64, §7.8.65)

    /// How a scan runs. Interval and window are in units of 0.625 ms (0x0004–0x4000, window ≤
    /// interval); the default scans all the time, as `hcitool lescan` does.
    package struct ScanParameters: Sendable, Hashable {
        package var active: Bool
        package var interval: UInt16
        package var window: UInt16
        /// 0x00 public, 0x01 random.
        package var ownAddressType: UInt8
        /// Report duplicates: every advertisement yields an RSSI.
        package var filterDuplicates: Bool

        package init(
            active: Bool = false, interval: UInt16 = 0x0010, window: UInt16 = 0x0010,
            ownAddressType: UInt8 = 0x00, filterDuplicates: Bool = false
        ) {
            self.active = active
            self.interval = interval
            self.window = window
            self.ownAddressType = ownAddressType
            self.filterDuplicates = filterDuplicates
        }
    }

    /// LE Set Scan Parameters (OCF 0x000B): type, interval, window, own address type, filter policy.
    package static func setScanParameters(_ scan: ScanParameters) -> HCICommand {
        le(
            0x000B, "LE Set Scan Parameters",
            [scan.active ? 0x01 : 0x00] + le16(scan.interval) + le16(scan.window) + [scan.ownAddressType, 0x00])
    }

    /// LE Set Scan Enable (OCF 0x000C): enable, filter duplicates.
    package static func setScanEnable(_ enable: Bool, filterDuplicates: Bool = false) -> HCICommand {
        le(0x000C, "LE Set Scan Enable", [enable ? 0x01 : 0x00, filterDuplicates ? 0x01 : 0x00])
    }

    /// LE Set Extended Scan Parameters (OCF 0x0041): own address type, filter policy, PHYs (LE 1M
    /// only), then for that PHY its type, interval and window.
    package static func setExtendedScanParameters(_ scan: ScanParameters) -> HCICommand {
        le(
            0x0041, "LE Set Extended Scan Parameters",
            [scan.ownAddressType, 0x00, 0x01, scan.active ? 0x01 : 0x00] + le16(scan.interval) + le16(scan.window))
    }

    /// LE Set Extended Scan Enable (OCF 0x0042): enable, filter duplicates, duration 0 (until
    /// disabled), period 0.
    package static func setExtendedScanEnable(_ enable: Bool, filterDuplicates: Bool = false) -> HCICommand {
        le(0x0042, "LE Set Extended Scan Enable", [enable ? 0x01 : 0x00, filterDuplicates ? 0x01 : 0x00, 0, 0, 0, 0])
    }

    // MARK: - Advertising (§7.8.5, §7.8.7, §7.8.9)

    /// LE Set Advertising Parameters (OCF 0x0006) for a beacon: `ADV_NONCONN_IND` every `interval`
    /// (units of 0.625 ms, 0x0020–0x4000), own public address, all three channels, no filter.
    package static func setAdvertisingParameters(interval: UInt16) -> HCICommand {
        le(
            0x0006, "LE Set Advertising Parameters",
            le16(interval) + le16(interval) + [0x03, 0x00, 0x00] + [UInt8](repeating: 0, count: 6) + [0x07, 0x00])
    }

    /// LE Set Advertising Data (OCF 0x0008): the length, then 31 bytes of data padded with zeros.
    package static func setAdvertisingData(_ data: [UInt8]) -> HCICommand {
        precondition(data.count <= 31, "legacy advertising data is at most 31 bytes")
        return le(
            0x0008, "LE Set Advertising Data",
            [UInt8(data.count)] + data + [UInt8](repeating: 0, count: 31 - data.count))
    }

    /// LE Set Advertising Enable (OCF 0x000A).
    package static func setAdvertisingEnable(_ enable: Bool) -> HCICommand {
        le(0x000A, "LE Set Advertising Enable", [enable ? 0x01 : 0x00])
    }

    // MARK: - Owning a controller on H4 (§7.3.1, §7.3.2, §7.4.6, §7.8.1, §7.8.3)

    /// Reset (OGF 0x03, OCF 0x0003): the controller forgets any scan, advertising or connection.
    package static let reset = HCICommand(name: "Reset", opcode: 0x03 << 10 | 0x0003, parameters: [])

    /// Set Event Mask (OGF 0x03, OCF 0x0001): the default events and LE Meta (bit 61), without
    /// which a controller sends no advertising report at all.
    package static let setEventMask = HCICommand(
        name: "Set Event Mask", opcode: 0x03 << 10 | 0x0001, parameters: le64(0x2000_1FFF_FFFF_FFFF))

    /// Read BD_ADDR (OGF 0x04, OCF 0x0009): asks nothing of the radio, so it serves to ask a silent
    /// controller whether it still answers.
    package static let readAddress = HCICommand(name: "Read BD_ADDR", opcode: 0x04 << 10 | 0x0009, parameters: [])

    /// LE Set Event Mask (OCF 0x0001): the default LE events (bits 0–4, advertising reports among
    /// them) and LE Extended Advertising Report (bit 12).
    package static let setLEEventMask = le(0x0001, "LE Set Event Mask", le64(0x0000_0000_0000_101F))

    /// LE Read Local Supported Features (OCF 0x0003): the LE feature mask (bit 12: extended
    /// advertising).
    package static let readLEFeatures = le(0x0003, "LE Read Local Supported Features", [])

    static func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
    static func le64(_ value: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) } }
}

extension AdvertisingData {
    /// An iBeacon's advertising data: flags (LE General Discoverable, no BR/EDR), then Apple's
    /// manufacturer data: type 0x02, length 0x15, UUID, major and minor big-endian, measured power.
    package static func iBeacon(_ beacon: BeaconID, power: Int8) -> [UInt8] {
        let uuid = withUnsafeBytes(of: beacon.uuid.uuid) { Array($0) }
        return [0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15] + uuid
            + [
                UInt8(beacon.major >> 8), UInt8(beacon.major & 0xFF), UInt8(beacon.minor >> 8),
                UInt8(beacon.minor & 0xFF),
            ]
            + [UInt8(bitPattern: power)]
    }
}
