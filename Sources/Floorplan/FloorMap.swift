import Foundation

/// A ``FloorPlan`` compiled for the position estimator (docs/behaviour.md §20): the floor as a grid
/// of cells, each with its room, which neighbours a person can step to (through doors where doors
/// are given). A ``Building`` joins floors and holds what each scanner hears of each cell. Built
/// once per configuration and shared, read-only, by every tag on the floor.
package final class FloorMap: Sendable, Hashable {
    package let plan: FloorPlan
    /// The cell's side, metres, and the grid's origin (the low corner of cell 0).
    package let cell: Double
    package let originX: Double
    package let originY: Double
    package let columns: Int
    package let rows: Int
    /// The rooms, by slot: each one's Zone index.
    package let zones: [Int32]
    /// Each cell's room slot, -1 for none (a corridor or hall not drawn as a room).
    package let cellRoom: [Int32]
    /// How many cells each room has.
    package let roomCells: [Int]
    /// Whether a person cannot step from cell `c` to `c + 1` (`blockedX`) or to `c + columns`
    /// (`blockedY`): a wall without a door between their centres. All open without doors.
    let blockedX: [Bool]
    let blockedY: [Bool]
    /// The walls: every room edge once, with the doors cut out where a signal or a step crosses.
    package let walls: [PlanSegment]

    /// The most cells a floor is cut into: a coarser grid beyond (16 KiB of state per tag).
    package static let maximumCells = 4096
    /// The finest cell, metres.
    package static let finestCell = 0.5

    package var cellCount: Int { columns * rows }

    /// The floor alone, as fine as ``maximumCells`` allows.
    package convenience init(_ plan: FloorPlan) {
        var cell = Self.finestCell
        while Self.cells(of: plan, cell: cell) > Self.maximumCells { cell *= 1.25 }
        self.init(plan, cell: cell)
    }

    /// The floor in cells of `cell` metres.
    package init(_ plan: FloorPlan, cell: Double) {
        self.plan = plan
        let box = Self.box(of: plan)
        self.cell = cell
        (columns, rows) = Self.grid(box, cell: cell)
        (originX, originY) = (box.x0, box.y0)
        zones = plan.rooms.map(\.zone)
        let cells = columns * rows
        let (columns, originX, originY) = (columns, originX, originY)
        func center(_ index: Int) -> PlanPoint {
            PlanPoint(
                originX + (Double(index % columns) + 0.5) * cell, originY + (Double(index / columns) + 0.5) * cell)
        }
        var cellRoom = Array(repeating: Int32(-1), count: cells)
        var roomCells = Array(repeating: 0, count: plan.rooms.count)
        for index in 0..<cells {
            let point = center(index)
            if let room = plan.rooms.firstIndex(where: { PlanPolygon.contains($0.polygon, point) }) {
                cellRoom[index] = Int32(room)
                roomCells[room] += 1
            }
        }
        self.cellRoom = cellRoom
        self.roomCells = roomCells
        let walls = plan.walls
        self.walls = walls
        let doors = plan.doors
        func crossings(_ p: PlanPoint, _ q: PlanPoint, tolerance: Double) -> Int {
            Self.crossings(from: p, to: q, walls: walls, doors: doors, tolerance: tolerance)
        }
        var blockedX = Array(repeating: false, count: cells)
        var blockedY = Array(repeating: false, count: cells)
        if !doors.isEmpty {
            for index in 0..<cells {
                let here = center(index)
                if index % columns < columns - 1 {
                    blockedX[index] = crossings(here, center(index + 1), tolerance: cell / 4) > 0
                }
                if index + columns < cells {
                    blockedY[index] = crossings(here, center(index + columns), tolerance: cell / 4) > 0
                }
            }
        }
        self.blockedX = blockedX
        self.blockedY = blockedY
    }

    /// The box the grid covers: the floor's bounds, else the box around its rooms.
    static func box(of plan: FloorPlan) -> Box {
        var box = plan.bounds ?? Box(plan.rooms.flatMap(\.polygon)) ?? Box(x0: 0, y0: 0, x1: 1, y1: 1)
        if box.width <= 0 { box.x1 = box.x0 + 1 }
        if box.height <= 0 { box.y1 = box.y0 + 1 }
        return box
    }

    static func grid(_ box: Box, cell: Double) -> (columns: Int, rows: Int) {
        (max(1, Int((box.width / cell).rounded(.up))), max(1, Int((box.height / cell).rounded(.up))))
    }

    /// How many cells of `cell` metres `plan` takes.
    static func cells(of plan: FloorPlan, cell: Double) -> Int {
        let (columns, rows) = grid(box(of: plan), cell: cell)
        return columns * rows
    }

    /// The centre of cell `index`.
    package func center(_ index: Int) -> PlanPoint {
        PlanPoint(originX + (Double(index % columns) + 0.5) * cell, originY + (Double(index / columns) + 0.5) * cell)
    }

    /// The cell holding `point`, `nil` outside the grid.
    package func cell(at point: PlanPoint) -> Int? {
        let column = Int(((point.x - originX) / cell).rounded(.down))
        let row = Int(((point.y - originY) / cell).rounded(.down))
        guard (0..<columns).contains(column), (0..<rows).contains(row) else { return nil }
        return row * columns + column
    }

    /// The room slot of `zone`, `nil` when it has no polygon here.
    package func roomSlot(ofZone zone: Int32) -> Int? { zones.firstIndex(of: zone) }

    /// The walls between two points (outside doors): what the scanners hearing each other are
    /// fitted with (``RadioModel/fit(_:defaults:)``).
    package func walls(from p: PlanPoint, to q: PlanPoint, tolerance: Double = 0.05) -> Int {
        Self.crossings(from: p, to: q, walls: walls, doors: plan.doors, tolerance: tolerance)
    }

    /// The walls the segment from `p` to `q` crosses outside the doors (`tolerance` metres around
    /// each), each crossing point once (two rooms' edges on one wall are one wall).
    static func crossings(
        from p: PlanPoint, to q: PlanPoint, walls: [PlanSegment], doors: [PlanSegment], tolerance: Double
    ) -> Int {
        // Two rooms' edges along one wall are one wall; two walls meeting where the path crosses
        // are two.
        var points: [(t: Double, wall: PlanSegment)] = []
        func parallel(_ a: PlanSegment, _ b: PlanSegment) -> Bool {
            let (u, v) = ((a.b.x - a.a.x, a.b.y - a.a.y), (b.b.x - b.a.x, b.b.y - b.a.y))
            let cross = u.0 * v.1 - u.1 * v.0
            return abs(cross) <= 1e-9 * max(1, (u.0 * u.0 + u.1 * u.1) * (v.0 * v.0 + v.1 * v.1)).squareRoot()
        }
        for wall in walls {
            guard let t = wall.crossing(from: p, to: q) else { continue }
            let at = PlanPoint(p.x + (q.x - p.x) * t, p.y + (q.y - p.y) * t)
            if doors.contains(where: { $0.distance(to: at) <= tolerance }) { continue }
            if !points.contains(where: { abs($0.t - t) < 1e-6 && parallel($0.wall, wall) }) { points.append((t, wall)) }
        }
        return points.count
    }

    package static func == (lhs: FloorMap, rhs: FloorMap) -> Bool { lhs === rhs || lhs.plan == rhs.plan }
    package func hash(into hasher: inout Hasher) { hasher.combine(plan) }
}
