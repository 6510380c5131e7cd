import BeaconCore
import JSONText

/// What a presence sensor says (docs/behaviour.md §23): `motion` (a PIR: true when it sees
/// movement, held for ``SensorDefinition/hold``), `presence` (mmWave and the like: true or false
/// while someone is there, still or not), `count` (a number of people) or `door` (a door
/// contact: true when the door is closed, as zigbee2mqtt's `contact`; it never says anyone is
/// there, it keeps a room where someone moved with its doors closed occupied: docs/occupancy.md,
/// "Doors").
package enum SensorKind: String, Sendable, Hashable, CaseIterable {
    case motion, presence, count, door
}

/// `Sensor.<id> = <topic>, <kind>, <Zone UUID:major>[, <field>]` and its `.hold`, `.silence`.
package struct SensorDefinition: Sendable, Hashable {
    package var id: String
    /// The MQTT topic its messages come on (exact, no wildcards).
    package var topic: String
    package var kind: SensorKind
    /// The Zone it watches.
    package var zone: Region
    /// Where the reading is in a JSON object payload: a key, or a path such as `Switch1.Action`
    /// or `LD2410.Energy[0]`; `nil`: `occupancy` (`contact` for a door). Plain payloads (`ON`, `1`) are read whole.
    package var field: String?
    /// Seconds a motion sensor's detection counts (`Sensor.<id>.hold`).
    package var hold: Double
    /// Seconds without a message after which the sensor counts for nothing
    /// (`Sensor.<id>.silence`); 0: never. It applies until the sensor's ``status`` topic has
    /// said something: from then on the firmware says when it is offline.
    package var silence: Double
    /// The topic its firmware says `online`/`offline` on (docs/occupancy.md, "Liveness"): by
    /// the firmware's convention from ``topic`` (``SensorStatus/derived(from:)``) or
    /// `Sensor.<id>.status`; `nil`: none (`Sensor.<id>.status = none`, or a topic of no known
    /// firmware).
    package var status: SensorStatus?
    /// The line of its `Sensor.<id>` key.
    package var line: Int

    package static let defaultHold = 120.0
    package static let defaultSilence = 900.0

    package init(
        id: String, topic: String, kind: SensorKind, zone: Region, field: String? = nil,
        hold: Double = SensorDefinition.defaultHold, silence: Double? = nil, status: SensorStatus? = nil,
        line: Int = 0
    ) {
        (self.id, self.topic, self.kind, self.zone, self.field) = (id, topic, kind, zone, field)
        (self.hold, self.silence, self.status, self.line) = (
            hold, silence ?? Self.defaultSilence(kind), status, line
        )
    }

    /// `Sensor.<id>.silence` when not given: 900 s for a motion sensor (a PIR reports its battery
    /// now and then), 0 (never) for `presence` and `count`: ESPHome publishes on change only, and
    /// a presence sensor that has nothing new to say is not dead.
    package static func defaultSilence(_ kind: SensorKind) -> Double {
        kind == .motion ? defaultSilence : 0
    }

    /// The path read in a JSON object payload.
    package var path: String { field ?? (kind == .door ? "contact" : "occupancy") }

    /// How the daemon knows this sensor is alive, as a person reads it (`check`, the web page).
    package var liveness: String {
        let silent = "offline after \(JSONValue.numberText(silence)) s without a message"
        guard let status else {
            return silence > 0
                ? "\(silent) (no status topic; Sensor.\(id).status names one)"
                : "never offline (no status topic, silence 0): Sensor.\(id).status names one"
        }
        let whose = status.firmware.map { "\($0.rawValue)'s, by its state topic" } ?? "Sensor.\(id).status"
        return "offline when \(status.topic) says offline (\(whose))"
            + (silence > 0 ? "; until it says anything, \(silent)" : "")
    }
}

/// Where a sensor's firmware says whether it is alive (docs/occupancy.md, "Liveness"): a
/// retained topic its firmware publishes `online` on at each connect and its broker publishes
/// `offline` on (the MQTT will) when it drops.
package struct SensorStatus: Sendable, Hashable {
    /// The firmware whose convention gave the topic; `nil`: `Sensor.<id>.status` named it.
    package enum Firmware: String, Sendable, Hashable {
        case esphome = "ESPHome"
        case zigbee2mqtt
        case tasmota = "Tasmota"
    }

    package var topic: String
    package var firmware: Firmware?

    package init(topic: String, firmware: Firmware? = nil) {
        (self.topic, self.firmware) = (topic, firmware)
    }

    /// ESPHome's component types that publish a state on `<node>/<type>/<object>/state`.
    private static let esphomeComponents: Set<Substring> = [
        "binary_sensor", "sensor", "text_sensor", "switch", "number", "select", "event",
    ]

    /// The status topic of a state topic by its firmware's convention:
    /// - ESPHome `<node>/binary_sensor/<x>/state` (or `sensor`, `text_sensor`, ...) →
    ///   `<node>/status`;
    /// - zigbee2mqtt `zigbee2mqtt/<name>` → `zigbee2mqtt/<name>/availability`;
    /// - Tasmota `tele/<topic>/SENSOR` or `stat/<topic>/...` → `tele/<topic>/LWT`.
    ///
    /// `nil` for any other topic (a zigbee2mqtt with another `base_topic`, an ESPHome with its
    /// own `topic_prefix` in another shape: `Sensor.<id>.status` names theirs).
    package static func derived(from topic: String) -> SensorStatus? {
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
        guard levels.count >= 2, !levels.contains(where: \.isEmpty) else { return nil }
        if levels[0] == "zigbee2mqtt" {
            guard levels[1] != "bridge", levels.last != "availability", levels.last != "set",
                levels.last != "get"
            else { return nil }
            return SensorStatus(topic: topic + "/availability", firmware: .zigbee2mqtt)
        }
        if (levels[0] == "tele" || levels[0] == "stat"), levels.count == 3, levels[2] != "LWT" {
            return SensorStatus(topic: "tele/\(levels[1])/LWT", firmware: .tasmota)
        }
        if levels.count >= 4, levels[levels.count - 1] == "state",
            esphomeComponents.contains(levels[levels.count - 3])
        {
            return SensorStatus(
                topic: levels.dropLast(3).joined(separator: "/") + "/status", firmware: .esphome)
        }
        return nil
    }

    /// What a status message says: `online` or `offline` (any case: Tasmota's `Online`), as
    /// plain text, a JSON string, or zigbee2mqtt's `{"state": "online"}`; `nil`: neither.
    package static func parse(_ payload: [UInt8]) -> Bool? {
        var text = String(decoding: payload, as: UTF8.self)
        if let value = JSONValue.parse(payload) {
            switch value {
            case .string(let word): text = word
            case .object(let object):
                guard case .string(let word)? = object["state"] else { return nil }
                text = word
            default: return nil
            }
        }
        switch text.filter({ !$0.isWhitespace }).lowercased() {
        case "online": return true
        case "offline": return false
        default: return nil
        }
    }
}

/// `Occupancy.count`: which regions have an occupancy.
package enum OccupancyScope: String, Sendable, Hashable, CaseIterable {
    case zones, areas, both

    package var zones: Bool { self != .areas }
    package var areas: Bool { self != .zones }
}

/// The `Occupancy.*` and `Sensor.*` settings and who is not a person (docs/behaviour.md §23).
/// A configuration without any of these keys has none, and says nothing of occupancy.
package struct OccupancySettings: Sendable, Hashable {
    package var scope: OccupancyScope
    /// Seconds every signal must have said "nobody" before a region is vacant.
    package var vacantAfter: Double
    package var sensors: [SensorDefinition]
    /// Devices and tags with `occupant = false` (an asset tag on a trolley), by id.
    package var nonOccupants: Set<String>

    package static let defaultVacantAfter = 30.0

    package init(
        scope: OccupancyScope = .zones, vacantAfter: Double = OccupancySettings.defaultVacantAfter,
        sensors: [SensorDefinition] = [], nonOccupants: Set<String> = []
    ) {
        (self.scope, self.vacantAfter, self.sensors, self.nonOccupants) = (scope, vacantAfter, sensors, nonOccupants)
    }
}
