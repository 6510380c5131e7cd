import BeaconCore
import BeaconConfiguration
import Daemon
import Engine
import Foundation
import Persistence
import RegionMonitor
import Synchronization
import TestSupport
import Testing

/// Group commit: steps share a transaction, and are still delivered one by one afterwards.
@Suite struct StepBatchTests {
    /// Records what it is handed, and asks the outbox to keep one message per location.
    final class Recorder: OutputSink {
        let steps = Mutex<[(types: [String], entries: [Int64], whereabouts: Whereabouts)]>([])

        func outbox(for outputs: [MonitorOutput], context: StepContext) -> [OutboxMessage] {
            outputs.filter { $0.type == "location" }.map { OutboxMessage(topic: "t", payload: $0.json, qos: 1) }
        }

        func deliver(_ outputs: ArraySlice<MonitorOutput>, entries: ArraySlice<OutboxEntry>, context: StepContext)
            throws
        {
            steps.withLock { $0.append((outputs.map(\.type), entries.map(\.sequence), context.whereabouts)) }
        }
    }

    static let uuid = "112EBB9D-B8C9-4ABD-9EB3-43578BF86A41"

    /// A driver of two rooms, Kitchen (major 1) and Hall (2), exits after 5 s, on `store`.
    static func driver(
        store: StateStore, recorder: Recorder, output: @escaping (MonitorOutput) throws -> Void = { _ in }
    ) throws -> EngineDriver {
        let ini = """
            LocationBaseBeacon.101 = \(uuid),1,1
            LocationBaseBeacon.201 = \(uuid),2,1
            LocationZoneName.\(uuid):1 = Kitchen
            LocationZoneName.\(uuid):2 = Hall
            Monitor.exitTimeout = 5
            """
        let configuration = try Configuration.load(Array(ini.utf8), path: "hsyco.ini").get()
        return EngineDriver(
            engine: Engine(configuration: configuration, identity: .resolve(configuration.monitor)), store: store,
            sinks: [recorder], requests: .inline(ServerHook(configuration: configuration, logger: .silent)),
            output: output)
    }

    @Test func stepsCommittedTogetherAreDeliveredOneByOneWithTheirOwnWhereabouts() throws {
        let uuid = Self.uuid
        let store = try StateStore()
        let recorder = Recorder()
        let seen = Mutex<[String]>([])
        var driver = try Self.driver(store: store, recorder: recorder) { item in seen.withLock { $0.append(item.type) }
        }
        for (n, major) in [1, 2].enumerated() {
            let ad = Advertisement(
                format: .ibeacon, beacon: BeaconID(uuid: UUID(uuidString: uuid)!, major: UInt16(major), minor: 1),
                power: -59, rssi: -59, address: nil)
            try driver.handle(.advertisement(Timestamp(secondsSinceEpoch: 1_700_000_000 + Double(n) * 10)!, ad))
        }
        // Nothing is handed on, and nothing kept, before the commit.
        #expect(recorder.steps.withLock { $0.isEmpty })
        #expect(seen.withLock { $0.isEmpty })
        #expect(try store.pendingOutbox().isEmpty)

        try driver.commit()
        let steps = recorder.steps.withLock { $0 }
        // Three steps: the first sighting, Kitchen's exit at its own instant (5 s), the second sighting.
        #expect(steps.count == 3)
        #expect(driver.delivered == seen.withLock { $0.count })
        #expect(steps.map(\.whereabouts.zone) == ["Kitchen", nil, "Hall"])
        #expect(steps.map { $0.types.filter { $0 == "location" }.count } == [1, 1, 1])
        // Each step gets its own outbox entries, in order.
        let pending = try store.pendingOutbox().map(\.sequence)
        #expect(steps.flatMap(\.entries) == pending)
        #expect(steps.map(\.entries.count) == [1, 1, 1])
        #expect(try store.lastReported()["201"] == .near)
        #expect(try store.lastReported()["101"] == .off)
    }

    /// Acknowledges the steps up to a number the test sets, or withholds them all.
    final class Broker: StepAcknowledger {
        let state = Mutex<(through: Int64, withheld: Bool)>((0, false))
        func verdict(through step: Int64) -> ShippedVerdict {
            state.withLock { $0.withheld ? .withheld : step <= $0.through ? .acknowledged : .waiting }
        }
        func awaitVerdict(through step: Int64, within limit: Duration) -> ShippedVerdict { verdict(through: step) }
    }

    /// A cluster's active (docs/failover.md, "Outputs wait for the broker"): a commit's outputs go
    /// to no sink before the broker holds its step; they go, in order, once it does; and they
    /// never go when the daemon stopped being the active first.
    @Test func aClustersOutputsWaitForTheBrokerAndAreWithheldWhenItNeverHasTheirSteps() throws {
        let uuid = Self.uuid
        let store = try StateStore()
        let broker = Broker()
        try store.startShipping(epoch: 1, ship: { _ in }, acknowledger: broker)
        let recorder = Recorder()
        var driver = try Self.driver(store: store, recorder: recorder)
        func sight(major: UInt16, at seconds: Double) throws {
            let ad = Advertisement(
                format: .ibeacon, beacon: BeaconID(uuid: UUID(uuidString: uuid)!, major: major, minor: 1),
                power: -59, rssi: -59, address: nil)
            try driver.handle(.advertisement(Timestamp(secondsSinceEpoch: 1_700_000_000 + seconds)!, ad))
            try driver.commit()
        }
        try sight(major: 1, at: 0)
        let first = try #require(store.shippedThrough)
        #expect(first > 0 && driver.isHolding && driver.delivered == 0)
        #expect(recorder.steps.withLock { $0.isEmpty })
        try sight(major: 2, at: 10)
        // The first commit's step is held by the broker, the later ones not yet.
        broker.state.withLock { $0.through = first }
        try driver.release()
        #expect(recorder.steps.withLock { $0.map(\.whereabouts.zone) } == ["Kitchen"])
        #expect(driver.isHolding)
        broker.state.withLock { $0.through = store.shippedThrough ?? 0 }
        try driver.release()
        #expect(recorder.steps.withLock { $0.map(\.whereabouts.zone) } == ["Kitchen", nil, "Hall"])
        #expect(!driver.isHolding && driver.delivered > 0)
        let delivered = recorder.steps.withLock { $0.count }
        // Cut off: the Kitchen's commit is never held by the broker, and the daemon stepped down.
        try sight(major: 1, at: 30)
        #expect(driver.isHolding)
        broker.state.withLock { $0.withheld = true }
        try driver.release()
        #expect(!driver.isHolding && driver.withheld > 0)
        #expect(recorder.steps.withLock { $0.count } == delivered)
    }
}
