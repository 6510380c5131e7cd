import Foundation
import BeaconCore
import RegionMonitor

extension Loader {
    /// Whether `key` is one of the floor plan's (docs/behaviour.md §20).
    static func isFloorPlanKey(_ key: String) -> Bool {
        key == "Floorplan.file" || key.hasPrefix("LocationZoneShape.") || key.hasPrefix("LocationScannerPoint.")
            || key.hasPrefix("LocationAreaLevel.") || key.hasPrefix("Door.")
    }

    /// The floor plan's ini keys (docs/behaviour.md §20), once the building and the scanners are loaded.
    mutating func loadFloorPlan(_ entries: [IniFile.Entry]) {
        guard !entries.isEmpty else { return }
        var plan = FloorPlanSettings()
        let beacons = configuration.hierarchy.beacons
        let placed = Set(configuration.scanners?.scanners.map(\.id) ?? [])
        for entry in entries {
            let key = entry.key
            if key == "Floorplan.file" {
                guard let path = text(entry) else { continue }
                plan.file = resolve(path)
            } else if let text = key.suffix(after: "LocationZoneShape.") {
                guard case .zone(let uuid, let major)? = Region(text) else {
                    error(entry, "'\(text.excerpt)' is not a Zone; a shape is LocationZoneShape.<UUID>:<major>")
                    continue
                }
                guard beacons.contains(where: { $0.id.uuid == uuid && $0.id.major == major }) else {
                    error(
                        entry,
                        "Zone \(uuid.uuidString):\(major) has no beacon; add a LocationBaseBeacon in it or remove the shape"
                    )
                    continue
                }
                guard let points = points(entry, count: 3...1000, example: "0,0; 4,0; 4,3; 0,3") else { continue }
                if !FloorPlanSettings.isSimple(points) {
                    warn(
                        entry,
                        "the shape of Zone \(uuid.uuidString):\(major) crosses itself; give its corners in order around it"
                    )
                }
                plan.shapes.append(.init(zone: .zone(uuid, major: major), points: points, line: entry.line))
            } else if let id = key.suffix(after: "LocationScannerPoint.") {
                let values = numbers(entry, count: 2...3, example: "x,y or x,y,z in metres, such as 1.5,2,2.2")
                guard let values else { continue }
                if !placed.contains(id) {
                    warn(
                        entry,
                        "no scanner '\(id.excerpt)' is placed; place it with LocationScanner.<Location ID> = \(id.excerpt)"
                    )
                }
                plan.scannerPoints.append(
                    .init(
                        scanner: id, point: .init(values[0], values[1]),
                        z: values.count == 3 ? values[2] : FloorPlanSettings.scannerHeight, line: entry.line))
            } else if let text = key.suffix(after: "LocationAreaLevel.") {
                guard let uuid = UUID(uuidString: text) else {
                    error(entry, "'\(text.excerpt)' is not a UUID; a level is LocationAreaLevel.<UUID> = z0,z1")
                    continue
                }
                guard beacons.contains(where: { $0.id.uuid == uuid }) else {
                    error(
                        entry,
                        "Area \(uuid.uuidString) has no beacon; add a LocationBaseBeacon with that UUID or remove the level"
                    )
                    continue
                }
                guard let values = numbers(entry, count: 2...2, example: "z0,z1 in metres, such as 0,3") else {
                    continue
                }
                guard values[0] < values[1] else {
                    error(
                        entry,
                        "the level's bottom \(JSONValue.numberText(values[0])) is not below its top; give z0,z1 with z0 < z1"
                    )
                    continue
                }
                plan.levels.append(.init(area: uuid, bottom: values[0], top: values[1], line: entry.line))
            } else if let id = key.suffix(after: "Door.") {
                guard DeviceDeclaration.isValidID(id) else {
                    error(
                        entry,
                        "door id '\(id.excerpt)' must be 1 to 64 letters, digits, '-', '_' or '.', such as Door.kitchen"
                    )
                    continue
                }
                guard let points = points(entry, count: 2...2, example: "2,3; 3,3") else { continue }
                guard points[0] != points[1] else {
                    error(entry, "a door is a gap of some width: give its two ends apart, such as 2,3; 3,3")
                    continue
                }
                plan.doors.append(.init(id: id, from: points[0], to: points[1], line: entry.line))
            }
        }
        configuration.floorPlan = plan
    }

    /// `x,y; x,y; …` with `count` points, each coordinate within ``FloorPlanSettings/coordinateLimit``.
    mutating func points(_ entry: IniFile.Entry, count: ClosedRange<Int>, example: String) -> [FloorPlanSettings.Point]?
    {
        let parts = entry.value.split(separator: ";", omittingEmptySubsequences: false)
        var points: [FloorPlanSettings.Point] = []
        for part in parts {
            let values = part.split(separator: ",", omittingEmptySubsequences: false).map {
                Double(String($0).trimmingWhitespace())
            }
            guard values.count == 2, let x = values[0], let y = values[1], Self.isCoordinate(x), Self.isCoordinate(y)
            else {
                error(
                    entry,
                    "'\(part.trimmingWhitespace().excerpt)' is not a point x,y in metres; write the points as \(example)"
                )
                return nil
            }
            points.append(.init(x, y))
        }
        guard count.contains(points.count) else {
            let wanted = count.lowerBound == count.upperBound ? "\(count.lowerBound)" : "at least \(count.lowerBound)"
            error(entry, "\(points.count) points where \(wanted) are needed; write them as \(example)")
            return nil
        }
        return points
    }

    /// Comma-separated coordinates, `count` of them.
    mutating func numbers(_ entry: IniFile.Entry, count: ClosedRange<Int>, example: String) -> [Double]? {
        let values = entry.value.split(separator: ",", omittingEmptySubsequences: false).map {
            Double(String($0).trimmingWhitespace())
        }
        guard count.contains(values.count), values.allSatisfy({ $0.map(Self.isCoordinate) ?? false }) else {
            error(entry, "'\(entry.value.excerpt)' is not \(example)")
            return nil
        }
        return values.compactMap { $0 }
    }

    static func isCoordinate(_ value: Double) -> Bool {
        value.isFinite && abs(value) <= FloorPlanSettings.coordinateLimit
    }
}
