import BeaconCore
import BeaconConfiguration
import Daemon
import BlueZ
import Floorplan
import Foundation
import JSONText
import RegionMonitor
import Rules
import Syscalls

/// `beaconwatch check`: the hierarchy, counts, the monitoring plan, settings and warnings.
struct CheckJob {
    var configuration: Configuration

    init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// What `run` would stop on at start, each at the line of its key: a capture that cannot be
    /// read, a state database that cannot be written, MQTT credential and TLS files that cannot
    /// be read. (A rules document that cannot be read is found by ``ruleRegions()``.)
    func blockers(environment: [String: String] = ProcessInfo.processInfo.environment) -> [InputError] {
        var errors: [InputError] = []
        switch configuration.monitor.source {
        case .btsnoop(let path), .trace(let path):
            if path != "-", let reason = FileAccess.unreadable(path) {
                errors.append(
                    configuration.problem(
                        "Monitor.source",
                        "Monitor.source: the capture \(path) \(reason); give an existing file (relative paths start at this file's folder)"
                    ))
            }
        case .adapter, .none:
            break
        }
        let database = StateLocation.resolve(configured: configuration.stateDatabase, environment: environment)
        if let reason = FileAccess.unwritable(database) {
            let fix =
                configuration.stateDatabase == nil
                ? "set State.database to a file this user may write"
                : "fix the folder's owner or set State.database elsewhere"
            errors.append(configuration.problem("State.database", "the state database \(database) \(reason); \(fix)"))
        }
        if let problem = configuration.scannersWithoutBroker { errors.append(problem) }
        if let mqtt = configuration.mqtt {
            let password = mqtt.passwordFile.map { [(key: "MQTT.passwordFile", path: $0)] } ?? []
            for (key, path) in password + mqtt.tlsFiles {
                if let reason = FileAccess.unreadable(path) {
                    errors.append(
                        configuration.problem(key, "\(key) \(path) \(reason); the daemon's user must read it"))
                }
            }
        }
        return errors
    }

    /// Warnings from the machine: an adapter that is not there, scripts that cannot run, a
    /// password others can read.
    func fileWarnings(sysfs: String = "/sys/class/bluetooth") -> [String] {
        var warnings: [String] = []
        if case .adapter(let name) = configuration.monitor.source, let reason = Adapters.absence(of: name, sysfs: sysfs)
        {
            warnings.append("Monitor.source: \(reason)")
        }
        for (event, path) in configuration.scripts.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            if let reason = FileAccess.notRunnable(path) {
                warnings.append("Script.\(event.rawValue): \(path) \(reason)")
            }
        }
        let files = FileManager.default
        if let file = configuration.mqtt?.passwordFile, let attributes = try? files.attributesOfItem(atPath: file),
            let mode = attributes[.posixPermissions] as? Int, mode & 0o004 != 0
        {
            warnings.append("MQTT.passwordFile \(file) is readable by every user; chmod o-r it")
        }
        if configuration.mqtt?.password != nil || configuration.webToken != nil,
            let attributes = try? files.attributesOfItem(atPath: configuration.path),
            let mode = attributes[.posixPermissions] as? Int, mode & 0o004 != 0
        {
            warnings.append(
                configuration.mqtt?.password != nil
                    ? "\(configuration.path) holds MQTT.password and is readable by every user; chmod o-r it, or use MQTT.passwordFile"
                    : "\(configuration.path) holds Web.token and is readable by every user; chmod o-r it"
            )
        }
        return warnings
    }

    /// The report, line by line, and what `run` would stop on (exit status 2 when any).
    func report(
        sysfs: String = "/sys/class/bluetooth", environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> (lines: [String], errors: [InputError]) {
        let hierarchy = configuration.hierarchy
        let monitor = configuration.monitor
        let plan = MonitoringPlan(hierarchy, maxRegions: monitor.maxRegions)
        var lines: [String] = []
        lines.append(
            "\(configuration.path): \(count(hierarchy.beacons.count, "beacon")) in \(count(hierarchy.zones.count, "zone")) "
                + "in \(count(hierarchy.areas.count, "area")); region cap \(monitor.maxRegions)"
        )
        lines.append("")
        lines.append("hierarchy:")
        for area in hierarchy.areas {
            lines.append("  area \(area.uuid.uuidString)\(quoted(area.name))")
            for zoneIndex in area.zones {
                let zone = hierarchy.zones[zoneIndex]
                lines.append("    zone \(zone.region)\(quoted(zone.name))")
                for beaconIndex in zone.beacons {
                    let beacon = hierarchy.beacons[Int(beaconIndex)]
                    var line = "      beacon \(beacon.locationID): \(beacon.id)\(quoted(beacon.name))"
                    if let power = beacon.power { line += ", power \(power) dBm" }
                    lines.append(line)
                }
            }
        }
        if hierarchy.beacons.isEmpty { lines.append("  (no beacons: add LocationBaseBeacon.<id> = UUID,major,minor)") }
        lines.append("")
        lines.append("monitoring plan: \(plan)")
        switch plan {
        case .beacons:
            lines.append("  \(hierarchy.beacons.count) Beacon regions; Zones and Areas derived")
        case .zones:
            lines.append("  \(hierarchy.zones.count) Zone regions; Areas derived")
        case .hierarchical(let scanAssisted):
            let areas = min(hierarchy.areas.count, monitor.maxRegions)
            lines.append("  outside: \(areas) of \(hierarchy.areas.count) Area regions")
            for area in hierarchy.areas {
                let zones = min(area.zones.count, monitor.maxRegions)
                lines.append(
                    "  inside \(area.uuid.uuidString)\(quoted(area.name)): \(zones) of \(area.zones.count) Zone regions"
                )
            }
            if scanAssisted {
                lines.append(
                    "  scan-assisted: the most recently sighted candidates are monitored, never-sighted ones in file order"
                )
            }
        }
        lines.append("")
        lines.append("settings:")
        let exit =
            monitor.adaptiveExit
            ? "exitTimeout auto (confidence \(monitor.exitConfidence), at most \(monitor.exitTimeoutMax) s)"
            : "exitTimeout \(monitor.exitTimeout) s"
        lines.append("  source \(monitor.source), mode \(monitor.mode.rawValue), \(exit)")
        lines.append(
            "  ranging: \(monitor.rssiFilter == .none ? "no filter" : "\(monitor.rssiFilter.rawValue) filter over \(monitor.rssiWindow) s"), n = \(monitor.pathLossExponent), "
                + "immediate < \(monitor.immediate) m, near < \(monitor.near) m, hysteresis \(monitor.hysteresis)"
        )
        lines.append("  mqtt: \(configuration.mqtt.map { "\($0)" } ?? "off (no MQTT.host)")")
        lines.append(
            "  cluster: \(configuration.cluster.map { "\($0) (topics under \(configuration.mqtt?.topic ?? "")/_cluster/\($0.name)/)" } ?? "off (no Cluster.name: this daemon runs alone)")"
        )
        lines.append(
            "  web: \(configuration.web.map { "http://\($0.authority)/\($0.token == nil ? "" : " (token required)")" } ?? "off (Web.listen is empty)")"
        )
        if let fleet = configuration.fleet {
            let sources = [("owntracks", fleet.owntracks), ("theengs", fleet.theengs), ("forward", fleet.forward)]
                .compactMap { name, filter in filter.map { "\(name) \($0.excerpt)" } }
            lines.append(
                "  fleet: \(sources.joined(separator: ", ")); \(fleet.devices.count) declared devices, "
                    + (fleet.autoAdd ? "others added" : "no others")
                    + " (at most \(fleet.maxDevices)), shard \(fleet.shard)")
            if fleet.owntracks != nil {
                // The cap each phone is managed under (docs/behaviour.md §15.1): its own waypoints come off it.
                let cap = monitor.maxRegions
                let plan = MonitoringPlan(configuration.hierarchy, maxRegions: cap)
                lines.append(
                    "  owntracks: each phone is given at most \(cap) regions (Monitor.maxRegions) less the waypoints "
                        + "of its own that iOS monitors, as it answers action waypoints; at \(cap): \(plan)")
                for device in fleet.devices where device.id.contains("-") {
                    lines.append(
                        "  owntracks device \(device.id) (\(device.name.printable)): cap \(cap) less its own waypoints "
                            + "(owntracks/\(device.id.replacingOccurrences(of: "-", with: "/", options: [], range: device.id.range(of: "-")))/cmd)"
                    )
                }
            }
        }
        lines += scannerLines()
        lines += floorLines()
        lines += occupancyLines()
        lines.append("  rules: \(configuration.rules.source.map { "\($0)" } ?? "none")")
        if let geofences = configuration.rules.geofences {
            let g = configuration.monitor.geofence
            let position = configuration.monitor.position.map { "\($0)" } ?? "traces and fleet devices only"
            lines.append(
                "  geofences: \(geofences) (radius in \(configuration.rules.geofenceRadiusUnit.rawValue)); positions from \(position), "
                    + "fixes worse than \(JSONValue.numberText(g.maxPositionError)) m ignored, exit margin at least \(JSONValue.numberText(g.hysteresis)) m"
            )
        }
        lines.append(
            "  state: \(configuration.stateDatabase ?? "the default database"), dwell history kept \(configuration.keepDays) days"
        )
        let (ruleLines, ruleWarnings, ruleErrors) = ruleRegions()
        lines += ruleLines
        let (fenceLines, fenceWarnings, fenceErrors) = geofences()
        lines += fenceLines
        for alert in configuration.alerts {
            lines.append(
                "  alert on \(alert.locationID): \(alert.range.rawValue) \(alert.strategy.rawValue), \(alert.action)")
        }
        for (event, path) in configuration.scripts.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            lines.append("  script on \(event.rawValue): \(path)")
        }
        var warnings =
            configuration.warnings.map(\.description) + fileWarnings(sysfs: sysfs) + ruleWarnings + fenceWarnings
        if case .hierarchical(true) = plan {
            warnings.append(
                "more candidates than the cap: scan-assisted selection is in use (docs/running.md, How the monitor works)"
            )
        }
        lines.append("")
        if warnings.isEmpty {
            lines.append("no warnings")
        } else {
            lines.append("warnings:")
            lines += warnings.map { "  " + $0 }
        }
        let errors = blockers(environment: environment) + ruleErrors + fenceErrors
        if !errors.isEmpty {
            lines.append("")
            lines.append("run would stop at start: \(count(errors.count, "error")) (on standard error)")
        }
        return (lines, errors)
    }

    /// Each rule region of `Rules.source` (a URL is fetched now, with its query) and the
    /// configured region it attaches to.
    func ruleRegions() -> (lines: [String], warnings: [String], errors: [InputError]) {
        switch document(of: RulesSource(configuration: configuration)) {
        case nil:
            return ([], [], [])
        case .failure(let problem):
            return problem.stopsRun ? ([], [], [problem.error(in: configuration)]) : ([], [problem.description], [])
        case .success(let document):
            var lines: [String] = []
            var warnings: [String] = []
            for region in document.regions {
                let rules = count(region.rules.count, "rule")
                if let attached = region.attachment(in: configuration.hierarchy) {
                    let name = quoted(configuration.hierarchy.name(of: attached))
                    lines.append(
                        "  rule region \(region.id.excerpt)\(quoted(region.name)): \(rules), attached to \(attached.kind.rawValue) \(attached)\(name)"
                    )
                } else {
                    lines.append(
                        "  rule region \(region.id.excerpt)\(quoted(region.name)): \(rules), matches no configured region"
                    )
                    warnings.append(
                        "rule region \(region.id) (\(region.pattern)) matches no configured region; its rules never fire"
                    )
                }
                warnings += region.warnings.map { "rule region \(region.id): \($0)" }
            }
            return (lines, warnings, [])
        }
    }

    /// Each geofence of `Rules.geofences` (a URL is fetched now, with its query): id, name, centre,
    /// radius in metres, rules; a radius under 10 m read in metres is warned about.
    func geofences() -> (lines: [String], warnings: [String], errors: [InputError]) {
        switch document(of: RulesSource.geofences(of: configuration)) {
        case nil:
            return ([], [], [])
        case .failure(let problem):
            return problem.stopsRun ? ([], [], [problem.error(in: configuration)]) : ([], [problem.description], [])
        case .success(let document):
            var lines: [String] = []
            var warnings: [String] = []
            for region in document.regions {
                guard let fence = region.geofence else { continue }
                lines.append(
                    "  geofence \(region.id.excerpt)\(quoted(region.name)): centre \(fence.latitude), \(fence.longitude), "
                        + "radius \(JSONValue.numberText(fence.radius)) m, \(count(region.rules.count, "rule"))")
                warnings += region.warnings.map { "geofence \(region.id.excerpt): \($0)" }
            }
            return (lines, warnings, [])
        }
    }

    /// The document `source` names, read now (a URL fetched with its query); `nil` when it is
    /// not set, a failure as the warning to show.
    func document(of source: RulesSource) -> Result<RulesDocument, CheckProblem>? {
        let bytes: [UInt8]
        let path: String
        switch source.location {
        case nil:
            return nil
        case .file(let file):
            switch RulesSource.readFile(file, check: "check \(source.key) names an existing file") {
            case .failure(let error): return .failure(CheckProblem("\(source.key) \(error)", stopping: source.key))
            case .success(let contents): (bytes, path) = (contents, file)
            }
        case .url(let url):
            switch source.download(source.requestURL(url)) {
            case .failure(let failure):
                return .failure(CheckProblem("\(source.key) \(url.absoluteString) cannot be fetched now: \(failure)"))
            case .success(let reply): (bytes, path) = (reply, url.absoluteString)
            }
        }
        // A rules document's own errors name the file already.
        let prefix = source.kind == .beacons ? "" : "\(source.key) "
        // run stops on a file it cannot use; a URL it cannot use now falls back on the kept copy.
        let stopping: String? = if case .file = source.location { source.key } else { nil }
        return source.parse(bytes, name: path).mapError { CheckProblem(prefix + "\($0)", stopping: stopping) }
    }

    func quoted(_ name: String?) -> String { name.map { " \"\($0.excerpt)\"" } ?? "" }

    func count(_ n: Int, _ noun: String, plural: String? = nil) -> String {
        "\(n) \(n == 1 ? noun : plural ?? noun + "s")"
    }

    /// Each floor with a plan (docs/behaviour.md §20): its rooms matched to Zones, its scanners placed,
    /// its doors, and the grid the estimator runs on.
    func floorLines() -> [String] {
        let hierarchy = configuration.hierarchy
        var lines: [String] = []
        if let file = configuration.floorPlan?.file {
            lines.append("  floor plan: \(file.excerpt) (ESPresense companion)")
        }
        for (area, map) in configuration.floors.sorted(by: { $0.key < $1.key }) {
            let region = hierarchy.areas[Int(area)]
            let plan = map.plan
            lines.append(
                "  floor \(region.region)\(quoted(region.name)): \(count(plan.rooms.count, "room")), "
                    + "\(count(plan.scanners.count, "scanner")) placed, \(count(plan.doors.count, "door"))"
                    + (plan.doors.isEmpty ? " (rooms connect all along shared edges)" : "")
                    + "; level \(JSONValue.numberText(plan.bottom))–\(JSONValue.numberText(plan.top)) m; grid "
                    + "\(map.columns) × \(map.rows) cells of \(JSONValue.numberText((map.cell * 100).rounded() / 100)) m"
            )
            for room in plan.rooms {
                let zone = hierarchy.zones[Int(room.zone)]
                let area = (PlanPolygon.area(room.polygon) * 10).rounded() / 10
                lines.append(
                    "  floor room \(zone.region)\(quoted(zone.name)): \(room.polygon.count) corners, "
                        + "\(JSONValue.numberText(area)) m²")
            }
            for scanner in plan.scanners {
                let locationID = hierarchy.beacons[Int(scanner.location)].locationID
                let id = configuration.scanners?.scanners.first { $0.locationID == locationID }?.id ?? locationID
                lines.append(
                    "  floor scanner \(id) at \(scanner.point), \(JSONValue.numberText(scanner.z)) m high")
            }
            for door in plan.doors {
                lines.append(
                    "  floor door \(door.a); \(door.b)\(plan.exits.contains(door) ? ", exit (to the outside)" : "")")
            }
        }
        // Buildings of more than one floor: their floors and stairs (docs/behaviour.md §20).
        var seen: Set<ObjectIdentifier> = []
        for (_, building) in configuration.buildings.sorted(by: { $0.key < $1.key })
        where building.floors.count > 1 && seen.insert(ObjectIdentifier(building)).inserted {
            let names = building.floors.map { hierarchy.areas[Int($0.plan.area)].region.description }
            lines.append(
                "  building of \(count(building.floors.count, "floor")) (\(names.joined(separator: ", "))), "
                    + "\(count(building.stairs.count, "stairs", plural: "stairs")): "
                    + (building.stairs.isEmpty
                        ? "a tag changes floor only on strong evidence; join the floors with Stairs.<id>"
                        : "a tag changes floor only through them"))
            for stairs in building.stairs {
                lines.append(
                    "  building stairs \(names[stairs.floorA]) \(stairs.pointA) to \(names[stairs.floorB]) \(stairs.pointB)"
                )
            }
        }
        if !configuration.floors.isEmpty {
            lines.append(
                "  floor radio: until the scanners have heard each other, \(RadioModel()); then fitted to what "
                    + "they hear of each other at their known distances through their known walls"
                    + (configuration.buildings.values.contains { $0.floors.count > 1 }
                        ? " and floors (a floor \(JSONValue.numberText(RadioModel().floorLoss)) dB until then)" : ""))
        }
        return lines
    }

    /// Scanners (id, location, Zone, offset, source), the room rule, and tags (docs/behaviour.md §19).
    func scannerLines() -> [String] {
        guard let scanners = configuration.scanners else { return [] }
        let hierarchy = configuration.hierarchy
        let sources = scanners.sources.map { "\($0.key.dropFirst("Scanners.".count)) \($0.filter.excerpt)" }
        var lines = [
            "  scanners: \(scanners.scanners.count) placed; reports from "
                + (sources.isEmpty ? "no topic" : sources.joined(separator: ", "))
                + "; offline after \(JSONValue.numberText(scanners.silence)) s without a report"
        ]
        for scanner in scanners.scanners {
            let zone =
                hierarchy.index(of: scanner.beacon).map { index -> String in
                    let zone = hierarchy.zones[Int(hierarchy.zoneOfBeacon[index])]
                    return zone.name.map { "\(zone.region) (\($0.printable))" } ?? "\(zone.region)"
                } ?? "?"
            let source = scanners.own == scanner.id ? "the daemon's own radio" : (sources.isEmpty ? "none" : "MQTT")
            lines.append(
                "  scanner \(scanner.id) at \(scanner.locationID): room \(zone), offset "
                    + "\(JSONValue.numberText(scanner.rssiOffset)) dB, via \(source)")
        }
        switch scanners.calibrate {
        case .auto:
            let kept = scanners.scanners.filter(\.hasOffset).map(\.id)
            lines.append(
                "  scanners: calibrate auto: each receiver's offset learned from what the scanners hear of each other "
                    + "(ESPresense's node:<id>, or a Scanner.<id>.address)"
                    + (kept.isEmpty
                        ? ""
                        : "; \(kept.joined(separator: ", ")) \(kept.count == 1 ? "keeps its" : "keep their") rssiOffset")
            )
        case .off:
            lines.append("  scanners: calibrate off: offsets only as Scanner.<id>.rssiOffset gives them")
        }
        switch scanners.effectiveRooms {
        case .nearest: lines.append("  tags: rooms nearest: \(scanners.effectiveRoomRule)")
        case .heard: lines.append("  tags: rooms heard: a tag is inside every Zone whose scanners heard it (5.1)")
        case .position:
            let confidence = configuration.floorPlan?.minConfidence ?? 0.6
            lines.append(
                "  tags: rooms position: on a floor with a plan, the room that holds the tag's position with "
                    + "probability \(JSONValue.numberText(confidence)) or more (Rooms.minConfidence), kept while at "
                    + "two thirds of that; elsewhere nearest: \(scanners.effectiveRoomRule)")
            if configuration.floors.isEmpty {
                lines.append("  tags: no floor has a plan: every room is chosen nearest")
            }
        }
        lines.append(
            "  tags: exit "
                + (scanners.exitTimeout.map { "after \(JSONValue.numberText($0)) s without a report" }
                    ?? "auto: the silence of the tag's own advertisements that is improbable below confidence "
                    + "\(JSONValue.numberText(configuration.monitor.exitConfidence)), at most "
                    + "\(JSONValue.numberText(configuration.monitor.exitTimeoutMax)) s (Tags.exitTimeout)"))
        lines.append(
            "  tags: \(scanners.tags.count) declared, "
                + (scanners.autoAdd == .ibeacon ? "every other iBeacon heard added" : "no others"))
        if scanners.exitTimeout == nil, scanners.reportsAreFiltered {
            lines.append(
                "  tags: ESPresense nodes report a still tag every \(JSONValue.numberText(ScannerSettings.espresenseReportPeriod)) s "
                    + "(the firmware's skip_ms), sooner while it moves: one report a period counts, and a tag is away "
                    + "after \(JSONValue.numberText(ScannerSettings.espresenseReportPeriod * 2 + 1)) s without one "
                    + "(a report period missed by every node)")
        }
        let phoneWait =
            configuration.monitor.exitTimeoutMax
            + (scanners.reportsAreFiltered ? ScannerSettings.espresenseReportPeriod : 1)
        for tag in scanners.tags {
            let name = tag.name.map { " (\($0.printable))" } ?? ""
            var line = "  tag \(tag.id)\(name): \(tag.identity)\(tag.userid.map { ", userid \($0)" } ?? "")"
            if case .irk = tag.identity, scanners.exitTimeout == nil {
                // Phones and watches go quiet for a while though they are there (docs/rooms.md).
                line +=
                    "; a phone or watch: away after \(JSONValue.numberText(phoneWait)) s of silence (an outage up to "
                    + "Monitor.exitTimeoutMax is waited out; raise it above the longest your phones go quiet)"
            }
            lines.append(line)
        }
        return lines
    }
}

/// A line for `check`'s warnings, or an error when `run` would stop on it.
struct CheckProblem: Error, CustomStringConvertible {
    var description: String
    /// The key whose value `run` would stop on; `nil` for a warning.
    var stopping: String?
    init(_ description: String, stopping: String? = nil) {
        self.description = description
        self.stopping = stopping
    }

    var stopsRun: Bool { stopping != nil }

    /// The error at the line of the key that names the document.
    func error(in configuration: Configuration) -> InputError {
        configuration.problem(stopping ?? "", description)
    }
}
