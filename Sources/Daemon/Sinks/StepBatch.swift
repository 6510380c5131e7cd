import Engine
import Persistence
import RegionMonitor

/// Steps staged to be committed in one transaction, each delivered afterwards as its own step.
///
/// One step per event when input comes one event at a time; when it is backed up (a file, a
/// burst), up to ``limit`` steps share a transaction, which is what makes high rates possible.
/// Nothing is handed to a sink or `output` before the transaction holding it is committed.
public struct StepBatch: Sendable {
    /// Steps in one transaction, at most.
    public static let limit = 64

    private var outputs: [MonitorOutput] = []
    /// The daemon's own outputs, whose state the store keeps; each fleet device's share apart.
    private var recorded: [MonitorOutput] = []
    private var devices: [String: DeviceChanges] = [:]
    private var deviceOrder: [String] = []
    private var messages: [OutboxMessage] = []
    private var journal: [JournalLine] = []
    private var state = StateChanges()
    /// Outbox entries the sinks settled, not yet removed (a commit that failed keeps them).
    private var settled: [Int64] = []
    /// Each step: where its outputs end, where its messages for each sink end, where the user is.
    private var steps: [(outputs: Int, messages: [Int], context: StepContext)] = []

    public init() {}

    public var count: Int { steps.count }
    /// Outputs staged.
    public var outputCount: Int { outputs.count }
    public var isFull: Bool { steps.count >= Self.limit }

    public mutating func add(
        _ step: [MonitorOutput], state changes: StateChanges, sinks: [any OutputSink], whereabouts: Whereabouts,
        device: FleetDevice? = nil, commands: [OutboxMessage] = [], record: FleetDeviceRecord? = nil
    ) {
        let context = StepContext(
            whereabouts: whereabouts, device: device, commands: commands, staged: step.isEmpty ? nil : .now)
        outputs += step
        if let device {
            if devices[device.id] == nil {
                devices[device.id] = DeviceChanges(device: device.id, outputs: [], changes: StateChanges())
                deviceOrder.append(device.id)
            }
            devices[device.id]?.outputs += step
            if !changes.isEmpty { devices[device.id]?.changes.merge(changes) }
            if let record { devices[device.id]?.record = record }
        } else {
            recorded += step
            if !changes.isEmpty { state.merge(changes) }
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
    public mutating func commit(
        store: StateStore,
        output: (MonitorOutput) throws -> Void = { _ in },
        sinks: [any OutputSink] = []
    ) throws -> Int {
        for sink in sinks { settled += sink.takeSettled() }
        guard !steps.isEmpty else {
            try store.settle(settled)
            settled.removeAll(keepingCapacity: true)
            return 0
        }
        let entries = try store.record(
            recorded, outbox: messages, settled: settled, changes: state, journal: journal,
            devices: deviceOrder.compactMap { devices[$0] })
        settled.removeAll(keepingCapacity: true)
        defer {
            outputs.removeAll(keepingCapacity: true)
            recorded.removeAll(keepingCapacity: true)
            devices.removeAll(keepingCapacity: true)
            deviceOrder.removeAll(keepingCapacity: true)
            messages.removeAll(keepingCapacity: true)
            journal.removeAll(keepingCapacity: true)
            steps.removeAll(keepingCapacity: true)
            state = StateChanges()
        }
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
