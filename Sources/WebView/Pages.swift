import BeaconCore
import Engine
import RegionMonitor

/// The web view's pages (docs/behaviour.md §16), rendered on the server so that they show the state with
/// JavaScript off. Each page is a frame around a `<main id="main">` whose content the page's
/// script fetches again (`?fragment=main`) when an output arrives over server-sent events.
package enum Pages {
    /// The whole page: the frame and `main`.
    /// `controls` go before `main`, where a live refresh does not replace them (a form's choices).
    package static func page(title: String, device: String?, main: String, controls: String? = nil) -> String {
        var html = HTML(capacity: main.utf8.count + 1024)
        html.raw("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">")
        html.raw("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">")
        html.element("title", [], "\(title) · beaconwatch")
        html.raw("<link rel=\"stylesheet\" href=\"/assets/style.css\"></head>")
        html.open("body", device.map { [("data-device", $0)] } ?? [])
        html.raw("<header><a class=\"home\" href=\"/\">beaconwatch</a>")
        html.element("h1", [], title)
        html.raw("<span id=\"live\" class=\"live\">static</span></header>")
        if let controls { html.raw("<div class=\"controls\">\(controls)</div>") }
        html.raw("<main id=\"main\">")
        html.raw(main)
        html.raw("</main><script src=\"/assets/live.js\"></script></body></html>")
        return html.text
    }

    // MARK: - The building

    /// `/`'s main: the hierarchy with who is inside each Area and Zone, today's leaderboard per
    /// Zone, the devices, and the latest transitions.
    package static func building(_ model: BuildingModel) -> String {
        var html = HTML()
        let devices = model.orderedDevices
        var inside: [Region: [BuildingModel.Device]] = [:]
        for device in devices {
            for presence in device.reading?.monitor.inside ?? [] where presence.region.kind != .beacon {
                inside[presence.region, default: []].append(device)
            }
        }
        html.raw("<p class=\"now\">")
        html.escaped(model.latestTime.map { "as of \(HTML.clock($0)) UTC" } ?? "waiting for the engine")
        html.escaped(" · \(devices.count) device\(devices.count == 1 ? "" : "s")")
        if !model.scanners.isEmpty {
            let online = model.scanners.filter { $0.online == true }.count
            html.escaped(" · ")
            html.element(
                "a", [("href", "/scanners"), ("class", "scanners-link")],
                "\(online) of \(model.scanners.count) scanners online")
        }
        html.raw("</p><div class=\"building\">")
        let boards = model.leaderboards()
        let occupancy = model.occupancyByRegion
        for area in model.hierarchy.areas {
            let here = inside[area.region] ?? []
            html.open("section", [("class", "area"), ("data-region", area.region.description)])
            html.open("h2")
            html.escaped(area.name ?? area.region.description)
            // An Area's people are its rooms' together (docs/behaviour.md §23), also where only
            // Zones have an occupancy.
            let rooms = area.zones.reduce(0) { $0 + (occupancy[model.hierarchy.zones[$1].region]?.count ?? 0) }
            html.element("span", [("class", "count")], "\(occupancy[area.region]?.count ?? max(here.count, rooms))")
            if model.floors.contains(where: { $0.area == area.region }) {
                html.element(
                    "a", [("href", "/floors/\(area.region.description)"), ("class", "floor-link")], "floor plan")
            }
            html.close("h2")
            if let state = occupancy[area.region] { self.occupancy(state, model, into: &html) }
            chips(here, into: &html)
            html.raw("<div class=\"zones\">")
            for index in area.zones {
                let zone = model.hierarchy.zones[index]
                let present = inside[zone.region] ?? []
                let state = occupancy[zone.region]
                // Occupied as the building's occupancy says (docs/behaviour.md §23), else while a device is inside.
                let occupied = state?.occupied ?? !present.isEmpty
                html.open(
                    "div", [("class", occupied ? "zone occupied" : "zone"), ("data-region", zone.region.description)])
                html.open("h3")
                html.escaped(zone.name ?? zone.region.description)
                // With an occupancy, the people it counts (a sensor may count people without a tag).
                html.element("span", [("class", "count")], "\(state?.count ?? present.count)")
                html.close("h3")
                if let state { self.occupancy(state, model, into: &html) }
                chips(present, into: &html)
                let board = boards[zone.region.description] ?? []
                if !board.isEmpty {
                    html.raw("<ol class=\"leaderboard\" title=\"today's longest stays\">")
                    for row in board {
                        html.open("li", [("data-device", row.device.id)])
                        html.element("span", [("class", "who")], row.device.label)
                        html.element("span", [("class", "dwell")], HTML.duration(row.seconds))
                        html.close("li")
                    }
                    html.close("ol")
                }
                html.open("p", [("class", "beacons")])
                if zone.beacons.count <= 12 {
                    html.escaped(
                        zone.beacons.map { index in
                            let beacon = model.hierarchy.beacons[Int(index)]
                            return beacon.name.map { "\($0) (\(beacon.locationID))" } ?? beacon.locationID
                        }.joined(separator: " · "))
                } else {
                    html.escaped("\(zone.beacons.count) beacons")
                }
                html.close("p")
                html.close("div")
            }
            html.raw("</div></section>")
        }
        html.raw("</div>")
        deviceTable(devices, model, into: &html)
        buildingTraining(model, into: &html)
        transitions(model, into: &html)
        return html.text
    }

    /// A region's occupancy (docs/behaviour.md §23): occupied or vacant with its count of people,
    /// why (the devices inside and the sensors that say so), and each of its sensors' state.
    private static func occupancy(_ state: OccupancyChange, _ model: BuildingModel, into html: inout HTML) {
        html.open(
            "div",
            [
                ("class", state.occupied ? "occupancy occupied" : "occupancy vacant"),
                ("data-occupied", state.occupied ? "true" : "false"), ("data-count", "\(state.count)"),
            ])
        html.open("p", [("class", "state")])
        html.element("strong", [], state.occupied ? "occupied" : "vacant")
        html.escaped(" · \(state.count) \(state.count == 1 ? "person" : "people")")
        html.close("p")
        if state.occupied { html.element("p", [("class", "why")], model.explanation(state)) }
        if !state.sensors.isEmpty {
            html.raw("<ul class=\"sensors\">")
            for (id, shown) in state.sensors.sorted(by: { $0.key < $1.key }) {
                let said =
                    switch shown {
                    case .detected(true): "present"
                    case .detected(false): "clear"
                    case .count(let people): "counts \(people)"
                    case .none: "no reading"
                    case .offline: "offline"
                    }
                html.open("li", [("data-sensor", id), ("data-state", said)])
                html.escaped("\(id): \(said)")
                // Which liveness it has: its firmware's status topic, its silence, or none.
                if let liveness = model.sensorLiveness[id] { html.element("span", [("class", "liveness")], liveness) }
                html.close("li")
            }
            html.raw("</ul>")
        }
        html.close("div")
    }

    private static func chips(_ devices: [BuildingModel.Device], into html: inout HTML) {
        html.raw("<ul class=\"devices\">")
        for device in devices.prefix(100) {
            html.open("li", [("class", "device"), ("data-device", device.id)])
            html.element("a", [("href", "/devices/\(percentEncoded(device.id))")], device.label)
            html.close("li")
        }
        if devices.count > 100 { html.element("li", [("class", "more")], "and \(devices.count - 100) more") }
        html.raw("</ul>")
    }

    private static func deviceTable(_ devices: [BuildingModel.Device], _ model: BuildingModel, into html: inout HTML) {
        // Geofences (docs/behaviour.md §17) get a column when any device has them.
        let fences = devices.contains { $0.reading?.geofences != nil }
        html.raw("<section class=\"device-list\"><h2>Devices</h2><table><thead><tr>")
        html.raw("<th>device</th><th>area</th><th>zone</th>\(fences ? "<th>geofences</th>" : "")")
        html.raw("<th>nearest</th><th>ranging</th></tr></thead><tbody>")
        for device in devices {
            let monitor = device.reading?.monitor
            let inside = monitor?.inside.map(\.region) ?? []
            html.open("tr", [("data-device", device.id)])
            html.raw("<td>")
            html.element("a", [("href", "/devices/\(percentEncoded(device.id))")], device.label)
            html.raw("</td>")
            html.element("td", [("class", "area")], inside.first { $0.kind == .area }.map(model.name(of:)) ?? "—")
            html.element("td", [("class", "zone")], inside.first { $0.kind == .zone }.map(model.name(of:)) ?? "—")
            if fences {
                let labels = device.reading?.geofences ?? []
                html.element("td", [("class", "geofences")], labels.isEmpty ? "—" : labels.joined(separator: ", "))
            }
            html.element("td", [("class", "nearest")], monitor?.nearest.map { beaconLabel($0, model) } ?? "—")
            html.element("td", [], monitor?.ranging.rawValue ?? "—")
            html.close("tr")
        }
        html.raw("</tbody></table></section>")
    }

    private static func transitions(_ model: BuildingModel, device: String? = nil, into html: inout HTML) {
        html.raw("<section class=\"transitions\"><h2>Latest transitions</h2><ol>")
        var any = false
        for entry in model.transitions.reversed() where device == nil || entry.device == device {
            any = true
            let transition = entry.transition
            html.open("li", [("class", transition.direction.rawValue), ("data-device", entry.device)])
            html.element("time", [("datetime", entry.time.iso8601)], HTML.clock(entry.time))
            html.escaped(" ")
            html.element("span", [("class", "who")], model.devices[entry.device]?.label ?? entry.device)
            html.escaped(" \(transition.direction == .enter ? "entered" : "left") \(transition.region.kind.rawValue) ")
            html.element("span", [("class", "where")], transition.name ?? transition.region.description)
            if let dwell = transition.dwell { html.escaped(" after \(HTML.duration(dwell))") }
            html.close("li")
        }
        if !any { html.raw("<li class=\"none\">none yet</li>") }
        html.raw("</ol></section>")
    }

    // MARK: - A device

    /// `/devices/<id>`'s main; `nil` for an unknown device.
    package static func device(_ model: BuildingModel, id: String) -> String? {
        guard let device = model.devices[id] else { return nil }
        var html = HTML()
        guard let reading = device.reading else {
            html.raw("<p class=\"now\">waiting for the engine</p>")
            return html.text
        }
        let monitor = reading.monitor
        html.open("p", [("class", "now")])
        html.escaped(
            "as of \(HTML.clock(monitor.time)) UTC · \(device.own ? "this daemon's radio" : "fleet device \(device.id)")"
                + " · ranging \(monitor.ranging.rawValue)")
        html.close("p")
        // A tag: its training session and how well the trained rooms are known (docs/behaviour.md §22).
        if model.tags.contains(device.id) { training(model, device: device.id, into: &html) }
        // The monitored set, as a phone's slots under Monitor.maxRegions (docs/behaviour.md §5.2); a
        // tag is heard by scanners, and has no cap of a phone's (§19).
        if !model.tags.contains(device.id) { slots(monitor, model, into: &html) }
        // Where it is.
        html.raw("<section class=\"inside\"><h2>Inside</h2><ul>")
        for presence in monitor.inside where presence.region.kind != .beacon {
            html.open("li", [("class", presence.region.kind.rawValue), ("data-region", presence.region.description)])
            html.escaped("\(presence.region.kind.rawValue) ")
            html.element("span", [("class", "where")], model.name(of: presence.region))
            html.escaped(" since \(HTML.clock(presence.since)) UTC")
            html.close("li")
        }
        for label in reading.geofences ?? [] {
            html.open("li", [("class", "geofence")])
            html.escaped("geofence ")
            html.element("span", [("class", "where")], label)
            html.close("li")
        }
        if !monitor.inside.contains(where: { $0.region.kind != .beacon }), reading.geofences?.isEmpty ?? true {
            html.raw("<li class=\"none\">nowhere</li>")
        }
        html.raw("</ul>")
        html.open("p", [("class", "nearest")])
        html.escaped("Nearest beacon: \(monitor.nearest.map { beaconLabel($0, model) } ?? "none")")
        html.close("p")
        if monitor.roomChange != nil || monitor.room != nil || isTag(monitor, model) {
            // A tag's room and the evidence that put it there (docs/behaviour.md §19).
            html.open("p", [("class", "room-why"), ("data-room", monitor.room?.description ?? "")])
            html.escaped("Room: \(monitor.room.map { model.name(of: $0) } ?? "none")")
            if let change = monitor.roomChange {
                html.escaped(" — ")
                html.element("span", [("class", "why")], model.why(change))
            }
            html.close("p")
        }
        html.raw("</section>")
        if let position = monitor.position { Self.position(position, model, into: &html) }
        beacons(device, monitor, model, into: &html)
        extras(reading, model, into: &html)
        transitions(model, device: device.id, into: &html)
        return html.text
    }

    /// The device's monitored set drawn as its own cap's slots (`Monitor.maxRegions` less its
    /// monitored waypoints, docs/behaviour.md §15.1), filled or free.
    private static func slots(_ monitor: MonitorReading, _ model: BuildingModel, into html: inout HTML) {
        html.open(
            "section", [("class", "slots-section"), ("data-mode", monitor.mode.rawValue)])
        html.open("h2")
        html.escaped(
            "Monitored regions: \(monitor.monitored.count) of \(monitor.maxRegions) slots, \(monitor.mode.rawValue)")
        html.close("h2")
        html.raw("<ol class=\"slots\">")
        let insideRegions = Set(monitor.inside.map(\.region))
        for slot in 0..<max(monitor.maxRegions, monitor.monitored.count) {
            if slot < monitor.monitored.count {
                let region = monitor.monitored[slot]
                let inside = insideRegions.contains(region)
                html.open(
                    "li",
                    [
                        ("class", "slot filled \(region.kind.rawValue)\(inside ? " inside" : "")"),
                        ("data-region", region.description), ("title", region.description),
                    ])
                html.element("span", [("class", "kind")], region.kind.rawValue)
                html.element("span", [("class", "name")], model.name(of: region))
                html.close("li")
            } else {
                html.raw("<li class=\"slot empty\"><span class=\"kind\">free</span></li>")
            }
        }
        html.raw("</ol></section>")
    }

    /// Whether the device is a tag heard by fixed scanners (it has a room, or scanners heard it).
    static func isTag(_ monitor: MonitorReading, _ model: BuildingModel) -> Bool {
        monitor.room != nil || monitor.roomChange != nil
            || (!model.scanners.isEmpty && monitor.beacons.contains { model.scanner(at: $0.locationID) != nil })
    }

    private static func beacons(
        _ device: BuildingModel.Device, _ monitor: MonitorReading, _ model: BuildingModel, into html: inout HTML
    ) {
        // A tag: the scanners that heard it in the last minute, each with its last raw RSSI.
        let tag = isTag(monitor, model)
        let oldest = monitor.time.microseconds &- 60_000_000
        html.raw(
            tag
                ? "<section class=\"beacons scanners-heard\"><h2>Scanners that heard it (last minute)</h2><table><thead><tr>"
                : "<section class=\"beacons\"><h2>Beacons heard (last 5 minutes)</h2><table><thead><tr>")
        html.raw(tag ? "<th>scanner</th>" : "<th>beacon</th>")
        html.raw("<th>class</th><th>reported</th><th>RSSI</th><th>distance</th><th>RSSI, 5 min</th>")
        html.raw("</tr></thead><tbody>")
        let history = model.history[device.id] ?? [:]
        var rows: [(String, MonitorReading.Beacon?)] = monitor.beacons.map { ($0.locationID, $0) }
        if tag {
            rows = rows.filter { $0.1?.heard.map { $0.microseconds >= oldest } ?? false }
        } else {
            let listed = Set(rows.map(\.0))
            rows += history.keys.filter { !listed.contains($0) }.sorted().map { ($0, nil) }
        }
        for (locationID, beacon) in rows {
            let computed = beacon?.computed ?? .off
            html.open("tr", [("data-beacon", locationID), ("class", computed.rawValue)])
            let scanner = model.scanner(at: locationID)
            html.element(
                "td", scanner.map { [("data-scanner", $0.id)] } ?? [],
                scanner.map { "\($0.id) at \(beaconLabel(locationID, model))" } ?? beaconLabel(locationID, model))
            html.element("td", [("class", "class")], computed.rawValue)
            html.element("td", [], (beacon?.reported ?? .off).rawValue)
            var rssi = beacon?.rssi.map { tag ? "\(Chart.oneDecimal($0)) dBm" : "\(Int($0.rounded())) dBm" } ?? "—"
            if tag, let raw = beacon?.raw { rssi += " (last \(Chart.oneDecimal(raw)))" }
            html.element("td", [], rssi)
            html.element("td", [], beacon?.meters.map { "\(Chart.oneDecimal($0)) m" } ?? "—")
            html.raw("<td>")
            html.raw(Chart.rssi(history[locationID] ?? [], end: monitor.time))
            html.raw("</td>")
            html.close("tr")
        }
        if rows.isEmpty { html.raw("<tr><td colspan=\"6\" class=\"none\">none</td></tr>") }
        html.raw("</tbody></table></section>")
    }

    // MARK: - Scanners

    /// `/scanners`'s main: every placed scanner, its room, and its health (docs/behaviour.md §19).
    package static func scanners(_ model: BuildingModel) -> String {
        var html = HTML()
        html.open("p", [("class", "now")])
        html.escaped(
            model.scannersReadAt.map { "as of \(HTML.clock($0)) UTC" } ?? "waiting for the engine")
        html.close("p")
        html.raw("<table class=\"scanners\"><thead><tr><th>scanner</th><th>location</th><th>room</th>")
        html.raw("<th>state</th><th>last report</th><th>reports</th><th>learned offset</th></tr></thead><tbody>")
        for scanner in model.scanners {
            let state = scanner.online.map { $0 ? "online" : "offline" } ?? "unknown"
            html.open("tr", [("data-scanner", scanner.id), ("class", state)])
            html.element("td", [], scanner.id)
            html.element("td", [], beaconLabel(scanner.locationID, model))
            let room = model.hierarchy.index(ofLocation: scanner.locationID).map { index in
                model.name(of: model.hierarchy.zones[Int(model.hierarchy.zoneOfBeacon[index])].region)
            }
            html.element("td", [], room ?? "—")
            html.element("td", [("class", "state")], state)
            let last = scanner.lastReport.map { report -> String in
                guard let now = model.scannersReadAt else { return HTML.clock(report) }
                let seconds = max(0, Double(now.microseconds &- report.microseconds) / 1_000_000)
                return "\(HTML.clock(report)) UTC (\(Int(seconds.rounded())) s ago)"
            }
            html.element("td", [], last ?? "never")
            html.element("td", [], "\(scanner.reports)")
            let learned = scanner.learned.map { learned -> String in
                let tenths = (learned.offset * 10).rounded() / 10
                let text = tenths == tenths.rounded() ? String(Int(tenths)) : String(tenths)
                return
                    "\(tenths > 0 ? "+" : "")\(text) dB (against \(learned.pairs) scanner\(learned.pairs == 1 ? "" : "s"))"
            }
            html.element("td", [("class", "learned")], learned ?? "—")
            html.close("tr")
        }
        if model.scanners.isEmpty { html.raw("<tr><td colspan=\"7\" class=\"none\">no scanner is placed</td></tr>") }
        html.raw("</tbody></table>")
        if let radio = model.radio {
            // What the floors' scanners taught the estimator of their radio (docs/behaviour.md §20).
            html.open("p", [("class", "radio")])
            html.escaped("Floor radio: \(radio)")
            html.close("p")
        }
        return html.text
    }

    private static func extras(_ reading: DeviceReading, _ model: BuildingModel, into html: inout HTML) {
        html.raw("<section class=\"alerts\"><h2>Alerts</h2><ul>")
        for (id, status) in reading.alerts.sorted(by: { $0.key < $1.key }) {
            html.open("li", [("data-alert", id), ("class", status.rawValue)])
            html.escaped("\(beaconLabel(id, model)): \(status.rawValue)")
            html.close("li")
        }
        if reading.alerts.isEmpty { html.raw("<li class=\"none\">no alerts configured</li>") }
        html.raw("</ul></section><section class=\"rules\"><h2>Rules</h2>")
        html.open("p", [("class", "notifications")])
        html.escaped("Notifications today: \(reading.notificationsToday)")
        html.close("p")
        html.raw("<table><thead><tr><th>region</th><th>rule</th><th>events counted</th></tr></thead><tbody>")
        let counts = reading.ruleCounts.sorted { ($0.key.region, $0.key.rule) < ($1.key.region, $1.key.rule) }
        for (key, count) in counts {
            html.raw("<tr>")
            html.element("td", [], key.region)
            html.element("td", [], key.rule)
            html.element("td", [], "\(count)")
            html.raw("</tr>")
        }
        if counts.isEmpty { html.raw("<tr><td colspan=\"3\" class=\"none\">no rule has counted an event</td></tr>") }
        html.raw("</tbody></table><h3>Pending latches</h3><ul class=\"latches\">")
        for latch in reading.latches {
            html.open("li")
            html.escaped(
                "region \(latch.region), rule \(latch.rule): \(latch.direction.rawValue) at \(HTML.clock(latch.due)) UTC"
            )
            html.close("li")
        }
        if reading.latches.isEmpty { html.raw("<li class=\"none\">none</li>") }
        html.raw("</ul></section>")
    }

    static func beaconLabel(_ locationID: String, _ model: BuildingModel) -> String {
        guard let index = model.hierarchy.index(ofLocation: locationID), let name = model.hierarchy.beacons[index].name
        else { return locationID }
        return "\(name) (\(locationID))"
    }

    /// A path segment: everything but unreserved characters percent-encoded.
    package static func percentEncoded(_ segment: String) -> String {
        var out = ""
        for byte in segment.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return out
    }

    /// The main of a page for an unknown device.
    package static func unknownDevice(_ id: String) -> String {
        var html = HTML()
        html.open("p", [("class", "error")])
        html.escaped("No device \(id). ")
        html.element("a", [("href", "/")], "Back to the building")
        html.close("p")
        return html.text
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

/// Small inline SVG charts, drawn on the server (no script, no library).
package enum Chart {
    static let width = 240.0
    static let height = 40.0
    /// The RSSI range drawn, dBm: weaker is at the bottom.
    static let floor = -100.0
    static let ceiling = -30.0

    /// A beacon's filtered RSSI over the five minutes before `end`; gaps where it was `off`.
    package static func rssi(_ samples: [BuildingModel.Sample], end: Timestamp) -> String {
        let span = Double(BuildingModel.historySeconds)
        var svg =
            "<svg class=\"chart\" viewBox=\"0 0 \(Int(width)) \(Int(height))\" width=\"\(Int(width))\" height=\"\(Int(height))\" role=\"img\">"
        svg += "<title>filtered RSSI, last 5 minutes</title>"
        svg += "<rect class=\"frame\" x=\"0\" y=\"0\" width=\"\(Int(width))\" height=\"\(Int(height))\"/>"
        var line = ""
        var points = 0
        var last = (x: 0.0, y: 0.0)
        func flush() {
            if points == 1 {
                // One reading alone is a dot, not an invisible line.
                svg += "<circle class=\"rssi-dot\" cx=\"\(oneDecimal(last.x))\" cy=\"\(oneDecimal(last.y))\" r=\"2\"/>"
            } else if points > 1 {
                svg += "<polyline class=\"rssi\" points=\"\(line)\"/>"
            }
            line = ""
            points = 0
        }
        for sample in samples {
            guard let rssi = sample.rssi else {
                flush()
                continue
            }
            let age = Double(end.microseconds &- sample.time.microseconds) / 1_000_000
            let x = max(0, min(width, width * (1 - age / span)))
            let clamped = max(floor, min(ceiling, rssi))
            let y = height * (ceiling - clamped) / (ceiling - floor)
            if !line.isEmpty { line += " " }
            line += "\(oneDecimal(x)),\(oneDecimal(y))"
            points += 1
            last = (x, y)
        }
        flush()
        return svg + "</svg>"
    }

    /// `value` with one decimal (`-3.5`, `0.0`), for finite values of a sensible size.
    package static func oneDecimal(_ value: Double) -> String {
        guard value.isFinite, value.magnitude < 1e12 else { return "0.0" }
        let tenths = Int((value * 10).rounded())
        return "\(tenths < 0 && tenths > -10 ? "-" : "")\(tenths / 10).\(abs(tenths % 10))"
    }
}
