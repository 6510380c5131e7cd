/// Cuts an HCI UART (H4) byte stream from a controller into packets (Core Vol 4 Part A §2): a
/// packet-type byte, then the packet with its own length field. Events (type 0x04) are handed on
/// from the event code on, as a raw HCI socket gives them; ACL, SCO and ISO data (0x02, 0x03,
/// 0x05) are skipped by their lengths. Any other type byte means the stream is not H4 (a wrong
/// baud rate, a firmware speaking something else, a lost byte): ``NotH4``, and the caller starts
/// the line again. Pure: bytes in, packets out, whatever way the bytes were split.
package struct H4Framer: Sendable {
    /// The stream held a byte that starts no H4 packet.
    package struct NotH4: Error, Sendable, Hashable, CustomStringConvertible {
        package var type: UInt8
        package init(type: UInt8) { self.type = type }
        package var description: String { "no H4 packet starts with 0x\(Hex.encode([type]))" }
    }

    private var buffer: [UInt8] = []
    /// Data packets skipped (ACL, SCO, ISO); a scanner expects none.
    package private(set) var skipped = 0

    package init() {}

    /// Bytes held that do not make a whole packet yet.
    package var pending: Int { buffer.count }

    /// Takes `bytes` and returns the events they complete, in order.
    package mutating func feed(_ bytes: some Collection<UInt8>) throws(NotH4) -> [[UInt8]] {
        buffer.append(contentsOf: bytes)
        var events: [[UInt8]] = []
        var start = 0
        defer { buffer.removeFirst(start) }
        while start < buffer.count {
            let type = buffer[start]
            // The header after the type byte, and where its length field sits in it.
            let header: Int
            let length: Int?
            switch type {
            case 0x04: (header, length) = (2, byte(start + 2))
            case 0x02: (header, length) = (4, word(start + 3))
            case 0x03: (header, length) = (3, byte(start + 3))
            case 0x05: (header, length) = (4, word(start + 3).map { $0 & 0x3FFF })
            default: throw NotH4(type: type)
            }
            guard let length, buffer.count - start >= 1 + header + length else { break }
            let end = start + 1 + header + length
            if type == 0x04 {
                events.append(Array(buffer[(start + 1)..<end]))
            } else {
                skipped &+= 1
            }
            start = end
        }
        return events
    }

    /// Forgets a partial packet (the line was opened again).
    package mutating func reset() {
        buffer.removeAll(keepingCapacity: true)
    }

    private func byte(_ index: Int) -> Int? {
        index < buffer.count ? Int(buffer[index]) : nil
    }

    private func word(_ index: Int) -> Int? {
        index + 1 < buffer.count ? Int(buffer[index]) | Int(buffer[index + 1]) << 8 : nil
    }
}
