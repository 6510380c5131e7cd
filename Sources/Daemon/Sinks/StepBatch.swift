import BeaconCore
import Engine
import Fleet
import Persistence
import RegionMonitor

/// Steps staged to be committed in one transaction, each delivered afterwards as its own step.
///
/// One step per event when input comes one event at a time; when it is backed up (a file, a
/// burst), up to ``limit`` steps share a transaction, which is what makes high rates possible.
/// Nothing is handed to a sink or `output` before the transaction holding it is committed.
package struct StepBatch: Sendable {
    /// Steps in one transaction, at most.
    package static let limit = 64

    private var outputs: [MonitorOutput] = []
    /// Each device's share of the batch (its outputs and state changes, what the store keeps of
    /// it), by its id in the table of ``Devices``, in the order they came.
    private var devices: [DeviceID: DeviceChanges] = [:]
    private var deviceOrder: [DeviceID] = []
    private var messages: [OutboxMessage] = []
    private var journal: [JournalLine] = []
    /// Outbox entries the sinks settled, not yet removed (a commit that failed keeps them).
    private var settled: [Int64] = []
    /// The scanners' calibration, when it settled anew since the last commit.
    private var calibration: [ScannerLevel]?
    /// The rooms whose fingerprints changed since the last commit, in order.
    private var fingerprints: [FingerprintChange] = []
    /// Each step: where its outputs end, where its messages for each sink end, where the user is.
    private var steps: [(outputs: Int, messages: [Int], context: StepContext)] = []

    package init() {}

    package var count: Int { steps.count }
    /// Outputs staged.
    package var outputCount: Int { outputs.count }
    package var isFull: Bool { steps.count >= Self.limit }

    /// Keeps the scanners' calibration with the next commit (replacing one staged before).
    package mutating func keep(calibration levels: [ScannerLevel]) { calibration = levels }

    /// Keeps a room's new fingerprints (or their loss) with the next commit.
    package mutating func keep(fingerprints change: FingerprintChange) { fingerprints.append(change) }

    package mutating func add(
        _ step: [MonitorOutput], state changes: StateChanges, sinks: [any OutputSink], whereabouts: Whereabouts,
        device: FleetDevice? = nil, commands: [OutboxMessage] = [], record: DeviceRow? = nil,
        staged: @autoclosure () -> Duration? = nil
    ) {
        let context = StepContext(
            whereabouts: whereabouts, device: device, commands: commands, staged: step.isEmpty ? nil : staged())
        outputs += step
        let id = device.map { DeviceID.fleet($0.id) } ?? .own
        if devices[id] == nil {
            devices[id] = DeviceChanges(device: id, outputs: [], changes: StateChanges())
            deviceOrder.append(id)
        }
        devices[id]?.outputs += step
        if !changes.isEmpty { devices[id]?.changes.merge(changes) }
        if var record {
            // The latest row wins; a presence taken by an earlier step of the batch stays.
            record.presence = record.presence ?? devices[id]?.record?.presence
            devices[id]?.record = record
        }
        var ends: [Int] = []
        ends.reserveCapacity(sinks.count)
        for sink in sinks {
            messages += sink.outbox(for: step, context: context)
            journal += sink.journal(for: step, context: context)
            ends.append(messages.count)
        }
        steps.append((outputs.count, ends, context))
    }

    /// Commits the staged steps (with what the sinks settled) in one transaction, then delivers
    /// each step in order to `output` and the sinks; empties the batch. Returns how many outputs
    /// there were. When the transaction fails (a full disk), everything stays staged for the
    /// next try and nothing is delivered.
    @discardableResult
    package mutating func commit(
        store: StateStore,
        output: (MonitorOutput) throws -> Void = { _ in },
        sinks: [any OutputSink] = []
    ) throws -> Int {
        for sink in sinks { settled += sink.takeSettled() }
        guard !steps.isEmpty else {
            if calibration != nil || !fingerprints.isEmpty {
                try store.record(devices: [], settled: settled, calibration: calibration, fingerprints: fingerprints)
                self.calibration = nil
                fingerprints.removeAll()
            } else {
                try store.settle(settled)
            }
            settled.removeAll(keepingCapacity: true)
            return 0
        }
        let entries = try store.record(
            devices: deviceOrder.compactMap { devices[$0] }, outbox: messages, settled: settled, journal: journal,
            calibration: calibration, fingerprints: fingerprints)
        settled.removeAll(keepingCapacity: true)
        calibration = nil
        fingerprints.removeAll()
        defer {
            outputs.removeAll(keepingCapacity: true)
            devices.removeAll(keepingCapacity: true)
            deviceOrder.removeAll(keepingCapacity: true)
            messages.removeAll(keepingCapacity: true)
            journal.removeAll(keepingCapacity: true)
            steps.removeAll(keepingCapacity: true)
        }
        return try CommittedSteps.deliver(outputs, steps: steps, entries: entries, output: output, sinks: sinks)
    }

    /// Commits the staged steps as ``commit(store:output:sinks:)`` does, and hands them back to
    /// be delivered later instead (``CommittedSteps/deliver(output:sinks:)``): a cluster's
    /// outputs wait for the broker to hold the steps (docs/failover.md). Empties the batch.
    package mutating func take(store: StateStore, sinks: [any OutputSink]) throws -> CommittedSteps {
        for sink in sinks { settled += sink.takeSettled() }
        let entries: [OutboxEntry]
        if steps.isEmpty, calibration == nil, fingerprints.isEmpty {
            try store.settle(settled)
            entries = []
        } else {
            entries = try store.record(
                devices: deviceOrder.compactMap { devices[$0] }, outbox: messages, settled: settled, journal: journal,
                calibration: calibration, fingerprints: fingerprints)
        }
        settled.removeAll(keepingCapacity: true)
        calibration = nil
        fingerprints.removeAll()
        defer {
            outputs = []
            devices.removeAll(keepingCapacity: true)
            deviceOrder.removeAll(keepingCapacity: true)
            messages.removeAll(keepingCapacity: true)
            journal.removeAll(keepingCapacity: true)
            steps = []
        }
        return CommittedSteps(outputs: outputs, steps: steps, entries: entries, through: store.shippedThrough)
    }
}

/// Steps committed and not yet delivered (``StepBatch/take(store:sinks:)``), with the number of
/// the last step shipped when they were (`nil`: the state does not ship).
package struct CommittedSteps: Sendable {
    fileprivate var outputs: [MonitorOutput]
    fileprivate var steps: [(outputs: Int, messages: [Int], context: StepContext)]
    fileprivate var entries: [OutboxEntry]
    package let through: Int64?

    /// The outputs to deliver.
    package var outputCount: Int { outputs.count }

    /// Delivers each step in order to `output` and the sinks; returns how many outputs there were.
    package func deliver(output: (MonitorOutput) throws -> Void = { _ in }, sinks: [any OutputSink] = []) throws -> Int
    {
        try Self.deliver(outputs, steps: steps, entries: entries, output: output, sinks: sinks)
    }

    fileprivate static func deliver(
        _ outputs: [MonitorOutput], steps: [(outputs: Int, messages: [Int], context: StepContext)],
        entries: [OutboxEntry], output: (MonitorOutput) throws -> Void, sinks: [any OutputSink]
    ) throws -> Int {
        var outputStart = 0
        var messageStart = 0
        for step in steps {
            let slice = outputs[outputStart..<step.outputs]
            for item in slice { try output(item) }
            for (sink, end) in zip(sinks, step.messages) {
                try sink.deliver(slice, entries: entries[messageStart..<end], context: step.context)
                messageStart = end
            }
            outputStart = step.outputs
        }
        return outputs.count
    }
}
