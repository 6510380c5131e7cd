/// A controller's answer to a command: Command Complete (event 0x0E: packets allowed, opcode,
/// return parameters whose first byte is the status) or Command Status (event 0x0F: status,
/// packets allowed, opcode), Core Vol 4 Part E §7.7.14 and §7.7.15.
package struct HCICommandResponse: Sendable, Hashable {
    package var opcode: UInt16
    package var status: HCIStatus

    package init(opcode: UInt16, status: HCIStatus) {
        self.opcode = opcode
        self.status = status
    }

    /// Reads a response from an event, from the event code on; `nil` for any other event or a
    /// response too short to hold its fields.
    package init?(event: some Collection<UInt8>) {
        let bytes = Array(event)
        guard bytes.count >= 2, Int(bytes[1]) == bytes.count - 2 else { return nil }
        switch bytes[0] {
        case 0x0E where bytes.count >= 6:
            opcode = UInt16(bytes[3]) | UInt16(bytes[4]) << 8
            status = HCIStatus(rawValue: bytes[5])
        case 0x0F where bytes.count >= 6:
            status = HCIStatus(rawValue: bytes[2])
            opcode = UInt16(bytes[4]) | UInt16(bytes[5]) << 8
        default:
            return nil
        }
    }
}

/// An HCI error code (Core Vol 1 Part F), with the name the specification gives it.
package struct HCIStatus: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    package var rawValue: UInt8
    package init(rawValue: UInt8) { self.rawValue = rawValue }

    package static let success = HCIStatus(rawValue: 0x00)
    package static let unknownCommand = HCIStatus(rawValue: 0x01)
    package static let commandDisallowed = HCIStatus(rawValue: 0x0C)

    static let names: [UInt8: String] = [
        0x00: "Success", 0x01: "Unknown HCI Command", 0x03: "Hardware Failure", 0x07: "Memory Capacity Exceeded",
        0x0C: "Command Disallowed", 0x0D: "Connection Rejected due to Limited Resources",
        0x11: "Unsupported Feature or Parameter Value", 0x12: "Invalid HCI Command Parameters",
        0x1F: "Unspecified Error", 0x3A: "Controller Busy",
    ]

    package var description: String {
        let hex = "0x" + Hex.encode([rawValue])
        return Self.names[rawValue].map { "\($0) (\(hex))" } ?? "error \(hex)"
    }
}
