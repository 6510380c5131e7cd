import BeaconConfiguration
import BeaconCore
import Engine
import Fleet
import Floorplan
import Foundation
import RegionMonitor
import Simulation

/// beaconwatch's own room decision in the room-quality benchmark: the device table of `run` and
/// `replay` (docs/behaviour.md §19), each floor room a Zone, each scanner placed, each tag
/// declared, fed the same reports as the peers.
struct BeaconwatchRooms: RoomDecider {
    var name: String
    var table: Devices
    let scanners: [String]
    let tags: [String]
    /// What a scanner is known by when another hears it: ESPresense's `node:<id>`, else its
    /// `Scanner.<id>.address` (a Theengs gateway reports the address).
    let scannerTags: [(tag: String, address: BluetoothAddress?)]
    var actions: [Devices.Action] = []
    /// Shows the position filter's most probable room once it holds `Rooms.minConfidence`, with no
    /// contest and no hold (a probe: how much of the hand-over is the filter's own lag).
    var filterOnly = false
    var probed: [Int?] = []
    /// Each storey's Area (``Floor/area(storey:)``): its storey.
    let storeyOfArea: [UUID: Int]
    /// Every tag's reports this many dB quieter than the simulation's (a tag model that hears
    /// less than the phone that trained the rooms: issue 59).
    var quieter = 0.0

    /// `nodes`: the reports are ESPresense nodes' (filtered estimates), else every advertisement
    /// (a Theengs gateway's). `extra`: more ini lines (the defaults without).
    init(
        name: String = "beaconwatch", floor: Floor, tags: Int, nodes: Bool, phones: Set<Int> = [], extra: String = "",
        rule: RoomRule? = nil, plan: Bool = false, position: PositionSettings? = nil, trainer: Bool = false
    ) throws {
        self.name = name
        let source = nodes ? "Scanners.espresense = espresense/devices/+/+" : "Scanners.theengs = home/+/BTtoMQTT/#"
        let addresses = floor.scanners.indices.map { BluetoothAddress(value: 0x0200_0000_0000 | UInt64($0 + 1)) }
        let addressLines =
            nodes
            ? "" : zip(floor.scanners, addresses).map { "Scanner.\($0.id).address = \($1)\n" }.joined()
        // A trainer is one more tag, after the scored ones (``train(floor:simulation:tags:nodes:cadence:)``).
        let text = floor.ini(
            tags: trainer ? tags + 1 : tags,
            extra: "MQTT.host = 127.0.0.1\n\(source)\nFleet.maxDevices = \(tags + 10)\n\(addressLines)\(extra)\n",
            phones: phones, plan: plan)
        var configuration = try Configuration.load(Array(text.utf8), path: "rooms.ini").get()
        if let rule { configuration.scanners?.roomRule = rule }
        if let position { configuration.scanners?.positionTuning = position }
        table = Devices(
            configuration: configuration, identity: MonitorIdentity(session: "s", address: "a", userid: "bench"))
        scanners = floor.scanners.map(\.id)
        scannerTags = zip(floor.scanners, addresses).map { nodes ? ("node:\($0.id)", nil) : ($1.description, $1) }
        self.tags = (1...max(tags, 1)).map { "t\($0)" }
        storeyOfArea = Dictionary(
            uniqueKeysWithValues: (0..<floor.storeys).compactMap { storey in
                UUID(uuidString: Floor.area(storey: storey)).map { ($0, storey) }
            })
        table.start(at: Self.time(0), into: &actions)
        actions.removeAll()
    }

    static func time(_ seconds: Double) -> Timestamp {
        Timestamp(microseconds: 1_700_000_000_000_000 + Int64((seconds * 1_000_000).rounded()))
    }

    mutating func report(tag: Int, scanner: Int, rssi: Double, at time: Double) {
        table.handle(
            .report(ScannerReport(scanner: scanners[scanner], tag: tags[tag], rssi: rssi - quieter, power: -59)),
            at: Self.time(time), into: &actions)
        actions.removeAll(keepingCapacity: true)
    }

    mutating func scannerHeard(transmitter: Int, receiver: Int, rssi: Double, at time: Double) {
        let known = scannerTags[transmitter]
        table.handle(
            .report(
                ScannerReport(
                    scanner: scanners[receiver], tag: known.tag, rssi: rssi, power: -59, address: known.address)),
            at: Self.time(time), into: &actions)
        actions.removeAll(keepingCapacity: true)
    }

    mutating func rooms(at time: Double, into rooms: inout [Int?]) {
        table.advance(to: Self.time(time), into: &actions)
        actions.removeAll(keepingCapacity: true)
        for (index, id) in tags.enumerated() {
            let monitor = table.engine(id)?.monitor
            if filterOnly, let monitor {
                if probed.count != tags.count { probed = Array(repeating: nil, count: tags.count) }
                if let top = monitor.roomProbabilities.first, let region = top.room, top.probability >= 0.6,
                    case .zone(_, let major) = region
                {
                    probed[index] = Int(major) - 1
                } else if monitor.currentArea == nil {
                    probed[index] = nil
                }
                rooms[index] = probed[index]
                continue
            }
            guard let room = monitor?.presentRoom, case .zone(_, let major) = room else {
                // In the building but in no room (a floor plan's honest "not sure"): never the
                // right room, never away.
                rooms[index] = monitor?.currentArea != nil ? -1 : nil
                continue
            }
            rooms[index] = Int(major) - 1
        }
    }

    /// The floor of the tag's Area, in a room or not.
    func floors(into floors: inout [Int?], rooms: [Int?], storeys: [Int]) {
        for (index, id) in tags.enumerated() {
            guard case .area(let uuid)? = table.engine(id)?.monitor.currentArea else {
                floors[index] = nil
                continue
            }
            floors[index] = storeyOfArea[uuid]
        }
    }
}
