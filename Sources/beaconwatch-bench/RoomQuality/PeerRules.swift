import Foundation

/// A room decision for many tags at once, fed scanner reports in time order (the room-quality
/// benchmark, docs/performance.md "Rooms"). Rooms are the floor's room indexes; `nil` is away.
protocol RoomDecider {
    var name: String { get }
    /// Tag `tag` heard by scanner `scanner` at `rssi` dBm (as its receiver reads it), at `time` s.
    mutating func report(tag: Int, scanner: Int, rssi: Double, at time: Double)
    /// Each tag's room at `time`, after every report up to it; `time` never goes back.
    mutating func rooms(at time: Double, into rooms: inout [Int?])
    /// Scanner `receiver` heard scanner `transmitter` advertise at `rssi` dBm (peers ignore it).
    mutating func scannerHeard(transmitter: Int, receiver: Int, rssi: Double, at time: Double)
    /// Each tag's floor (storey) after ``rooms(at:into:)`` gave `rooms`, `nil` for none: the floor
    /// of its room (`storeys`: each room's) unless the system says the floor apart from the room.
    func floors(into floors: inout [Int?], rooms: [Int?], storeys: [Int])
}

extension RoomDecider {
    mutating func scannerHeard(transmitter: Int, receiver: Int, rssi: Double, at time: Double) {}

    func floors(into floors: inout [Int?], rooms: [Int?], storeys: [Int]) {
        for (tag, room) in rooms.enumerated() {
            floors[tag] = room.flatMap { storeys.indices.contains($0) ? storeys[$0] : nil }
        }
    }
}

/// Distances as the peers compute them from RSSI: `10^((power - rssi) / (10 n))`.
func metres(_ rssi: Double, power: Double = -59, exponent: Double) -> Double {
    pow(10, (power - rssi) / (10 * exponent))
}

/// The nearest scanner on the latest reports: each scanner's latest report of the tag that is at
/// most `fresh` seconds old, the strongest wins at once; away when none is left.
struct NearestLatest: RoomDecider {
    let name = "nearest, latest report"
    let roomOf: [Int]
    var fresh = 10.0
    /// Per tag, per scanner: (rssi, time).
    var latest: [[(rssi: Double, time: Double)]]

    init(tags: Int, roomOf: [Int]) {
        self.roomOf = roomOf
        latest = Array(repeating: Array(repeating: (-.infinity, -.infinity), count: roomOf.count), count: tags)
    }

    mutating func report(tag: Int, scanner: Int, rssi: Double, at time: Double) { latest[tag][scanner] = (rssi, time) }

    mutating func rooms(at time: Double, into rooms: inout [Int?]) {
        for tag in latest.indices {
            var best: (room: Int, rssi: Double)?
            for (scanner, entry) in latest[tag].enumerated() where entry.time >= time - fresh {
                if best.map({ entry.rssi > $0.rssi }) ?? true { best = (roomOf[scanner], entry.rssi) }
            }
            rooms[tag] = best?.room
        }
    }
}

/// Home Assistant's `mqtt_room` sensor (homeassistant/components/mqtt_room/sensor.py, read in
/// docs/rooms.md "The peers"): a report moves the sensor when it is of the same room, or closer
/// than the last accepted distance, or `timeout` (5 s) has passed since the last accepted one;
/// `away_timeout` (120 s, as ESPresense's docs configure it) sets `not_home`, checked when Home
/// Assistant polls the sensor (every 30 s). Distances as an ESPresense node computes them
/// (absorption 2.7).
struct MQTTRoom: RoomDecider {
    let name = "HA mqtt_room"
    let roomOf: [Int]
    var timeout = 5.0
    var awayTimeout = 120.0
    var poll = 30.0
    var state: [(room: Int?, distance: Double?, updated: Double)]
    var nextPoll = 0.0

    init(tags: Int, roomOf: [Int]) {
        self.roomOf = roomOf
        state = Array(repeating: (nil, nil, -.infinity), count: tags)
    }

    mutating func report(tag: Int, scanner: Int, rssi: Double, at time: Double) {
        let distance = metres(rssi, exponent: 2.7)
        let room = roomOf[scanner]
        let current = state[tag]
        guard let last = current.distance, current.room != nil else {
            state[tag] = (room, distance, time)
            return
        }
        if room == current.room || distance < last || time - current.updated >= timeout {
            state[tag] = (room, distance, time)
        }
    }

    mutating func rooms(at time: Double, into rooms: inout [Int?]) {
        while nextPoll <= time {
            for tag in state.indices where nextPoll - state[tag].updated > awayTimeout { state[tag].room = nil }
            nextPoll += poll
        }
        for tag in state.indices { rooms[tag] = state[tag].room }
    }
}

/// Bermuda's area rule (agittins/bermuda, `custom_components/bermuda/coordinator.py`
/// `_refresh_area_by_min_distance` and `bermuda_device_scanner.py` `calculate_data`, read in
/// docs/rooms.md "The peers"), every 1.05 s update cycle: each scanner's latest advertisement gives
/// a raw distance (reference power the tag's, attenuation 3); the smoothed distance is the mean of
/// the running minimum of the last 20 cycles (a reading implying a retreat faster than 3 m/s is
/// ignored), never above the raw one, and none after 30 s without an advertisement. A challenger
/// closer than the present scanner wins at once when 30 % closer, or when 15 % closer and its
/// worst of the last 5 cycles beats the present one's best (with more than 3 cycles of history);
/// an advertisement older than 10 s cannot win; the same area's newer, closer advertisement takes
/// over. Away (its device tracker) 30 s after the last advertisement.
struct Bermuda: RoomDecider {
    let name = "Bermuda"
    let roomOf: [Int]
    let cycle = 1.05
    let smoothing = 20
    let maxVelocity = 3.0
    let distanceTimeout = 30.0
    let maxAdAge = 10.0
    let awayTimeout = 30.0

    struct Entry {
        var latest: (rssi: Double, time: Double)?
        var stamp = -Double.infinity
        var raw: Double?
        var history: [(distance: Double, time: Double)] = []
        var byInterval: [Double] = []
        var distance: Double?
        var pending = false
    }

    var entries: [[Entry]]
    var area: [Int?]
    var lastSeen: [Double]
    var nextCycle = 0.0

    init(tags: Int, roomOf: [Int]) {
        self.roomOf = roomOf
        entries = Array(repeating: Array(repeating: Entry(), count: roomOf.count), count: tags)
        area = Array(repeating: nil, count: tags)
        lastSeen = Array(repeating: -.infinity, count: tags)
    }

    mutating func report(tag: Int, scanner: Int, rssi: Double, at time: Double) {
        entries[tag][scanner].latest = (rssi, time)
        entries[tag][scanner].pending = true
        lastSeen[tag] = time
    }

    mutating func rooms(at time: Double, into rooms: inout [Int?]) {
        while nextCycle <= time {
            for tag in entries.indices { update(tag, at: nextCycle) }
            nextCycle += cycle
        }
        for tag in area.indices { rooms[tag] = time - lastSeen[tag] > awayTimeout ? nil : area[tag].map { roomOf[$0] } }
    }

    mutating func update(_ tag: Int, at now: Double) {
        for scanner in entries[tag].indices { calculate(&entries[tag][scanner], at: now) }
        var incumbent = area[tag]
        for challenger in entries[tag].indices where challenger != incumbent {
            let entry = entries[tag][challenger]
            guard entry.stamp >= now - maxAdAge else { continue }
            guard let current = incumbent, let incumbentDistance = entries[tag][current].distance else {
                if entry.distance != nil { incumbent = challenger }
                continue
            }
            guard let distance = entry.distance, distance <= 20, incumbentDistance >= distance else { continue }
            let old = entries[tag][current]
            let difference = abs(distance - incumbentDistance) / ((distance + incumbentDistance) / 2)
            if roomOf[current] == roomOf[challenger], now - old.stamp > now - entry.stamp + 1 {
                incumbent = challenger
                continue
            }
            if entry.byInterval.count > 3, let best = old.byInterval.prefix(5).min(),
                let worst = entry.byInterval.prefix(5).max(), worst < best, difference > 0.15
            {
                incumbent = challenger
                continue
            }
            if difference < 0.30 { continue }
            incumbent = challenger
        }
        if let current = incumbent, entries[tag][current].distance == nil { incumbent = nil }
        area[tag] = incumbent
    }

    func calculate(_ entry: inout Entry, at now: Double) {
        var fresh = false
        if entry.pending, let latest = entry.latest {
            entry.pending = false
            fresh = true
            entry.stamp = latest.time
            let raw = metres(latest.rssi, exponent: 3)
            entry.raw = raw
            entry.history.insert((raw, latest.time), at: 0)
            if entry.history.count > 100 { entry.history.removeLast() }
        }
        guard let raw = entry.raw else { return }
        if entry.distance == nil && fresh {
            entry.distance = raw
            entry.byInterval = [raw]
            return
        }
        if !fresh && entry.stamp < now - distanceTimeout {
            entry.distance = nil
            entry.byInterval.removeAll()
            return
        }
        // The peak speed of retreat the newest reading implies against the earlier ones.
        var velocity = 0.0
        if entry.history.count > 1 {
            let newest = entry.history[0]
            let delta = newest.time - entry.history[1].time
            if delta > 0 { velocity = (newest.distance - entry.history[1].distance) / delta }
            if velocity >= 0 {
                for old in entry.history.dropFirst(2) {
                    let delta = newest.time - old.time
                    guard delta > 0 else { continue }
                    velocity = max(velocity, (newest.distance - old.distance) / delta)
                }
            }
        }
        entry.byInterval.insert(velocity > maxVelocity ? (entry.byInterval.first ?? raw) : raw, at: 0)
        if entry.byInterval.count > smoothing { entry.byInterval.removeLast() }
        var total = 0.0
        var low = raw
        for distance in entry.byInterval {
            low = min(low, distance)
            total += low
        }
        entry.distance = min(total / Double(entry.byInterval.count), raw)
    }
}

/// What an ESPresense node publishes of what it hears (docs/espresense.md): the median of the
/// readings of the last 15 s (`AdaptivePercentileRSSI`, at most 200 of them), reported when the
/// distance it gives moved by 0.5 m (`skip_dist`) or 5 s (`skip_ms`) after the last report.
/// ESPresense nodes' reports of the advertisements they hear (docs/espresense.md): the median of
/// the last 15 s, as a node filters, sent on one of two schedules.
struct NodeReports {
    /// When a node sends a report.
    enum Cadence: String {
        /// Each scanner–tag pair on its own clock: every 5 s, or at once on 0.5 m of movement
        /// (the benchmark's first model, kept as a row).
        case pairs
        /// As the firmware does (`BleFingerprint::report()`, `setId()`, include/defaults.h in
        /// ESPresense/ESPresense): at the first advertisement heard after each multiple of
        /// `skip_ms` (5 s) on the node's NTP clock — the first report of a device offset by its
        /// djb2 time slot of 64 — and earlier only within `skip_ms / max(2, 10 - log2(…))` before
        /// that boundary when the distance moved by `skip_distance` (0.5 m); nothing beyond
        /// `max_distance` (16 m). Every node hears the same advertisement, so a still tag's reports
        /// from all nodes come in one burst every 5 s, a few tens of milliseconds apart.
        case firmware
    }

    struct Pair {
        var readings: [(time: Double, rssi: Double)] = []
        var lastReport = -Double.infinity
        var lastDistance: Double?
        /// Firmware: the next boundary (ms on the node's clock), `nil` before the first sighting.
        var nextReportMs: Int64?
    }

    let cadence: Cadence
    var pairs: [[Pair]]
    /// Each node's NTP clock offset (ms), and its reports' delivery delay comes on top.
    let clockOffsetMs: [Int64]

    static let skipMs: Int64 = 5000
    static let skipDistance = 0.5
    static let maxDivisor: Int64 = 10
    static let maxDistance = 16.0

    init(tags: Int, scanners: Int, cadence: Cadence = .pairs) {
        self.cadence = cadence
        pairs = Array(repeating: Array(repeating: Pair(), count: scanners), count: tags)
        // NTP keeps the nodes within a few milliseconds of each other.
        clockOffsetMs = (0..<scanners).map { Int64(($0 &* 7919) % 11) - 5 }
    }

    /// The firmware's time slot of a device id (`calculateTimeSlot()`): djb2 mod 64.
    static func timeSlot(_ id: String) -> Int64 {
        var hash: UInt32 = 5381
        for byte in id.utf8 { hash = (hash << 5) &+ hash &+ UInt32(byte) }
        return Int64(hash % 64)
    }

    /// The node's report after a reading, if it sends one: its filtered RSSI and when it reaches
    /// the broker (the firmware's reports of one advertisement reach it up to 30 ms apart).
    mutating func hear(tag: Int, scanner: Int, rssi: Double, at time: Double) -> (rssi: Double, time: Double)? {
        var pair = pairs[tag][scanner]
        defer { pairs[tag][scanner] = pair }
        pair.readings.append((time, rssi))
        let oldest = pair.readings.firstIndex { $0.time >= time - 15 } ?? pair.readings.count
        if oldest > 0 || pair.readings.count > 200 {
            pair.readings.removeFirst(max(oldest, pair.readings.count - 200))
        }
        let sorted = pair.readings.map(\.rssi).sorted()
        let middle = sorted.count / 2
        let median = sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        let distance = metres(median, exponent: 2.7)
        let filtered = (median * 100).rounded() / 100
        switch cadence {
        case .pairs:
            if let last = pair.lastDistance, abs(distance - last) < 0.5, time - pair.lastReport < 5 { return nil }
            pair.lastReport = time
            pair.lastDistance = distance
            return (filtered, time)
        case .firmware:
            let now = Int64((time * 1000).rounded()) + clockOffsetMs[scanner]
            if pair.nextReportMs == nil {
                // setId(): the current interval's start plus the device's slot.
                pair.nextReportMs = now / Self.skipMs * Self.skipMs + Self.timeSlot("t\(tag)") * (Self.skipMs / 64)
            }
            guard distance <= Self.maxDistance, let next = pair.nextReportMs else { return nil }
            if now < next {
                let movement = abs(distance - (pair.lastDistance ?? 0))
                guard movement >= Self.skipDistance else { return nil }
                let steps = min(movement / Self.skipDistance, 60)
                let roundedLog2 = Int64(log2(pow(2, steps).rounded()))
                let early = Self.skipMs / max(2, min(Self.maxDivisor, Self.maxDivisor - roundedLog2))
                guard now >= next - early else { return nil }
            }
            pair.nextReportMs = now + (Self.skipMs - now % Self.skipMs) % Self.skipMs
            pair.lastDistance = distance
            pair.lastReport = time
            // Delivery: Wi-Fi and the broker spread one advertisement's reports over ~30 ms.
            let delay = Double((tag &* 131 &+ scanner &* 71 &+ Int(now / Self.skipMs) &* 17) % 31) / 1000
            return (filtered, time + delay)
        }
    }
}
