/// A monitor's ranging part (docs/behaviour.md §6): each beacon's computed class and the class
/// last reported, the filters of the beacons not `off` (a pool, so a building of thousands of
/// beacons costs only those heard), the beacons a reporting window can report, the beacons
/// changed in this step, and the background ranging window. Written by `Monitor+Ranging`.
struct RangingState: Sendable {
    /// Per beacon, its computed class, and the class last reported.
    var proximity: [Proximity]
    var reported: [Proximity]
    /// Index into ``pool`` of a beacon's filter while it is not `off`, else -1.
    var slot: [Int32]
    var pool: [BeaconRanging] = []
    var freeSlots: [Int32] = []
    /// Beacons whose class or last reported class is not `off`: the only ones a window can report.
    var watched: [Bool]
    var watchList: [Int32] = []
    /// Beacons whose class may have changed in this step, and whether every beacon may have.
    var dirty: [Int32] = []
    var recheckAll = false
    /// The computed class changes of this step, when recorded (`Monitor.recordsClassChanges`).
    var changes: [ProximityChange] = []
    /// When the present background ranging window ends (µs), and how long one lasts.
    var windowEnd: Int64 = .min
    let windowLength: Int64
    /// `Monitor.enterRSSI`: the weakest sighting that counts for presence, when set.
    let enterRSSI: Int?

    init(beacons: Int, windowLength: Int64, enterRSSI: Int?) {
        proximity = Array(repeating: .off, count: beacons)
        reported = Array(repeating: .off, count: beacons)
        slot = Array(repeating: -1, count: beacons)
        watched = Array(repeating: false, count: beacons)
        self.windowLength = windowLength
        self.enterRSSI = enterRSSI
    }
}
