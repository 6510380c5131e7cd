import Foundation

/// The identity of an iBeacon: proximity UUID, major and minor.
///
/// Its canonical text form is `UUID:major:minor` with the UUID upper-case (docs/behaviour.md §1).
public struct BeaconID: Hashable, Sendable, CustomStringConvertible {
    public var uuid: UUID
    public var major: UInt16
    public var minor: UInt16

    public init(uuid: UUID, major: UInt16, minor: UInt16) {
        self.uuid = uuid
        self.major = major
        self.minor = minor
    }

    public var description: String { "\(uuid.text):\(major):\(minor)" }
}
