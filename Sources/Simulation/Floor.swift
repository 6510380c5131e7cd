import BeaconCore
import Floorplan
import Foundation

/// A floor of rooms with fixed scanners in them: the world of the room-quality benchmark
/// (`scripts/bench rooms`, docs/performance.md "Rooms: the right room, fast") and of its replay test.
/// Distances are metres; signal levels dB.
package struct Floor: Sendable {
    /// A point on the floor (the floor plan's point, docs/behaviour.md §20).
    package typealias Point = PlanPoint

    /// An axis-aligned rectangle, its low edges inside and its high edges outside.
    package struct Rect: Sendable, Hashable {
        package var x0: Double
        package var y0: Double
        package var x1: Double
        package var y1: Double

        package init(_ x0: Double, _ y0: Double, _ x1: Double, _ y1: Double) {
            (self.x0, self.y0, self.x1, self.y1) = (x0, y0, x1, y1)
        }

        package func contains(_ point: Point) -> Bool { point.x >= x0 && point.x < x1 && point.y >= y0 && point.y < y1 }
    }

    package struct Room: Sendable {
        package var name: String
        package var rect: Rect
        /// Where a walk into or out of it goes through, when the floor has a corridor.
        package var door: Point?
    }

    /// A wall: a signal crossing it loses `loss` dB.
    package struct Wall: Sendable {
        package var a: Point
        package var b: Point
        package var loss: Double
    }

    package struct Scanner: Sendable {
        package var id: String
        package var room: Int
        package var at: Point
        /// What the receiver reads above the truth (an uncalibrated receiver), dB.
        package var offset: Double
    }

    package var name: String
    package var rooms: [Room]
    package var walls: [Wall]
    package var scanners: [Scanner]
    /// The path loss exponent.
    package var exponent = 2.5
    /// The room walks between two other rooms go through (by its doors), if any.
    package var corridor: Int?
    /// Where along the corridor people walk (its middle line's y).
    package var lane: Double?
    /// Where people leave the building and come back in.
    package var exit: Point

    /// The room `point` is in, if any.
    package func room(at point: Point) -> Int? { rooms.firstIndex { $0.rect.contains(point) } }

    /// The mean level scanner `index` receives from a tag at `point` sending `power` (its level at
    /// 1 m): path loss and walls, without the receiver's offset or any noise.
    package func level(_ power: Double, from point: Point, at index: Int) -> Double {
        let scanner = scanners[index].at
        var level = power - 10 * exponent * log10(max(0.25, point.distance(to: scanner)))
        for wall in walls where Self.crosses(point, scanner, wall.a, wall.b) { level -= wall.loss }
        return level
    }

    /// The room of the scanner that receives `point` best without noise or offsets: the nearest
    /// rule's answer on a perfect radio, the floor's own limit.
    package func nearestRoom(to point: Point) -> Int {
        var best = (room: scanners[0].room, level: -Double.infinity)
        for index in scanners.indices {
            let level = level(0, from: point, at: index)
            if level > best.level { best = (scanners[index].room, level) }
        }
        return best.room
    }

    /// The way from `start` (in room `from`) to `end` (in room `to`): straight on an open floor,
    /// through the doors and along the corridor on a floor that has one.
    package func route(from start: Point, in from: Int?, to end: Point, in to: Int?) -> [Point] {
        guard let corridor, from != to else { return [start, end] }
        var points = [start]
        if let from, from != corridor, let door = rooms[from].door {
            points.append(door)
            if let lane { points.append(Point(door.x, lane)) }
        }
        if let to, to != corridor, let door = rooms[to].door {
            if let lane { points.append(Point(door.x, lane)) }
            points.append(door)
        }
        points.append(end)
        return points
    }

    static func crosses(_ p: Point, _ q: Point, _ a: Point, _ b: Point) -> Bool {
        func side(_ u: Point, _ v: Point, _ w: Point) -> Double {
            (v.x - u.x) * (w.y - u.y) - (v.y - u.y) * (w.x - u.x)
        }
        let d1 = side(a, b, p)
        let d2 = side(a, b, q)
        let d3 = side(p, q, a)
        let d4 = side(p, q, b)
        return ((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0))
    }

    /// A scanner somewhere in `rect`, away from its walls by `margin`.
    static func place(in rect: Rect, margin: Double, random: inout SeededGenerator) -> Point {
        Point(
            Double.random(in: rect.x0 + margin...rect.x1 - margin, using: &random),
            Double.random(in: rect.y0 + margin...rect.y1 - margin, using: &random))
    }

    /// Five 4 × 4 m rooms side by side along a 20 × 2 m corridor; walls of 5 dB between rooms and of
    /// 4 dB (with a 1 m door) onto the corridor. A scanner anywhere in each room, two in the
    /// corridor; receivers `offsets` dB off, each its own draw in ±offsets.
    package static func corridor(seed: UInt64, offsets: Double = 4) -> Floor {
        var random = SeededGenerator(seed: seed)
        var rooms = [Room(name: "Corridor", rect: Rect(0, 0, 20, 2), door: nil)]
        var walls: [Wall] = []
        for index in 0..<5 {
            let x = Double(index) * 4
            rooms.append(Room(name: "Room \(index + 1)", rect: Rect(x, 2, x + 4, 6), door: Point(x + 2, 2)))
            if index > 0 { walls.append(Wall(a: Point(x, 2), b: Point(x, 6), loss: 5)) }
            walls.append(Wall(a: Point(x, 2), b: Point(x + 1.5, 2), loss: 4))
            walls.append(Wall(a: Point(x + 2.5, 2), b: Point(x + 4, 2), loss: 4))
        }
        var scanners = [
            Scanner(id: "corridor-w", room: 0, at: Point(5 + Double.random(in: -1...1, using: &random), 1), offset: 0),
            Scanner(id: "corridor-e", room: 0, at: Point(15 + Double.random(in: -1...1, using: &random), 1), offset: 0),
        ]
        for room in 1...5 {
            scanners.append(
                Scanner(
                    id: "room-\(room)", room: room, at: place(in: rooms[room].rect, margin: 0.3, random: &random),
                    offset: 0))
        }
        for index in scanners.indices { scanners[index].offset = Double.random(in: -offsets...offsets, using: &random) }
        return Floor(
            name: "corridor", rooms: rooms, walls: walls, scanners: scanners, corridor: 0, lane: 1, exit: Point(-0.5, 1)
        )
    }

    /// A 12 × 8 m open-plan floor of six 4 × 4 m zones, no walls between them, a scanner anywhere
    /// in each; receivers `offsets` dB off.
    package static func openPlan(seed: UInt64, offsets: Double = 4) -> Floor {
        var random = SeededGenerator(seed: seed)
        var rooms: [Room] = []
        var scanners: [Scanner] = []
        for row in 0..<2 {
            for column in 0..<3 {
                let rect = Rect(Double(column) * 4, Double(row) * 4, Double(column) * 4 + 4, Double(row) * 4 + 4)
                rooms.append(Room(name: "Zone \(rooms.count + 1)", rect: rect, door: nil))
                scanners.append(
                    Scanner(
                        id: "zone-\(rooms.count)", room: rooms.count - 1,
                        at: place(in: rect, margin: 0.3, random: &random),
                        offset: Double.random(in: -offsets...offsets, using: &random)))
            }
        }
        return Floor(name: "open plan", rooms: rooms, walls: [], scanners: scanners, exit: Point(-0.5, 4))
    }

    /// A 12 × 8 m open-plan floor of six 4 × 4 m zones with `count` scanners drawn anywhere on it
    /// (0.3 m from its edges), not one per zone: drawn again until every zone has one (a zone's
    /// scanner names it for the nearest rules). Receivers `offsets` dB off.
    package static func openPlanAtRandom(seed: UInt64, count: Int = 8, offsets: Double = 4) -> Floor {
        var random = SeededGenerator(seed: seed)
        var rooms: [Room] = []
        for row in 0..<2 {
            for column in 0..<3 {
                let rect = Rect(Double(column) * 4, Double(row) * 4, Double(column) * 4 + 4, Double(row) * 4 + 4)
                rooms.append(Room(name: "Zone \(rooms.count + 1)", rect: rect, door: nil))
            }
        }
        let whole = Rect(0, 0, 12, 8)
        var points: [Point] = []
        repeat {
            points = (0..<max(count, rooms.count)).map { _ in place(in: whole, margin: 0.3, random: &random) }
        } while Set(points.compactMap { point in rooms.firstIndex { $0.rect.contains(point) } }).count < rooms.count
        let scanners = points.enumerated().map { index, point in
            Scanner(
                id: "node-\(index + 1)", room: rooms.firstIndex { $0.rect.contains(point) } ?? 0, at: point,
                offset: Double.random(in: -offsets...offsets, using: &random))
        }
        return Floor(name: "open plan at random", rooms: rooms, walls: [], scanners: scanners, exit: Point(-0.5, 4))
    }

    /// The ESPresense companion's accuracy harness as its repository describes it
    /// (docs/companion-harness.md): a 6 × 4 m floor of two rooms without a wall between them
    /// (living x 0–4, bedroom x 4–6), a node in each corner, path loss exponent 3, calibrated
    /// receivers.
    package static func companionHarness() -> Floor {
        let rooms = [
            Room(name: "Living", rect: Rect(0, 0, 4, 4.01), door: nil),
            Room(name: "Bedroom", rect: Rect(4, 0, 6.01, 4.01), door: nil),
        ]
        let scanners = [
            Scanner(id: "node-living-nw", room: 0, at: Point(0.2, 3.8), offset: 0),
            Scanner(id: "node-living-sw", room: 0, at: Point(0.2, 0.2), offset: 0),
            Scanner(id: "node-bedroom-ne", room: 1, at: Point(5.8, 3.8), offset: 0),
            Scanner(id: "node-bedroom-se", room: 1, at: Point(5.8, 0.2), offset: 0),
        ]
        var floor = Floor(name: "harness", rooms: rooms, walls: [], scanners: scanners, exit: Point(-0.5, 2))
        floor.exponent = 3
        return floor
    }

    /// The ESPresense companion's published simulation setting: a 6 × 4 m flat, four 3 × 2 m rooms
    /// with 3 dB walls, a node in each room's outer corner, calibrated receivers.
    package static func flat() -> Floor {
        let rooms = [
            Room(name: "Living", rect: Rect(0, 0, 3, 2), door: nil),
            Room(name: "Kitchen", rect: Rect(3, 0, 6, 2), door: nil),
            Room(name: "Bedroom", rect: Rect(0, 2, 3, 4), door: nil),
            Room(name: "Office", rect: Rect(3, 2, 6, 4), door: nil),
        ]
        let walls = [
            Wall(a: Point(3, 0), b: Point(3, 4), loss: 3), Wall(a: Point(0, 2), b: Point(6, 2), loss: 3),
        ]
        let scanners = [
            Scanner(id: "living", room: 0, at: Point(0.3, 0.3), offset: 0),
            Scanner(id: "kitchen", room: 1, at: Point(5.7, 0.3), offset: 0),
            Scanner(id: "bedroom", room: 2, at: Point(0.3, 3.7), offset: 0),
            Scanner(id: "office", room: 3, at: Point(5.7, 3.7), offset: 0),
        ]
        return Floor(name: "flat", rooms: rooms, walls: walls, scanners: scanners, exit: Point(-0.5, 1))
    }

    /// The hsyco.ini that makes each room a Zone of one Area and places each scanner in its room,
    /// with `tags` tags declared `Tag.t<n> = ibeacon:…:1:<n>` (n from 1).
    /// `phones`: the tags (numbered from 1) declared as phones (`irk:`), the others as iBeacons.
    /// `plan`: with the floor plan (docs/behaviour.md §20): each room's shape, each scanner's
    /// point (at the height of a carried tag: the simulation is flat) and, on a floor with a
    /// corridor, each room's door.
    package func ini(tags: Int, extra: String = "", phones: Set<Int> = [], plan: Bool = false) -> String {
        let area = "F1002000-0000-4000-8000-000000000001"
        var text = "# \(name): \(rooms.count) rooms, \(scanners.count) scanners\n"
        var perRoom: [Int: Int] = [:]
        for (index, scanner) in scanners.enumerated() {
            perRoom[scanner.room, default: 0] += 1
            let id = "\(index + 1)"
            text += "LocationBaseBeacon.\(id) = \(area),\(scanner.room + 1),\(perRoom[scanner.room]!)\n"
            text += "LocationScanner.\(id) = \(scanner.id)\n"
        }
        for (index, room) in rooms.enumerated() { text += "LocationZoneName.\(area):\(index + 1) = \(room.name)\n" }
        if plan { text += planLines(area: area) }
        for tag in 1...max(tags, 1) {
            text +=
                phones.contains(tag)
                ? "Tag.t\(tag) = irk:\(String(format: "%032x", tag))\n"
                : "Tag.t\(tag) = ibeacon:\(Self.tagUUID):1:\(tag)\n"
        }
        return text + extra
    }

    /// The floor plan's ini lines for Area `area` (docs/behaviour.md §20).
    package func planLines(area: String) -> String {
        func number(_ value: Double) -> String { String(format: "%g", value) }
        var text = ""
        for (index, room) in rooms.enumerated() {
            let r = room.rect
            text +=
                "LocationZoneShape.\(area):\(index + 1) = \(number(r.x0)),\(number(r.y0)); \(number(r.x1)),\(number(r.y0)); "
                + "\(number(r.x1)),\(number(r.y1)); \(number(r.x0)),\(number(r.y1))\n"
        }
        for scanner in scanners {
            text += "LocationScannerPoint.\(scanner.id) = \(number(scanner.at.x)),\(number(scanner.at.y)),1\n"
        }
        if corridor != nil {
            for (index, room) in rooms.enumerated() {
                guard let door = room.door else { continue }
                text +=
                    "Door.d\(index + 1) = \(number(door.x - 0.5)),\(number(door.y)); \(number(door.x + 0.5)),\(number(door.y))\n"
            }
        }
        return text
    }

    package static let tagUUID = "7A6E0000-0000-4000-8000-00000000B0B0"
}
