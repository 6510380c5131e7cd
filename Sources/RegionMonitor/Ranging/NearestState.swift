/// A monitor's nearest-beacon part (docs/behaviour.md §9.2): the beacon said to be nearest, the
/// beacon ranged in this step (the only one that can take over at once), and the margin another
/// must lead by. Only `Monitor+Nearest` changes the nearest; ranging notes the ranged beacon.
struct NearestState: Sendable {
    /// The nearest beacon's index, -1 for none.
    var beacon: Int32 = -1
    /// The beacon ranged in this step, -1 for none.
    var lastRanged: Int32 = -1
    /// `Monitor.nearestMargin`: dB another beacon must lead by to become the nearest.
    let margin: Double

    init(margin: Double) { self.margin = margin }
}
