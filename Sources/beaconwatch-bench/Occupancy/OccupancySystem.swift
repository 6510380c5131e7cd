import BeaconConfiguration
import BeaconCore
import Daemon
import Engine
import Fleet
import RegionMonitor
import Simulation

/// A room's occupancy as a system announced it last: occupied, its count, the counted devices in it.
struct RoomShown {
    var occupied: Bool
    var count: Int
    var devices: Int
}

/// What a system of the occupancy benchmark announced for each room: its state now, and when it
/// flipped.
protocol OccupancyAnnouncer {
    var name: String { get }
    /// Each room's state as last announced (`nil` before its first announcement).
    var shown: [RoomShown?] { get }
    /// Each room's flips between occupied and vacant as announced, in time order (seconds; the
    /// first announcement is one).
    var flips: [[(time: Double, occupied: Bool)]] { get }
}

extension OccupancyAnnouncer {
    /// Whether room `room` was announced occupied at `time` (`nil` before its first announcement).
    func occupied(_ room: Int, at time: Double) -> Bool? {
        flips[room].last { $0.time <= time }?.occupied
    }

    /// The first announcement of "vacant" for room `room` at or after `time`.
    func vacant(_ room: Int, after time: Double) -> Double? {
        flips[room].first { $0.time >= time && !$0.occupied }?.time
    }
}

/// beaconwatch's occupancy in the occupancy benchmark: the device table of `run` and `replay`
/// (docs/behaviour.md §19, §23) on a floor of the rooms benchmark, fed the scanners' reports of
/// the tags and the sensors' messages, read from its `occupancy` outputs.
struct OccupancySystem: OccupancyAnnouncer {
    var name: String
    var table: Devices
    private let scanners: [String]
    private let tags: [String]
    private var actions: [Devices.Action] = []
    private(set) var shown: [RoomShown?]
    private(set) var flips: [[(time: Double, occupied: Bool)]]
    /// The lines the daemon would have logged (a sensor's garbage): none, when the doubles send
    /// what firmware sends.
    private(set) var notices: [String] = []

    /// `tags` declared `t1`…; `extra`: the occupancy's ini lines (and any other). `plan`: with the
    /// floor plan (docs/behaviour.md §20).
    init(name: String, floor: Floor, tags: Int, extra: String, plan: Bool) throws {
        self.name = name
        let text = floor.ini(
            tags: tags,
            extra: "MQTT.host = 127.0.0.1\nScanners.theengs = home/+/BTtoMQTT/#\nFleet.maxDevices = \(tags + 10)\n"
                + extra + "\n",
            plan: plan)
        let configuration = try Configuration.load(Array(text.utf8), path: "occupancy.ini").get()
        guard configuration.occupancy != nil else { throw RuntimeFailure("\(name): no occupancy in its ini") }
        table = Devices(
            configuration: configuration, identity: MonitorIdentity(session: "s", address: "a", userid: "bench"))
        scanners = floor.scanners.map(\.id)
        self.tags = (1...max(tags, 1)).map { "t\($0)" }
        shown = Array(repeating: nil, count: floor.rooms.count)
        flips = Array(repeating: [], count: floor.rooms.count)
        table.start(at: BeaconwatchRooms.time(0), into: &actions)
        take()
    }

    mutating func report(tag: Int, scanner: Int, rssi: Double, at time: Double) {
        table.handle(
            .report(ScannerReport(scanner: scanners[scanner], tag: tags[tag], rssi: rssi, power: -59)),
            at: BeaconwatchRooms.time(time), into: &actions)
        take()
    }

    mutating func sensor(_ event: SensorEvent) {
        table.handle(
            .daemon(.sensor(SensorMessage(sensor: event.sensor, payload: event.payload))),
            at: BeaconwatchRooms.time(event.time), into: &actions)
        take()
    }

    mutating func advance(to time: Double) {
        table.advance(to: BeaconwatchRooms.time(time), into: &actions)
        take()
    }

    /// Reads the occupancy outputs of the last call.
    private mutating func take() {
        for action in actions {
            if case .notice(_, let line) = action { notices.append(line) }
            guard case .engine(_, .output(.occupancy(let time, let change))) = action,
                case .zone(_, let major) = change.region
            else { continue }
            let room = Int(major) - 1
            guard shown.indices.contains(room) else { continue }
            if shown[room]?.occupied != change.occupied {
                flips[room].append(
                    (Double(time.microseconds - BeaconwatchRooms.time(0).microseconds) / 1e6, change.occupied))
            }
            shown[room] = RoomShown(occupied: change.occupied, count: change.count, devices: change.devices.count)
        }
        actions.removeAll(keepingCapacity: true)
    }
}
