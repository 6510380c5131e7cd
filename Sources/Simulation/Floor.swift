import BeaconCore
import Floorplan
import Foundation

/// A floor of rooms with fixed scanners in them: the world of the room-quality benchmark
/// (`scripts/bench rooms`, docs/performance.md "Rooms: the right room, fast") and of its replay test.
/// Distances are metres; signal levels dB.
///
/// A building of several storeys is one `Floor` too: each room and wall says which storey it is on
/// (0, the ground, unless told), a scanner is on its room's storey, storeys are ``storeyHeight``
/// apart with a slab of ``slabLoss`` dB between them, and people change storey only on the
/// ``stairs``. Points are a storey's own x, y: a point alone does not say which storey it is on.
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
        /// The storey it is on, 0 the ground.
        package var storey = 0
    }

    /// A wall: a signal crossing it loses `loss` dB.
    package struct Wall: Sendable {
        package var a: Point
        package var b: Point
        package var loss: Double
        /// The storey it stands on.
        package var storey = 0
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
    /// The room walks between two other rooms go through (by its doors), if any; on another storey
    /// its rooms without a door play its part.
    package var corridor: Int?
    /// Where along the corridor people walk (its middle line's y).
    package var lane: Double?
    /// Where people leave the building and come back in (outside the ground storey).
    package var exit: Point
    /// The door to the outside by ``exit``, written as an exit door (`Door.<id> = …, exit`) with
    /// the floor plan; `nil`: the plan has none.
    package var exitDoor: (a: Point, b: Point)?
    /// Where the stairs are, the same x, y on every storey: each storey's foot of the stairs to the
    /// next; `nil` on a floor of one storey.
    package var stairs: Point?
    /// From one storey's floor to the next's, metres (docs/floorplans.md's house: levels 0,3 and 3,6).
    package var storeyHeight = 3.0
    /// What a signal loses through the slab between two storeys, dB. ITU-R P.1238's floor
    /// penetration loss factor at 2.4 GHz is 14 dB through one floor of an office building (10 dB
    /// of a block of flats, 5 dB of a wooden house); 13 dB here, a reinforced concrete slab, close
    /// to the 12 dB of the tests' two-storey house (Tests/TestSupport/TwoStoreyRadio.swift) and
    /// above the daemon's 10 dB until it learns the loss.
    package var slabLoss = 13.0
    /// Seconds to climb the stairs from one storey to the next (3 m up a flight of about 16 steps).
    package var climb = 5.0

    /// How high above its storey's floor a carried tag and a scanner are, metres (as the daemon
    /// takes a tag: docs/floorplans.md).
    static let height = 1.0

    /// How many storeys it has.
    package var storeys: Int { (rooms.map(\.storey).max() ?? 0) + 1 }

    /// The storey scanner `index` is on: its room's.
    package func storey(ofScanner index: Int) -> Int { rooms[scanners[index].room].storey }

    /// The room `point` is in on the ground storey, if any.
    package func room(at point: Point) -> Int? { room(at: point, storey: 0) }

    /// The room `point` is in on storey `storey`, if any.
    package func room(at point: Point, storey: Int) -> Int? {
        rooms.firstIndex { $0.storey == storey && $0.rect.contains(point) }
    }

    /// The mean level scanner `index` receives from a tag at `point` on the ground storey sending
    /// `power` (its level at 1 m): path loss and walls, without the receiver's offset or any noise.
    package func level(_ power: Double, from point: Point, at index: Int) -> Double {
        level(power, from: point, storey: 0, at: index)
    }

    /// The mean level scanner `index` receives from a tag at `point` on storey `storey` (between two
    /// storeys while on the stairs) sending `power`: path loss over the distance in space, the
    /// walls the path crosses on each storey it passes through and the slabs between, without the
    /// receiver's offset or any noise. Tags and scanners are at the same height above their
    /// storey's floor (a carried tag's): on one storey the distance is the plan's.
    package func level(_ power: Double, from point: Point, storey: Double, at index: Int) -> Double {
        let scanner = scanners[index].at
        let own = self.storey(ofScanner: index)
        guard storey != Double(own) else {
            var level = power - 10 * exponent * log10(max(0.25, point.distance(to: scanner)))
            for wall in walls where wall.storey == own && Self.crosses(point, scanner, wall.a, wall.b) {
                level -= wall.loss
            }
            return level
        }
        let flat = point.distance(to: scanner)
        let from: Double = storey * storeyHeight + Self.height
        let to: Double = Double(own) * storeyHeight + Self.height
        let distance = (flat * flat + (to - from) * (to - from)).squareRoot()
        var level = power - 10 * exponent * log10(max(0.25, distance))
        // Along the path from the tag (share 0) to the scanner (share 1): each slab it passes, and
        // the walls of each storey that the piece of the path within that storey crosses.
        var shares = [0.0]
        let slabs = (1..<max(storeys, 1)).map { Double($0) * storeyHeight }
        for slab in slabs where slab > min(from, to) && slab < max(from, to) {
            level -= slabLoss
            shares.append((slab - from) / (to - from))
        }
        shares.append(1)
        shares.sort()
        func along(_ share: Double) -> Point {
            Point(point.x + (scanner.x - point.x) * share, point.y + (scanner.y - point.y) * share)
        }
        for (start, end) in zip(shares, shares.dropFirst()) {
            let middle = from + (to - from) * (start + end) / 2
            let piece = Int((middle / storeyHeight).rounded(.down))
            for wall in walls where wall.storey == piece && Self.crosses(along(start), along(end), wall.a, wall.b) {
                level -= wall.loss
            }
        }
        return level
    }

    /// The room of the scanner that receives `point` best without noise or offsets: the nearest
    /// rule's answer on a perfect radio, the floor's own limit.
    package func nearestRoom(to point: Point) -> Int { nearestRoom(to: point, storey: 0) }

    /// The nearest rule's answer on a perfect radio for a tag at `point` on storey `storey`.
    package func nearestRoom(to point: Point, storey: Double) -> Int {
        var best = (room: scanners[0].room, level: -Double.infinity)
        for index in scanners.indices {
            let level = level(0, from: point, storey: storey, at: index)
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

    /// A house of two storeys (docs/floorplans.md "Several floors, stairs and exit doors", a room
    /// more on each): on each storey an 8 × 2 m hall along the front and two 4 × 4 m rooms behind
    /// it, 5 dB walls between the rooms and 4 dB onto the hall with 1 m doors, the rooms upstairs
    /// straight above those downstairs; the stairs at the halls' east end, the front door (an exit)
    /// in the ground hall's west wall. A scanner in each room, each upstairs almost straight above
    /// the one downstairs (0.3 m off: the same spot of the same wall); receivers `offsets` dB off,
    /// each its own draw in ±offsets.
    package static func twoStorey(seed: UInt64, offsets: Double = 4) -> Floor {
        var random = SeededGenerator(seed: seed)
        var rooms: [Room] = []
        var walls: [Wall] = []
        var scanners: [Scanner] = []
        let names = [["Hall", "Kitchen", "Living"], ["Landing", "Bedroom", "Study"]]
        // Per storey: the hall's scanner, then the two rooms' (upstairs 0.3 m off those downstairs).
        let points = [
            [Point(4.6, 0.3), Point(0.3, 4.5), Point(7.7, 5)], [Point(4.9, 0.4), Point(0.4, 4.8), Point(7.5, 5.2)],
        ]
        for storey in 0..<2 {
            let hall = rooms.count
            rooms.append(Room(name: names[storey][0], rect: Rect(0, 0, 8, 2), door: nil, storey: storey))
            for index in 0..<2 {
                let x = Double(index) * 4
                rooms.append(
                    Room(
                        name: names[storey][index + 1], rect: Rect(x, 2, x + 4, 6), door: Point(x + 2, 2),
                        storey: storey))
                walls.append(Wall(a: Point(x, 2), b: Point(x + 1.5, 2), loss: 4, storey: storey))
                walls.append(Wall(a: Point(x + 2.5, 2), b: Point(x + 4, 2), loss: 4, storey: storey))
            }
            walls.append(Wall(a: Point(4, 2), b: Point(4, 6), loss: 5, storey: storey))
            for (index, point) in points[storey].enumerated() {
                scanners.append(
                    Scanner(
                        id: rooms[hall + index].name.lowercased(), room: hall + index, at: point,
                        offset: Double.random(in: -offsets...offsets, using: &random)))
            }
        }
        var floor = Floor(
            name: "two storeys", rooms: rooms, walls: walls, scanners: scanners, corridor: 0, lane: 1,
            exit: Point(-0.5, 1))
        floor.exitDoor = (Point(0, 0.5), Point(0, 1.5))
        floor.stairs = Point(7.2, 1)
        return floor
    }

    /// The hsyco.ini that makes each room a Zone of one Area (of its storey's Area, each storey a
    /// floor of the building, named and, with the plan, given its level) and places each scanner in
    /// its room, with `tags` tags declared `Tag.t<n> = ibeacon:…:1:<n>` (n from 1). A room's Zone
    /// is its index from 1 in every Area: majors are unique across the building.
    /// `phones`: the tags (numbered from 1) declared as phones (`irk:`), the others as iBeacons.
    /// `plan`: with the floor plan (docs/behaviour.md §20): each room's shape, each scanner's
    /// point (at the height of a carried tag above its storey's floor) and, on a floor with a
    /// corridor, each room's door; the exit door, and the stairs between storeys.
    package func ini(tags: Int, extra: String = "", phones: Set<Int> = [], plan: Bool = false) -> String {
        var text = "# \(name): \(rooms.count) rooms, \(scanners.count) scanners\n"
        var perRoom: [Int: Int] = [:]
        for (index, scanner) in scanners.enumerated() {
            perRoom[scanner.room, default: 0] += 1
            let id = "\(index + 1)"
            let area = Self.area(storey: storey(ofScanner: index))
            text += "LocationBaseBeacon.\(id) = \(area),\(scanner.room + 1),\(perRoom[scanner.room, default: 1])\n"
            text += "LocationScanner.\(id) = \(scanner.id)\n"
        }
        for (index, room) in rooms.enumerated() {
            text += "LocationZoneName.\(Self.area(storey: room.storey)):\(index + 1) = \(room.name)\n"
        }
        if storeys > 1 {
            for storey in 0..<storeys {
                text +=
                    "LocationAreaName.\(Self.area(storey: storey)) = \(storey == 0 ? "Ground floor" : "Floor \(storey)")\n"
            }
        }
        if plan { text += planLines() }
        for tag in 1...max(tags, 1) {
            text +=
                phones.contains(tag)
                ? "Tag.t\(tag) = irk:\(String(format: "%032x", tag))\n"
                : "Tag.t\(tag) = ibeacon:\(Self.tagUUID):1:\(tag)\n"
        }
        return text + extra
    }

    /// The Area of storey `storey` (the ground's is the Area of a floor of one storey).
    package static func area(storey: Int) -> String {
        "F1002000-0000-4000-8000-" + String(format: "%012d", storey + 1)
    }

    /// The floor plan's ini lines (docs/behaviour.md §20): each room's shape in its storey's Area,
    /// each scanner's point, the doors; with several storeys each one's level, the stairs between
    /// them and the exit door.
    package func planLines() -> String {
        func number(_ value: Double) -> String { String(format: "%g", value) }
        var text = ""
        if storeys > 1 {
            for storey in 0..<storeys {
                text +=
                    "LocationAreaLevel.\(Self.area(storey: storey)) = \(number(Double(storey) * storeyHeight)),"
                    + "\(number(Double(storey + 1) * storeyHeight))\n"
            }
        }
        for (index, room) in rooms.enumerated() {
            let r = room.rect
            text +=
                "LocationZoneShape.\(Self.area(storey: room.storey)):\(index + 1) = \(number(r.x0)),\(number(r.y0)); "
                + "\(number(r.x1)),\(number(r.y0)); \(number(r.x1)),\(number(r.y1)); \(number(r.x0)),\(number(r.y1))\n"
        }
        for (index, scanner) in scanners.enumerated() {
            let z = Double(storey(ofScanner: index)) * storeyHeight + Self.height
            text +=
                "LocationScannerPoint.\(scanner.id) = \(number(scanner.at.x)),\(number(scanner.at.y)),\(number(z))\n"
        }
        if corridor != nil {
            // A door applies to every storey whose plan it lies in: one line for the doors
            // straight above each other.
            var written: Set<[Double]> = []
            for (index, room) in rooms.enumerated() {
                guard let door = room.door, written.insert([door.x, door.y]).inserted else { continue }
                text +=
                    "Door.d\(index + 1) = \(number(door.x - 0.5)),\(number(door.y)); \(number(door.x + 0.5)),\(number(door.y))\n"
            }
        }
        if let exitDoor {
            text +=
                "Door.exit = \(number(exitDoor.a.x)),\(number(exitDoor.a.y)); \(number(exitDoor.b.x)),\(number(exitDoor.b.y)), exit\n"
        }
        if let stairs, storeys > 1 {
            for storey in 1..<storeys {
                text +=
                    "Stairs.s\(storey) = \(Self.area(storey: storey - 1)), \(number(stairs.x)),\(number(stairs.y)); "
                    + "\(Self.area(storey: storey)), \(number(stairs.x)),\(number(stairs.y))\n"
            }
        }
        return text
    }

    package static let tagUUID = "7A6E0000-0000-4000-8000-00000000B0B0"
}
