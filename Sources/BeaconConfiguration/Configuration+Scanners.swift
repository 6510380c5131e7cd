import BeaconCore

extension Loader {
    /// `LocationScanner.*`, `Scanner.*`, `Scanners.*`, `Monitor.scanner`, `Tag.*` and `Tags.*`
    /// (docs/behaviour.md §19), after the hierarchy and the fleet: scanners sit at its locations, and a
    /// topic filter serves one role.
    mutating func loadScanners(_ entries: [IniFile.Entry]) {
        guard !entries.isEmpty else { return }
        var settings = ScannerSettings()
        let locations = Dictionary(
            configuration.hierarchy.beacons.map { ($0.locationID, $0.id) }, uniquingKeysWith: { first, _ in first })
        var placedAt: [String: String] = [:]
        var offsets: [IniFile.Entry] = []
        var sourceEntries: [String: IniFile.Entry] = [:]
        for entry in entries {
            let key = entry.key
            if let location = key.suffix(after: "LocationScanner.") {
                let id = entry.value
                guard DeviceDeclaration.isValidID(id) else {
                    error(
                        entry,
                        "scanner id '\(id.excerpt)' must be 1 to 64 letters, digits, '-', '_' or '.', "
                            + "such as LocationScanner.\(location.excerpt) = kitchen")
                    continue
                }
                guard let beacon = locations[location] else {
                    warn(
                        entry,
                        "LocationScanner.\(location.excerpt) names no known location; the scanner '\(id.excerpt)' is "
                            + "ignored: add LocationBaseBeacon.\(location.excerpt) = UUID,major,minor for its room")
                    continue
                }
                if let other = placedAt[id] {
                    error(
                        entry,
                        "scanner '\(id.excerpt)' is already at location \(other.excerpt); a scanner sits at one location"
                    )
                    continue
                }
                placedAt[id] = location
                settings.scanners.append(
                    ScannerSettings.Scanner(id: id, locationID: location, beacon: beacon, line: entry.line))
            } else if key.hasPrefix("Scanner.") {
                offsets.append(entry)
            } else if key == "Scanners.espresense" || key == "Scanners.theengs" || key == "Scanners.forward" {
                sourceEntries[key] = entry
            } else if key == "Scanners.calibrate" {
                if let value = choice(entry, ScannerSettings.Calibrate.self) { settings.calibrate = value }
            } else if key == "Scanners.silence" {
                if let seconds = duration(entry, positive: true) { settings.silence = seconds }
            } else if key == "Tags.autoAdd" {
                if let value = choice(entry, ScannerSettings.AutoAdd.self) { settings.autoAdd = value }
            } else if key == "Tags.rooms" {
                if let value = choice(entry, ScannerSettings.Rooms.self) { settings.rooms = value }
            } else if key == "Tags.exitTimeout" {
                if entry.value.lowercased() == "auto" {
                    settings.exitTimeout = nil
                } else if let seconds = duration(entry, positive: true) {
                    settings.exitTimeout = seconds
                }
            } else if key == "Tags.exitTimeoutMin" {
                if let seconds = duration(entry, positive: true) { settings.exitTimeoutMin = seconds }
            } else if key.hasPrefix("Tag.") {
                if let tag = tag(entry) { settings.tags.append(tag) }
            }
        }
        for entry in offsets { loadOffset(entry, into: &settings) }
        loadScannerSources(sourceEntries, into: &settings)
        if let entry = entries.first(where: { $0.key == "Monitor.scanner" }) {
            if settings.scanner(entry.value) == nil {
                error(
                    entry,
                    "Monitor.scanner = '\(entry.value.excerpt)' names no scanner; place it with "
                        + "LocationScanner.<Location ID> = \(entry.value.excerpt)")
            } else {
                settings.own = entry.value
            }
        }
        checkTags(&settings, entries: entries)
        configuration.scanners = settings
    }

    /// `Scanner.<id>.rssiOffset = dB` and `Scanner.<id>.address = AA:BB:CC:DD:EE:FF`.
    mutating func loadOffset(_ entry: IniFile.Entry, into settings: inout ScannerSettings) {
        guard let rest = entry.key.suffix(after: "Scanner."),
            let property = [".rssiOffset", ".address"].first(where: { rest.hasSuffix($0) })
        else {
            unknown(entry)
            return
        }
        let id = String(rest.dropLast(property.count))
        guard let index = settings.scanners.firstIndex(where: { $0.id == id }) else {
            error(
                entry,
                "Scanner.\(id.excerpt) names no scanner; place it first with LocationScanner.<Location ID> = \(id.excerpt)"
            )
            return
        }
        if property == ".address" {
            guard let address = BluetoothAddress(entry.value) else {
                error(
                    entry,
                    "Scanner.\(id.excerpt).address = '\(entry.value.excerpt)' is not a Bluetooth address: write it as "
                        + "AA:BB:CC:DD:EE:FF")
                return
            }
            if let other = settings.scanners.first(where: { $0.address == address }) {
                error(entry, "\(address) is already Scanner.\(other.id.excerpt).address; each scanner has its own")
                return
            }
            settings.scanners[index].address = address
            return
        }
        guard let offset = number(entry, -50...50, "decibels from -50 to 50, added to the scanner's RSSI") else {
            return
        }
        settings.scanners[index].rssiOffset = offset
        settings.scanners[index].hasOffset = true
    }

    /// The report sources' topic filters: each needs its `+` levels, and none may be a fleet's.
    mutating func loadScannerSources(_ entries: [String: IniFile.Entry], into settings: inout ScannerSettings) {
        let sources: [(key: String, wildcards: Int, example: String, set: WritableKeyPath<ScannerSettings, String?>)] =
            [
                ("Scanners.espresense", 2, "espresense/devices/+/+", \.espresense),
                ("Scanners.theengs", 1, "home/+/BTtoMQTT/#", \.theengs),
                ("Scanners.forward", 1, "beaconwatch/+/sightings", \.forward),
            ]
        let fleet = configuration.fleet.map { [$0.owntracks, $0.theengs, $0.forward].compactMap { $0 } } ?? []
        for source in sources {
            guard let entry = entries[source.key], let text = text(entry) else { continue }
            guard let filter = TopicFilter(text), filter.levels.filter({ $0 == "+" }).count >= source.wildcards else {
                let levels =
                    source.wildcards == 2 ? "two + levels (the tag, the scanner)" : "a + level (the scanner)"
                error(
                    entry,
                    "\(source.key) = '\(text.excerpt)': expected a topic filter with \(levels), such as \(source.example)"
                )
                continue
            }
            if fleet.contains(filter.description) {
                error(
                    entry,
                    "\(source.key) = '\(text.excerpt)' is also a Fleet.* filter; a topic filter serves one role: "
                        + "give the scanners their own")
                continue
            }
            settings[keyPath: source.set] = filter.description
        }
        let taken = settings.sources.map(\.filter)
        if Set(taken).count < taken.count, let entry = entries.values.max(by: { $0.line < $1.line }) {
            error(entry, "two Scanners.* keys give the same topic filter; a topic filter serves one role")
        }
        // Without MQTT.host the file still loads: `replay` takes the reports from a trace and never
        // connects; `run` stops on ``Configuration/scannersWithoutBroker`` (docs/behaviour.md §19).
    }

    /// `Tag.<id> = <identity>[, name[, userid]]`.
    mutating func tag(_ entry: IniFile.Entry) -> TagDeclaration? {
        guard let id = entry.key.suffix(after: "Tag."), DeviceDeclaration.isValidID(id) else {
            error(
                entry,
                "tag id '\(entry.key.dropFirst(4).excerpt)' must be 1 to 64 letters, digits, '-', '_' or '.', "
                    + "such as Tag.badge-7")
            return nil
        }
        // An identity may hold commas in no form, so the first comma ends it.
        let parts = entry.value.split(separator: ",", maxSplits: 2, omittingEmptySubsequences: false)
            .map { $0.trimmingWhitespace() }
        guard let first = parts.first, let identity = TagIdentity(first) else {
            error(
                entry,
                "Tag.\(id) = '\(entry.value.excerpt)': expected an identity (ibeacon:UUID:major:minor, "
                    + "mac:AA:BB:CC:DD:EE:FF, irk:<32 hex digits> or espresense:<id>), then a name and a userid if wanted"
            )
            return nil
        }
        var userid: String?
        if parts.count == 3, !parts[2].isEmpty {
            guard DeviceDeclaration.isValidID(parts[2]) else {
                error(
                    entry,
                    "userid '\(parts[2].excerpt)' must be 1 to 64 letters, digits, '-', '_' or '.' (it is a topic level)"
                )
                return nil
            }
            userid = parts[2]
        }
        let name = parts.count >= 2 && !parts[1].isEmpty ? parts[1] : nil
        return TagDeclaration(id: id, identity: identity, name: name, userid: userid, line: entry.line)
    }

    /// One tag per identity, no tag named as a fleet device, and a word about a tag that is a
    /// hierarchy beacon (which is never a tag).
    mutating func checkTags(_ settings: inout ScannerSettings, entries: [IniFile.Entry]) {
        var seenIDs: Set<String> = []
        var seenIdentities: [TagIdentity: String] = [:]
        let devices = Set(configuration.fleet?.devices.map(\.id) ?? [])
        var kept: [TagDeclaration] = []
        for tag in settings.tags {
            guard let entry = entries.first(where: { $0.line == tag.line }) else { continue }
            if !seenIDs.insert(tag.id).inserted || devices.contains(tag.id) {
                error(entry, "'\(tag.id)' already names a tag or a Device.<id>; give each its own id")
                continue
            }
            if let other = seenIdentities[tag.identity] {
                error(entry, "\(tag.identity) is already Tag.\(other); one tag per identity")
                continue
            }
            seenIdentities[tag.identity] = tag.id
            if case .ibeacon(let beacon) = tag.identity, configuration.hierarchy.index(of: beacon) != nil {
                warn(
                    entry,
                    "Tag.\(tag.id) is the hierarchy beacon \(beacon); a configured beacon is never a tag, so it is "
                        + "not tracked: give the tag another identity or remove the line")
                continue
            }
            kept.append(tag)
        }
        settings.tags = kept
    }
}
