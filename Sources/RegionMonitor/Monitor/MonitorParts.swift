import BeaconCore

/// The monitor's clock part (docs/architecture.md, "The monitor's parts"): the instant it is at
/// and its deadlines (exits, `off`s, the restart grace). ``Monitor/advance(to:into:)`` moves
/// `now`; a deadline is stale when its region's generation moved on.
struct MonitorClock: Sendable {
    var now: Int64 = 0
    var timers = DeadlineQueue<Deadline>()
    /// Bumped for every deadline armed: a region's deadline fires only with its own generation.
    var generation: UInt32 = 0
}

/// The sightings part: when each beacon, Zone and Area was last sighted (µs; ``Monitor/never``
/// for none). `beacon`, `zone` and `area` count sightings with RSSI at least `Monitor.enterRssi`
/// (those that may move a region); `any` counts every sighting, and is ranging's clock.
struct LastSightings: Sendable {
    var beacon: [Int64]
    var zone: [Int64]
    var area: [Int64]
    var any: [Int64]

    init(beacons: Int, zones: Int, areas: Int) {
        beacon = Array(repeating: Monitor.never, count: beacons)
        zone = Array(repeating: Monitor.never, count: zones)
        area = Array(repeating: Monitor.never, count: areas)
        any = Array(repeating: Monitor.never, count: beacons)
    }
}

/// The phone part: what a device's own operating system says of its regions (an OwnTracks phone,
/// docs/behaviour.md §15.1), beside what the sightings say.
struct PhoneState: Sendable {
    /// Monitored regions the phone says it is inside (its `enter`): inside while held, whatever
    /// the sightings say.
    var held: Set<RegionRef> = []
    /// The class its own ranging last gave each beacon (OwnTracks `prox`), by beacon index.
    var classes: [Int32: Proximity] = [:]
    /// When its own ranging last reported each beacon, by beacon index: a region given to the
    /// phone while one of its beacons was ranged less than exitTimeout ago is held.
    var seen: [Int32: Int64] = [:]
    /// The sightings its `leave` of a region took back, by beacon index: no longer a reason to be
    /// inside (docs/behaviour.md §15.1), still when the beacon was last sighted, which orders the
    /// cap's candidates (§5.2).
    var left: [Int32: Int64] = [:]
    /// When its own ranging last reported a beacon of each Area, by Area index: a `leave` of one of
    /// its Zones does not forget it, so the Area stays inside until exitTimeout after the last
    /// `beacon` message of any of its beacons (walking from a Zone the phone holds into one it does
    /// not never exits and re-enters the Area).
    var areaSeen: [Int32: Int64] = [:]
    /// After the phone's own `enter` of an Area switched monitoring to its Zones (its waypoint is
    /// then deleted), the Area stays inside until a Zone enters, or exitTimeout passes without one.
    var areaHoldUntil: Int64?
}

/// The silences part: what `Monitor.exitTimeout = auto` learns of each path (docs/behaviour.md
/// §18), and, under ``MonitorSettings/rooms``, how long the tag has been quiet everywhere (§19).
struct SilenceState: Sendable {
    /// Under `auto`, each beacon's sightings since it was last `off` (its visit).
    var beacons: [SilenceModel]
    /// A tag's own advertising as all its scanners together hear it (§18, §19): a phone that stops
    /// advertising for a while (iOS's transmit outages) is silent on every path at once, which the
    /// paths' own models, each losing on its own, cannot tell from having left.
    var transmitter = SilenceModel()
    /// Under ``MonitorSettings/rooms``: the tag's last sighting by any scanner, the time (µs) it
    /// has been silent everywhere beyond ``RoomRule/grace`` in all, and that total at each
    /// scanner's last sighting. A scanner's level ages only while the tag is heard elsewhere: a
    /// tag that went quiet (a phone's outage) comes back to the room it was in, not to whichever
    /// scanner hears it first.
    var tagHeardAt: Int64 = .min
    var quietTotal: Int64 = 0
    var quietAt: [Int64]
    /// Under `auto`, each region's silence limit as last worked out, and when: reused for up to a
    /// second to keep a region inside (a region sighted ten times a second would otherwise work it
    /// out as often); an exit is decided on a fresh one. Areas, then Zones, then beacons (see
    /// ``Monitor/limitSlot(_:)``); `at` is `.min` until worked out.
    var limits: [(at: Int64, limit: Int64)]

    init(beacons count: Int, regions: Int, adaptive: Bool, rooms: Bool) {
        beacons = adaptive ? Array(repeating: SilenceModel(), count: count) : []
        quietAt = rooms ? Array(repeating: 0, count: count) : []
        limits = adaptive ? Array(repeating: (.min, 0), count: regions) : []
    }
}
