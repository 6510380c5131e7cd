import BeaconCore
import Floorplan
import Foundation
import RegionMonitor

/// A building's floor plans in the ini form (docs/behaviour.md §20): where the rooms, scanners and
/// doors are, in metres, each Area one floor in a frame of its own. Parsed and checked here, then
/// compiled into one ``FloorMap`` per Area (``Configuration/floors``) for the position estimator.
package struct FloorPlanSettings: Sendable, Hashable {
    /// A point on a floor, metres.
    package typealias Point = PlanPoint

    /// `LocationZoneShape.<UUID:major> = x,y; x,y; x,y; …`: a Zone's polygon.
    package struct Shape: Sendable, Hashable {
        package var zone: Region
        package var points: [Point]
        package var line: Int
    }

    /// `LocationScannerPoint.<scanner id> = x,y[,z]` (z: 2.0 above its floor's bottom unless given).
    package struct ScannerPoint: Sendable, Hashable {
        package var scanner: String
        package var point: Point
        package var z: Double?
        package var line: Int
    }

    /// `LocationAreaLevel.<UUID> = z0,z1`: the heights an Area's floor spans (0,3 unless given).
    package struct Level: Sendable, Hashable {
        package var area: UUID
        package var bottom: Double
        package var top: Double
        package var line: Int
    }

    /// `Door.<id> = x,y; x,y[, exit]`: a gap in a wall, as a segment; `exit`: a door to the outside.
    package struct Door: Sendable, Hashable {
        package var id: String
        package var from: Point
        package var to: Point
        package var exit = false
        package var line: Int
    }

    /// `Stairs.<id> = <UUID of floor A>, x,y; <UUID of floor B>, x,y`: a staircase or a lift
    /// joining two floors, at a point on each.
    package struct Stairs: Sendable, Hashable {
        package var id: String
        package var areaA: UUID
        package var pointA: Point
        package var areaB: UUID
        package var pointB: Point
        package var line: Int
    }

    package var shapes: [Shape] = []
    package var scannerPoints: [ScannerPoint] = []
    package var levels: [Level] = []
    package var doors: [Door] = []
    package var stairs: [Stairs] = []
    /// `LocationAreaWalls.<UUID> = none`: the Areas whose Zones share no walls (desk zones of one
    /// hall); `edges` (the default) keeps every shared edge a wall.
    package var openAreas: Set<UUID> = []
    /// `Floorplan.file`: an ESPresense companion `config.yaml`, resolved against the ini's folder.
    package var file: String?
    /// A floor's extent by its Area's UUID (from a companion file's `bounds`).
    package var bounds: [UUID: Box] = [:]
    /// `Rooms.minConfidence`: a tag is put in a room only at this probability or more.
    package var minConfidence = 0.6

    package init() {}

    /// The default height of a scanner above its floor's bottom, metres.
    package static let scannerHeight = 2.0
    /// The largest coordinate taken, metres: far beyond any building.
    package static let coordinateLimit = 100_000.0

    /// Whether `points` is a simple polygon (``PlanPolygon/isSimple(_:)``).
    package static func isSimple(_ points: [Point]) -> Bool { PlanPolygon.isSimple(points) }
}
