import BeaconCore
import Foundation
import JSONText
import Testing

/// `decode`'s line, written by hand into a buffer, is byte for byte the line the general JSON
/// writer makes (the way it was made before).
@Suite struct JSONLineTests {
    /// The line as ``JSONObjectWriter`` writes it: the reference.
    static func reference(_ advertisement: Advertisement, at time: Timestamp) -> String {
        var object = JSONObjectWriter()
        object.add("t", time.iso8601)
        object.add("format", advertisement.format.rawValue)
        object.add("uuid", advertisement.beacon.uuid.uuidString)
        object.add("major", Int(advertisement.beacon.major))
        object.add("minor", Int(advertisement.beacon.minor))
        object.add("power", Int(advertisement.power))
        object.add("rssi", Int(advertisement.rssi))
        object.add("address", advertisement.address?.description)
        return object.text
    }

    @Test func decodeLinesAreTheGeneralWritersByteForByte() {
        var random = SeededGenerator(seed: 31)
        var buffer: [UInt8] = []
        for round in 0..<20_000 {
            let advertisement = Advertisement(
                format: Bool.random(using: &random) ? .ibeacon : .altbeacon,
                beacon: BeaconID(
                    uuid: UUID(),
                    major: round < 4 ? [0, .max, 1, 9][round] : UInt16.random(in: 0 ... .max, using: &random),
                    minor: UInt16.random(in: 0 ... .max, using: &random)),
                power: round < 4 ? [.min, .max, 0, -1][round] : Int8.random(in: .min ... .max, using: &random),
                rssi: round < 4 ? [.min, .max, 0, -100][round] : Int8.random(in: .min ... .max, using: &random),
                address: round % 5 == 0 ? nil : BluetoothAddress(value: UInt64.random(in: 0 ... .max, using: &random)))
            let time = Timestamp(
                microseconds: round < 3
                    ? [.min, .max, 0][round]
                    : Int64.random(in: -100_000_000_000_000...5_000_000_000_000_000, using: &random))
            #expect(advertisement.jsonLine(at: time) == Self.reference(advertisement, at: time))
            buffer.removeAll(keepingCapacity: true)
            advertisement.appendJSONLine(at: time, to: &buffer)
            #expect(String(decoding: buffer, as: UTF8.self) == Self.reference(advertisement, at: time))
        }
    }

    @Test func wholeNumbersAreWrittenAsStringWritesThem() {
        var out: [UInt8] = []
        for value in [0, 1, -1, 9, 10, -10, 65_535, Int.max, Int.min, 1_000_000_007, -987_654_321] {
            out.removeAll()
            TextCursor.appending(to: &out, atMost: 20) { $0.put(value) }
            #expect(String(decoding: out, as: UTF8.self) == String(value))
        }
    }
}
