/// A monitor's rooms part (docs/behaviour.md §19, §20): the tag's room, since when and why it last
/// changed, the contest for it, how long each scanner's evidence outlives a silence, and where
/// the tag is on its floor. Only the room rules (`Monitor+Rooms`, `Monitor+Position`) write it;
/// a restart and a reload carry its room and why.
package struct RoomState: Sendable {
    /// The room, a Zone index; -1 for none.
    var zone: Int32 = -1
    /// When the room last changed (µs), `.min` for never.
    var since: Int64 = .min
    /// The present room's contest with the best other one (``RoomRule``).
    var contest = RoomRule.Contest()
    /// Why the room last changed.
    package internal(set) var change: RoomChange?
    /// Per beacon, the seconds of silence its evidence outlives under the adaptive exit (empty
    /// without it).
    var grace: [Double]
    /// Where the tag is on its floor (§20).
    package internal(set) var position = PositionState()
    /// What the fingerprints say, and a training session (§22).
    package internal(set) var prints = PrintState()

    init(grace: [Double]) { self.grace = grace }
}
