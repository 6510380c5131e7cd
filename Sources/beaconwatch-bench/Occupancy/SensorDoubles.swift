import BeaconCore
import Foundation

/// One message of a presence sensor as its firmware publishes it (docs/presence-sensors.md §6).
struct SensorEvent {
    var time: Double
    var sensor: String
    var payload: [UInt8]
    /// What it says: 1 or 0 (motion or presence), a count.
    var reading: Int
}

/// What a room's sensors can see in one step of the benchmark: how many people are in it, whether
/// anyone walks, and whether a seated one moved enough for a PIR.
struct RoomView {
    var people = 0
    var walking = false
    var fidgeted = false

    /// Someone is there and nobody walks (a mmWave may lose them).
    var allStill: Bool { people > 0 && !walking }
}

/// The kinds of sensor the benchmark puts in rooms, each with its real faults
/// (docs/presence-sensors.md §4).
enum SensorModel: String {
    /// An Aqara RTCGQ11LM PIR through zigbee2mqtt (`occupancy_with_timeout`): `occupancy: true`
    /// on a detection, blind for 60 s after each, `false` from zigbee2mqtt's own timer 90 s after
    /// the last; an hourly check-in repeats the cached state.
    case pir
    /// An LD2450 on ESPHome, `has_target` (`ON`/`OFF`, retained, on change only): a ghost target
    /// for 36 to 120 s after the room empties (esphome/issues#7006), a still person lost now and
    /// then for a few seconds.
    case presence
    /// The same module's `target_count` (multi-target mode: the last target lingers about 36 s),
    /// at most 3, a still person lost now and then, now and then one off for a few seconds.
    case count

    var kind: String {
        switch self {
        case .pir: "motion"
        case .presence: "presence"
        case .count: "count"
        }
    }

    /// Its topic, as its firmware names it.
    func topic(_ id: String) -> String {
        switch self {
        case .pir: "zigbee2mqtt/\(id)"
        case .presence: "\(id)/binary_sensor/has_target/state"
        case .count: "\(id)/sensor/target_count/state"
        }
    }
}

/// A sensor's firmware and hardware, stepped through the day: what it publishes.
struct SensorDouble {
    let id: String
    let model: SensorModel
    let room: Int
    /// Mean seconds between a mmWave losing a still person, and between a count one off.
    var dropMean = 1800.0
    var errorMean = 900.0

    // The PIR's.
    private var blindUntil = -Double.infinity
    private var timeoutAt: Double?
    private var cached = false
    private var checkIn: Double
    // The mmWave's.
    private var wasOccupied = false
    private var ghostUntil: Double?
    private var dropUntil: Double?
    private var errorUntil: Double?
    private var errorDelta = 0
    private var targetSince: Double?
    private var lostSince: Double?
    private var published: String?

    init(id: String, model: SensorModel, room: Int, random: inout SeededGenerator) {
        (self.id, self.model, self.room) = (id, model, room)
        checkIn = Double.random(in: 0..<3600, using: &random)
    }

    /// Steps the sensor over `(time - step, time]` with `view` of its room; its messages go to
    /// `events` (not in order: sort them).
    mutating func step(
        at time: Double, step: Double, view: RoomView, random: inout SeededGenerator, into events: inout [SensorEvent]
    ) {
        switch model {
        case .pir: pir(at: time, step: step, view: view, random: &random, into: &events)
        case .presence, .count: radar(at: time, step: step, view: view, random: &random, into: &events)
        }
    }

    private mutating func pir(
        at time: Double, step: Double, view: RoomView, random: inout SeededGenerator, into events: inout [SensorEvent]
    ) {
        if let at = timeoutAt, at <= time {
            cached = false
            timeoutAt = nil
            events.append(SensorEvent(time: at, sensor: id, payload: zigbee2mqtt(false, random: &random), reading: 0))
        }
        // Someone walking is seen within a second or so (90 % a second); a seated one's movement
        // at once; nothing while blind.
        let seen = view.fidgeted || view.walking && Double.random(in: 0..<1, using: &random) < 1 - pow(0.1, step)
        if seen, time >= blindUntil {
            let at = time + Double.random(in: 0.05...0.3, using: &random)
            blindUntil = time + 60
            timeoutAt = at + 90
            cached = true
            events.append(SensorEvent(time: at, sensor: id, payload: zigbee2mqtt(true, random: &random), reading: 1))
        }
        if time >= checkIn {
            // The hourly check-in (battery, voltage…): zigbee2mqtt sends the whole cached state.
            checkIn += Double.random(in: 3300...3900, using: &random)
            events.append(
                SensorEvent(
                    time: time, sensor: id, payload: zigbee2mqtt(cached, random: &random), reading: cached ? 1 : 0))
        }
    }

    /// A zigbee2mqtt 2.x message of the Aqara (keys sorted, docs/presence-sensors.md §6).
    private func zigbee2mqtt(_ occupancy: Bool, random: inout SeededGenerator) -> [UInt8] {
        let illuminance = Int.random(in: 40...60, using: &random)
        let link = Int.random(in: 70...110, using: &random)
        return Array(
            (#"{"battery":100,"device_temperature":24,"illuminance":\#(illuminance),"linkquality":\#(link),"#
                + #""occupancy":\#(occupancy),"power_outage_count":3,"voltage":3005}"#).utf8)
    }

    private mutating func radar(
        at time: Double, step: Double, view: RoomView, random: inout SeededGenerator, into events: inout [SensorEvent]
    ) {
        var targets = view.people
        if view.people > 0 {
            ghostUntil = nil
            wasOccupied = true
            if let until = dropUntil, time >= until || !view.allStill { dropUntil = nil }
            if dropUntil == nil, view.allStill, Double.random(in: 0..<1, using: &random) < step / dropMean {
                dropUntil = time + Double.random(in: 5...40, using: &random)
            }
            if dropUntil != nil { targets -= 1 }
        } else {
            dropUntil = nil
            if wasOccupied {
                wasOccupied = false
                // The module keeps the last target: ~36 s in multi-target mode (counting), up to
                // 120 s in single-target mode; `has_target` goes OFF 5 s after it is gone.
                ghostUntil =
                    time
                    + (model == .count
                        ? Double.random(in: 30...42, using: &random) : Double.random(in: 31...115, using: &random))
            }
            if let until = ghostUntil, time < until { targets = 1 } else { ghostUntil = nil }
        }
        let text: String
        let reading: Int
        if model == .count {
            if let until = errorUntil, time >= until { errorUntil = nil }
            if errorUntil == nil, Double.random(in: 0..<1, using: &random) < step / errorMean {
                errorUntil = time + Double.random(in: 2...10, using: &random)
                errorDelta = targets == 0 || Bool.random(using: &random) ? 1 : -1
            }
            if errorUntil != nil { targets += errorDelta }
            reading = min(3, max(0, targets))
            text = "\(reading)"
        } else {
            // `has_target`: ON after a 1 s settle, OFF after presence_timeout (5 s) with no target.
            if targets > 0 {
                lostSince = nil
                targetSince = targetSince ?? time
            } else {
                targetSince = nil
                lostSince = lostSince ?? time
            }
            if let since = targetSince, time - since >= 1 {
                (text, reading) = ("ON", 1)
            } else if let since = lostSince, time - since >= 5 || published == nil {
                (text, reading) = ("OFF", 0)
            } else {
                return
            }
        }
        guard text != published else { return }
        published = text
        events.append(
            SensorEvent(
                time: time + Double.random(in: 0.01...0.1, using: &random), sensor: id, payload: Array(text.utf8),
                reading: reading))
    }
}
