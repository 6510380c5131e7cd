import BeaconConfiguration
import Engine
import Persistence
import RegionMonitor

/// Where a step's outputs go once they are kept: the `--events` stream, the broker, scripts.
///
/// ``EngineDriver`` stages each step the engine closes, asking each sink which of its messages
/// must survive a crash (``outbox(for:)``); ``StepBatch/commit(store:output:sinks:)`` writes them
/// to the outbox in the transaction that keeps the step, then hands each sink each step's outputs
/// with its entries.
package protocol OutputSink: Sendable {
    /// Messages for the outbox: each must reach its destination even across a restart.
    func outbox(for outputs: [MonitorOutput], context: StepContext) -> [OutboxMessage]
    /// Lines for the `--events` journal, kept with the step (``EventsFile``).
    func journal(for outputs: [MonitorOutput], context: StepContext) -> [JournalLine]
    /// Called once the step is committed; `entries` are this sink's outbox messages as written;
    /// `context` says whose step it is and where the user is after it.
    func deliver(_ outputs: ArraySlice<MonitorOutput>, entries: ArraySlice<OutboxEntry>, context: StepContext)
        throws
    /// Outbox entries delivered since the last call, to remove in the next transaction.
    func takeSettled() -> [Int64]
    /// A reloaded configuration is in force from the next step on.
    func reconfigure(_ configuration: Configuration)
}

/// Whose step it is and what else it asks: the daemon's own radio or a fleet device (docs/behaviour.md §15).
package struct StepContext: Sendable {
    /// Where the user (the device) is after the step.
    package var whereabouts: Whereabouts
    /// The fleet device whose step it is; `nil` for the daemon's own.
    package var device: FleetDevice?
    /// Messages for the broker beside the step's outputs (an OwnTracks `setWaypoints`), kept in
    /// the outbox by the MQTT sink.
    package var commands: [OutboxMessage]
    /// When the step was staged, right after the engine handled its input (only for a step with
    /// outputs), on the daemon's clock that only moves forward (``DaemonClock/elapsed``): the
    /// start of the event latency the metrics show.
    package var staged: Duration?

    package init(
        whereabouts: Whereabouts, device: FleetDevice? = nil, commands: [OutboxMessage] = [],
        staged: Duration? = nil
    ) {
        self.whereabouts = whereabouts
        self.device = device
        self.commands = commands
        self.staged = staged
    }
}

/// A fleet device as the sinks name it: its id (`"device"` in outputs, `BW_DEVICE`) and the
/// userid of its topics (`MQTT.topic/<userid>`).
package struct FleetDevice: Sendable, Hashable {
    package var id: String
    package var userid: String
    /// Its declared name (`Device.<id> = name`), for Home Assistant.
    package var name: String?
    /// A tag heard by fixed scanners (docs/rooms.md): its Zone is its room.
    package var isTag: Bool
    /// A tag on a floor plan (docs/behaviour.md §20): it has a position.
    package var isPositioned: Bool

    package init(id: String, userid: String, name: String? = nil, isTag: Bool = false, isPositioned: Bool = false) {
        self.id = id
        self.userid = userid
        self.name = name
        self.isTag = isTag
        self.isPositioned = isPositioned
    }
}

extension OutputSink {
    package func outbox(for outputs: [MonitorOutput], context: StepContext) -> [OutboxMessage] { [] }
    package func journal(for outputs: [MonitorOutput], context: StepContext) -> [JournalLine] { [] }
    package func takeSettled() -> [Int64] { [] }
    package func reconfigure(_ configuration: Configuration) {}
}

/// A sink that hands each output to a closure (the `--events` stream, tests).
package struct EachOutput: OutputSink {
    let body: @Sendable (MonitorOutput) throws -> Void

    package init(_ body: @escaping @Sendable (MonitorOutput) throws -> Void) { self.body = body }

    package func deliver(_ outputs: ArraySlice<MonitorOutput>, entries: ArraySlice<OutboxEntry>, context: StepContext)
        throws
    {
        for output in outputs { try body(output) }
    }
}
