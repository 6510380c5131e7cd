import BeaconCore
import Foundation

/// The conformance vectors, read from the verbatim copy in `Tests/conformance` (a user's clone has
/// no `../shared`; `scripts/test` checks the copy against it where it exists).
package enum Conformance {
    package static let directory: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // TestSupport
        .deletingLastPathComponent()  // Tests
        .appendingPathComponent("conformance")

    package static func url(_ name: String) -> URL { directory.appendingPathComponent(name) }

    package static func load<T: Decodable>(_ type: T.Type, from name: String) throws -> T {
        try JSONDecoder().decode(type, from: Data(contentsOf: url(name)))
    }

    /// `adverts.json`: HCI events and the sightings each decodes to.
    package struct Adverts: Decodable, Sendable {
        package var cases: [Case]
        package struct Case: Decodable, Sendable, CustomStringConvertible {
            package var name: String
            package var hci: String
            package var sightings: [ExpectedSighting]
            package var description: String { name }
        }
    }

    /// `captures.json`: the sightings the three btsnoop captures hold.
    package struct Captures: Decodable, Sendable {
        package var sightings: [ExpectedSighting]
    }

    /// A sighting as the vectors list it; a field left out is not checked.
    package struct ExpectedSighting: Decodable, Sendable {
        package var t: Double?
        package var format: String?
        package var uuid: String
        package var major: Int
        package var minor: Int
        package var power: Int?
        package var rssi: Int
        package var address: String?

        /// The fields that differ from `advertisement` (at `time`, when the vector gives one).
        package func mismatches(_ advertisement: Advertisement, at time: Timestamp? = nil) -> [String] {
            var out: [String] = []
            if let t, let time, abs(time.secondsSinceEpoch - t) > 0.000_001 { out.append("t \(time) != \(t)") }
            if let format, format != advertisement.format.rawValue { out.append("format \(advertisement.format)") }
            if uuid != advertisement.beacon.uuid.uuidString { out.append("uuid \(advertisement.beacon.uuid)") }
            if major != Int(advertisement.beacon.major) { out.append("major \(advertisement.beacon.major)") }
            if minor != Int(advertisement.beacon.minor) { out.append("minor \(advertisement.beacon.minor)") }
            if let power, power != Int(advertisement.power) { out.append("power \(advertisement.power)") }
            if rssi != Int(advertisement.rssi) { out.append("rssi \(advertisement.rssi)") }
            if let address, address != advertisement.address?.description {
                out.append("address \(String(describing: advertisement.address))")
            }
            return out
        }
    }
}

extension Array where Element == UInt8 {
    /// A copy with `times` random bytes overwritten by random values: the simplest fuzz mutation.
    package func overwritingRandomBytes(times: ClosedRange<Int>, using random: inout SeededGenerator) -> [UInt8] {
        var bytes = self
        guard !bytes.isEmpty else { return bytes }
        for _ in 0..<Int.random(in: times, using: &random) {
            bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
        }
        return bytes
    }
}
