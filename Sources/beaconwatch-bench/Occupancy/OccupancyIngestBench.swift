import ArgumentParser
import BeaconConfiguration
import BeaconCore
import Fleet
import Foundation
import RegionMonitor
import Simulation

/// Many tags and sensors in one daemon (issue 60: 1,000 sensors and 10,000 tags "without falling
/// behind"): the device table's rate against a building's arrival rate.
struct OccupancyIngestBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "occupancy-ingest",
        abstract: "Tags and presence sensors of a large building through one device table: its rate against theirs.",
        discussion: """
            A building of ten floors of 50 rooms (one Area a floor, a Zone and a scanner a room), two \
            sensors a room: a PIR (zigbee2mqtt JSON) and, in turns, an mmWave's `has_target` (ON/OFF) \
            or its `target_count`. Each tag is in a room and is reported `--reports` times a second, \
            spread over the second: two reports in three by its room's scanner, one by a neighbour's, \
            weaker; one tag in 300 moves to the next room each second. Each sensor sends a message \
            every 3 s (its room's state: someone in it or not). The reports and messages go to the \
            device table in time order with the occupancy on, as `run` and `replay` take them (no \
            broker: `rooms-ingest` measures the broker's part), and the timers every second. The first \
            10 simulated seconds (every tag placed) are not timed. The rate is every message of the \
            timed seconds over their wall time; the ratio is that rate over the building's (what it \
            sends in a second); the slowest second is the longest wall time any one simulated second \
            took (under 1 s: never behind).
            """
    )

    @Option(help: "Tags.")
    var tags = 10_000

    @Option(help: "Sensors (two a room).")
    var sensors = 1_000

    @Option(help: "Reports of each tag a second.")
    var reports = 1

    @Option(help: "Seconds between two messages of a sensor.")
    var period = 3.0

    @Option(help: "Simulated seconds timed.")
    var seconds = 30

    @Flag(help: "Without the occupancy (no Occupancy or Sensor lines; the sensors' messages still sent): its cost.")
    var withoutOccupancy = false

    static func area(_ floor: Int) -> String { "F1006000-0000-4000-8000-" + String(format: "%012d", floor + 1) }

    func validate() throws {
        guard tags >= 1, sensors >= 2, reports >= 1, seconds >= 1 else {
            throw ValidationError("--tags, --reports and --seconds take at least 1, --sensors at least 2")
        }
        guard period >= 0.1 else { throw ValidationError("--period takes at least 0.1 s, not \(period)") }
    }

    func run() throws {
        let roomCount = sensors / 2
        let tagCount = tags
        var text = "Monitor.source = none\nMonitor.userid = bench\nFleet.maxDevices = \(tagCount + 10)\n"
        if !withoutOccupancy { text += "Occupancy.count = zones\n" }
        for room in 0..<roomCount {
            let area = Self.area(room / 50)
            text +=
                "LocationBaseBeacon.\(room + 1) = \(area),\(room + 1),1\nLocationScanner.\(room + 1) = s\(room + 1)\n"
            text += "LocationZoneName.\(area):\(room + 1) = Room \(room + 1)\n"
            guard !withoutOccupancy else { continue }
            text += "Sensor.pir-\(room + 1) = zigbee2mqtt/pir-\(room + 1), motion, \(area):\(room + 1)\n"
            text +=
                room % 2 == 0
                ? "Sensor.radar-\(room + 1) = radar-\(room + 1)/binary_sensor/has_target/state, presence, \(area):\(room + 1)\n"
                : "Sensor.radar-\(room + 1) = radar-\(room + 1)/sensor/target_count/state, count, \(area):\(room + 1)\n"
        }
        for tag in 1...tagCount { text += "Tag.t\(tag) = ibeacon:\(Floor.tagUUID):1:\(tag)\n" }
        let configuration = try Configuration.load(Array(text.utf8), path: "building.ini").get()
        var table = Devices(
            configuration: configuration, identity: MonitorIdentity(session: "s", address: "a", userid: "bench"))
        var actions: [Devices.Action] = []
        table.start(at: BeaconwatchRooms.time(0), into: &actions)
        actions.removeAll()

        var random = SeededGenerator(seed: 60)
        var roomOf = (0..<tagCount).map { _ in Int.random(in: 0..<roomCount, using: &random) }
        var people = Array(repeating: 0, count: roomCount)
        for room in roomOf { people[room] += 1 }
        let tagIDs = (1...tagCount).map { "t\($0)" }
        let scannerIDs = (1...roomCount).map { "s\($0)" }
        let sensorIDs = (0..<roomCount).flatMap { ["pir-\($0 + 1)", "radar-\($0 + 1)"] }
        let phase = sensorIDs.map { _ in Double.random(in: 0..<period, using: &random) }
        var nextMessage = phase
        var outputs = 0
        var messages = 0

        /// One simulated second: every tag's reports and the sensors' messages due, in time order.
        func second(_ start: Int) {
            var batch: [(time: Double, what: Int)] = []  // what ≥ 0: a tag's report, < 0: sensor -1 - what
            batch.reserveCapacity(tagCount * reports + sensorIDs.count)
            let base = Double(start)
            for round in 0..<reports {
                for tag in 0..<tagCount {
                    batch.append((base + (Double(round * tagCount + tag) + 0.5) / Double(tagCount * reports), tag))
                }
            }
            for sensor in sensorIDs.indices where nextMessage[sensor] < base + 1 {
                batch.append((max(base, nextMessage[sensor]), -1 - sensor))
                nextMessage[sensor] += period
            }
            batch.sort { $0.time < $1.time }
            for (time, what) in batch {
                let at = BeaconwatchRooms.time(time)
                if what >= 0 {
                    let room = roomOf[what]
                    let own = Int.random(in: 0..<3, using: &random) < 2
                    let scanner = own ? room : (room + (Bool.random(using: &random) ? 1 : roomCount - 1)) % roomCount
                    let rssi = (own ? -60.0 : -78.0) + Double.random(in: -3...3, using: &random).rounded()
                    table.handle(
                        .report(ScannerReport(scanner: scannerIDs[scanner], tag: tagIDs[what], rssi: rssi, power: -59)),
                        at: at, into: &actions)
                } else {
                    let sensor = -1 - what
                    let room = sensor / 2
                    let present = people[room] > 0
                    let payload: String
                    if sensor % 2 == 0 {
                        payload =
                            #"{"battery":100,"device_temperature":24,"illuminance":52,"linkquality":87,"occupancy":\#(present),"power_outage_count":3,"voltage":3005}"#
                    } else if room % 2 == 0 {
                        payload = present ? "ON" : "OFF"
                    } else {
                        payload = "\(min(3, people[room]))"
                    }
                    table.handle(
                        .daemon(.sensor(SensorMessage(sensor: sensorIDs[sensor], payload: Array(payload.utf8)))),
                        at: at, into: &actions)
                }
                messages += 1
                for action in actions {
                    if case .engine(_, .output(.occupancy)) = action { outputs += 1 }
                }
                actions.removeAll(keepingCapacity: true)
            }
            table.advance(to: BeaconwatchRooms.time(base + 1), into: &actions)
            actions.removeAll(keepingCapacity: true)
            // One tag in 300 goes to the next room.
            for tag in 0..<tagCount where Int.random(in: 0..<300, using: &random) == 0 {
                people[roomOf[tag]] -= 1
                roomOf[tag] = (roomOf[tag] + 1) % roomCount
                people[roomOf[tag]] += 1
            }
        }

        let before = heapInUse()
        for start in 0..<10 { second(start) }
        let memory = heapInUse() - before
        let clock = ContinuousClock()
        let (warmMessages, warmOutputs) = (messages, outputs)
        var slowest = 0.0
        let started = clock.now
        for start in 10..<(10 + seconds) {
            let began = clock.now
            second(start)
            slowest = max(slowest, (clock.now - began).inSeconds)
        }
        let wall = (clock.now - started).inSeconds
        let timed = messages - warmMessages
        let rate = Double(timed) / wall
        let arrival = Double(timed) / Double(seconds)
        let occupied = table.own.occupancy?.current.filter(\.occupied).count ?? 0
        print(
            "occupancy-ingest: \(withoutOccupancy ? "without the occupancy: " : "")\(tagCount) tags (\(reports) report\(reports == 1 ? "" : "s") a second each) and "
                + "\(sensorIDs.count) sensors (a message every \(format(period, 0)) s) in \(roomCount) rooms: "
                + "\(format(rate / 1e3, 1))k messages/s on one core against \(format(arrival / 1e3, 1))k/s arriving: "
                + "ratio \(format(rate / arrival, 1)); the slowest simulated second took \(format(slowest * 1e3, 0)) ms"
        )
        print(
            "occupancy-ingest: \(format(Double(outputs - warmOutputs) / Double(seconds), 0)) occupancy outputs "
                + "a second; \(occupied) of \(roomCount) rooms occupied at the end; heap "
                + "\(format(Double(memory) / 1_048_576, 0)) MiB after the first 10 s "
                + "(\(format(Double(memory) / Double(tagCount) / 1024, 1)) KiB a tag)")
    }
}
