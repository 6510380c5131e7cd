import Foundation

/// A point on a floor, metres, in the frame of its Area (docs/behaviour.md §20).
package struct PlanPoint: Sendable, Hashable, CustomStringConvertible {
    package var x: Double
    package var y: Double

    package init(_ x: Double, _ y: Double) {
        self.x = x
        self.y = y
    }

    package func distance(to other: PlanPoint) -> Double {
        ((x - other.x) * (x - other.x) + (y - other.y) * (y - other.y)).squareRoot()
    }

    package var description: String { "\(Self.text(x)),\(Self.text(y))" }

    /// A coordinate as the ini writes it: no trailing `.0`.
    package static func text(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}

/// A straight piece of wall or a door, from `a` to `b`.
package struct PlanSegment: Sendable, Hashable {
    package var a: PlanPoint
    package var b: PlanPoint

    package init(_ a: PlanPoint, _ b: PlanPoint) {
        self.a = a
        self.b = b
    }

    /// Where the segment from `p` to `q` crosses this one, as the share of the way from `p`
    /// (0…1); `nil` when they do not cross (parallel segments never do).
    package func crossing(from p: PlanPoint, to q: PlanPoint) -> Double? {
        let r = (x: q.x - p.x, y: q.y - p.y)
        let s = (x: b.x - a.x, y: b.y - a.y)
        let denominator = r.x * s.y - r.y * s.x
        guard abs(denominator) > 1e-12 else { return nil }
        let w = (x: a.x - p.x, y: a.y - p.y)
        let t = (w.x * s.y - w.y * s.x) / denominator
        let u = (w.x * r.y - w.y * r.x) / denominator
        let epsilon = 1e-9
        guard t >= -epsilon, t <= 1 + epsilon, u >= -epsilon, u <= 1 + epsilon else { return nil }
        return min(1, max(0, t))
    }

    /// The distance from `point` to the nearest point of the segment.
    package func distance(to point: PlanPoint) -> Double {
        let d = (x: b.x - a.x, y: b.y - a.y)
        let length = d.x * d.x + d.y * d.y
        guard length > 0 else { return point.distance(to: a) }
        let t = max(0, min(1, ((point.x - a.x) * d.x + (point.y - a.y) * d.y) / length))
        return point.distance(to: PlanPoint(a.x + t * d.x, a.y + t * d.y))
    }
}

/// Polygons: rooms' shapes.
package enum PlanPolygon {
    /// Whether `point` is inside `polygon` (even-odd rule; a point on an edge may go either way).
    package static func contains(_ polygon: [PlanPoint], _ point: PlanPoint) -> Bool {
        var inside = false
        var j = polygon.count - 1
        for i in polygon.indices {
            let (a, b) = (polygon[i], polygon[j])
            if (a.y > point.y) != (b.y > point.y) {
                let x = (b.x - a.x) * (point.y - a.y) / (b.y - a.y) + a.x
                if point.x < x { inside.toggle() }
            }
            j = i
        }
        return inside
    }

    /// The polygon's area, m² (whichever way round its corners go).
    package static func area(_ polygon: [PlanPoint]) -> Double {
        var sum = 0.0
        var j = polygon.count - 1
        for i in polygon.indices {
            sum += (polygon[j].x + polygon[i].x) * (polygon[j].y - polygon[i].y)
            j = i
        }
        return abs(sum) / 2
    }

    /// The polygon's edges, closing it; an edge of no length is left out.
    package static func edges(_ polygon: [PlanPoint]) -> [PlanSegment] {
        guard polygon.count >= 2 else { return [] }
        return polygon.indices.compactMap { index in
            let (a, b) = (polygon[index], polygon[(index + 1) % polygon.count])
            return a == b ? nil : PlanSegment(a, b)
        }
    }

    /// Whether `points` is a simple polygon: no two edges cross or touch but neighbours at their
    /// shared corner. A closing corner repeated at the end (as the ESPresense companion's files
    /// often have it) is taken as the first.
    package static func isSimple(_ points: [PlanPoint]) -> Bool {
        var points = points
        if points.count > 3, points.first == points.last { points.removeLast() }
        let count = points.count
        guard count >= 3 else { return false }
        func orientation(_ a: PlanPoint, _ b: PlanPoint, _ c: PlanPoint) -> Double {
            (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x)
        }
        func onSegment(_ a: PlanPoint, _ b: PlanPoint, _ p: PlanPoint) -> Bool {
            min(a.x, b.x) <= p.x && p.x <= max(a.x, b.x) && min(a.y, b.y) <= p.y && p.y <= max(a.y, b.y)
        }
        func meet(_ a: PlanPoint, _ b: PlanPoint, _ c: PlanPoint, _ d: PlanPoint) -> Bool {
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

    /// The share of a `step`-metre grid's points inside both polygons, as m²: how much two rooms
    /// overlap (0 for rooms that only share an edge).
    package static func overlap(_ first: [PlanPoint], _ second: [PlanPoint], step: Double = 0.1) -> Double {
        guard let box = Box(first)?.intersection(Box(second)) else { return 0 }
        var inside = 0
        var y = box.y0 + step / 2
        while y < box.y1 {
            var x = box.x0 + step / 2
            while x < box.x1 {
                let point = PlanPoint(x, y)
                if contains(first, point), contains(second, point) { inside += 1 }
                x += step
            }
            y += step
        }
        return Double(inside) * step * step
    }
}

/// An axis-aligned box, metres.
package struct Box: Sendable, Hashable {
    package var x0: Double
    package var y0: Double
    package var x1: Double
    package var y1: Double

    package init(x0: Double, y0: Double, x1: Double, y1: Double) {
        (self.x0, self.y0, self.x1, self.y1) = (x0, y0, x1, y1)
    }

    /// The box around `points`; `nil` for none.
    package init?(_ points: [PlanPoint]) {
        guard let first = points.first else { return nil }
        (x0, y0, x1, y1) = (first.x, first.y, first.x, first.y)
        for point in points { include(point) }
    }

    package mutating func include(_ point: PlanPoint) {
        (x0, y0, x1, y1) = (min(x0, point.x), min(y0, point.y), max(x1, point.x), max(y1, point.y))
    }

    package func intersection(_ other: Box?) -> Box? {
        guard let other else { return nil }
        let box = Box(x0: max(x0, other.x0), y0: max(y0, other.y0), x1: min(x1, other.x1), y1: min(y1, other.y1))
        return box.x0 < box.x1 && box.y0 < box.y1 ? box : nil
    }

    package var width: Double { x1 - x0 }
    package var height: Double { y1 - y0 }
}
