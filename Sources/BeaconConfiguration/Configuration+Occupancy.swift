import BeaconCore
import Foundation
import RegionMonitor

extension Loader {
    /// Whether `key` is one of docs/behaviour.md §23's: `Occupancy.*`, `Sensor.*`, and
    /// `Device.<id>.occupant`, `Tag.<id>.occupant`.
    static func isOccupancyKey(_ key: String) -> Bool {
        key.hasPrefix("Occupancy.") || key.hasPrefix("Sensor.")
            || key.hasSuffix(".occupant") && (key.hasPrefix("Device.") || key.hasPrefix("Tag."))
    }

    /// The occupancy's settings (docs/behaviour.md §23): present when any of its keys is.
    mutating func loadOccupancy(_ entries: [IniFile.Entry]) {
        guard !entries.isEmpty else { return }
        var settings = OccupancySettings()
        var sensors: [String: SensorDefinition] = [:]
        var order: [String] = []
        var extras: [IniFile.Entry] = []
        // Sensors whose line was an error: their settings say nothing more.
        var refused: Set<String> = []
        for entry in entries {
            let key = entry.key
            if key == "Occupancy.count" {
                if let scope = choice(entry, OccupancyScope.self) { settings.scope = scope }
            } else if key == "Occupancy.vacantAfter" {
                if let seconds = duration(entry, positive: false) { settings.vacantAfter = seconds }
            } else if key.hasPrefix("Occupancy.") {
                error(entry, "no setting \(key.excerpt); Occupancy takes count (zones, areas, both) and vacantAfter")
            } else if key.hasSuffix(".occupant") {
                let id = String(key.dropLast(".occupant".count).drop { $0 != "." }.dropFirst())
                guard !id.isEmpty else {
                    error(entry, "\(key.excerpt) names no device; write Device.<id>.occupant or Tag.<id>.occupant")
                    continue
                }
                guard let counts = boolean(entry) else { continue }
                if !counts { settings.nonOccupants.insert(id) }
            } else if let rest = key.suffix(after: "Sensor."), !rest.contains(".") {
                guard let sensor = sensor(id: rest, entry) else {
                    refused.insert(rest)
                    continue
                }
                if sensors[rest] != nil {
                    error(entry, "Sensor.\(rest.excerpt) is given twice; one line per sensor")
                    continue
                }
                sensors[rest] = sensor
                order.append(rest)
            } else {
                extras.append(entry)
            }
        }
        for entry in extras {
            let rest = String(entry.key.dropFirst("Sensor.".count))
            guard let dot = rest.lastIndex(of: ".") else {
                error(entry, "\(entry.key.excerpt) names no sensor; write Sensor.<id> = <topic>, <kind>, <Zone>")
                continue
            }
            let id = String(rest[..<dot])
            let setting = rest[rest.index(after: dot)...]
            guard !refused.contains(id) else { continue }
            guard sensors[id] != nil else {
                error(entry, "no Sensor.\(id.excerpt) = <topic>, <kind>, <Zone> for this \(setting) setting")
                continue
            }
            switch setting {
            case "hold":
                if let seconds = duration(entry, positive: true) { sensors[id]?.hold = seconds }
            case "silence":
                if let seconds = duration(entry, positive: false) { sensors[id]?.silence = seconds }
            case "status":
                let topic = entry.value.trimmingWhitespace()
                if topic == "none" {
                    sensors[id]?.status = nil
                } else if topic.isEmpty || topic.contains("+") || topic.contains("#") {
                    error(
                        entry,
                        "Sensor.\(id).status: '\(topic.excerpt)' must be one topic without + or #, such as esphome-lab/status, or none"
                    )
                } else {
                    sensors[id]?.status = SensorStatus(topic: String(topic))
                }
            default:
                error(entry, "no sensor setting '\(setting.excerpt)'; a sensor takes hold, silence and status")
            }
        }
        settings.sensors = order.compactMap { sensors[$0] }
        configuration.occupancy = settings
    }

    /// `Sensor.<id> = <topic>, <kind>, <Zone>[, <field>]`.
    private mutating func sensor(id: String, _ entry: IniFile.Entry) -> SensorDefinition? {
        guard DeviceDeclaration.isValidID(id) else {
            error(entry, "sensor id '\(id.excerpt)' must be letters, digits, '-' and '_', such as Sensor.lab-pir")
            return nil
        }
        let parts = entry.value.split(separator: ",", omittingEmptySubsequences: false).map {
            String($0.trimmingWhitespace())
        }
        let example = "such as Sensor.\(id) = zigbee2mqtt/lab/pir, motion, Lab"
        guard (3...4).contains(parts.count) else {
            error(
                entry,
                "Sensor.\(id) = '\(entry.value.excerpt)': expected <topic>, <kind>, <Zone>[, <field>], \(example)")
            return nil
        }
        let topic = parts[0]
        guard !topic.isEmpty, !topic.contains("+"), !topic.contains("#") else {
            error(entry, "Sensor.\(id): the topic '\(topic.excerpt)' must be one topic, without + or #, \(example)")
            return nil
        }
        guard let kind = SensorKind(rawValue: parts[1].lowercased()) else {
            let kinds = SensorKind.allCases.map(\.rawValue).joined(separator: ", ")
            error(entry, "Sensor.\(id): no sensor kind '\(parts[1].excerpt)'; give one of \(kinds)")
            return nil
        }
        guard let zone = zone(named: parts[2]) else {
            let named = configuration.hierarchy.zones.filter { $0.name == parts[2] }.count
            error(
                entry,
                named > 1
                    ? "Sensor.\(id): \(named) Zones are named '\(parts[2].excerpt)'; give the Zone as UUID:major"
                    : "Sensor.\(id): no Zone '\(parts[2].excerpt)'; give a Zone as UUID:major or by its LocationZoneName"
            )
            return nil
        }
        var field: String?
        if parts.count == 4, !parts[3].isEmpty {
            guard SensorPayload.isValidPath(parts[3]) else {
                error(
                    entry,
                    "Sensor.\(id): the field '\(parts[3].excerpt)' is not a key or path such as presence, Switch1.Action or LD2410.Energy[0]"
                )
                return nil
            }
            field = parts[3]
        }
        return SensorDefinition(
            id: id, topic: topic, kind: kind, zone: zone, field: field, status: SensorStatus.derived(from: topic),
            line: entry.line)
    }

    /// A Zone of the hierarchy, by `UUID:major` or by its name (a unique one).
    private func zone(named text: String) -> Region? {
        let hierarchy = configuration.hierarchy
        if let region = Region(text), case .zone = region {
            return hierarchy.zoneIndex(of: region) != nil ? region : nil
        }
        let matches = hierarchy.zones.filter { $0.name == text }
        return matches.count == 1 ? matches[0].region : nil
    }
}
