import BeaconCore
import Floorplan
import Foundation
import JSONText
import RegionMonitor
import Syscalls

extension Loader {
    /// Whether `key` is one of the floor plan's (docs/behaviour.md §20).
    static func isFloorPlanKey(_ key: String) -> Bool {
        key == "Floorplan.file" || key == "Rooms.minConfidence" || key.hasPrefix("LocationZoneShape.")
            || key.hasPrefix("LocationScannerPoint.")
            || key.hasPrefix("LocationAreaLevel.") || key.hasPrefix("LocationAreaWalls.") || key.hasPrefix("Door.")
            || key.hasPrefix("Stairs.")
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
            } else if key == "Rooms.minConfidence" {
                guard let value = Double(entry.value), value > 0, value <= 1 else {
                    error(
                        entry,
                        "'\(entry.value.excerpt)' is not a probability; give one above 0 and at most 1, such as 0.6")
                    continue
                }
                plan.minConfidence = value
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
                        z: values.count == 3 ? values[2] : nil, line: entry.line))
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
            } else if let text = key.suffix(after: "LocationAreaWalls.") {
                guard let uuid = UUID(uuidString: text) else {
                    error(
                        entry,
                        "'\(text.excerpt)' is not a UUID; walls are given as LocationAreaWalls.<UUID> = none or edges")
                    continue
                }
                guard beacons.contains(where: { $0.id.uuid == uuid }) else {
                    error(
                        entry,
                        "Area \(uuid.uuidString) has no beacon; add a LocationBaseBeacon with that UUID or remove the walls key"
                    )
                    continue
                }
                switch entry.value.trimmingWhitespace().lowercased() {
                case "none": plan.openAreas.insert(uuid)
                case "edges": plan.openAreas.remove(uuid)
                default:
                    error(
                        entry,
                        "'\(entry.value.excerpt)' is not a kind of walls; give none (an open plan: the Zones share no walls) or edges (every shared edge a wall)"
                    )
                }
            } else if let id = key.suffix(after: "Door.") {
                guard isValidID(id, entry, kind: "door", example: "Door.kitchen") else { continue }
                var value = entry
                var exit = false
                // `x,y; x,y, exit`: a door to the outside.
                if let comma = entry.value.lastIndex(of: ","), entry.value.filter({ $0 == "," }).count == 3,
                    case let kind = entry.value[entry.value.index(after: comma)...].trimmingWhitespace(),
                    Double(kind) == nil, !kind.contains(";")
                {
                    guard kind.lowercased() == "exit" else {
                        error(
                            entry,
                            "'\(kind.excerpt)' is not a kind of door; the one kind is exit (x,y; x,y, exit: a door to the outside)"
                        )
                        continue
                    }
                    exit = true
                    value.value = String(entry.value[..<comma])
                }
                guard let points = points(value, count: 2...2, example: "2,3; 3,3 or 2,3; 3,3, exit") else { continue }
                guard points[0] != points[1] else {
                    error(entry, "a door is a gap of some width: give its two ends apart, such as 2,3; 3,3")
                    continue
                }
                plan.doors.append(.init(id: id, from: points[0], to: points[1], exit: exit, line: entry.line))
            } else if let id = key.suffix(after: "Stairs.") {
                guard isValidID(id, entry, kind: "stairs", example: "Stairs.main") else { continue }
                if let stairs = stairs(entry, id: id) { plan.stairs.append(stairs) }
            }
        }
        if let file = plan.file, let entry = entries.first(where: { $0.key == "Floorplan.file" }) {
            switch Document.read(file, limit: 4 << 20) {
            case .success(let bytes):
                let companion = CompanionFloorplan.parse(String(decoding: bytes, as: UTF8.self), file: file)
                errors += companion.errors
                if companion.errors.isEmpty { merge(companion, file: file, into: &plan) }
            case .failure(let failure):
                error(
                    entry,
                    "Floorplan.file '\(file.excerpt)' \(failure); give the path of an ESPresense companion config.yaml")
            }
        }
        configuration.floorPlan = plan
        buildFloors()
    }

    /// What a companion file adds to the ini's floor plan (docs/behaviour.md §20): each floor is
    /// the Area whose Zones its rooms are (a room is the Zone of its name, case, spaces, `-` and `_`
    /// ignored), each node the scanner of its id; what the ini gives wins.
    mutating func merge(_ companion: CompanionFloorplan, file: String, into plan: inout FloorPlanSettings) {
        let hierarchy = configuration.hierarchy
        var zonesByName: [String: Int] = [:]
        for (index, zone) in hierarchy.zones.enumerated() {
            guard let name = zone.name else { continue }
            zonesByName[CompanionFloorplan.matchKey(name)] = zonesByName[CompanionFloorplan.matchKey(name)] ?? index
        }
        let shaped = Set(plan.shapes.map(\.zone))
        for floor in companion.floors {
            var areas: [Int32: Int] = [:]
            for room in floor.rooms {
                let zone =
                    zonesByName[CompanionFloorplan.matchKey(room.name)]
                    ?? room.id.flatMap { zonesByName[CompanionFloorplan.matchKey($0)] }
                guard let zone else {
                    configuration.warnings.append(
                        InputError(
                            file: file, line: room.line,
                            message:
                                "\(room.path): room '\(room.name.excerpt)' names no Zone: tags are never placed in "
                                + "it; name a Zone so with LocationZoneName.<UUID>:<major> = \(room.name.excerpt)"))
                    continue
                }
                areas[hierarchy.areaOfZone[zone], default: 0] += 1
                let region = hierarchy.zones[zone].region
                guard !shaped.contains(region), !plan.shapes.contains(where: { $0.zone == region }) else { continue }
                if !PlanPolygon.isSimple(room.points) {
                    configuration.warnings.append(
                        InputError(
                            file: file, line: room.line,
                            message: "\(room.path): the shape of room '\(room.name.excerpt)' crosses itself; give its "
                                + "corners in order around it"))
                }
                plan.shapes.append(.init(zone: region, points: room.points, line: 0))
            }
            // The floor is the Area most of its rooms are in.
            guard let area = areas.max(by: { $0.value != $1.value ? $0.value < $1.value : $0.key > $1.key })?.key
            else { continue }
            let uuid = hierarchy.areas[Int(area)].uuid
            if let bounds = floor.bounds, plan.bounds[uuid] == nil { plan.bounds[uuid] = bounds }
            if let bottom = floor.bottom, let top = floor.top, bottom < top,
                !plan.levels.contains(where: { $0.area == uuid })
            {
                plan.levels.append(.init(area: uuid, bottom: bottom, top: top, line: 0))
            }
        }
        let scanners = configuration.scanners?.scanners ?? []
        for node in companion.nodes where node.enabled && node.stationary {
            let key = CompanionFloorplan.matchKey(node.id)
            guard let scanner = scanners.first(where: { CompanionFloorplan.matchKey($0.id) == key }) else {
                configuration.warnings.append(
                    InputError(
                        file: file, line: node.line,
                        message: "\(node.path): node '\(node.id.excerpt)' names no scanner; place it with "
                            + "LocationScanner.<Location ID> = \(node.id.excerpt)"))
                continue
            }
            guard !plan.scannerPoints.contains(where: { $0.scanner == scanner.id }) else { continue }
            plan.scannerPoints.append(.init(scanner: scanner.id, point: node.point, z: node.z, line: 0))
        }
    }

    /// One ``FloorMap`` per Area that has a room with a shape (docs/behaviour.md §20): its rooms, the
    /// scanners placed in it that have a point, the doors within its extent; with `check`'s
    /// warnings for what is missing.
    mutating func buildFloors() {
        guard let plan = configuration.floorPlan else { return }
        let hierarchy = configuration.hierarchy
        var rooms: [Int32: [FloorPlan.Room]] = [:]
        for shape in plan.shapes {
            guard let zone = hierarchy.zoneIndex(of: shape.zone) else { continue }
            let area = hierarchy.areaOfZone[zone]
            if rooms[area]?.contains(where: { $0.zone == Int32(zone) }) == true {
                configuration.warnings.append(
                    InputError(
                        file: path, line: shape.line,
                        message: "Zone \(shape.zone) has a second shape; the first one stands"))
                continue
            }
            rooms[area, default: []].append(FloorPlan.Room(zone: Int32(zone), polygon: shape.points))
        }
        var plans: [FloorPlan] = []
        let points = Dictionary(plan.scannerPoints.map { ($0.scanner, $0) }, uniquingKeysWith: { first, _ in first })
        for (area, areaRooms) in rooms.sorted(by: { $0.key < $1.key }) {
            let uuid = hierarchy.areas[Int(area)].uuid
            let areaName = hierarchy.areas[Int(area)].name.map { "'\($0)'" } ?? uuid.uuidString
            for zone in hierarchy.areas[Int(area)].zones where !areaRooms.contains(where: { $0.zone == Int32(zone) }) {
                let region = hierarchy.zones[zone].region
                configuration.warnings.append(
                    InputError(
                        file: path, line: nil,
                        message: "Zone \(hierarchy.zones[zone].name.map { "'\($0)' " } ?? "")(\(region)) of floor "
                            + "\(areaName) has no shape: a tag is never placed in it; give it a "
                            + "LocationZoneShape.\(uuid.uuidString):\(hierarchy.zones[zone].major)"))
            }
            for (index, first) in areaRooms.enumerated() {
                for second in areaRooms[(index + 1)...] where PlanPolygon.overlap(first.polygon, second.polygon) > 0.05
                {
                    let names = [first.zone, second.zone].map {
                        hierarchy.zones[Int($0)].name ?? hierarchy.zones[Int($0)].region.description
                    }
                    configuration.warnings.append(
                        InputError(
                            file: path, line: nil,
                            message: "rooms '\(names[0])' and '\(names[1])' overlap: a tag between them is put in "
                                + "the first; draw their shapes edge to edge"))
                }
            }
            let level = plan.levels.first { $0.area == uuid }
            var scanners: [FloorPlan.Scanner] = []
            for scanner in configuration.scanners?.scanners ?? [] {
                guard let location = hierarchy.index(ofLocation: scanner.locationID),
                    hierarchy.areaOfZone[Int(hierarchy.zoneOfBeacon[location])] == area
                else { continue }
                guard let point = points[scanner.id] else {
                    configuration.warnings.append(
                        InputError(
                            file: path, line: scanner.line,
                            message: "scanner '\(scanner.id)' on floor \(areaName) has no point: its reports do not "
                                + "place tags; give it LocationScannerPoint.\(scanner.id) = x,y[,z]"))
                    continue
                }
                let z = point.z ?? (level?.bottom ?? 0) + FloorPlanSettings.scannerHeight
                scanners.append(FloorPlan.Scanner(location: Int32(location), point: point.point, z: z))
            }
            var box = Box(areaRooms.flatMap(\.polygon))
            box?.x0 -= 0.5
            box?.y0 -= 0.5
            box?.x1 += 0.5
            box?.y1 += 0.5
            let doors = plan.doors.filter { door in
                guard let box else { return false }
                let middle = PlanPoint((door.from.x + door.to.x) / 2, (door.from.y + door.to.y) / 2)
                return middle.x >= box.x0 && middle.x <= box.x1 && middle.y >= box.y0 && middle.y <= box.y1
            }
            plans.append(
                FloorPlan(
                    area: area, rooms: areaRooms, scanners: scanners,
                    doors: doors.map { PlanSegment($0.from, $0.to) },
                    exits: doors.filter(\.exit).map { PlanSegment($0.from, $0.to) }, bounds: plan.bounds[uuid],
                    bottom: level?.bottom ?? 0, top: level?.top ?? 3, open: plan.openAreas.contains(uuid)))
        }
        var stairs: [(areaA: Int32, a: PlanPoint, areaB: Int32, b: PlanPoint)] = []
        for joint in plan.stairs {
            let areas = [joint.areaA, joint.areaB].map { uuid in
                hierarchy.areas.firstIndex { $0.uuid == uuid }.map(Int32.init).flatMap { area in
                    plans.contains { $0.area == area } ? area : nil
                }
            }
            guard let a = areas[0], let b = areas[1] else {
                let uuid = areas[0] == nil ? joint.areaA : joint.areaB
                configuration.warnings.append(
                    InputError(
                        file: path, line: joint.line,
                        message: "Stairs.\(joint.id): floor \(uuid.uuidString) has no floor plan, so the stairs join "
                            + "nothing; give its Zones shapes (LocationZoneShape) or remove the stairs"))
                continue
            }
            stairs.append((a, joint.pointA, b, joint.pointB))
        }
        let buildings = Building.group(plans, stairs: stairs)
        var floors: [Int32: FloorMap] = [:]
        for building in buildings.values {
            for map in building.floors { floors[map.plan.area] = map }
        }
        configuration.buildings = buildings
        configuration.floors = floors
        configuration.scanners?.hasFloors = !floors.isEmpty
    }

    /// Whether `id` is a door's or stairs' id; an error on `entry` when it is not.
    mutating func isValidID(_ id: String, _ entry: IniFile.Entry, kind: String, example: String) -> Bool {
        guard !DeviceDeclaration.isValidID(id) else { return true }
        error(entry, "\(kind) id '\(id.excerpt)' must be 1 to 64 letters, digits, '-', '_' or '.', such as \(example)")
        return false
    }

    /// `Stairs.<id> = <UUID of floor A>, x,y; <UUID of floor B>, x,y` (docs/behaviour.md §20).
    mutating func stairs(_ entry: IniFile.Entry, id: String) -> FloorPlanSettings.Stairs? {
        let example = "<UUID of floor A>, x,y; <UUID of floor B>, x,y"
        let ends = entry.value.split(separator: ";", omittingEmptySubsequences: false)
        var parsed: [(UUID, FloorPlanSettings.Point)] = []
        for end in ends {
            let parts = end.split(separator: ",", omittingEmptySubsequences: false).map {
                String($0).trimmingWhitespace()
            }
            guard parts.count == 3, let uuid = UUID(uuidString: parts[0]), let x = Double(parts[1]),
                let y = Double(parts[2]), Self.isCoordinate(x), Self.isCoordinate(y)
            else {
                error(
                    entry,
                    "'\(end.trimmingWhitespace().excerpt)' is not a floor's UUID and a point x,y; write \(example)")
                return nil
            }
            guard configuration.hierarchy.beacons.contains(where: { $0.id.uuid == uuid }) else {
                error(
                    entry,
                    "Area \(uuid.uuidString) has no beacon; stairs join two floors (Areas) of the building: write \(example)"
                )
                return nil
            }
            parsed.append((uuid, .init(x, y)))
        }
        guard parsed.count == 2 else {
            error(entry, "stairs have two ends, \(parsed.count) given; write \(example)")
            return nil
        }
        guard parsed[0].0 != parsed[1].0 else {
            error(entry, "both ends are on floor \(parsed[0].0.uuidString); stairs join two floors: write \(example)")
            return nil
        }
        return .init(
            id: id, areaA: parsed[0].0, pointA: parsed[0].1, areaB: parsed[1].0, pointB: parsed[1].1, line: entry.line)
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
