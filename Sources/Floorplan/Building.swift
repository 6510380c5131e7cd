import Foundation

/// The floors a tag can walk between (docs/behaviour.md §20, "Moving tags and floors"), compiled
/// for the position estimator: every floor's grid (one cell size for all), the stairs that join
/// them, and for every scanner of every floor the distance, walls and floors between it and each
/// cell. One ``PositionFilter`` holds a tag's probability over all of its cells, so the floors
/// compete for every reading (a reading from upstairs that the downstairs scanners explain better
/// puts the tag downstairs) and the probability moves between floors only on the stairs. Built
/// once per configuration and shared, read-only, by every tag.
package final class Building: Sendable, Hashable {
    /// A staircase or a lift (`Stairs.<id>`): the cell at its foot on one floor and at its head on
    /// another, by index in ``floors``.
    package struct Stairs: Sendable, Hashable {
        package var floorA: Int
        package var pointA: PlanPoint
        package var floorB: Int
        package var pointB: PlanPoint

        package init(floorA: Int, pointA: PlanPoint, floorB: Int, pointB: PlanPoint) {
            (self.floorA, self.pointA, self.floorB, self.pointB) = (floorA, pointA, floorB, pointB)
        }
    }

    package let floors: [FloorMap]
    package let stairs: [Stairs]
    /// Each floor's first cell in the building's cells, and the count after the last floor.
    package let offsets: [Int]
    package let cellCount: Int
    /// The rooms of every floor in order, by slot: each one's Zone index, and its floor.
    package let zones: [Int32]
    package let roomFloor: [Int]
    /// Each floor's first room slot.
    package let roomOffsets: [Int]
    /// Scanner slot by location index (scanners of every floor).
    package let scannerSlot: [Int32: Int]
    /// Each scanner slot's room slot (the room its point lies in), -1 for none.
    package let scannerRoom: [Int]
    /// `10 · log10(distance)`, the walls and the floors crossed from scanner slot `s` to cell `c`,
    /// at `s * cellCount + c`; `floorsCrossed` is empty with one floor.
    let logDistance: [Float]
    let wallsCrossed: [Float]
    let floorsCrossed: [Float]
    /// The cells joined by stairs, pairwise.
    let stairCells: [(Int, Int)]
    /// The cells within ``exitReach`` of an exit door.
    package let exitCells: [Int]
    /// The heights where one floor ends and the next begins: every floor's bottom but the lowest.
    package let slabs: [Double]

    /// The most cells a building is cut into: a coarser grid beyond (16 KiB of state per tag).
    package static let maximumCells = FloorMap.maximumCells
    /// How near an exit door a tag is placed by it, metres.
    package static let exitReach = 1.5

    /// One floor alone.
    package convenience init(_ map: FloorMap) {
        self.init(maps: [map], stairs: [])
    }

    /// The floors of `plans` on one grid of cells no finer than ``FloorMap/finestCell``, at most
    /// ``maximumCells`` in all, joined by `stairs`.
    package convenience init(plans: [FloorPlan], stairs: [Stairs] = []) {
        var cell = FloorMap.finestCell
        while plans.reduce(0, { $0 + FloorMap.cells(of: $1, cell: cell) }) > Self.maximumCells { cell *= 1.25 }
        self.init(maps: plans.map { FloorMap($0, cell: cell) }, stairs: stairs)
    }

    private init(maps: [FloorMap], stairs: [Stairs]) {
        floors = maps
        self.stairs = stairs.filter { maps.indices.contains($0.floorA) && maps.indices.contains($0.floorB) }
        var offsets: [Int] = []
        var total = 0
        var zones: [Int32] = []
        var roomFloor: [Int] = []
        var roomOffsets: [Int] = []
        for (index, map) in maps.enumerated() {
            offsets.append(total)
            total += map.cellCount
            roomOffsets.append(zones.count)
            zones += map.zones
            roomFloor += Array(repeating: index, count: map.zones.count)
        }
        offsets.append(total)
        (self.offsets, cellCount, self.zones, self.roomFloor, self.roomOffsets) =
            (offsets, total, zones, roomFloor, roomOffsets)
        // Where one floor ends and the next begins: every floor's bottom but the lowest's.
        let slabs = Array(Set(maps.map(\.plan.bottom)).sorted().dropFirst())
        self.slabs = slabs
        var slots: [Int32: Int] = [:]
        var scannerRoom: [Int] = []
        var logDistance: [Float] = []
        var wallsCrossed: [Float] = []
        var floorsCrossed: [Float] = []
        for (floor, map) in maps.enumerated() {
            for scanner in map.plan.scanners where slots[scanner.location] == nil {
                slots[scanner.location] = slots.count
                let room = map.cell(at: scanner.point).map { map.cellRoom[$0] } ?? -1
                scannerRoom.append(room >= 0 ? roomOffsets[floor] + Int(room) : -1)
                for (other, cells) in maps.enumerated() {
                    let height = cells.plan.bottom + FloorPlan.tagHeight
                    let crossed = Float(Self.floors(between: height, and: scanner.z, slabs: slabs))
                    for index in 0..<cells.cellCount {
                        let point = cells.center(index)
                        let flat = point.distance(to: scanner.point)
                        let distance = (flat * flat + (scanner.z - height) * (scanner.z - height)).squareRoot()
                        logDistance.append(Float(10 * log10(max(distance, 0.25))))
                        // Through another floor: the slab, and the walls of each floor on the way.
                        wallsCrossed.append(
                            Float(
                                other == floor
                                    ? map.walls(from: scanner.point, to: point, tolerance: 0.05)
                                    : Self.walls(
                                        maps, from: (floor, scanner.point, scanner.z), to: (other, point, height))))
                        if maps.count > 1 { floorsCrossed.append(crossed) }
                    }
                }
            }
        }
        scannerSlot = slots
        self.scannerRoom = scannerRoom
        self.logDistance = logDistance
        self.wallsCrossed = wallsCrossed
        self.floorsCrossed = floorsCrossed
        stairCells = self.stairs.compactMap { stairs in
            guard let a = maps[stairs.floorA].cell(at: stairs.pointA),
                let b = maps[stairs.floorB].cell(at: stairs.pointB)
            else { return nil }
            return (offsets[stairs.floorA] + a, offsets[stairs.floorB] + b)
        }
        var exits: [Int] = []
        for (floor, map) in maps.enumerated() where !map.plan.exits.isEmpty {
            for index in 0..<map.cellCount {
                let point = map.center(index)
                if map.plan.exits.contains(where: { $0.distance(to: point) <= Self.exitReach }) {
                    exits.append(offsets[floor] + index)
                }
            }
        }
        exitCells = exits
    }

    /// The walls a straight path crosses from `a` (on floor `a.floor` of ``floors``, at `a.point`
    /// and height `a.z`) to `b` on another floor: on each floor it passes through, those its stretch
    /// there crosses (a scanner downstairs is heard upstairs through the floor and the walls of
    /// both).
    package func walls(
        from a: (floor: Int, point: PlanPoint, z: Double), to b: (floor: Int, point: PlanPoint, z: Double)
    ) -> Int {
        guard floors.indices.contains(a.floor), floors.indices.contains(b.floor) else { return 0 }
        guard a.floor != b.floor else { return floors[a.floor].walls(from: a.point, to: b.point, tolerance: 0.05) }
        return Self.walls(floors, from: a, to: b)
    }

    static func walls(
        _ maps: [FloorMap], from a: (floor: Int, point: PlanPoint, z: Double),
        to b: (floor: Int, point: PlanPoint, z: Double)
    ) -> Int {
        let rise = b.z - a.z
        guard rise.isFinite, abs(rise) > 1e-9 else { return maps[a.floor].walls(from: a.point, to: b.point) }
        func at(_ z: Double) -> PlanPoint {
            let t = min(1, max(0, (z - a.z) / rise))
            return PlanPoint(a.point.x + (b.point.x - a.point.x) * t, a.point.y + (b.point.y - a.point.y) * t)
        }
        let (low, high) = (min(a.z, b.z), max(a.z, b.z))
        var count = 0
        var bands: Set<[Double]> = []
        // Each height band once: its own floor at either end, else the first floor there.
        for index in [a.floor, b.floor] + Array(maps.indices) {
            let plan = maps[index].plan
            let (bottom, top) = (max(low, plan.bottom), min(high, plan.top))
            guard bottom < top, bands.insert([plan.bottom, plan.top]).inserted else { continue }
            count += maps[index].walls(from: at(bottom), to: at(top), tolerance: 0.05)
        }
        return count
    }

    /// How many floors lie between heights `a` and `b`.
    package func floors(between a: Double, and b: Double) -> Int { Self.floors(between: a, and: b, slabs: slabs) }

    static func floors(between a: Double, and b: Double, slabs: [Double]) -> Int {
        slabs.filter { $0 > min(a, b) && $0 < max(a, b) }.count
    }

    /// The floor (index in ``floors``) of Area `area`, `nil` when it has no plan here.
    package func floor(ofArea area: Int32) -> Int? { floors.firstIndex { $0.plan.area == area } }

    /// The room slot of `zone`, `nil` when it has no polygon here.
    package func roomSlot(ofZone zone: Int32) -> Int? { zones.firstIndex(of: zone) }

    /// The buildings `floors` make: floors joined by stairs, or stacked (at heights that do not
    /// overlap), are one building; a floor alone is a building of its own. By Area, each Area's
    /// building (one instance for all its floors).
    package static func group(_ plans: [FloorPlan], stairs: [(areaA: Int32, a: PlanPoint, areaB: Int32, b: PlanPoint)])
        -> [Int32: Building]
    {
        let plans = plans.sorted { $0.area < $1.area }
        var parent = Array(plans.indices)
        func root(_ index: Int) -> Int {
            var index = index
            while parent[index] != index { index = parent[index] }
            return index
        }
        func join(_ a: Int, _ b: Int) {
            let (ra, rb) = (root(a), root(b))
            if ra != rb { parent[max(ra, rb)] = min(ra, rb) }
        }
        for i in plans.indices {
            for j in plans.indices where j > i && (plans[i].top <= plans[j].bottom || plans[j].top <= plans[i].bottom) {
                join(i, j)
            }
        }
        for joint in stairs {
            if let a = plans.firstIndex(where: { $0.area == joint.areaA }),
                let b = plans.firstIndex(where: { $0.area == joint.areaB })
            {
                join(a, b)
            }
        }
        var result: [Int32: Building] = [:]
        for group in Set(plans.indices.map(root)).sorted() {
            let members = plans.indices.filter { root($0) == group }.map { plans[$0] }
            let joints = stairs.compactMap { joint -> Stairs? in
                guard let a = members.firstIndex(where: { $0.area == joint.areaA }),
                    let b = members.firstIndex(where: { $0.area == joint.areaB })
                else { return nil }
                return Stairs(floorA: a, pointA: joint.a, floorB: b, pointB: joint.b)
            }
            let building = Building(plans: members, stairs: joints)
            for plan in members { result[plan.area] = building }
        }
        return result
    }

    package static func == (lhs: Building, rhs: Building) -> Bool {
        lhs === rhs || (lhs.floors == rhs.floors && lhs.stairs == rhs.stairs)
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(floors)
        hasher.combine(stairs)
    }
}
