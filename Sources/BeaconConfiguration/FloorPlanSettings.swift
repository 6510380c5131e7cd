import Foundation
import BeaconCore
import RegionMonitor

/// A building's floor plans in the ini form (docs/behaviour.md §20): where the rooms, scanners and
/// doors are, in metres, each Area one floor in a frame of its own. Parsed and checked here; the
/// position estimator that uses them is issue 48's next part.
public struct FloorPlanSettings: Sendable, Hashable {
    /// A point on a floor, metres.
    public struct Point: Sendable, Hashable, CustomStringConvertible {
        public var x: Double
        public var y: Double

        public init(_ x: Double, _ y: Double) {
            self.x = x
            self.y = y
        }

        public var description: String { "\(JSONValue.numberText(x)),\(JSONValue.numberText(y))" }
    }

    /// `LocationZoneShape.<UUID:major> = x,y; x,y; x,y; …`: a Zone's polygon.
    public struct Shape: Sendable, Hashable {
        public var zone: Region
        public var points: [Point]
        public var line: Int
    }

    /// `LocationScannerPoint.<scanner id> = x,y[,z]` (z: 2.0 unless given).
    public struct ScannerPoint: Sendable, Hashable {
        public var scanner: String
        public var point: Point
        public var z: Double
        public var line: Int
    }

    /// `LocationAreaLevel.<UUID> = z0,z1`: the heights an Area's floor spans (0,3 unless given).
    public struct Level: Sendable, Hashable {
        public var area: UUID
        public var bottom: Double
        public var top: Double
        public var line: Int
    }

    /// `Door.<id> = x,y; x,y`: a gap in a wall, as a segment.
    public struct Door: Sendable, Hashable {
        public var id: String
        public var from: Point
        public var to: Point
        public var line: Int
    }

    public var shapes: [Shape] = []
    public var scannerPoints: [ScannerPoint] = []
    public var levels: [Level] = []
    public var doors: [Door] = []
    /// `Floorplan.file`: an ESPresense companion `config.yaml`, resolved against the ini's folder.
    public var file: String?

    public init() {}

    /// The default height of a scanner, metres.
    public static let scannerHeight = 2.0
    /// The largest coordinate taken, metres: far beyond any building.
    public static let coordinateLimit = 100_000.0

    /// Whether `points` is a simple polygon: no two edges cross or touch but neighbours at their
    /// shared corner.
    public static func isSimple(_ points: [Point]) -> Bool {
        let count = points.count
        guard count >= 3 else { return false }
        func orientation(_ a: Point, _ b: Point, _ c: Point) -> Double {
            (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x)
        }
        func onSegment(_ a: Point, _ b: Point, _ p: Point) -> Bool {
            min(a.x, b.x) <= p.x && p.x <= max(a.x, b.x) && min(a.y, b.y) <= p.y && p.y <= max(a.y, b.y)
        }
        func meet(_ a: Point, _ b: Point, _ c: Point, _ d: Point) -> Bool {
            let (o1, o2, o3, o4) = (
                orientation(a, b, c), orientation(a, b, d), orientation(c, d, a), orientation(c, d, b)
            )
            if (o1 > 0) != (o2 > 0) && o1 != 0 && o2 != 0 && (o3 > 0) != (o4 > 0) && o3 != 0 && o4 != 0 { return true }
            return (o1 == 0 && onSegment(a, b, c)) || (o2 == 0 && onSegment(a, b, d))
                || (o3 == 0 && onSegment(c, d, a)) || (o4 == 0 && onSegment(c, d, b))
        }
        for i in 0..<count {
            let (a, b) = (points[i], points[(i + 1) % count])
            if a == b { return false }
            for j in (i + 1)..<count {
                // Neighbouring edges share a corner; they meet only there unless they fold back.
                let adjacent = j == i + 1 || (i == 0 && j == count - 1)
                let (c, d) = (points[j], points[(j + 1) % count])
                if adjacent {
                    let shared = j == i + 1 ? b : a
                    let (other1, other2) = j == i + 1 ? (a, d) : (b, c)
                    if orientation(other1, shared, other2) == 0, onSegment(other1, other2, shared) == false {
                        return false  // folds back over itself
                    }
                    continue
                }
                if meet(a, b, c, d) { return false }
            }
        }
        return true
    }
}
