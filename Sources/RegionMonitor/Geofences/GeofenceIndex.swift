import Foundation

/// Which geofences a fix can be near, without measuring the distance to every one (docs/behaviour.md §17,
/// `scripts/bench geofence`): a grid over latitude and longitude at four cell sizes (0.01°, 0.1°,
/// 1° and 10°). Each geofence lives at the finest level whose cells are at least half as wide as
/// its reach's box (radius plus the widest exit margin, both ways) in both directions, in the at
/// most 5 × 5 cells the box touches; a fix looks at one cell per level in use. A geofence whose
/// reach holds a pole or is wider than 20° is on a list every fix looks at.
///
/// The promise: a geofence that is not a candidate for a fix is farther from it than its reach.
/// The reach's box is exact on the sphere: ±θ in latitude and ±asin(sin θ / cos φ) in longitude,
/// taken modulo 360° (the antimeridian), with a hair of slack for rounding.
struct GeofenceIndex: Sendable {
    static let cellSizes: [Double] = [0.01, 0.1, 1, 10]

    private var cells: [Int64: [Int32]] = [:]
    /// The levels holding any geofence, finest first.
    private var levels: [Int] = []
    /// Geofences every fix looks at.
    private(set) var everywhere: [Int32] = []

    /// An index of `geofences`, each reaching `margin` metres beyond its radius.
    init(_ geofences: [Geofence], margin: Double) {
        var used = Set<Int>()
        for (position, geofence) in geofences.enumerated() {
            let index = Int32(truncatingIfNeeded: position)
            guard let (level, rows, columns) = Self.placement(of: geofence, margin: margin) else {
                everywhere.append(index)
                continue
            }
            used.insert(level)
            for row in rows {
                for column in columns { cells[Self.key(level, row, column), default: []].append(index) }
            }
        }
        levels = used.sorted()
    }

    /// The level and the cells a geofence goes in; `nil` for the list every fix looks at.
    static func placement(of geofence: Geofence, margin: Double) -> (Int, ClosedRange<Int>, [Int])? {
        let reach = (max(geofence.radius, 0) + max(margin, 0)) / GreatCircle.earthRadius * (1 + 1e-9)
        guard reach.isFinite, reach < .pi / 2 else { return nil }
        let phi = geofence.latitude * GreatCircle.radiansPerDegree
        // The reach holds a pole: every longitude.
        guard abs(phi) + reach < .pi / 2 else { return nil }
        let slack = 1e-9
        let dLat = reach / GreatCircle.radiansPerDegree + slack
        let dLon = asin(min(1, sin(reach) / cos(phi))) / GreatCircle.radiansPerDegree + slack
        let span = 2 * max(dLat, dLon)
        guard let level = cellSizes.firstIndex(where: { $0 * 4 >= span }) else { return nil }
        let size = cellSizes[level]
        let rows = row(geofence.latitude - dLat, size)...row(geofence.latitude + dLat, size)
        let first = Int((((geofence.longitude - dLon) + 180) / size).rounded(.down))
        let last = Int((((geofence.longitude + dLon) + 180) / size).rounded(.down))
        let columnCount = self.columns(size)
        var columns: [Int] = []
        for column in first...last {
            let wrapped = ((column % columnCount) + columnCount) % columnCount
            if !columns.contains(wrapped) { columns.append(wrapped) }
        }
        return (level, rows, columns)
    }

    static func rows(_ size: Double) -> Int { Int((180 / size).rounded(.up)) }
    static func columns(_ size: Double) -> Int { Int((360 / size).rounded(.up)) }

    /// The row of a latitude (clamped to the poles' rows).
    static func row(_ latitude: Double, _ size: Double) -> Int {
        let clamped = min(max(latitude, -90), 90)
        return min(Int(((clamped + 90) / size).rounded(.down)), rows(size) - 1)
    }

    /// The column of a longitude in -180...180, modulo 360°.
    static func column(_ longitude: Double, _ size: Double) -> Int {
        let count = columns(size)
        return min(max(Int(((longitude + 180) / size).rounded(.down)), 0), count) % count
    }

    static func key(_ level: Int, _ row: Int, _ column: Int) -> Int64 {
        Int64(level) << 48 | Int64(row) << 24 | Int64(column)
    }

    /// Calls `body` with every geofence that can be within its reach of the point (each once),
    /// then with those every fix looks at.
    func forEachCandidate(latitude: Double, longitude: Double, _ body: (Int) -> Void) {
        for level in levels {
            let size = Self.cellSizes[level]
            if let list = cells[Self.key(level, Self.row(latitude, size), Self.column(longitude, size))] {
                for index in list { body(Int(index)) }
            }
        }
        for index in everywhere { body(Int(index)) }
    }
}
