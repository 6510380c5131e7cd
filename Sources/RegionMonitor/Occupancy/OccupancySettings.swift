import BeaconCore

/// What a presence sensor says (docs/behaviour.md §23): `motion` (a PIR: true when it sees
/// movement, held for ``SensorDefinition/hold``), `presence` (mmWave and the like: true or false
/// while someone is there, still or not) or `count` (a number of people).
package enum SensorKind: String, Sendable, Hashable, CaseIterable {
    case motion, presence, count
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
    /// or `LD2410.Energy[0]`; `nil`: `occupancy`. Plain payloads (`ON`, `1`) are read whole.
    package var field: String?
    /// Seconds a motion sensor's detection counts (`Sensor.<id>.hold`).
    package var hold: Double
    /// Seconds without a message after which the sensor counts for nothing
    /// (`Sensor.<id>.silence`); 0: never.
    package var silence: Double
    /// The line of its `Sensor.<id>` key.
    package var line: Int

    package static let defaultHold = 120.0
    package static let defaultSilence = 900.0

    package init(
        id: String, topic: String, kind: SensorKind, zone: Region, field: String? = nil,
        hold: Double = SensorDefinition.defaultHold, silence: Double = SensorDefinition.defaultSilence, line: Int = 0
    ) {
        (self.id, self.topic, self.kind, self.zone, self.field) = (id, topic, kind, zone, field)
        (self.hold, self.silence, self.line) = (hold, silence, line)
    }

    /// The path read in a JSON object payload.
    package var path: String { field ?? "occupancy" }
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
