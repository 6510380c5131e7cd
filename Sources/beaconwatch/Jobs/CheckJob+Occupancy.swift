import BeaconConfiguration
import BeaconCore
import JSONText
import RegionMonitor

extension CheckJob {
    /// The occupancy (docs/behaviour.md §23): its settings, each sensor (id, kind, Zone, topic,
    /// field, hold, silence) and, per region with an occupancy, its rule in one readable line.
    func occupancyLines() -> [String] {
        guard let occupancy = configuration.occupancy else { return [] }
        let hierarchy = configuration.hierarchy
        let scope =
            switch occupancy.scope {
            case .zones: "per Zone"
            case .areas: "per Area"
            case .both: "per Zone and per Area"
            }
        var lines = [
            "  occupancy: \(scope) (Occupancy.count), \(vacancy(occupancy.vacantAfter)) (Occupancy.vacantAfter); "
                + "\(count(occupancy.sensors.count, "sensor"))"
                + (occupancy.nonOccupants.isEmpty
                    ? "; every device counts"
                    : "; not counted (occupant = false): \(occupancy.nonOccupants.sorted().joined(separator: ", "))")
        ]
        for sensor in occupancy.sensors {
            let zone = hierarchy.name(of: sensor.zone).map { "\(sensor.zone) (\($0.printable))" } ?? "\(sensor.zone)"
            var line = "  sensor \(sensor.id): \(sensor.kind.rawValue) in zone \(zone), topic \(sensor.topic.excerpt)"
            line += ", field \(sensor.path.excerpt) (of a JSON object; a plain payload is read whole)"
            if sensor.kind == .motion { line += ", holds \(seconds(sensor.hold))" }
            line += "; liveness: \(sensor.liveness)"
            lines.append(line)
        }
        var regions: [(region: Region, name: String?)] = []
        if occupancy.scope.zones { regions += hierarchy.zones.map { ($0.region, $0.name) } }
        if occupancy.scope.areas { regions += hierarchy.areas.map { ($0.region, $0.name) } }
        for (region, name) in regions {
            let sensors = occupancy.sensors.filter { sensor in
                switch region {
                case .area(let uuid):
                    if case .zone(let zoneUUID, _) = sensor.zone { return zoneUUID == uuid }
                    return false
                default: return sensor.zone == region
                }
            }
            let label = (name?.printable ?? region.description) + (region.kind == .area ? " (area)" : "")
            lines.append(
                "  occupancy \(label): \(rule(sensors, area: region.kind == .area, vacantAfter: occupancy.vacantAfter))"
            )
        }
        return lines
    }

    /// A region's rule as a person reads it: "occupied when a device is inside, or lab-pir
    /// (motion, 120 s hold) or lab-radar (presence) says so; vacant after 30 s of nothing". An
    /// Area's people are its Zones' together.
    func rule(_ sensors: [SensorDefinition], area: Bool = false, vacantAfter: Double) -> String {
        var clauses = ["a device is inside"]
        let saying = sensors.filter { $0.kind == .motion || $0.kind == .presence }.map { sensor in
            sensor.kind == .motion
                ? "\(sensor.id) (motion, \(seconds(sensor.hold)) hold)" : "\(sensor.id) (presence)"
        }
        if !saying.isEmpty { clauses.append(saying.joined(separator: " or ") + " says so") }
        // Doors occupy nothing: they hold a room someone moved in after they closed (§23, doors).
        let doors = sensors.filter { $0.kind == .door }.map(\.id)
        if !doors.isEmpty {
            clauses.append("held while \(doors.joined(separator: " and ")) stay closed after someone moved inside")
        }
        let counting = sensors.filter { $0.kind == .count }.map(\.id)
        if !counting.isEmpty { clauses.append(counting.joined(separator: " or ") + " counts anyone") }
        var text = "occupied when " + clauses.joined(separator: ", or ")
        if area {
            text += "; people: its Zones' together, or the devices inside when more"
        } else if !counting.isEmpty {
            text += "; people: the devices inside or \(counting.joined(separator: " or "))'s count, whichever is more"
        }
        return text + "; " + vacancy(vacantAfter)
    }

    private func vacancy(_ vacantAfter: Double) -> String {
        vacantAfter > 0
            ? "vacant after \(seconds(vacantAfter)) of nothing" : "vacant as soon as nothing says anyone is there"
    }

    private func seconds(_ value: Double) -> String { "\(JSONValue.numberText(value)) s" }
}
