import BeaconCore
import Floorplan
import Foundation
import RegionMonitor

/// A building's floor plans in the ini form (docs/behaviour.md §20): where the rooms, scanners and
/// doors are, in metres, each Area one floor in a frame of its own. Parsed and checked here, then
/// compiled into one ``FloorMap`` per Area (``Configuration/floors``) for the position estimator.
public struct FloorPlanSettings: Sendable, Hashable {
    /// A point on a floor, metres.
    public typealias Point = PlanPoint

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
    /// A floor's extent by its Area's UUID (from a companion file's `bounds`).
    public var bounds: [UUID: Box] = [:]
    /// `Rooms.minConfidence`: a tag is put in a room only at this probability or more.
    public var minConfidence = 0.6

    public init() {}

    /// The default height of a scanner, metres.
    public static let scannerHeight = 2.0
    /// The largest coordinate taken, metres: far beyond any building.
    public static let coordinateLimit = 100_000.0

    /// Whether `points` is a simple polygon (``PlanPolygon/isSimple(_:)``).
    public static func isSimple(_ points: [Point]) -> Bool { PlanPolygon.isSimple(points) }
}
