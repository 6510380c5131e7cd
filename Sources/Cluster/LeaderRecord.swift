/// The leader record of a cluster (docs/behaviour.md §21): retained on
/// `MQTT.topic/_cluster/<name>/leader`, cleared by the cluster connection's will. Its text is
/// `<epoch> <member>`; an empty payload is no leader.
package struct LeaderRecord: Sendable, Hashable, CustomStringConvertible {
    /// Counts takeovers: a daemon that takes over claims one more than the highest it has seen.
    package var epoch: UInt64
    /// The claiming daemon's member id.
    package var member: String

    package init(epoch: UInt64, member: String) {
        self.epoch = epoch
        self.member = member
    }

    package var description: String { "\(epoch) \(member)" }

    /// What a payload on the leader topic says.
    package enum Reading: Sendable, Hashable {
        /// An empty payload: no leader.
        case none
        case record(LeaderRecord)
        /// Not a record (garbage someone published): said, never taken for a leader or for none.
        case unreadable
    }

    /// Reads a payload of the leader topic.
    package static func read(_ payload: some Collection<UInt8>) -> Reading {
        guard !payload.isEmpty else { return .none }
        guard payload.count <= 96, let text = String(validating: Array(payload), as: UTF8.self) else {
            return .unreadable
        }
        let parts = text.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 2, let epoch = UInt64(parts[0]), isMember(parts[1]) else { return .unreadable }
        return .record(LeaderRecord(epoch: epoch, member: String(parts[1])))
    }

    /// A member id: 1 to 64 letters, digits, `-`, `_` or `.`.
    package static func isMember(_ text: some StringProtocol) -> Bool {
        (1...64).contains(text.utf8.count)
            && text.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
                    true
                default: false
                }
            }
    }

    /// Whether this record wins over `other` when both claim: the later epoch, and at the same
    /// epoch the smaller member id: the same answer on every daemon, whatever order the claims
    /// reached it in.
    package func beats(_ other: LeaderRecord) -> Bool {
        epoch != other.epoch ? epoch > other.epoch : member < other.member
    }
}
