import Foundation

/// How the position estimator weighs readings and motion (docs/behaviour.md §20), and the floors
/// it runs on. The figures were chosen by `scripts/bench rooms` (docs/performance.md).
package struct PositionSettings: Sendable, Hashable {
    /// The floors, by Area index.
    package private(set) var floors: [Int32: FloorMap]
    /// Each floor's building, by Area index (one instance for all the floors of a building).
    package private(set) var buildings: [Int32: Building]
    /// `Rooms.minConfidence`: a tag is put in a room only at this probability or more.
    package var minConfidence: Double
    /// A tag keeps its room while the room's probability stays at this share of
    /// ``minConfidence`` or more (a room is entered clearly and left clearly: no flapping at
    /// the threshold).
    package var holdShare: Double
    /// How far a person is taken to wander, m² a second along each axis.
    package var spread: Double
    /// The spread of a reading about its expected level, dB: above it and below it (a body or
    /// multipath weakens a signal more often than anything strengthens it).
    package var sigmaAbove: Double
    package var sigmaBelow: Double
    /// The share of readings that are taken to say nothing of where the tag is (multipath bursts).
    package var outlier: Double
    /// Seconds over which one path's readings err alike (shadowing by people and furniture): a
    /// reading counts for the share of this time since that scanner's previous one, so a tag
    /// advertising ten times a second is not ten times as sure as one advertising once.
    package var correlation: Double
    /// The contest for another room: its probability's lead over the present room's, less
    /// ``drift``, summed over seconds, must reach ``threshold`` (a walker's clear lead wins in a
    /// second or two, a still tag's doorway wobble never adds up); the same time below the hold
    /// puts it in no room.
    package var drift: Double
    package var threshold: Double
    /// Seconds within which two scanners must have heard a tag for its room to change: one
    /// scanner alone places a tag on a ring around itself, which may cross a wall (the tag whose
    /// room's scanner died is put in no room, not in the room next door).
    package var corroboration: Double
    /// The level (dB above the tag's measured power) a scanner surely hears a tag at: a scanner
    /// that heard the tag before and has been silent for ``corroboration`` while another heard
    /// it, where it would hear the tag at this level or more, holds every room change (a silence
    /// the position does not explain: the scanner died, or the position is wrong).
    package var audible: Double
    /// The share of the whole building mixed into the probability at a weighing of full weight (a
    /// lighter one mixes in as much less): how readily the estimate jumps (through a wall) rather
    /// than walks (through a door), and leaves a wrong place the readings no longer fit (0.05:
    /// the recorded tracks' open plan 74.5 % right against 71.8 % with 1e-4, docs/performance.md
    /// "Real radio").
    package var jump = 0.05
    /// The contest's threshold while the tag walks: its estimate moved ``moving`` metres or more
    /// within ``movingWindow`` seconds. A walker's room follows within a second or two of the
    /// lead; a still tag's needs ``threshold`` (its estimate wobbles by a metre or two, a walker's
    /// crosses rooms).
    package var walkThreshold: Double
    package var moving: Double
    package var movingWindow: Double
    /// Whether the contest is scaled by the spread learned from what scanners hear of each other
    /// (``RadioModel/learn(noise:shadowing:)``, ``RadioModel/steadiness``). Off: a path between two
    /// fixed scanners is steadier than a carried tag's, and where nobody walks between them the
    /// spread learned said the radio was calm, the contest shrank and still tags changed rooms
    /// hundreds of times an hour (docs/behaviour.md §20, "Real radio"). Kept for `scripts/bench
    /// rooms --tune`.
    package var learnsSpread = false
    /// Whether a tag by an exit door leaves after a few of its intervals of silence
    /// (docs/behaviour.md §20). Not for ESPresense nodes' reports: a node reports a still tag every
    /// 5 s, each on its own clock, so their silences say little; §19's exit is as soon on them
    /// (`scripts/bench rooms`, two floors: the same leaving times, and 16 false aways an hour's
    /// worth of still tags by the front door with the door's rule).
    package var exitDoors = true
    /// How the readings are weighed together (docs/behaviour.md §20, "Real radio"): every scanner
    /// heard within ``window`` seconds, each at the loudest it heard lately less ``decay`` dB a
    /// second since, against the level expected in each cell with the tag's power at 1 m left
    /// free (a prior of ``powerSpread`` dB about the claim: wide enough that a claim 15 dB off
    /// places the tag as a right one does), the departures spread by ``sigma``
    /// dB; a weighing counts for the seconds since the last one times ``rate`` (1 at most). A
    /// ``decay`` of 0 holds no peak: each scanner's last reading stands, unweakened, for the window.
    /// Chosen on the recorded tracks (scripts/bench real, docs/performance.md "Real radio").
    package var window = 3.0
    package var decay = 3.0
    package var sigma = 3.0
    package var powerSpread = 30.0
    /// The tag's power at 1 m is learned from its readings as it goes (``PositionFilter/power``):
    /// over ``powerMemory`` seconds, and once learned the prior narrows to ``learnedPowerSpread``
    /// dB about it, so the absolute level tells again (a tag whose room's scanner died is not
    /// put next door).
    /// The lead over the present room with which the most probable room contests it below
    /// ``minConfidence``: the room follows the position when the present room's confidence has gone.
    package static let followLead = 0.15
    /// An open plan's room contest (docs/behaviour.md §20, "Open plans"), in dB: another room's
    /// scanners win at once `atOnce` louder than the present room's, or when their lead less
    /// `drift` adds up to `threshold` dB·s; a walker's (``walkThreshold``'s walking) sooner than a
    /// still tag's. Chosen on the recorded tracks (scripts/bench real: 84–87 % right from 2 to 3
    /// dB/s of decay, 0.5 to 2 dB of drift, 1 to 2 dB·s) and, for still tags, which the recordings
    /// lack, on the simulated open plans with `LocationAreaWalls = none` (changes an hour a third
    /// of the walkers' figures': docs/performance.md "Real radio").
    package static let openWalking = (atOnce: 6.0, drift: 1.0, threshold: 1.0)
    package static let openStill = (atOnce: 12.0, drift: 3.0, threshold: 20.0)
    package var learnedPowerSpread = 6.0
    package var powerMemory = 10.0
    package var rate = 3.0

    package init(
        floors: [Int32: FloorMap] = [:], minConfidence: Double = 0.6, holdShare: Double = 2.0 / 3.0,
        spread: Double = 0.5, sigmaAbove: Double = 5, sigmaBelow: Double = 7, outlier: Double = 0.05,
        correlation: Double = 2, drift: Double = 0.2, threshold: Double = 4, corroboration: Double = 10,
        audible: Double = -30, walkThreshold: Double = 0.5, moving: Double = 3, movingWindow: Double = 15,
        buildings: [Int32: Building]? = nil
    ) {
        let buildings = buildings ?? Building.group(floors.values.map(\.plan), stairs: [])
        self.buildings = buildings
        var maps: [Int32: FloorMap] = [:]
        for building in buildings.values {
            for map in building.floors { maps[map.plan.area] = map }
        }
        self.corroboration = corroboration
        self.audible = audible
        self.walkThreshold = walkThreshold
        self.moving = moving
        self.movingWindow = movingWindow
        self.correlation = correlation
        self.drift = drift
        self.threshold = threshold
        self.floors = maps
        self.minConfidence = minConfidence
        self.holdShare = holdShare
        self.spread = spread
        self.sigmaAbove = sigmaAbove
        self.sigmaBelow = sigmaBelow
        self.outlier = outlier
        likelihood = Likelihood(sigmaAbove: sigmaAbove, sigmaBelow: sigmaBelow, outlier: outlier)
    }

    /// Puts these settings on `buildings` (by Area index, as ``buildings``).
    package mutating func place(_ buildings: [Int32: Building]) {
        self.buildings = buildings
        floors = [:]
        for building in buildings.values {
            for map in building.floors { floors[map.plan.area] = map }
        }
    }

    /// For ESPresense nodes' reports, each a median of 15 s of advertisements: closer to the
    /// truth than one advertisement.
    package static func filteredReports(
        floors: [Int32: FloorMap], minConfidence: Double = 0.6, buildings: [Int32: Building]? = nil
    ) -> PositionSettings {
        // Measured on the firmware's cadence (scripts/bench rooms --feeds firmware, docs/performance.md):
        // walkers 21.5 % wrong against 28.9 % with the raw figures, still tags alike. A walker's
        // faster contest gains nothing here (the node's 15 s median is the lag), so there is none.
        var settings = PositionSettings(
            floors: floors, minConfidence: minConfidence, spread: 1, sigmaAbove: 4, sigmaBelow: 5.5, outlier: 0.05,
            correlation: 5, threshold: 1, corroboration: 16, walkThreshold: 1, buildings: buildings)
        settings.learnsSpread = false
        settings.exitDoors = false
        // A node reports each tag every few seconds, each report a median already: every node's
        // last report stands for the window, unweakened.
        settings.window = 8
        settings.decay = 0
        settings.rate = 1
        // A node reports nothing beyond `max_distance` (16 m by its own estimate at absorption
        // 2.7: 32.5 dB under the power at 1 m; include/defaults.h in ESPresense/ESPresense), so
        // its silence is a death only where it would hear the tag well inside that: 7.5 dB of
        // margin for its median and shadowing (scripts/bench matrix, docs/performance.md "Real
        // radio": walkers 20.0 % wrong became 16.1 % on the bench's radio, a room whose node died
        // still keeps its tags).
        settings.audible = -25
        return settings
    }

    /// The likelihood readings are weighed by with `radio`: its learned spread's, else this one's.
    func likelihood(for radio: RadioModel) -> Likelihood {
        learnsSpread ? radio.likelihood ?? likelihood : likelihood
    }

    /// ``correlation`` with `radio`: scaled by its ``RadioModel/steadiness`` (readings err alike only
    /// as long as shadowing lasts).
    package func correlation(for radio: RadioModel) -> Double {
        guard learnsSpread, let steadiness = radio.steadiness else { return correlation }
        return correlation * steadiness
    }

    /// The contest's scale with `radio`: the square of its ``RadioModel/steadiness`` (the contest
    /// holds against shadowing that lasts; with none, the probabilities decide at once), 1 when
    /// nothing is learned.
    package func contestScale(for radio: RadioModel) -> Double {
        guard learnsSpread, let steadiness = radio.steadiness else { return 1 }
        return steadiness * steadiness
    }

    /// The likelihood of a reading's departure from its expected level, tabled.
    let likelihood: Likelihood

    package static func == (lhs: PositionSettings, rhs: PositionSettings) -> Bool {
        lhs.buildings == rhs.buildings && lhs.minConfidence == rhs.minConfidence && lhs.holdShare == rhs.holdShare
            && lhs.spread == rhs.spread && lhs.sigmaAbove == rhs.sigmaAbove && lhs.sigmaBelow == rhs.sigmaBelow
            && lhs.outlier == rhs.outlier && lhs.correlation == rhs.correlation && lhs.drift == rhs.drift
            && lhs.threshold == rhs.threshold && lhs.corroboration == rhs.corroboration && lhs.audible == rhs.audible
            && lhs.jump == rhs.jump && lhs.walkThreshold == rhs.walkThreshold && lhs.moving == rhs.moving
            && lhs.movingWindow == rhs.movingWindow && lhs.learnsSpread == rhs.learnsSpread
            && lhs.exitDoors == rhs.exitDoors && lhs.window == rhs.window && lhs.decay == rhs.decay
            && lhs.sigma == rhs.sigma && lhs.powerSpread == rhs.powerSpread && lhs.rate == rhs.rate
            && lhs.learnedPowerSpread == rhs.learnedPowerSpread && lhs.powerMemory == rhs.powerMemory
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(buildings)
        hasher.combine(minConfidence)
        hasher.combine(spread)
    }
}

/// `(1 - outlier) · exp(-e² / 2σ²) + outlier` for a departure `e` dB of a reading from its expected
/// level, σ by its side, tabled every quarter dB from -60 to +60, raised to 1, 1/2, … 1/128 (a
/// reading that stands for a fraction of its path's correlation time counts for that fraction).
final class Likelihood: Sendable {
    static let step: Float = 0.25
    static let range: Float = 60
    static let count = Int(2 * range / step) + 1
    static let levels = 8
    let tables: [Float]

    init(sigmaAbove: Double, sigmaBelow: Double, outlier: Double) {
        var tables: [Float] = []
        tables.reserveCapacity(Self.count * Self.levels)
        for level in 0..<Self.levels {
            let power = 1 / pow(2.0, Double(level))
            for index in 0..<Self.count {
                let e = Double(Float(index) * Self.step - Self.range)
                let sigma = e < 0 ? sigmaBelow : sigmaAbove
                let value = (1 - outlier) * exp(-e * e / (2 * sigma * sigma)) + outlier
                tables.append(Float(pow(value, power)))
            }
        }
        self.tables = tables
    }

    /// The table's level for a reading of `weight` (0…1]: the nearest power of one half.
    static func level(_ weight: Double) -> Int {
        guard weight < 0.75 else { return 0 }
        guard weight > 0 else { return levels - 1 }
        return min(levels - 1, Int((-log2(weight)).rounded()))
    }
}
