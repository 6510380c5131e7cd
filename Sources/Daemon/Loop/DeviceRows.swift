import Engine
import Fleet
import Persistence

// The table of ``Devices`` and the store's rows: what the daemon knows of a device beyond its
// engine, as the store keeps it (docs/architecture.md, "Persistence").

extension DeviceRow {
    /// The row that keeps `record`.
    init(_ record: Devices.Record) {
        self.init(
            source: record.source.rawValue, commandTopic: record.commandTopic, waypoints: record.waypoints,
            legacy: record.legacy, ownWaypoints: record.ownWaypoints, presence: record.presence)
    }
}

extension Devices.Kept {
    /// A fleet device as the store kept it; one with state but no row (none was written yet) is
    /// taken as a Theengs tracker, which has nothing else to keep.
    init(_ kept: KeptDevice) {
        var state = kept.state
        state.presence = kept.row?.presence
        self.init(
            state: state, source: kept.row.flatMap { FleetSource(rawValue: $0.source) } ?? .theengs,
            commandTopic: kept.row?.commandTopic, waypoints: kept.row?.waypoints ?? [], legacy: kept.row?.legacy ?? [],
            ownWaypoints: kept.row?.ownWaypoints)
    }
}

extension StateStore {
    /// Every fleet device of an earlier run, as the table of ``Devices`` resumes it.
    package func keptFleet() throws -> [String: Devices.Kept] {
        try keptDevices().mapValues(Devices.Kept.init)
    }
}
