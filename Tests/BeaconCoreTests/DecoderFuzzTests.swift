import BeaconCore
import Testing
import TestSupport

/// Random and mutated input must never crash a parser (docs/behaviour.md §13). Seeded, so a failure replays.
@Suite struct DecoderFuzzTests {
    @Test func hundredThousandRandomAndMutatedEventsNeverCrashTheDecoder() throws {
        let adverts = try Conformance.load(Conformance.Adverts.self, from: "adverts.json")
        let seeds = adverts.cases.compactMap { Hex.decode($0.hci) }.filter { $0.count > 4 }
        var random = SeededGenerator(seed: 0xB3AC_0A7C)
        var decoder = AdvertisingReportDecoder()
        var decoded = 0
        for round in 0..<100_000 {
            let event: [UInt8]
            if round % 4 == 0 {
                event = Self.randomBytes(
                    count: Int.random(in: 0...300, using: &random), using: &random, leMeta: round % 8 == 0)
            } else {
                event = Self.mutate(seeds[round % seeds.count], using: &random)
            }
            decoder.decode(event: event) { advertisement in
                decoded += 1
                #expect(advertisement.rssi != 127)
            }
        }
        let statistics = decoder.statistics
        #expect(statistics.events == 100_000)
        // The mutations must exercise every path, not only the first length check.
        #expect(decoded > 1_000)
        #expect(statistics.malformed > 1_000)
        #expect(statistics.notBeacons > 100)
        #expect(statistics.incomplete > 0)
    }

    /// Random bytes; half of them start as an LE meta event so the report parsers see them.
    static func randomBytes(count: Int, using random: inout SeededGenerator, leMeta: Bool) -> [UInt8] {
        var bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
        if leMeta, bytes.count >= 4 {
            bytes[0] = 0x3E
            bytes[2] = Bool.random(using: &random) ? 0x02 : 0x0D
        }
        return bytes
    }

    /// Flips, overwrites, inserts, deletes or truncates bytes, favouring the length fields.
    static func mutate(_ seed: [UInt8], using random: inout SeededGenerator) -> [UInt8] {
        var bytes = seed
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            guard !bytes.isEmpty else { break }
            let index = Int.random(in: 0..<bytes.count, using: &random)
            switch Int.random(in: 0..<6, using: &random) {
            case 0: bytes[index] ^= 1 << UInt8.random(in: 0..<8, using: &random)
            case 1: bytes[index] = UInt8.random(in: 0...255, using: &random)
            case 2: bytes.insert(UInt8.random(in: 0...255, using: &random), at: index)
            case 3: bytes.remove(at: index)
            case 4: bytes.removeLast(Int.random(in: 0...bytes.count, using: &random))
            default:
                // A length byte: the event's, the report count, a report's data length or an AD length.
                let lengths = [1, 3, 12, 13, 14, 27].filter { $0 < bytes.count }
                if let at = lengths.randomElement(using: &random) {
                    bytes[at] = [0, 1, 0x1A, 0x1E, 0x7F, 0xFF].randomElement(using: &random)!
                }
            }
        }
        return bytes
    }
}
