import BeaconCore
import Engine
import RegionMonitor

/// The state database cannot be used; says which file and what to do.
package struct StateStoreError: Error, Sendable, CustomStringConvertible {
    package var path: String
    package var problem: String
    package var description: String { "state database \(path): \(problem)" }

    package init(path: String, problem: String) {
        self.path = path
        self.problem = problem
    }
}

/// A device's share of a transaction (docs/behaviour.md §15): the state its steps change, each
/// device's apart, and what the daemon knows of it.
package struct DeviceChanges: Sendable {
    package var device: DeviceID
    package var outputs: [MonitorOutput]
    package var changes: StateChanges
    package var record: DeviceRow?

    package init(device: DeviceID, outputs: [MonitorOutput], changes: StateChanges, record: DeviceRow? = nil) {
        self.device = device
        self.outputs = outputs
        self.changes = changes
        self.record = record
    }

    /// Whether it has anything to write.
    var writes: Bool {
        record != nil || !changes.isEmpty
            || outputs.contains {
                switch $0 {
                case .location, .nearest: true
                default: false
                }
            }
    }
}

/// A row of the device table (`deviceRecord`): what the daemon knows of a device beyond its
/// engine's state, the own radio's as every other's. Where it reports from, where its commands
/// go, the regions its phone was last told to monitor (canonical), those it may hold in the form
/// before docs/behaviour.md §15.1's (to delete), how many waypoints of its own it has, and where
/// the device is (``MonitorPresence/text``; `nil`: unchanged).
package struct DeviceRow: Sendable, Hashable {
    /// Where its sightings come from: a `FleetSource`'s name (`radio` for the own radio).
    package var source: String
    package var commandTopic: String?
    package var waypoints: [Region]
    package var legacy: [Region]
    package var ownWaypoints: Int?
    package var presence: MonitorPresence?

    package init(
        source: String, commandTopic: String? = nil, waypoints: [Region] = [], legacy: [Region] = [],
        ownWaypoints: Int? = nil, presence: MonitorPresence? = nil
    ) {
        self.source = source
        self.commandTopic = commandTopic
        self.waypoints = waypoints
        self.legacy = legacy
        self.ownWaypoints = ownWaypoints
        self.presence = presence
    }
}

/// A device of an earlier run, as the store kept it: its engine's state (with its presence) and
/// its row; a device with state but no row yet has `row` `nil`.
package struct KeptDevice: Sendable {
    package var state: KeptState
    package var row: DeviceRow?

    package init(state: KeptState, row: DeviceRow?) {
        self.state = state
        self.row = row
    }
}

/// A line of the `--events` file, kept in the transaction of the step that made it: where in
/// the file it goes (`offset`, in bytes) and its text (without the newline).
package struct JournalLine: Sendable, Hashable {
    package var file: String
    package var offset: Int64
    package var text: String

    package init(file: String, offset: Int64, text: String) {
        self.file = file
        self.offset = offset
        self.text = text
    }

    /// Where the line ends in the file, its newline included.
    /// Saturating: a damaged database's offsets never trap.
    package var end: Int64 {
        let (sum, overflow) = offset.addingReportingOverflow(Int64(text.utf8.count) + 1)
        return overflow ? .max : sum
    }
}

/// A message that must reach the broker (an event, not retained state): written to the outbox
/// in the transaction of the step that made it.
package struct OutboxMessage: Sendable, Hashable {
    package var topic: String
    package var payload: String
    package var qos: Int32

    package init(topic: String, payload: String, qos: Int32) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
    }
}

/// An outbox message as kept, with its place in the delivery order.
package struct OutboxEntry: Sendable, Hashable {
    /// Increasing in the order the messages were made.
    package var sequence: Int64
    package var message: OutboxMessage

    package init(sequence: Int64, message: OutboxMessage) {
        self.sequence = sequence
        self.message = message
    }
}
