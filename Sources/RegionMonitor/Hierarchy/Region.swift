import BeaconCore
import Foundation

/// An Area (UUID), a Zone (UUID + major) or a Beacon (UUID + major + minor) (docs/behaviour.md §1).
///
/// The text form is canonical: `UUID`, `UUID:major`, `UUID:major:minor`, UUID upper-case.
package enum Region: Hashable, Sendable, CustomStringConvertible, Comparable {
    case area(UUID)
    case zone(UUID, major: UInt16)
    case beacon(BeaconID)

    package enum Kind: String, Sendable, Hashable {
        case area, zone, beacon
    }

    package var kind: Kind {
        switch self {
        case .area: .area
        case .zone: .zone
        case .beacon: .beacon
        }
    }

    package var uuid: UUID {
        switch self {
        case .area(let uuid), .zone(let uuid, _): uuid
        case .beacon(let beacon): beacon.uuid
        }
    }

    /// The region one level up: a Beacon's Zone, a Zone's Area; `nil` for an Area.
    package var parent: Region? {
        switch self {
        case .area: nil
        case .zone(let uuid, _): .area(uuid)
        case .beacon(let beacon): .zone(beacon.uuid, major: beacon.major)
        }
    }

    /// Whether `beacon` lies in this region.
    package func contains(_ beacon: BeaconID) -> Bool {
        switch self {
        case .area(let uuid): beacon.uuid == uuid
        case .zone(let uuid, let major): beacon.uuid == uuid && beacon.major == major
        case .beacon(let id): beacon == id
        }
    }

    package var description: String {
        switch self {
        case .area(let uuid): uuid.text
        case .zone(let uuid, let major): "\(uuid.text):\(major)"
        case .beacon(let beacon): beacon.description
        }
    }

    /// Parses the canonical form (the UUID in either case).
    package init?(_ text: some StringProtocol) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count), let uuid = UUID(uuidString: String(parts[0])) else { return nil }
        let numbers = parts.dropFirst().map { UInt16($0) }
        guard numbers.allSatisfy({ $0 != nil }) else { return nil }
        switch numbers.count {
        case 0: self = .area(uuid)
        case 1: self = .zone(uuid, major: numbers[0]!)
        default: self = .beacon(BeaconID(uuid: uuid, major: numbers[0]!, minor: numbers[1]!))
        }
    }

    /// Outside-in: areas before zones before beacons, then by text.
    package static func < (lhs: Region, rhs: Region) -> Bool {
        let order: [Kind: Int] = [.area: 0, .zone: 1, .beacon: 2]
        if lhs.kind != rhs.kind { return order[lhs.kind]! < order[rhs.kind]! }
        return lhs.description < rhs.description
    }
}
