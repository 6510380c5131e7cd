import BeaconCore
import Floorplan
import Foundation
import Yams

/// An ESPresense companion `config.yaml` read as the companion reads it (docs/behaviour.md §20,
/// docs/floorplans.md): `floors` (`id`, `name`, `bounds`, `rooms` with `name`, optional `id` and
/// `points`) and `nodes` (`name`, optional `id`, `point`, `floors`, `stationary`, `enabled`).
/// Every other key is ignored, so a user's existing file works as it is. Parsed with Yams; a
/// problem names the file, the line and the path in the document.
package struct CompanionFloorplan: Sendable, Hashable {
    package struct Room: Sendable, Hashable {
        package var name: String
        package var id: String?
        package var points: [PlanPoint]
        package var line: Int?
        package var path: String
    }

    package struct Floor: Sendable, Hashable {
        /// The companion's id: `id`, else the name in snake case (``snakeCase(_:)``).
        package var id: String
        package var name: String?
        /// `bounds: [[x, y, z], [x, y, z]]`.
        package var bounds: Box?
        package var bottom: Double?
        package var top: Double?
        package var rooms: [Room]
        package var line: Int?
    }

    package struct Node: Sendable, Hashable {
        /// The companion's id for it: `id`, else the name in snake case: the scanner id it reports as.
        package var id: String
        package var name: String?
        package var point: PlanPoint
        /// `nil`: not given (``FloorPlanSettings/scannerHeight`` above its floor's bottom).
        package var z: Double?
        package var floors: [String]
        package var stationary: Bool
        package var enabled: Bool
        package var line: Int?
        package var path: String
    }

    package var floors: [Floor] = []
    package var nodes: [Node] = []
    /// What was wrong, each with the document's path and line.
    package var errors: [InputError] = []

    /// Reads `text`, the contents of the file at `file`.
    package static func parse(_ text: String, file: String) -> CompanionFloorplan {
        var result = CompanionFloorplan()
        func fail(_ node: Yams.Node?, _ path: String, _ message: String) {
            result.errors.append(InputError(file: file, line: node?.mark?.line, message: "\(path): \(message)"))
        }
        let root: Yams.Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch let error as YamlError {
            result.errors.append(Self.error(error, file: file))
            return result
        } catch {
            result.errors.append(
                InputError(file: file, message: "not YAML (\(error)); fix the file or remove Floorplan.file"))
            return result
        }
        guard let root else { return result }
        guard case .mapping = root else {
            fail(root, "the document", "is not a mapping of keys such as floors: and nodes:")
            return result
        }
        if let floors = root["floors"] {
            for (index, item) in Self.items(floors, "floors", fail).enumerated() {
                if let floor = Self.floor(item, path: "floors[\(index)]", fail) { result.floors.append(floor) }
            }
        }
        if let nodes = root["nodes"] {
            for (index, item) in Self.items(nodes, "nodes", fail).enumerated() {
                if let node = Self.node(item, path: "nodes[\(index)]", fail) { result.nodes.append(node) }
            }
        }
        return result
    }

    typealias Fail = (Yams.Node?, String, String) -> Void

    /// A sequence's items; an empty value (`floors:`) is none.
    static func items(_ node: Yams.Node, _ path: String, _ fail: Fail) -> [Yams.Node] {
        switch node {
        case .sequence(let sequence): return Array(sequence)
        case .scalar(let scalar) where scalar.string.isEmpty || scalar.string == "~" || scalar.string == "null":
            return []
        default:
            fail(node, path, "is not a list; write each item on a line of its own starting with '- '")
            return []
        }
    }

    static func text(_ node: Yams.Node?) -> String? {
        guard case .scalar(let scalar)? = node else { return nil }
        return scalar.string
    }

    static func number(_ node: Yams.Node?) -> Double? {
        guard let text = text(node)?.trimmingCharacters(in: .whitespaces), let value = Double(text), value.isFinite,
            abs(value) <= 100_000
        else { return nil }
        return value
    }

    /// `[x, y]` or `[x, y, z]`: `count` numbers.
    static func numbers(_ node: Yams.Node?, count: ClosedRange<Int>, _ path: String, _ fail: Fail) -> [Double]? {
        guard case .sequence(let sequence)? = node, count.contains(sequence.count) else {
            fail(node, path, "is not a point [x, y\(count.upperBound > 2 ? ", z" : "")] in metres")
            return nil
        }
        var values: [Double] = []
        for (index, item) in sequence.enumerated() {
            guard let value = number(item) else {
                fail(item, "\(path)[\(index)]", "'\(text(item) ?? "?")' is not a number of metres")
                return nil
            }
            values.append(value)
        }
        return values
    }

    static func floor(_ node: Yams.Node, path: String, _ fail: Fail) -> Floor? {
        guard case .mapping = node else {
            fail(node, path, "is not a floor (id:, name:, bounds:, rooms:)")
            return nil
        }
        let name = text(node["name"])
        let id = text(node["id"]).flatMap { $0.isEmpty ? nil : $0 } ?? name.map(snakeCase) ?? "none"
        var floor = Floor(id: id, name: name, rooms: [], line: node.mark?.line)
        if let bounds = node["bounds"] {
            if case .sequence(let corners) = bounds, corners.count == 2,
                let low = numbers(corners[0], count: 2...3, "\(path).bounds[0]", fail),
                let high = numbers(corners[1], count: 2...3, "\(path).bounds[1]", fail)
            {
                floor.bounds = Box(
                    x0: min(low[0], high[0]), y0: min(low[1], high[1]), x1: max(low[0], high[0]),
                    y1: max(low[1], high[1]))
                if low.count == 3, high.count == 3 {
                    (floor.bottom, floor.top) = (min(low[2], high[2]), max(low[2], high[2]))
                }
            } else if case .sequence(let corners) = bounds, corners.count == 2 {
                // numbers() said what was wrong.
            } else {
                fail(bounds, "\(path).bounds", "is not two corners [[x, y, z], [x, y, z]]")
            }
        }
        if let rooms = node["rooms"] {
            for (index, item) in items(rooms, "\(path).rooms", fail).enumerated() {
                let roomPath = "\(path).rooms[\(index)]"
                guard case .mapping = item, let name = text(item["name"]), !name.isEmpty else {
                    fail(item, roomPath, "is not a room with a name: and points:")
                    continue
                }
                guard case .sequence(let corners)? = item["points"], (3...1000).contains(corners.count) else {
                    fail(
                        item["points"] ?? item, "\(roomPath).points", "is not a list of 3 to 1000 points [x, y]")
                    continue
                }
                var points: [PlanPoint] = []
                for (corner, value) in corners.enumerated() {
                    guard let xy = numbers(value, count: 2...3, "\(roomPath).points[\(corner)]", fail) else { break }
                    points.append(PlanPoint(xy[0], xy[1]))
                }
                guard points.count == corners.count else { continue }
                // The companion's files often close a polygon by repeating its first point.
                if points.count > 3, points.first == points.last { points.removeLast() }
                floor.rooms.append(
                    Room(
                        name: name, id: text(item["id"]).flatMap { $0.isEmpty ? nil : $0 }, points: points,
                        line: item.mark?.line, path: roomPath))
            }
        }
        return floor
    }

    static func node(_ node: Yams.Node, path: String, _ fail: Fail) -> Node? {
        guard case .mapping = node else {
            fail(node, path, "is not a node (name:, point:, floors:)")
            return nil
        }
        let name = text(node["name"])
        guard let id = text(node["id"]).flatMap({ $0.isEmpty ? nil : $0 }) ?? name.map(snakeCase), !id.isEmpty else {
            fail(node, path, "has neither a name: nor an id:")
            return nil
        }
        guard let point = numbers(node["point"], count: 2...3, "\(path).point", fail) else { return nil }
        var floors: [String] = []
        if let list = node["floors"] {
            for (index, item) in items(list, "\(path).floors", fail).enumerated() {
                guard let floor = text(item) else {
                    fail(item, "\(path).floors[\(index)]", "is not a floor id")
                    continue
                }
                floors.append(floor)
            }
        }
        func flag(_ key: String) -> Bool {
            guard let value = node[key] else { return true }
            guard let text = text(value)?.lowercased(), ["true", "false", "yes", "no"].contains(text) else {
                fail(value, "\(path).\(key)", "is not true or false")
                return true
            }
            return text == "true" || text == "yes"
        }
        return Node(
            id: id, name: name, point: PlanPoint(point[0], point[1]),
            z: point.count == 3 ? point[2] : nil, floors: floors,
            stationary: flag("stationary"), enabled: flag("enabled"), line: node.mark?.line, path: path)
    }

    /// The companion's id of a name (`ConfigNode.GetId()`: `Name.ToSnakeCase().ToLower()`, with
    /// TextExtensions' `ToSnakeCase`, docs/floorplans.md): words split at every character that is
    /// not an ASCII letter or digit, and inside a word before a capital that follows a lower-case
    /// letter or digit, or that starts a capitalised word after capitals ("VWEos" → "vw_eos");
    /// joined by `_`, lower case.
    package static func snakeCase(_ name: String) -> String {
        var words: [String] = []
        for chunk in name.split(whereSeparator: { !($0.isASCII && ($0.isLetter || $0.isNumber)) }) {
            let characters = Array(chunk)
            var word = ""
            for (index, character) in characters.enumerated() {
                if index > 0, character.isUppercase {
                    let previous = characters[index - 1]
                    let nextIsLower = index + 1 < characters.count && characters[index + 1].isLowercase
                    if !previous.isUppercase || nextIsLower, !word.isEmpty {
                        words.append(word)
                        word = ""
                    }
                }
                word.append(character)
            }
            if !word.isEmpty { words.append(word) }
        }
        return words.map { $0.lowercased() }.joined(separator: "_")
    }

    /// A name as rooms are matched to Zones: case, spaces, `-` and `_` ignored.
    package static func matchKey(_ name: String) -> String {
        String(name.lowercased().filter { !$0.isWhitespace && $0 != "-" && $0 != "_" })
    }

    static func error(_ error: YamlError, file: String) -> InputError {
        switch error {
        case .scanner(let context, let problem, let mark, _), .parser(let context, let problem, let mark, _),
            .composer(let context, let problem, let mark, _):
            let detail = context.map { "\($0.text) " } ?? ""
            return InputError(
                file: file, line: mark.line, message: "not valid YAML: \(detail)\(problem); fix the file at that line")
        default:
            return InputError(file: file, message: "not valid YAML (\(error)); fix the file")
        }
    }
}
