/// How a tag's room is chosen among the Zones whose scanners hear it (docs/behaviour.md §19,
/// `Tags.rooms = nearest`): the evidence for a room is its best scanner's, as the filtered RSSI above
/// the tag's measured power (with the scanner's offset); a report older than ``fresh`` is no
/// evidence at all.
///
/// - A tag in no room enters at once the room of the first scanner that hears it (the best, as
///   far as anything is known then).
/// - Later it moves only when another room's evidence is at least ``margin`` dB above its present
///   room's, or its present room has no fresh evidence while another has: so a stale report
///   never wins, and a tag by a doorway between two rooms heard about equally stays where it is.
/// - It leaves its room and its Area when no scanner of that Area has heard it for the exit
///   timeout.
public struct RoomRule: Sendable, Hashable, CustomStringConvertible {
    /// dB by which another room must be heard stronger to take over.
    public var margin: Double
    /// Seconds after which a scanner's last report of the tag is no evidence.
    public var fresh: Double

    public init(margin: Double = 5, fresh: Double = 10) {
        self.margin = margin
        self.fresh = fresh
    }

    public var description: String {
        "a tag moves to another room when that room's best scanner hears it at least \(Self.text(margin)) dB "
            + "stronger than its present room's, or when its present room's scanners have not heard it for "
            + "\(Self.text(fresh)) s while another's have; a report older than \(Self.text(fresh)) s never wins"
    }

    static func text(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}
