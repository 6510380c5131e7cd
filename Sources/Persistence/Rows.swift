import Engine
import Fleet
import RegionMonitor

/// The state database cannot be used; says which file and what to do.
public struct StateStoreError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var problem: String
    public var description: String { "state database \(path): \(problem)" }

    public init(path: String, problem: String) {
        self.path = path
        self.problem = problem
    }
}

/// A fleet device's share of a transaction (docs/behaviour.md §15): the state its steps change, kept apart from
/// the daemon's own (which is device `""`), and what the daemon knows of the device.
public struct DeviceChanges: Sendable {
    public var device: String
    public var outputs: [MonitorOutput]
    public var changes: StateChanges
    public var record: Devices.Record?
    /// The own radio's presence, when it changed (a fleet device's goes with its ``record``).
    public var presence: MonitorPresence?

    public init(
        device: String, outputs: [MonitorOutput], changes: StateChanges, record: Devices.Record? = nil,
        presence: MonitorPresence? = nil
    ) {
        self.device = device
        self.outputs = outputs
        self.changes = changes
        self.record = record
        self.presence = presence
    }

    /// Whether it has anything to write.
    var writes: Bool {
        record != nil || presence != nil || !changes.isEmpty
            || outputs.contains {
                switch $0 {
                case .location, .nearest: true
                default: false
                }
            }
    }
}

/// What the daemon knows of a fleet device beyond its engine's state: where it reports from,
/// where its commands go, the regions its phone was last told to monitor (canonical), those it
/// may hold in the form before docs/behaviour.md §15.1's (to delete), how many waypoints of its own it has, and
/// where the device is (``MonitorPresence/text``; `nil`: unchanged).
/// A line of the `--events` file, kept in the transaction of the step that made it: where in
/// the file it goes (`offset`, in bytes) and its text (without the newline).
public struct JournalLine: Sendable, Hashable {
    public var file: String
    public var offset: Int64
    public var text: String

    public init(file: String, offset: Int64, text: String) {
        self.file = file
        self.offset = offset
        self.text = text
    }

    /// Where the line ends in the file, its newline included.
    /// Saturating: a damaged database's offsets never trap.
    public var end: Int64 {
        let (sum, overflow) = offset.addingReportingOverflow(Int64(text.utf8.count) + 1)
        return overflow ? .max : sum
    }
}

/// A message that must reach the broker (an event, not retained state): written to the outbox
/// in the transaction of the step that made it.
public struct OutboxMessage: Sendable, Hashable {
    public var topic: String
    public var payload: String
    public var qos: Int32

    public init(topic: String, payload: String, qos: Int32) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
    }
}

/// An outbox message as kept, with its place in the delivery order.
public struct OutboxEntry: Sendable, Hashable {
    /// Increasing in the order the messages were made.
    public var sequence: Int64
    public var message: OutboxMessage

    public init(sequence: Int64, message: OutboxMessage) {
        self.sequence = sequence
        self.message = message
    }
}
