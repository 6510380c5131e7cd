/// The btsnoop capture format, as `btsnoop`, Android and `btmon -w` write it.
///
/// A 16-byte header (`btsnoop\0`, version 1, datalink), then records: original length, included
/// length, flags, cumulative drops (4 bytes each, big-endian), a timestamp (signed 64-bit
/// microseconds since midnight, January 1st of year 0 AD), and the packet.
package enum BTSnoop {
    /// How the packets of a capture are framed.
    package enum Datalink: UInt32, Sendable, CaseIterable {
        /// Un-encapsulated HCI; the flags tell events (bit 1 set, bit 0 received) from the rest.
        case h1 = 1001
        /// HCI UART: each packet starts with its H4 type byte (0x04 for an event).
        case h4 = 1002
        /// The Linux monitor format of `btmon`: flags hold the adapter index and an opcode (3 = event).
        case monitor = 2001
    }

    package static let headerSize = 16
    package static let recordHeaderSize = 24
    static let magic: [UInt8] = Array("btsnoop\0".utf8)
    /// Microseconds from 0 AD to the Unix epoch.
    static let epochOffset: Int64 = 0x00DC_DDB3_0F2F_8000
    /// Larger than any HCI packet; a record claiming more is corruption, not data.
    static let maximumPacketSize = 65_539

    /// Reads the file header, or says why these bytes are not a capture beaconwatch reads.
    package static func parseHeader(_ bytes: [UInt8]) -> Result<Datalink, Failure> {
        guard bytes.count >= headerSize else { return .failure(.notBTSnoop) }
        guard Array(bytes[0..<8]) == magic else { return .failure(.notBTSnoop) }
        let version = readUInt32(bytes, at: 8)
        guard version == 1 else { return .failure(.unsupportedVersion(version)) }
        let link = readUInt32(bytes, at: 12)
        guard let datalink = Datalink(rawValue: link) else { return .failure(.unsupportedDatalink(link)) }
        return .success(datalink)
    }

    /// A record's place in the capture and what it holds.
    package struct Record: Sendable, Hashable {
        package var time: Timestamp
        package var flags: UInt32
        package var packet: ArraySlice<UInt8>

        package init(time: Timestamp, flags: UInt32, packet: ArraySlice<UInt8>) {
            self.time = time
            self.flags = flags
            self.packet = packet
        }
    }

    package enum Failure: Error, Sendable, Hashable, CustomStringConvertible {
        case notBTSnoop
        case unsupportedVersion(UInt32)
        case unsupportedDatalink(UInt32)
        case badRecordLength(included: UInt32, original: UInt32)

        package var description: String {
            switch self {
            case .notBTSnoop:
                "not a btsnoop capture (no 'btsnoop' header); record one with 'btmon -w FILE'"
            case .unsupportedVersion(let version):
                "btsnoop version \(version) is not supported; beaconwatch reads version 1"
            case .unsupportedDatalink(let link):
                "btsnoop datalink \(link) is not supported; beaconwatch reads 1001 (H1), 1002 (H4) and "
                    + "2001 (btmon); record with 'btmon -w FILE'"
            case .badRecordLength(let included, let original):
                "record claims \(included) bytes of a \(original)-byte packet: the capture is corrupt"
            }
        }
    }

    /// Parses the record starting at `offset`.
    ///
    /// Returns `nil` when `bytes` ends before the record does (read more, or the capture was cut
    /// short), else the record and the offset after it.
    package static func parseRecord(
        _ bytes: [UInt8],
        at offset: Int
    ) -> Result<(record: Record, next: Int), Failure>? {
        guard offset >= 0, bytes.count - offset >= recordHeaderSize else { return nil }
        let original = readUInt32(bytes, at: offset)
        let included = readUInt32(bytes, at: offset + 4)
        guard included <= original, included <= maximumPacketSize else {
            return .failure(.badRecordLength(included: included, original: original))
        }
        let flags = readUInt32(bytes, at: offset + 8)
        let stamp = Int64(
            bitPattern: UInt64(readUInt32(bytes, at: offset + 16)) << 32
                | UInt64(readUInt32(bytes, at: offset + 20)))
        let start = offset + recordHeaderSize
        let end = start + Int(included)
        guard end <= bytes.count else { return nil }
        // Saturate rather than overflow on a nonsense timestamp: the value is data, not a crash.
        let (unix, overflow) = stamp.subtractingReportingOverflow(epochOffset)
        let time = Timestamp(microseconds: overflow ? Int64.min : unix)
        return .success((Record(time: time, flags: flags, packet: bytes[start..<end]), end))
    }

    /// Why `record` cannot be used though the capture goes on, or `nil`: its time must lie in
    /// ``Timestamp/captureRange`` (docs/behaviour.md §3.2: a phone whose clock was never set dates its records
    /// around 1970, and they are taken as they are).
    package static func problem(with record: Record) -> String? {
        guard !Timestamp.captureRange.contains(record.time) else { return nil }
        return "its time is not from 1900-01-01 to 2100-01-01: the record is corrupt"
    }

    /// The HCI event (from the event code on) a record carries, or `nil` for commands, ACL data
    /// and monitor notices.
    package static func event(in record: Record, datalink: Datalink) -> ArraySlice<UInt8>? {
        switch datalink {
        case .h1:
            return record.flags & 0b11 == 0b11 ? record.packet : nil
        case .h4:
            guard let type = record.packet.first, type == 0x04 else { return nil }
            return record.packet.dropFirst()
        case .monitor:
            return record.flags & 0xFFFF == 3 ? record.packet : nil
        }
    }

    @inline(__always)
    static func readUInt32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8
            | UInt32(bytes[offset + 3])
    }
}
