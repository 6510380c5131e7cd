import BeaconCore
import Foundation
import RegionMonitor
import Syscalls

/// Every error of a configuration file, each `file:line: message`. Exit status 2.
package struct ConfigurationErrors: Error, Sendable, CustomStringConvertible {
    package var errors: [InputError]
    package init(errors: [InputError]) { self.errors = errors }
    package var description: String { errors.map(\.description).joined(separator: "\n") }
}

extension Configuration {
    /// Parses and validates an hsyco.ini. `path` names the file in messages and anchors relative
    /// paths in values. Pure: nothing is read but `bytes`.
    /// `needsBuilding: false` takes a file without beacons: a `forward` node's (`MQTT.*`,
    /// `Monitor.userid`, `State.*`), which monitors nothing.
    package static func load(_ bytes: [UInt8], path: String, needsBuilding: Bool = true) -> Result<
        Configuration, ConfigurationErrors
    > {
        let (file, syntaxErrors) = IniFile.parse(bytes, path: path)
        var loader = Loader(path: path)
        loader.needsBuilding = needsBuilding
        loader.errors = syntaxErrors
        loader.load(file)
        guard loader.errors.isEmpty else {
            return .failure(ConfigurationErrors(errors: loader.errors.sorted { ($0.line ?? 0) < ($1.line ?? 0) }))
        }
        return .success(loader.configuration)
    }

    /// The largest configuration file read: far above any real one (a building of thousands of
    /// beacons is a few hundred kilobytes), and refused at once above.
    package static let sizeLimit = 16 << 20

    /// Reads and loads the file at `path`.
    package static func load(contentsOf path: String, needsBuilding: Bool = true) -> Result<
        Configuration, ConfigurationErrors
    > {
        switch Document.read(path, limit: sizeLimit) {
        case .success(let bytes):
            return load(bytes, path: path, needsBuilding: needsBuilding)
        case .failure(let failure):
            let message = "\(failure); give the configuration with --config PATH"
            return .failure(ConfigurationErrors(errors: [InputError(file: path, message: message)]))
        }
    }

    /// Exact keys beaconwatch knows, for "did you mean" on unknown ones.
    package static let knownKeys: [String] = [
        "Monitor.userid", "Monitor.session", "Monitor.address", "Monitor.source", "Monitor.maxRegions",
        "Monitor.exitTimeout", "Monitor.exitConfidence", "Monitor.exitTimeoutMax", "Monitor.enterRssi", "Monitor.mode",
        "Monitor.backgroundRanging",
        "Monitor.rssiFilter", "Monitor.rssiWindow", "Monitor.pathLossExponent", "Monitor.immediate",
        "Monitor.near", "Monitor.hysteresis", "Monitor.nearestMargin", "Monitor.timezone", "Monitor.lat",
        "Monitor.lng", "Monitor.udid", "Monitor.position", "Monitor.maxPositionError", "Monitor.geofenceHysteresis",
        "MQTT.host", "MQTT.port", "MQTT.clientId", "MQTT.username",
        "MQTT.password", "MQTT.passwordFile", "MQTT.tls.ca", "MQTT.tls.cert", "MQTT.tls.key", "MQTT.version",
        "MQTT.topic", "MQTT.qos", "MQTT.keepalive", "MQTT.homeassistant", "MQTT.discoveryPrefix",
        "MQTT.homeAreas",
        "Rules.source", "Rules.namespace", "Rules.refresh", "Rules.maxNotificationsPerDay",
        "Rules.autoServerNotify", "Rules.autoUserNotify", "Rules.serverTimeout", "Rules.geofences",
        "Rules.geofenceRadiusUnit", "Alert.resetAfter",
        "Script.timeout", "State.database", "State.keepDays", "Fleet.owntracks", "Fleet.theengs", "Fleet.forward",
        "Fleet.autoAdd", "Fleet.maxDevices", "Fleet.maxAge", "Fleet.shard", "Web.listen", "Web.token",
        "Monitor.scanner", "Scanners.espresense", "Scanners.theengs", "Scanners.forward", "Scanners.silence",
        "Scanners.calibrate", "Floorplan.file", "Rooms.minConfidence",
        "Tags.autoAdd", "Tags.rooms", "Tags.exitTimeout", "Tags.exitTimeoutMin", "Cluster.name", "Cluster.keepalive",
        "Occupancy.count", "Occupancy.vacantAfter",
    ]

    /// Key prefixes followed by an id or a name (`LocationBaseBeacon.<id>`, `Script.enter`).
    package static let keyPrefixes = [
        "LocationBaseBeacon.", "LocationBeaconName.", "LocationBeaconPower.", "LocationAreaName.",
        "LocationZoneName.", "LocationAlert.", "Script.", "Device.", "LocationScanner.", "Scanner.", "Tag.",
        "LocationZoneShape.", "LocationScannerPoint.", "LocationAreaLevel.", "LocationAreaWalls.", "Door.", "Stairs.",
        "Sensor.",
    ]
}

/// Turns ini entries into a ``Configuration``, collecting every error and warning with its line.
struct Loader {
    var configuration: Configuration
    var errors: [InputError] = []
    let folder: String
    /// Whether a file without beacons or geofences is an error (all but `forward`'s).
    var needsBuilding = true

    init(path: String) {
        configuration = Configuration(path: path)
        if let slash = path.lastIndex(of: "/") {
            folder = String(path[..<slash])
        } else {
            folder = ""
        }
    }

    var path: String { configuration.path }

    mutating func error(_ entry: IniFile.Entry, _ message: String) {
        errors.append(InputError(file: path, line: entry.line, message: message))
    }

    mutating func warn(_ entry: IniFile.Entry, _ message: String) {
        configuration.warnings.append(InputError(file: path, line: entry.line, message: message))
    }

    mutating func load(_ file: IniFile) {
        for entry in file.entries { configuration.lines[entry.key] = entry.line }
        let beacons = loadBeacons(file.entries.filter { $0.key.hasPrefix("LocationBaseBeacon.") })
        // Geofences alone are something to monitor (docs/behaviour.md §17).
        if needsBuilding,
            !file.entries.contains(where: { $0.key.hasPrefix("LocationBaseBeacon.") || $0.key == "Rules.geofences" })
        {
            // Nothing to monitor: a truncated or wrong file, which must not replace a running one.
            let what = file.entries.isEmpty ? "has no settings (an empty file?)" : "defines no beacon"
            errors.append(
                InputError(
                    file: path,
                    message:
                        "\(what); add one with LocationBaseBeacon.<id> = UUID,major,minor (or geofences with Rules.geofences)"
                ))
        }
        var areaNames: [UUID: String] = [:]
        var zoneNames: [Region: String] = [:]
        var mqtt: [String: IniFile.Entry] = [:]
        var fleet: [String: IniFile.Entry] = [:]
        var web: [String: IniFile.Entry] = [:]
        var cluster: [String: IniFile.Entry] = [:]
        var devices: [IniFile.Entry] = []
        var scanners: [IniFile.Entry] = []
        var alerts: [IniFile.Entry] = []
        var floorPlan: [IniFile.Entry] = []
        var occupancy: [IniFile.Entry] = []
        var named = beacons.list
        for entry in file.entries {
            let key = entry.key
            if key.hasPrefix("LocationBaseBeacon.") {
                continue
            } else if let id = key.suffix(after: "LocationBeaconName.") {
                guard let index = beacons.index[id] else { error(entry, noBeacon(id)); continue }
                named[index].name = entry.value
            } else if let id = key.suffix(after: "LocationBeaconPower.") {
                guard let index = beacons.index[id] else { error(entry, noBeacon(id)); continue }
                guard let power = integer(entry, -128...20, "a measured power in dBm at 1 m, such as -59") else {
                    continue
                }
                named[index].power = Int8(power)
            } else if let text = key.suffix(after: "LocationAreaName.") {
                guard let uuid = UUID(uuidString: text) else {
                    error(entry, "'\(text.excerpt)' is not a UUID; an Area is named LocationAreaName.<UUID>")
                    continue
                }
                guard beacons.list.contains(where: { $0.id.uuid == uuid }) else {
                    error(
                        entry,
                        "Area \(uuid.uuidString) has no beacon; add a LocationBaseBeacon with that UUID or remove the name"
                    )
                    continue
                }
                areaNames[uuid] = entry.value
            } else if let text = key.suffix(after: "LocationZoneName.") {
                guard case .zone(let uuid, let major)? = Region(text) else {
                    error(entry, "'\(text.excerpt)' is not a Zone; a Zone is named LocationZoneName.<UUID>:<major>")
                    continue
                }
                guard beacons.list.contains(where: { $0.id.uuid == uuid && $0.id.major == major }) else {
                    error(
                        entry,
                        "Zone \(uuid.uuidString):\(major) has no beacon; add a LocationBaseBeacon in it or remove the name"
                    )
                    continue
                }
                zoneNames[.zone(uuid, major: major)] = entry.value
            } else if key.hasPrefix("LocationAlert.") {
                alerts.append(entry)
            } else if Self.isOccupancyKey(key) {
                occupancy.append(entry)
            } else if Self.isFloorPlanKey(key) {
                floorPlan.append(entry)
            } else if key.hasPrefix("MQTT.") {
                mqtt[key] = entry
                if !Configuration.knownKeys.contains(key) { unknown(entry) }
            } else if key.hasPrefix("Fleet."), Configuration.knownKeys.contains(key) {
                fleet[key] = entry
            } else if key.hasPrefix("Cluster."), Configuration.knownKeys.contains(key) {
                cluster[key] = entry
            } else if key == "Web.listen" || key == "Web.token" {
                web[key] = entry
            } else if key.hasPrefix("Device.") {
                devices.append(entry)
            } else if key.hasPrefix("LocationScanner.") || key.hasPrefix("Scanner.") || key.hasPrefix("Tag.")
                || key == "Monitor.scanner"
                || (key.hasPrefix("Scanners.") || key.hasPrefix("Tags."))
                    && Configuration.knownKeys.contains(key)
            {
                scanners.append(entry)
            } else if key == "Script.timeout" {
                if let seconds = duration(entry, positive: true) { configuration.scriptTimeout = seconds }
            } else if let event = key.suffix(after: "Script.") {
                guard let kind = ScriptEvent(rawValue: event) else {
                    let kinds = ScriptEvent.allCases.map(\.rawValue).joined(separator: ", ")
                    error(entry, "no script event '\(event.excerpt)'; scripts hang on \(kinds)")
                    continue
                }
                guard !entry.value.isEmpty else { error(entry, "give the program's path"); continue }
                configuration.scripts[kind] = resolve(entry.value)
            } else {
                loadSetting(entry)
            }
        }
        configuration.hierarchy = Hierarchy(beacons: named, areaNames: areaNames, zoneNames: zoneNames)
        for entry in alerts { loadAlert(entry, beacons: beacons.index) }
        loadMQTT(mqtt)
        loadCluster(cluster, clientID: mqtt["MQTT.clientId"])
        loadFleet(fleet, devices: devices, file: file)
        loadScanners(scanners)
        warnAboutOtherShards()
        loadFloorPlan(floorPlan)
        loadWeb(web)
        loadOccupancy(occupancy)
        checkConsistency(file)
    }

    func noBeacon(_ id: String) -> String {
        "no beacon with Location ID '\(id.excerpt)'; define it with LocationBaseBeacon.\(id.excerpt) = UUID,major,minor"
    }

    /// `LocationBaseBeacon.<id> = UUID,major,minor`, with unique IDs and identities.
    mutating func loadBeacons(_ entries: [IniFile.Entry]) -> (list: [Hierarchy.Beacon], index: [String: Int]) {
        var list: [Hierarchy.Beacon] = []
        var index: [String: Int] = [:]
        var seen: [BeaconID: (id: String, line: Int)] = [:]
        list.reserveCapacity(entries.count)
        for entry in entries {
            let id = String(entry.key.dropFirst("LocationBaseBeacon.".count))
            guard !id.isEmpty, id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
                error(entry, "Location ID '\(id.excerpt)' must be letters and digits, such as LocationBaseBeacon.17081")
                continue
            }
            let parts = entry.value.split(separator: ",", omittingEmptySubsequences: false).map {
                $0.trimmingWhitespace()
            }
            guard parts.count == 3 else {
                error(entry, "expected UUID,major,minor, found '\(entry.value.excerpt)'")
                continue
            }
            guard let uuid = UUID(uuidString: parts[0]) else {
                error(
                    entry,
                    "'\(parts[0].excerpt)' is not a UUID; write it as 8-4-4-4-12 hex digits, such as E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
                )
                continue
            }
            guard let major = UInt16(parts[1]) else {
                error(entry, "major '\(parts[1].excerpt)' must be an integer from 0 to 65535")
                continue
            }
            guard let minor = UInt16(parts[2]) else {
                error(entry, "minor '\(parts[2].excerpt)' must be an integer from 0 to 65535")
                continue
            }
            let beacon = BeaconID(uuid: uuid, major: major, minor: minor)
            if let first = seen[beacon] {
                error(
                    entry,
                    "beacon \(beacon) is already Location ID \(first.id) (line \(first.line)); a beacon has one Location ID"
                )
                continue
            }
            seen[beacon] = (id, entry.line)
            index[id] = list.count
            list.append(Hierarchy.Beacon(locationID: id, id: beacon))
        }
        return (list, index)
    }

    /// The exact keys of `Monitor.*`, `Rules.*`, `Alert.*` and `State.*`; anything else is unknown.
    mutating func loadSetting(_ entry: IniFile.Entry) {
        switch entry.key {
        case "Monitor.userid": configuration.monitor.userid = text(entry)
        case "Monitor.session": configuration.monitor.session = text(entry)
        case "Monitor.address": configuration.monitor.address = text(entry)
        case "Monitor.udid": configuration.monitor.udid = text(entry)
        case "Monitor.source":
            guard let spec = SourceSpec(entry.value) else {
                if Radio.looksLikeRadio(entry.value), let problem = Radio.problem(entry.value) {
                    error(entry, problem)
                } else {
                    error(
                        entry,
                        "'\(entry.value.excerpt)' is not a source; give hci0, uart:DEVICE, h4tcp:HOST:PORT, "
                            + "btsnoop:PATH, trace:PATH, or none (no radio: a daemon for its fleet or scanners)")
                }
                return
            }
            configuration.monitor.source = resolve(spec)
        case "Monitor.maxRegions":
            if let value = integer(entry, 1...10_000, "a number of regions, at least 1") {
                configuration.monitor.maxRegions = value
            }
        case "Monitor.exitTimeout":
            if entry.value.lowercased() == "auto" {
                configuration.monitor.adaptiveExit = true
            } else if let value = duration(entry, positive: true) {
                configuration.monitor.exitTimeout = value
                configuration.monitor.adaptiveExit = false
            }
        case "Monitor.exitConfidence":
            // Below 0.5: a silence more likely than not while inside must never mean leaving.
            if let value = number(entry, 1e-15...0.5, "a probability such as 1e-6 (at most 0.5)"),
                value > 0
            {
                configuration.monitor.exitConfidence = value
            }
        case "Monitor.exitTimeoutMax":
            if let value = duration(entry, positive: true) { configuration.monitor.exitTimeoutMax = value }
        case "Monitor.enterRssi":
            if let value = integer(entry, -128...20, "an RSSI in dBm, such as -90") {
                configuration.monitor.enterRSSI = value
            }
        case "Monitor.mode":
            if let value = choice(entry, RangingMode.self) { configuration.monitor.mode = value }
        case "Monitor.backgroundRanging":
            if let value = duration(entry, positive: false) { configuration.monitor.backgroundRanging = value }
        case "Monitor.rssiFilter":
            if let value = choice(entry, RSSIFilterKind.self) { configuration.monitor.rssiFilter = value }
        case "Monitor.rssiWindow":
            if let value = duration(entry, positive: true) { configuration.monitor.rssiWindow = value }
        case "Monitor.pathLossExponent":
            if let value = number(entry, 0.5...10, "an exponent from 0.5 to 10 (2 in free space)") {
                configuration.monitor.pathLossExponent = value
            }
        case "Monitor.immediate":
            if let value = number(entry, 0.01...1000, "metres, such as 0.5") { configuration.monitor.immediate = value }
        case "Monitor.near":
            if let value = number(entry, 0.01...1000, "metres, such as 3") { configuration.monitor.near = value }
        case "Monitor.hysteresis":
            if let value = number(entry, 0...0.99, "a fraction from 0 to 0.99, such as 0.15") {
                configuration.monitor.hysteresis = value
            }
        case "Monitor.nearestMargin":
            if let value = number(entry, 0...100, "dB, such as 5") { configuration.monitor.nearestMargin = value }
        case "Monitor.timezone":
            guard let zone = TimeZone(identifier: entry.value) else {
                error(entry, "'\(entry.value.excerpt)' is not a time zone; give an Olson name such as Europe/Rome")
                return
            }
            configuration.monitor.timezone = zone
        case "Monitor.lat":
            if let value = number(entry, -90...90, "degrees of latitude") { configuration.monitor.lat = value }
        case "Monitor.lng":
            if let value = number(entry, -180...180, "degrees of longitude") { configuration.monitor.lng = value }
        case "Rules.source":
            if let source = documentSource(entry) { configuration.rules.source = source }
        case "Rules.geofences":
            if let source = documentSource(entry) { configuration.rules.geofences = source }
        case "Rules.geofenceRadiusUnit":
            if let value = choice(entry, GeofenceRadiusUnit.self) { configuration.rules.geofenceRadiusUnit = value }
        case "Monitor.position":
            guard let endpoint = GPSDEndpoint(entry.value) else {
                error(
                    entry,
                    "'\(entry.value.excerpt)' is not a position source; give gpsd:HOST:PORT, such as gpsd:localhost:2947"
                )
                return
            }
            configuration.monitor.position = endpoint
        case "Monitor.maxPositionError":
            if let value = number(entry, 0...1e6, "metres, such as 100") {
                configuration.monitor.geofence.maxPositionError = value
            }
        case "Monitor.geofenceHysteresis":
            if let value = number(entry, 0...1e6, "metres, such as 20") {
                configuration.monitor.geofence.hysteresis = value
            }
        case "Rules.namespace": configuration.rules.namespace = entry.value
        case "Rules.refresh":
            if let value = duration(entry, positive: true) { configuration.rules.refresh = value }
        case "Rules.maxNotificationsPerDay":
            if let value = integer(entry, 0...1_000_000, "a count, 0 for unlimited") {
                configuration.rules.maxNotificationsPerDay = value
            }
        case "Rules.autoServerNotify":
            if let value = boolean(entry) { configuration.rules.autoServerNotify = value }
        case "Rules.autoUserNotify":
            if let value = boolean(entry) { configuration.rules.autoUserNotify = value }
        case "Rules.serverTimeout":
            if let value = duration(entry, positive: true) { configuration.rules.serverTimeout = value }
        case "Alert.resetAfter":
            if let value = duration(entry, positive: false) { configuration.alertResetAfter = value }
        case "State.database":
            if let value = text(entry) { configuration.stateDatabase = resolve(value) }
        case "State.keepDays":
            if let value = integer(entry, 1...36_500, "a number of days") { configuration.keepDays = value }
        default:
            unknown(entry)
        }
    }

    /// A rules document's place: a file path (resolved against the configuration's folder) or an
    /// http(s) URL; `nil` when empty or wrong (then with an error).
    mutating func documentSource(_ entry: IniFile.Entry) -> RulesSettings.Source? {
        guard !entry.value.isEmpty else { return nil }
        if entry.value.hasPrefix("http://") || entry.value.hasPrefix("https://") {
            guard let url = URL(string: entry.value), url.host != nil else {
                error(entry, "'\(entry.value.excerpt)' is not a valid URL")
                return nil
            }
            return .url(url)
        }
        if entry.value.contains("://") {
            error(entry, "only http and https URLs are fetched; give a file path or an http(s) URL")
            return nil
        }
        return .file(resolve(entry.value))
    }

    mutating func unknown(_ entry: IniFile.Entry) {
        configuration.unknownKeys.append(entry)
        var message = "unknown key \(entry.key.excerpt) (kept, not used)"
        if let suggestion = Self.suggestion(for: entry.key) { message += "; did you mean \(suggestion)?" }
        warn(entry, message)
    }

    /// The known key closest to a misspelt one, when it is close (at most 2 edits, or case).
    static func suggestion(for key: String) -> String? {
        let candidates = Configuration.knownKeys + Configuration.keyPrefixes.map { $0 + "<id>" }
        var best: (key: String, distance: Int)?
        for candidate in Configuration.knownKeys {
            if candidate.lowercased() == key.lowercased() { return candidate }
            let distance = editDistance(key, candidate)
            if distance <= 2, distance < (best?.distance ?? .max) { best = (candidate, distance) }
        }
        if best == nil, let dot = key.firstIndex(of: ".") {
            let head = key[...dot]
            for candidate in candidates where candidate.hasSuffix("<id>") {
                let prefix = candidate.dropLast(4)
                if editDistance(String(head), String(prefix)) <= 2 { return candidate }
            }
        }
        return best?.key
    }

    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        if abs(a.count - b.count) > 2 { return 3 }
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1] + [Int](repeating: 0, count: b.count)
            for (j, y) in b.enumerated() {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }

    /// `LocationAlert.<id> = range,strategy[,action[,title]]`.
    mutating func loadAlert(_ entry: IniFile.Entry, beacons: [String: Int]) {
        let id = String(entry.key.dropFirst("LocationAlert.".count))
        guard beacons[id] != nil else { error(entry, noBeacon(id)); return }
        let parts = entry.value.split(separator: ",", maxSplits: 3, omittingEmptySubsequences: false)
            .map { $0.trimmingWhitespace() }
        guard parts.count >= 2 else {
            error(entry, "expected range,strategy[,action[,title]], such as near,<=,popup,Welcome")
            return
        }
        guard let range = Proximity(rawValue: parts[0]), range != .off else {
            error(entry, "range '\(parts[0].excerpt)' must be immediate, near or far")
            return
        }
        guard let strategy = AlertDefinition.Strategy(rawValue: parts[1]) else {
            error(entry, "strategy '\(parts[1].excerpt)' must be =, <= or >=")
            return
        }
        let action = parts.count > 2 && !parts[2].isEmpty ? parts[2] : "popup"
        let title = parts.count > 3 && !parts[3].isEmpty ? parts[3] : nil
        configuration.alerts.append(
            AlertDefinition(locationID: id, range: range, strategy: strategy, action: action, title: title)
        )
    }

    mutating func checkConsistency(_ file: IniFile) {
        let monitor = configuration.monitor
        if monitor.near <= monitor.immediate {
            let entry =
                file.entries.first { $0.key == "Monitor.near" } ?? file.entries.first { $0.key == "Monitor.immediate" }
            if let entry {
                error(
                    entry,
                    "Monitor.near (\(monitor.near) m) must be farther than Monitor.immediate (\(monitor.immediate) m)")
            }
        }
        let cap = monitor.maxRegions
        for area in configuration.hierarchy.areas where area.zones.count > cap {
            let first = configuration.hierarchy.zones[area.zones[0]].beacons[0]
            let id = configuration.hierarchy.beacons[Int(first)].locationID
            if let entry = file.entries.first(where: { $0.key == "LocationBaseBeacon.\(id.excerpt)" }) {
                warn(
                    entry,
                    "Area \(area.uuid.uuidString) has \(area.zones.count) Zones, more than Monitor.maxRegions (\(cap)); "
                        + "HSYCO allows \(cap) Zones per Area: reuse zone numbers under another UUID"
                )
            }
        }
    }

}
