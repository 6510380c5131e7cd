import Foundation

/// The identity of an iBeacon: proximity UUID, major and minor.
///
/// Its canonical text form is `UUID:major:minor` with the UUID upper-case (docs/behaviour.md §1).
package struct BeaconID: Hashable, Sendable, CustomStringConvertible {
    package var uuid: UUID
    package var major: UInt16
    package var minor: UInt16

    package init(uuid: UUID, major: UInt16, minor: UInt16) {
        self.uuid = uuid
        self.major = major
        self.minor = minor
    }

    package var description: String { "\(uuid.text):\(major):\(minor)" }
}
