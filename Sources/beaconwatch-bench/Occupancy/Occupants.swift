import BeaconCore
import Foundation
import Simulation

/// Someone in the occupancy benchmark's building (docs/performance.md, "Occupancy"): where they
/// are, when they walk, and when, seated, they move enough for a PIR to see; with a tag or
/// without one.
struct Occupant {
    var mover = Mover(along: [])
    var tagged: Bool
    /// Spans of walking (to a room, about a room, out of the building), in time order.
    var walks: [(start: Double, end: Double)] = []
    /// Instants a seated person moves enough for a PIR to see (reaching, turning, standing up), in
    /// time order.
    var fidgets: [Double] = []

    /// Whether they are walking at `time`.
    func walking(at time: Double) -> Bool {
        var low = 0
        var high = walks.count
        while low < high {
            let middle = (low + high) / 2
            if walks[middle].start <= time { low = middle + 1 } else { high = middle }
        }
        return low > 0 && time < walks[low - 1].end
    }

    /// Whether they moved enough for a PIR in `(from, to]`: walking at `to`, or a fidget in between.
    func fidgeted(after from: Double, upTo to: Double) -> Bool {
        var low = 0
        var high = fidgets.count
        while low < high {
            let middle = (low + high) / 2
            if fidgets[middle] <= from { low = middle + 1 } else { high = middle }
        }
        return low < fidgets.count && fidgets[low] <= to
    }

    /// The room they are in at `time` on `floor`, `nil` out of the building.
    func room(at time: Double, on floor: Floor) -> Int? {
        mover.position(at: time).flatMap { floor.room(at: $0) }
    }
}

/// How the benchmark's people spend a day on a floor: room to room, short visits and long seated
/// spells, now and then out of the building.
struct Workday {
    var floor: Floor
    var duration: Double
    /// Walking speed, m/s.
    var speed = 1.2
    /// A visit's length and a seated spell's, s, and the share of stays that are visits.
    var visit = 30.0...180.0
    var spell = 600.0...2400.0
    var visitShare = 0.4
    /// During a spell, someone gets up and goes to another spot of the room every so often, s.
    var getUp = 300.0...900.0
    /// Mean seconds between the movements of a seated person that a PIR sees.
    var fidgetMean = 300.0
    /// The chance of going out of the building after a stay, and for how long, s.
    var leaving = 0.25
    var outside = 300.0...1800.0

    /// The rooms people stay in: every room but the corridor.
    var rooms: [Int] { floor.rooms.indices.filter { $0 != floor.corridor } }

    func spot(in room: Int, random: inout SeededGenerator) -> Floor.Point {
        let rect = floor.rooms[room].rect
        return Floor.Point(
            Double.random(in: rect.x0 + 0.4...rect.x1 - 0.4, using: &random),
            Double.random(in: rect.y0 + 0.4...rect.y1 - 0.4, using: &random))
    }

    /// Walks `occupant` along `points` from `start`; returns when they arrive.
    func walk(_ occupant: inout Occupant, _ points: [Floor.Point], from start: Double) -> Double {
        var time = start
        for (from, to) in zip(points, points.dropFirst()) {
            time += from.distance(to: to) / speed
            occupant.mover.keyframes.append(Mover.Keyframe(at: time, point: to))
        }
        if time > start { occupant.walks.append((start, time)) }
        return time
    }

    /// Seated from `start` to `end`: a fidget every ``fidgetMean`` s on average.
    func sit(_ occupant: inout Occupant, from start: Double, to end: Double, random: inout SeededGenerator) {
        var time = start
        while true {
            time += -fidgetMean * log(1 - Double.random(in: 0..<1, using: &random))
            guard time < end else { return }
            occupant.fidgets.append(time)
        }
    }

    /// One person's day.
    func occupant(tagged: Bool, random: inout SeededGenerator) -> Occupant {
        var occupant = Occupant(tagged: tagged)
        let rooms = self.rooms
        var room: Int? = rooms.randomElement(using: &random)
        var point = room.map { spot(in: $0, random: &random) } ?? floor.exit
        var time = 0.0
        if room == nil || Double.random(in: 0..<1, using: &random) < 0.2 {
            // Arrives later, by the exit.
            occupant.mover.keyframes.append(Mover.Keyframe(at: 0, point: nil))
            time = Double.random(in: 0...600, using: &random)
            room = nil
            point = floor.exit
        }
        occupant.mover.keyframes.append(Mover.Keyframe(at: time, point: point))
        while time < duration {
            if room == nil || time > 0 {
                // To another room.
                var next = rooms.randomElement(using: &random) ?? 0
                while next == room, rooms.count > 1 { next = rooms.randomElement(using: &random) ?? 0 }
                let target = spot(in: next, random: &random)
                time = walk(&occupant, floor.route(from: point, in: room, to: target, in: next), from: time)
                (room, point) = (next, target)
            }
            guard let here = room else { break }
            let visiting = Double.random(in: 0..<1, using: &random) < visitShare
            let end = time + Double.random(in: visiting ? visit : spell, using: &random)
            // To a seat (a desk, a shelf, a colleague), then seated, getting up now and then.
            var seat = spot(in: here, random: &random)
            time = walk(&occupant, [point, seat], from: time)
            while time < end {
                let until = visiting ? end : min(end, time + Double.random(in: getUp, using: &random))
                occupant.mover.keyframes.append(Mover.Keyframe(at: until, point: seat))
                sit(&occupant, from: time, to: until, random: &random)
                time = until
                guard time < end else { break }
                let other = spot(in: here, random: &random)
                time = walk(&occupant, [seat, other], from: time)
                seat = other
            }
            point = seat
            if Double.random(in: 0..<1, using: &random) < leaving {
                time = walk(&occupant, floor.route(from: point, in: here, to: floor.exit, in: nil), from: time)
                occupant.mover.keyframes.append(Mover.Keyframe(at: time, point: nil))
                time += Double.random(in: outside, using: &random)
                occupant.mover.keyframes.append(Mover.Keyframe(at: time, point: floor.exit))
                (room, point) = (nil, floor.exit)
            }
        }
        return occupant
    }

    /// A tag left by a wall of a room that is not a person's (an asset tag on a trolley).
    func asset(random: inout SeededGenerator) -> Occupant {
        let room = rooms.randomElement(using: &random) ?? 0
        let rect = floor.rooms[room].rect
        let point = Floor.Point(rect.x0 + 0.4, Double.random(in: rect.y0 + 0.5...rect.y1 - 0.5, using: &random))
        var occupant = Occupant(tagged: true)
        occupant.mover.keyframes = [Mover.Keyframe(at: 0, point: point)]
        occupant.mover.stationary = true
        return occupant
    }
}
