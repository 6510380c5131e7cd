import BeaconCore

extension Loader {
    /// `Fleet.*` and `Device.<id>` (docs/behaviour.md §15). The sources come over the broker of `MQTT.*`.
    mutating func loadFleet(_ entries: [String: IniFile.Entry], devices: [IniFile.Entry], file: IniFile) {
        var settings = FleetSettings()
        let sources: [(key: String, wildcards: Int, example: String, set: WritableKeyPath<FleetSettings, String?>)] = [
            ("Fleet.owntracks", 2, "owntracks/+/+", \.owntracks),
            ("Fleet.theengs", 1, "home/+/BTtoMQTT/#", \.theengs),
            ("Fleet.forward", 1, "beaconwatch/+/sightings", \.forward),
        ]
        for source in sources {
            guard let entry = entries[source.key], let text = text(entry) else { continue }
            guard let filter = TopicFilter(text), filter.levels.filter({ $0 == "+" }).count >= source.wildcards else {
                let levels = source.wildcards == 2 ? "two + levels (user, device)" : "a + level (the device)"
                error(
                    entry,
                    "\(source.key) = '\(text.excerpt)': expected a topic filter with \(levels), such as \(source.example)"
                )
                continue
            }
            settings[keyPath: source.set] = filter.description
        }
        if let entry = entries["Fleet.autoAdd"], let value = boolean(entry) { settings.autoAdd = value }
        if let entry = entries["Fleet.maxDevices"], let value = integer(entry, 1...1_000_000, "a number of devices") {
            settings.maxDevices = value
        }
        // 0: no age check (a capture replayed through a forward node keeps its own old times).
        if let entry = entries["Fleet.maxAge"], let value = duration(entry, positive: false) { settings.maxAge = value }
        if let entry = entries["Fleet.shard"] {
            let parts = entry.value.split(separator: "/", omittingEmptySubsequences: false)
            if parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]), (1...1024).contains(count),
                (0..<count).contains(index)
            {
                settings.shard = Shard(index: index, count: count)
            } else {
                error(
                    entry,
                    "Fleet.shard = '\(entry.value.excerpt)': expected i/n, this daemon's share of n (1 to 1024), "
                        + "such as 0/2 and 1/2 for two daemons")
            }
        }
        for entry in devices { loadDevice(entry, into: &settings) }
        let hasSource = settings.owntracks != nil || settings.theengs != nil || settings.forward != nil
        guard hasSource else {
            if let any = (Array(entries.values) + devices).min(by: { $0.line < $1.line }) {
                warn(
                    any,
                    "fleet settings without a source: the fleet is off; set Fleet.owntracks, Fleet.theengs or Fleet.forward"
                )
            }
            return
        }
        if configuration.mqtt == nil, let first = sources.compactMap({ entries[$0.key] }).min(by: { $0.line < $1.line })
        {
            error(first, "the fleet's devices report over MQTT: set MQTT.host (and MQTT.port) to the broker they use")
            return
        }
        configuration.fleet = settings
        if settings.owntracks != nil { warnAboutZeros(file) }
    }

    /// A device or tag declared here that `Fleet.shard` gives to another daemon is ignored without a
    /// word at run time (docs/behaviour.md §15), so `check` says so for each.
    mutating func warnAboutOtherShards() {
        guard let shard = configuration.fleet?.shard, shard.count > 1 else { return }
        let declared =
            (configuration.fleet?.devices.map { (key: "Device.\($0.id)", id: $0.id, line: $0.line) } ?? [])
            + (configuration.scanners?.tags.map { (key: "Tag.\($0.id)", id: $0.id, line: $0.line) } ?? [])
        for device in declared where !shard.owns(device.id) {
            let owner = shard.owner(of: device.id)
            configuration.warnings.append(
                InputError(
                    file: path,
                    line: device.line,
                    message: "\(device.key) falls in shard \(owner), not this daemon's \(shard) (Fleet.shard): "
                        + "this daemon ignores it; declare it on the daemon of shard \(owner), or drop Fleet.shard"
                )
            )
        }
    }

    /// OwnTracks reads a major or minor of 0 as "any": a phone cannot monitor such a Zone or Beacon
    /// exactly (docs/behaviour.md §15.1).
    mutating func warnAboutZeros(_ file: IniFile) {
        for beacon in configuration.hierarchy.beacons where beacon.id.major == 0 || beacon.id.minor == 0 {
            guard let entry = file.entries.first(where: { $0.key == "LocationBaseBeacon.\(beacon.locationID)" })
            else { continue }
            let part = beacon.id.major == 0 ? "major" : "minor"
            warn(
                entry,
                "\(part) 0 is 'any' to OwnTracks: phones cannot monitor this \(part == "major" ? "Zone" : "Beacon") "
                    + "exactly; give it a \(part) from 1 to 65535")
        }
    }

    /// `Device.<id> = name[,userid]`.
    mutating func loadDevice(_ entry: IniFile.Entry, into settings: inout FleetSettings) {
        guard let id = entry.key.suffix(after: "Device."), DeviceDeclaration.isValidID(id) else {
            error(
                entry,
                "device id '\(entry.key.dropFirst(7).excerpt)' must be 1 to 64 letters, digits, '-', '_' or '.', "
                    + "such as Device.alice-iphone")
            return
        }
        let parts = entry.value.split(separator: ",", maxSplits: 1).map { $0.trimmingWhitespace() }
        guard let name = parts.first, !name.isEmpty else {
            error(entry, "Device.\(id) needs a name: Device.\(id) = name[,userid]")
            return
        }
        var userid: String?
        if parts.count == 2 {
            guard DeviceDeclaration.isValidID(parts[1]) else {
                error(
                    entry,
                    "userid '\(parts[1].excerpt)' must be 1 to 64 letters, digits, '-', '_' or '.' (it is a topic level)"
                )
                return
            }
            userid = parts[1]
        }
        settings.devices.append(DeviceDeclaration(id: id, name: name, userid: userid, line: entry.line))
    }
}

extension DeviceDeclaration {
    /// Whether `id` can name a device: it becomes a topic level, a JSON value and `BW_DEVICE`.
    package static func isValidID(_ id: some StringProtocol) -> Bool {
        (1...64).contains(id.utf8.count)
            && id.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
            }
    }
}
