import BeaconCore
import Engine
import Floorplan
import RegionMonitor

/// What the web view shows (docs/behaviour.md §16), as a value: every device with its latest reading, each
/// beacon's filtered RSSI over the last five minutes, and the latest transitions of all devices.
///
/// Fed two ways by the shell: ``update(_:reading:)`` with readings of the engines (taken on the
/// engine's thread, so always consistent), and ``record(_:device:)`` with each output as it is
/// delivered. Rendering (``BuildingPage``, ``DevicePage``, ``StateJSON``) reads it; nothing here
/// does I/O.
package struct BuildingModel: Sendable {
    /// A device as the view names it.
    package struct Device: Sendable, Hashable {
        /// Its id: the daemon's own userid, or the fleet device's id (docs/behaviour.md §15).
        package var id: String
        /// `Device.<id> = name`, or `nil`.
        package var name: String?
        /// The daemon's own radio (not a fleet device).
        package var own: Bool
        /// Kept in a box: a device is copied in every sort and filter of a page, and a reading
        /// holds many arrays (one retain instead of dozens).
        private var box: ReadingBox?
        package var reading: DeviceReading? {
            get { box?.reading }
            set { box = newValue.map(ReadingBox.init) }
        }

        package init(id: String, name: String? = nil, own: Bool = false, reading: DeviceReading? = nil) {
            self.id = id
            self.name = name
            self.own = own
            self.box = reading.map(ReadingBox.init)
        }

        package static func == (lhs: Device, rhs: Device) -> Bool {
            (lhs.id, lhs.name, lhs.own) == (rhs.id, rhs.name, rhs.own) && lhs.reading == rhs.reading
        }

        package func hash(into hasher: inout Hasher) {
            hasher.combine(id)
            hasher.combine(name)
            hasher.combine(own)
        }

        /// What a person reads: the name, else the id.
        package var label: String { name ?? id }
    }

    /// An immutable reading, shared by the copies of a model.
    final class ReadingBox: Sendable {
        let reading: DeviceReading
        init(_ reading: DeviceReading) { self.reading = reading }
    }

    /// One transition of one device, for the list of the latest.
    package struct TransitionEntry: Sendable, Hashable {
        package var time: Timestamp
        package var device: String
        package var transition: Transition
    }

    /// One RSSI reading of a beacon; `nil` while `off`.
    package struct Sample: Sendable, Hashable {
        package var time: Timestamp
        package var rssi: Double?
        package var proximity: Proximity

        package init(time: Timestamp, rssi: Double?, proximity: Proximity) {
            self.time = time
            self.rssi = rssi
            self.proximity = proximity
        }
    }

    package let hierarchy: Hierarchy
    package let maxRegions: Int
    package private(set) var devices: [String: Device] = [:]
    /// Newest last, at most ``transitionLimit``.
    package private(set) var transitions: [TransitionEntry] = []
    /// Per device, per Location ID: samples of the last ``historySeconds``, oldest first.
    package private(set) var history: [String: [String: [Sample]]] = [:]

    /// Changes with every change of the model: a page rendered at one version is valid until
    /// the next.
    package private(set) var version = 0

    package static let transitionLimit = 50
    package static let historySeconds: Int64 = 300
    /// Samples kept per beacon at most (two a second over five minutes).
    static let sampleLimit = 600

    package init(hierarchy: Hierarchy, maxRegions: Int) {
        self.hierarchy = hierarchy
        self.maxRegions = maxRegions
    }

    /// A fixed scanner at a location (docs/behaviour.md §19), and its health at the last reading.
    package struct Scanner: Sendable, Hashable {
        package var id: String
        package var locationID: String
        /// `nil` before any reading.
        package var online: Bool?
        package var lastReport: Timestamp?
        package var reports = 0
        /// The offset `Scanners.calibrate = auto` learned for its receiver; `nil` when none.
        package var learned: Learned?

        /// dB added to a scanner's readings, learned against `pairs` other scanners.
        package struct Learned: Sendable, Hashable {
            package var offset: Double
            package var pairs: Int

            package init(offset: Double, pairs: Int) {
                self.offset = offset
                self.pairs = pairs
            }
        }

        package init(id: String, locationID: String) {
            self.id = id
            self.locationID = locationID
        }
    }

    /// A floor with a plan, as the floor page draws it (docs/behaviour.md §20).
    package struct Floor: Sendable, Hashable {
        package struct Room: Sendable, Hashable {
            package var region: Region
            package var polygon: [PlanPoint]
        }

        package struct Scanner: Sendable, Hashable {
            package var locationID: String
            package var point: PlanPoint
        }

        /// The foot or head of a staircase (`Stairs.<id>`) on this floor, and the floor it leads to.
        package struct Stairs: Sendable, Hashable {
            package var point: PlanPoint
            package var to: Region
            /// Whether the floor it leads to is above this one (by their levels).
            package var up: Bool
        }

        package var area: Region
        /// The building it is a floor of (docs/behaviour.md §20): the hierarchy index of its
        /// building's lowest-numbered Area, its own when no other floor shares its building.
        /// Floors with the same one are one building, which the floor picker lists.
        package var building: Int32
        /// Where the floor begins, metres (the bottom of `LocationAreaLevel`): the picker lists
        /// a building's floors from the lowest.
        package var level: Double
        package var rooms: [Room]
        package var doors: [PlanSegment]
        package var scanners: [Scanner]
        /// The stairs of its building that start or end on it.
        package var stairs: [Stairs]
        /// What the page shows: the rooms and scanners with a margin.
        package var box: Box

        /// The floor of `map`, one of `building`'s floors (`nil`: a floor alone).
        package init(map: FloorMap, hierarchy: Hierarchy, building: Building? = nil) {
            area = hierarchy.areas[Int(map.plan.area)].region
            self.building = building?.floors.map(\.plan.area).min() ?? map.plan.area
            level = map.plan.bottom
            rooms = map.plan.rooms.map { Room(region: hierarchy.zones[Int($0.zone)].region, polygon: $0.polygon) }
            doors = map.plan.doors
            scanners = map.plan.scanners.map {
                Scanner(locationID: hierarchy.beacons[Int($0.location)].locationID, point: $0.point)
            }
            var stairs: [Stairs] = []
            for joint in building?.stairs ?? [] {
                guard let floors = building?.floors else { break }
                let ends = [
                    (joint.floorA, joint.pointA, joint.floorB), (joint.floorB, joint.pointB, joint.floorA),
                ]
                for (here, point, there) in ends where floors[here].plan.area == map.plan.area {
                    let other = floors[there].plan
                    stairs.append(
                        Stairs(
                            point: point, to: hierarchy.areas[Int(other.area)].region,
                            up: other.bottom > map.plan.bottom))
                }
            }
            self.stairs = stairs
            var box = Box(
                x0: map.originX, y0: map.originY, x1: map.originX + Double(map.columns) * map.cell,
                y1: map.originY + Double(map.rows) * map.cell)
            for scanner in scanners { box.include(scanner.point) }
            // The stairs' square metre and the line below it that names where they lead.
            for end in stairs {
                box.include(PlanPoint(end.point.x - 0.5, end.point.y + 0.5))
                box.include(PlanPoint(end.point.x + 0.5, end.point.y - 0.9))
            }
            (box.x0, box.y0, box.x1, box.y1) = (box.x0 - 0.5, box.y0 - 0.5, box.x1 + 0.5, box.y1 + 0.5)
            self.box = box
        }
    }

    /// The floors with a plan, in the order of their Areas (a reload's new floors are a new
    /// version: pages rendered with the old ones are stale).
    package var floors: [Floor] = [] {
        didSet { version &+= 1 }
    }

    /// The floors of `floor`'s building, lowest first (by level, then in the order of their
    /// Areas): `floor` alone when no other floor shares its building.
    package func floors(inBuildingOf floor: Floor) -> [Floor] {
        floors.enumerated().filter { $0.element.building == floor.building }
            .sorted { ($0.element.level, $0.offset) < ($1.element.level, $1.offset) }.map(\.element)
    }

    /// How many tags are on each floor now, by its Area: the devices whose latest position is on
    /// it (what the floor page draws). A floor with none is not in it.
    package var tagsByFloor: [Region: Int] {
        var counts: [Region: Int] = [:]
        for device in devices.values {
            if let area = device.reading?.monitor.position?.area { counts[area, default: 0] += 1 }
        }
        return counts
    }

    /// The floors' radio as the scanners taught it (docs/behaviour.md §20); nil with no floor plan.
    package var radio: RadioModel? {
        didSet { version &+= 1 }
    }

    /// What the building's training knows (docs/behaviour.md §22), at the last reading.
    package var training = Training() {
        didSet { version &+= 1 }
    }

    /// The devices that are tags heard by scanners (the ones a room can be learned with).
    package var tags: Set<String> = [] {
        didSet { version &+= 1 }
    }

    /// The building's occupancy (docs/behaviour.md §23): each announced region's latest state, in
    /// the engine's order (Zones first); `nil` when the configuration has none.
    package var occupancy: [OccupancyChange]? {
        didSet { version &+= 1 }
    }

    /// How each presence sensor is known to be alive, by id (``SensorDefinition/liveness``), from
    /// the configuration.
    package var sensorLiveness: [String: String] = [:] {
        didSet { version &+= 1 }
    }

    /// Each announced region's occupancy, by region.
    package var occupancyByRegion: [Region: OccupancyChange] {
        Dictionary((occupancy ?? []).map { ($0.region, $0) }) { first, _ in first }
    }

    /// Why `change`'s region is occupied (or that it is vacant), devices by the names a person reads.
    package func explanation(_ change: OccupancyChange) -> String {
        change.explanation { devices[$0]?.label ?? $0 }
    }

    /// The placed scanners, in the configuration's order.
    package private(set) var scanners: [Scanner] = []
    /// When the scanners were last read.
    package private(set) var scannersReadAt: Timestamp?

    /// Places the configuration's scanners (keeps what was read of those that stay).
    package mutating func place(_ placed: [(id: String, locationID: String)]) {
        version &+= 1
        let old = Dictionary(scanners.map { ($0.id, $0) }) { first, _ in first }
        scanners = placed.map { id, locationID in
            var scanner = old[id] ?? Scanner(id: id, locationID: locationID)
            scanner.locationID = locationID
            return scanner
        }
    }

    /// The scanners' health at a reading taken at `time`.
    package mutating func updateScanners(
        _ states: [(id: String, online: Bool, lastReport: Timestamp?, reports: Int)], at time: Timestamp,
        learned: [String: Scanner.Learned] = [:]
    ) {
        version &+= 1
        scannersReadAt = time
        let byID = Dictionary(states.map { ($0.id, $0) }) { first, _ in first }
        for index in scanners.indices {
            guard let state = byID[scanners[index].id] else { continue }
            scanners[index].online = state.online
            scanners[index].lastReport = state.lastReport
            scanners[index].reports = state.reports
            scanners[index].learned = learned[scanners[index].id]
        }
    }

    /// The scanner at `locationID`, if one is placed there.
    package func scanner(at locationID: String) -> Scanner? { scanners.first { $0.locationID == locationID } }

    /// Why a tag's room last changed, in the names a person reads: rooms by name, the scanner by id.
    package func why(_ change: RoomChange) -> String {
        change.why(room: { name(of: $0) }) { locationID in
            scanner(at: locationID).map { "scanner \($0.id)" } ?? "the scanner at \(locationID)"
        }
    }

    /// Makes `device` known (its name may change with a reload); keeps its reading.
    package mutating func declare(_ device: Device) {
        version &+= 1
        var entry = devices[device.id] ?? device
        entry.name = device.name
        entry.own = device.own
        if let reading = device.reading { entry.reading = reading }
        devices[device.id] = entry
    }

    /// Devices in a stable order: the own radio first, then by label.
    package var orderedDevices: [Device] {
        devices.values.sorted { ($0.own ? 0 : 1, $0.label, $0.id) < ($1.own ? 0 : 1, $1.label, $1.id) }
    }

    /// A device's newest reading: taken as its state, and its beacons' RSSI sampled.
    package mutating func update(_ id: String, reading: DeviceReading) {
        version &+= 1
        devices[id, default: Device(id: id)].reading = reading
        let now = reading.monitor.time
        let oldest = now.microseconds &- Self.historySeconds * 1_000_000
        var beacons = history[id] ?? [:]
        var seen: Set<String> = []
        for beacon in reading.monitor.beacons {
            seen.insert(beacon.locationID)
            var samples = beacons[beacon.locationID] ?? []
            // A reading at the same instant replaces the last (on-demand and periodic readings).
            if let last = samples.last, last.time >= now { samples.removeLast() }
            samples.append(Sample(time: now, rssi: beacon.rssi, proximity: beacon.computed))
            beacons[beacon.locationID] = samples
        }
        for (locationID, samples) in beacons {
            var kept = samples
            if !seen.contains(locationID), let last = kept.last, last.rssi != nil, last.time < now {
                // No longer watched: it went `off`.
                kept.append(Sample(time: now, rssi: nil, proximity: .off))
            }
            let drop = kept.firstIndex { $0.time.microseconds >= oldest } ?? kept.count
            kept.removeFirst(max(drop, kept.count - Self.sampleLimit))
            beacons[locationID] = kept.isEmpty || kept.allSatisfy({ $0.rssi == nil }) ? nil : kept
        }
        history[id] = beacons.isEmpty ? nil : beacons
    }

    /// An output of `device` as it is delivered: transitions go to the latest.
    package mutating func record(_ output: MonitorOutput, device: String) {
        guard case .transition(let time, let transition) = output else { return }
        version &+= 1
        transitions.append(TransitionEntry(time: time, device: device, transition: transition))
        if transitions.count > Self.transitionLimit {
            transitions.removeFirst(transitions.count - Self.transitionLimit)
        }
    }

    /// The devices inside `region` now, in ``orderedDevices`` order.
    package func devices(inside region: Region) -> [Device] {
        orderedDevices.filter { device in
            device.reading?.monitor.inside.contains { $0.region == region } == true
        }
    }

    /// Today's longest stays in `region`, longest first (the party's bar score): at most `limit`.
    package func leaderboard(_ region: Region, limit: Int = 5) -> [(device: Device, seconds: Double)] {
        leaderboards(limit: limit)[region.description] ?? []
    }

    /// Every Zone's and Area's leaderboard, by canonical region, in one pass over the devices.
    package func leaderboards(limit: Int = 5) -> [String: [(device: Device, seconds: Double)]] {
        var rows: [String: [(device: Device, seconds: Double)]] = [:]
        for device in devices.values {
            guard let dwell = device.reading?.dwellToday else { continue }
            for (region, seconds) in dwell where seconds > 0 { rows[region, default: []].append((device, seconds)) }
        }
        for (region, list) in rows {
            rows[region] = Array(
                list.sorted { ($0.seconds, $1.device.label) > ($1.seconds, $0.device.label) }.prefix(limit))
        }
        return rows
    }

    /// The name a person reads for `region`: its configured name, else its canonical form.
    package func name(of region: Region) -> String { hierarchy.name(of: region) ?? region.description }

    /// The latest instant any reading or transition knows: "now" for the view.
    package var latestTime: Timestamp? {
        let readings = devices.values.compactMap { $0.reading?.monitor.time }.max()
        guard let last = transitions.last?.time else { return readings }
        return readings.map { max($0, last) } ?? last
    }
}
