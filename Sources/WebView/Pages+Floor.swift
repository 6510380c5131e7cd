import BeaconCore
import Floorplan
import Foundation
import RegionMonitor

extension Pages {
    /// `/floors/<Area>`'s main (docs/behaviour.md §20): the floor drawn to scale — its rooms, doors,
    /// stairs (each a link to the floor it leads to) and scanners (online or offline) — and every
    /// tag on it as a dot with its error circle and its name, redrawn live like every page; for a floor of a building of several, first the picker of
    /// its floors (``floorPicker(_:current:_:into:)``). `nil` for an Area without a plan.
    /// `area`: the Area's UUID or its name (``BuildingModel/floor(named:)``).
    package static func floor(_ model: BuildingModel, area: String) -> String? {
        guard let floor = model.floor(named: area) else { return nil }
        let region = floor.area
        var html = HTML()
        html.open("p", [("class", "now")])
        html.escaped(model.latestTime.map { "as of \(HTML.clock($0)) UTC" } ?? "waiting for the engine")
        html.close("p")
        let storeys = model.floors(inBuildingOf: floor)
        if storeys.count > 1 { floorPicker(storeys, current: region, model, into: &html) }
        let box = floor.box
        /// Metres to the drawing's units, y up as on a plan.
        func x(_ value: Double) -> String { number(value - box.x0) }
        func y(_ value: Double) -> String { number(box.y1 - value) }
        html.raw(
            "<svg class=\"floor\" data-area=\"\(region)\" viewBox=\"0 0 \(number(box.width)) \(number(box.height))\" "
                + "xmlns=\"http://www.w3.org/2000/svg\" role=\"img\">")
        for room in floor.rooms {
            let points = room.polygon.map { "\(x($0.x)),\(y($0.y))" }.joined(separator: " ")
            html.open("g", [("class", "room"), ("data-region", room.region.description)])
            html.raw("<polygon points=\"\(points)\"/>")
            if let center = Box(room.polygon) {
                html.open(
                    "text",
                    [
                        ("x", x((center.x0 + center.x1) / 2)), ("y", y((center.y0 + center.y1) / 2)),
                        ("text-anchor", "middle"),
                    ])
                html.escaped(model.name(of: room.region))
                html.close("text")
            }
            html.close("g")
        }
        for door in floor.doors {
            html.raw(
                "<line class=\"door\" x1=\"\(x(door.a.x))\" y1=\"\(y(door.a.y))\" x2=\"\(x(door.b.x))\" "
                    + "y2=\"\(y(door.b.y))\"/>")
        }
        for stairs in floor.stairs {
            // A square metre of treads at the stairs' end, a link to the floor they lead to.
            let to = stairs.to.description
            let text = "stairs \(stairs.up ? "up" : "down") to \(model.name(of: stairs.to))"
            let (left, right, top) = (stairs.point.x - 0.5, stairs.point.x + 0.5, stairs.point.y + 0.5)
            html.open("g", [("class", "stairs"), ("data-to", to)])
            html.open("a", [("href", "/floors/\(to)")])
            html.open("title")
            html.escaped(text)
            html.close("title")
            html.raw("<rect x=\"\(x(left))\" y=\"\(y(top))\" width=\"1\" height=\"1\"/>")
            for step in 1...3 {
                let tread = top - Double(step) * 0.25
                html.raw("<line x1=\"\(x(left))\" y1=\"\(y(tread))\" x2=\"\(x(right))\" y2=\"\(y(tread))\"/>")
            }
            html.open("text", [("x", x(stairs.point.x)), ("y", y(top - 1.3)), ("text-anchor", "middle")])
            html.escaped(text)
            html.close("text")
            html.close("a")
            html.close("g")
        }
        for placed in floor.scanners {
            let scanner = model.scanners.first { $0.locationID == placed.locationID }
            let state = scanner?.online.map { $0 ? "online" : "offline" } ?? "unknown"
            html.open(
                "g",
                [("class", "scanner \(state)"), ("data-scanner", scanner?.id ?? placed.locationID)])
            html.raw(
                "<rect x=\"\(x(placed.point.x - 0.15))\" y=\"\(y(placed.point.y + 0.15))\" width=\"0.3\" height=\"0.3\"/>"
            )
            html.open("title")
            html.escaped("\(scanner?.id ?? placed.locationID): \(state)")
            html.close("title")
            html.close("g")
        }
        var placed: [(BuildingModel.Device, MonitorReading.PositionReading)] = []
        for device in model.orderedDevices {
            guard let position = device.reading?.monitor.position, position.area == region else { continue }
            placed.append((device, position))
            html.open(
                "g",
                [
                    ("class", "tag"), ("data-device", device.id), ("data-x", number(position.x)),
                    ("data-y", number(position.y)),
                ])
            html.raw(
                "<circle class=\"error\" cx=\"\(x(position.x))\" cy=\"\(y(position.y))\" "
                    + "r=\"\(number(max(0.1, position.error)))\"/>")
            html.raw("<circle class=\"dot\" cx=\"\(x(position.x))\" cy=\"\(y(position.y))\" r=\"0.15\"/>")
            // Its name beside its dot (its declared name, else its id).
            html.open("text", [("class", "name"), ("x", x(position.x + 0.25)), ("y", y(position.y - 0.1))])
            html.escaped(device.label)
            html.close("text")
            html.open("title")
            html.escaped("\(device.label): \(number(position.x)), \(number(position.y)) ± \(number(position.error)) m")
            html.close("title")
            html.close("g")
        }
        html.raw("</svg>")
        html.raw("<table class=\"positions\"><thead><tr><th>tag</th><th>where</th><th>room</th></tr></thead><tbody>")
        for (device, position) in placed {
            html.open("tr", [("data-device", device.id)])
            html.open("td")
            html.element("a", [("href", "/devices/\(percentEncoded(device.id))")], device.label)
            html.close("td")
            html.element("td", [], "\(number(position.x)), \(number(position.y)) ± \(number(position.error)) m")
            html.element("td", [], device.reading?.monitor.room.map(model.name(of:)) ?? "no room")
            html.close("tr")
        }
        if placed.isEmpty { html.raw("<tr><td colspan=\"3\" class=\"none\">no tag is on this floor</td></tr>") }
        html.raw("</tbody></table>")
        return html.text
    }

    /// `/floors`' main, when more than one Area has a plan (with one, `/floors` goes to it): every
    /// floor, each a link to its page by its Area's name, with its building's other floors and
    /// how many tags are on it now.
    package static func floorIndex(_ model: BuildingModel) -> String {
        var html = HTML()
        let counts = model.tagsByFloor
        html.raw("<ul class=\"floor-index\">")
        for floor in model.floors {
            let tags = counts[floor.area] ?? 0
            html.open("li", [("data-area", floor.area.description)])
            html.element("a", [("href", "/floors/\(floor.area.description)")], model.name(of: floor.area))
            html.escaped(": \(tags) tag\(tags == 1 ? "" : "s") on it")
            let others = model.floors(inBuildingOf: floor).filter { $0.area != floor.area }
            if !others.isEmpty {
                html.escaped(", in a building with " + others.map { model.name(of: $0.area) }.joined(separator: ", "))
            }
            html.close("li")
        }
        html.raw("</ul>")
        return html.text
    }

    /// The floors of one building, lowest first, each a link to its page with how many tags are
    /// on it now; the one shown (`current`) is marked for the eye and for assistive technology.
    /// Part of the page's main, so it is redrawn live with the rest: a tag going upstairs moves
    /// from one floor's count to the next.
    static func floorPicker(
        _ floors: [BuildingModel.Floor], current: Region, _ model: BuildingModel, into html: inout HTML
    ) {
        let counts = model.tagsByFloor
        html.raw("<nav class=\"floors\" aria-label=\"Floors of this building\"><ol>")
        for floor in floors {
            let here = floor.area == current
            let tags = counts[floor.area] ?? 0
            html.open("li", [("class", here ? "floor current" : "floor"), ("data-area", floor.area.description)])
            html.open(
                "a", [("href", "/floors/\(floor.area.description)")] + (here ? [("aria-current", "page")] : []))
            html.escaped(model.name(of: floor.area))
            html.element(
                "span", [("class", "count"), ("title", "\(tags) tag\(tags == 1 ? "" : "s") on this floor")], "\(tags)")
            html.close("a")
            html.close("li")
        }
        html.raw("</ol></nav>")
    }

    /// A tag's position and the probability of each room near it (its device page).
    static func position(_ position: MonitorReading.PositionReading, _ model: BuildingModel, into html: inout HTML) {
        html.raw("<section class=\"position\"><h2>Position</h2>")
        html.open("p")
        html.escaped("\(number(position.x)), \(number(position.y)) ± \(number(position.error)) m on ")
        html.element(
            "a", [("href", "/floors/\(position.area.description)")], model.name(of: position.area))
        html.close("p")
        html.raw("<table class=\"odds\"><thead><tr><th>room</th><th>probability</th></tr></thead><tbody>")
        for odds in position.rooms {
            html.open("tr", [("data-region", odds.room?.description ?? "none")])
            html.element("td", [], odds.room.map(model.name(of:)) ?? "outside every room")
            html.element("td", [], "\(Int((odds.probability * 100).rounded())) %")
            html.close("tr")
        }
        html.raw("</tbody></table></section>")
    }

    /// A length or coordinate in metres, to the centimetre.
    static func number(_ value: Double) -> String {
        let rounded = (value * 100).rounded() / 100
        return rounded == rounded.rounded() && abs(rounded) < 1e12 ? String(Int(rounded)) : String(rounded)
    }
}

extension BuildingModel {
    /// The floor a floor page's address names: its Area's UUID, or its Area's name with case,
    /// spaces, `-` and `_` ignored (`/floors/ground-floor` is the "Ground floor"); `nil` when no
    /// floor with a plan is named so, or two are.
    package func floor(named text: String) -> Floor? {
        if let region = Region(text) { return floors.first { $0.area == region } }
        func key(_ name: String) -> String { String(name.lowercased().filter { !" -_".contains($0) }) }
        let wanted = key(text)
        let named = floors.filter { key(name(of: $0.area)) == wanted }
        return named.count == 1 ? named[0] : nil
    }
}
