/// A rule the engine does not have, modelled in the benchmark to measure it (docs/performance.md,
/// "Occupancy"): docs/behaviour.md §23's fusion, except that what a sensor said before the last
/// counted device left a room is taken as said of the devices, and counts for nothing once they
/// are gone: a PIR's detections before, a presence sensor's "present" that began before, a count
/// that last rose before. What it says after they left (a new detection, "present" again after
/// "absent", a count rising) counts as in §23. Fed the devices in each room as the engine counts
/// them (fusion's announcements) and the sensors' messages; stepped each second.
struct TagsExplainSensors: OccupancyAnnouncer {
    let name: String
    private let sensors: [(id: String, model: SensorModel, room: Int, hold: Double)]
    private let index: [String: Int]
    /// Per sensor: what it says, and since when (a PIR: its last detection; a count: its last rise).
    private var reading: [Int]
    private var since: [Double]
    /// Per room: the counted devices in it, when the last one left, since when nothing has said
    /// anyone is there.
    private var devices: [Int]
    private var left: [Double]
    private var announced: Announcements
    var shown: [RoomShown?] { announced.shown }
    var flips: [[(time: Double, occupied: Bool)]] { announced.flips }

    init(
        name: String, rooms: Int, sensors: [(id: String, model: SensorModel, room: Int)], hold: Double,
        vacantAfter: Double
    ) {
        self.name = name
        self.sensors = sensors.map { ($0.id, $0.model, $0.room, hold) }
        index = Dictionary(uniqueKeysWithValues: sensors.enumerated().map { ($1.id, $0) })
        reading = Array(repeating: 0, count: sensors.count)
        since = Array(repeating: -.infinity, count: sensors.count)
        devices = Array(repeating: 0, count: rooms)
        left = Array(repeating: -.infinity, count: rooms)
        announced = Announcements(rooms: rooms, vacantAfter: vacantAfter)
    }

    mutating func sensor(_ event: SensorEvent) {
        guard let sensor = index[event.sensor] else { return }
        let before = reading[sensor]
        reading[sensor] = event.reading
        switch sensors[sensor].model {
        case .pir: if event.reading > 0 { since[sensor] = event.time }
        case .presence, .count: if event.reading > before { since[sensor] = event.time }
        }
    }

    /// Each room's counted devices now (the engine's), and the rule at `time`.
    mutating func step(at time: Double, devices now: [Int]) {
        for room in devices.indices {
            if devices[room] > 0, now[room] == 0 { left[room] = time }
            devices[room] = now[room]
        }
        var positive = devices.map { $0 > 0 }
        var count = devices
        for (sensor, definition) in sensors.enumerated() {
            let room = definition.room
            // Said before the devices left: theirs.
            guard devices[room] > 0 || since[sensor] > left[room] else { continue }
            switch definition.model {
            case .pir:
                guard time < since[sensor] + definition.hold else { continue }
                positive[room] = true
                count[room] = max(count[room], 1)
            case .presence, .count:
                guard reading[sensor] > 0 else { continue }
                positive[room] = true
                count[room] = max(count[room], reading[sensor])
            }
        }
        announced.step(at: time, positive: positive, count: count, devices: devices)
    }
}
