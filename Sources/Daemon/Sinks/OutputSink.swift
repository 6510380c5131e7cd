import Configuration
import Engine
import Persistence
import RegionMonitor

/// Where a step's outputs go once they are kept: the `--events` stream, the broker, scripts.
///
/// ``EngineDriver`` stages each step the engine closes, asking each sink which of its messages
/// must survive a crash (``outbox(for:)``); ``StepBatch/commit(store:output:sinks:)`` writes them
/// to the outbox in the transaction that keeps the step, then hands each sink each step's outputs
/// with its entries.
public protocol OutputSink: Sendable {
    /// Messages for the outbox: each must reach its destination even across a restart.
    func outbox(for outputs: [MonitorOutput]) -> [OutboxMessage]
    /// Lines for the `--events` journal, kept with the step (``EventsFile``).
    func journal(for outputs: [MonitorOutput]) -> [JournalLine]
    /// Called once the step is committed; `entries` are this sink's outbox messages as written;
    /// `whereabouts` is where the user is after the step.
    func deliver(_ outputs: ArraySlice<MonitorOutput>, entries: ArraySlice<OutboxEntry>, whereabouts: Whereabouts)
        throws
    /// Outbox entries delivered since the last call, to remove in the next transaction.
    func takeSettled() -> [Int64]
    /// A reloaded configuration is in force from the next step on.
    func reconfigure(_ configuration: Configuration)
}

extension OutputSink {
    public func outbox(for outputs: [MonitorOutput]) -> [OutboxMessage] { [] }
    public func journal(for outputs: [MonitorOutput]) -> [JournalLine] { [] }
    public func takeSettled() -> [Int64] { [] }
    public func reconfigure(_ configuration: Configuration) {}
}

/// A sink that hands each output to a closure (the `--events` stream, tests).
public struct EachOutput: OutputSink {
    let body: @Sendable (MonitorOutput) throws -> Void

    public init(_ body: @escaping @Sendable (MonitorOutput) throws -> Void) { self.body = body }

    public func deliver(
        _ outputs: ArraySlice<MonitorOutput>, entries: ArraySlice<OutboxEntry>, whereabouts: Whereabouts
    )
        throws
    {
        for output in outputs { try body(output) }
    }
}
