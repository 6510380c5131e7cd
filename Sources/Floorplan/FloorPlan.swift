import Foundation

/// One Area's floor as the configuration gives it (docs/behaviour.md §20): its rooms (Zones, by
/// index in the hierarchy) as polygons, its scanners (by the index of the location each sits at)
/// as points, its doors, bounds and level. Compiled once into a ``FloorMap`` that every tag on
/// the floor shares.
package struct FloorPlan: Sendable, Hashable {
    package struct Room: Sendable, Hashable {
        /// The Zone's index in the hierarchy.
        package var zone: Int32
        package var polygon: [PlanPoint]

        package init(zone: Int32, polygon: [PlanPoint]) {
            self.zone = zone
            self.polygon = polygon
        }
    }

    package struct Scanner: Sendable, Hashable {
        /// The index, in the hierarchy, of the location the scanner sits at.
        package var location: Int32
        package var point: PlanPoint
        /// Height above the ground, metres.
        package var z: Double

        package init(location: Int32, point: PlanPoint, z: Double) {
            self.location = location
            self.point = point
            self.z = z
        }
    }

    /// The Area's index in the hierarchy.
    package var area: Int32
    package var rooms: [Room]
    package var scanners: [Scanner]
    /// Gaps in the walls. With none, rooms that share an edge connect all along it.
    package var doors: [PlanSegment]
    /// The doors to the outside (`Door.<id> = …, exit`), each also one of ``doors``: a tag last
    /// placed by one that falls silent has left the building.
    package var exits: [PlanSegment]
    /// The floor's extent (`nil`: the box around the rooms).
    package var bounds: Box?
    /// The heights the floor spans, metres: a tag is taken to be a metre above its bottom.
    package var bottom: Double
    package var top: Double
    /// An open plan (`LocationAreaWalls.<UUID> = none`): its rooms share no walls; a signal
    /// crosses from one to the next unweakened, and a tag walks across anywhere.
    package var open: Bool

    package init(
        area: Int32, rooms: [Room], scanners: [Scanner], doors: [PlanSegment] = [], exits: [PlanSegment] = [],
        bounds: Box? = nil, bottom: Double = 0, top: Double = 3, open: Bool = false
    ) {
        self.open = open
        self.exits = exits
        self.area = area
        self.rooms = rooms
        self.scanners = scanners
        self.doors = doors
        self.bounds = bounds
        self.bottom = bottom
        self.top = top
    }

    /// The height a carried tag is taken to be at above the floor, metres.
    package static let tagHeight = 1.0

    /// The walls: every room's edges, each piece once (two rooms sharing an edge share its wall);
    /// none in an open plan.
    package var walls: [PlanSegment] {
        var walls: [PlanSegment] = []
        if open { return walls }
        for room in rooms {
            for edge in PlanPolygon.edges(room.polygon)
            where !walls.contains(where: { ($0.a == edge.a && $0.b == edge.b) || ($0.a == edge.b && $0.b == edge.a) }) {
                walls.append(edge)
            }
        }
        return walls
    }
}
