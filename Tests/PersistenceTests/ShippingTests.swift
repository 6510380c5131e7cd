import BeaconCore
import Engine
import Foundation
import Persistence
import RegionMonitor
import Rules
import Synchronization
import Testing

/// The cluster's state shipping (docs/behaviour.md §21, docs/failover.md): an active's committed steps,
/// applied in order to a standby's database, leave it holding what the active holds.
@Suite struct ShippingTests {
    /// Collects what a store ships, in order.
    final class Shipped: Sendable {
        private let steps = Mutex<[ShippedStep]>([])
        var all: [ShippedStep] { steps.withLock { $0 } }
        func take() -> [ShippedStep] {
            steps.withLock { steps in
                defer { steps = [] }
                return steps
            }
        }
        func add(_ step: ShippedStep) { steps.withLock { $0.append(step) } }
    }

    /// An active's store (shipping as epoch `epoch`) and what it ships.
    static func active(epoch: Int64 = 1) throws -> (StateStore, Shipped) {
        let store = try StateStore(path: StateStoreTests.temporaryPath())
        let shipped = Shipped()
        try store.startShipping(epoch: epoch) { shipped.add($0) }
        return (store, shipped)
    }

    /// A few steps of every kind a restart reads: reports, nearest, counters, alerts, dwell, a
    /// device's row with its presence, outbox entries and their settling.
    static func work(_ store: StateStore, round: Int) throws {
        let second = Double(round * 10)
        var rules = RuleState()
        rules.rules[RuleKey(region: "r1", rule: "11")] = RuleCounter(count: round + 1, fingerprint: "2-4")
        rules.day = DayCount(date: "2026-11-27", count: round)
        var presence = MonitorPresence()
        presence.currentZone = Region("B1A2C3D4-0000-4000-8000-000000000001:\(round)")
        let entries = try store.record(
            devices: [
                DeviceChanges(
                    device: .own, outputs: [StateStoreTests.location("101", round % 2 == 0 ? .near : .far, at: second)],
                    changes: StateChanges(
                        rules: rules,
                        alerts: ["101": AlertRecord(status: .done, resetAt: Timestamp(microseconds: Int64(round)))],
                        dwell: [DwellKey(region: "B1A2C3D4-0000-4000-8000-000000000001", date: "2026-11-27"): 1.5])),
                DeviceChanges(
                    device: .fleet("ann-phone"), outputs: [StateStoreTests.location("102", .immediate, at: second)],
                    changes: StateChanges(),
                    record: DeviceRow(source: "owntracks", commandTopic: "owntracks/ann/phone/cmd", presence: presence)),
            ],
            outbox: (0..<3).map {
                OutboxMessage(topic: "bw/u/event", payload: "{\"round\":\(round),\"n\":\($0)}", qos: 1)
            },
            calibration: [
                ScannerLevel(receiver: "kitchen", transmitter: "hall", level: -16 - Double(round)),
                ScannerLevel(receiver: "hall", transmitter: "kitchen", level: -10),
            ])
        // The first of them delivered.
        try store.settle([entries[0].sequence])
    }

    @Test func aStandbyApplyingEveryStepInOrderHoldsWhatTheActiveHolds() throws {
        let (active, shipped) = try Self.active()
        let standby = try StateStore(path: StateStoreTests.temporaryPath())
        for round in 0..<5 { try Self.work(active, round: round) }
        // Two steps a round: the record, then the settle.
        #expect(shipped.all.count == 10)
        #expect(shipped.all.map(\.position.step) == Array(1...10))
        for step in shipped.all {
            let decoded = try #require(ShippedStep(payload: step.payload))
            #expect(decoded == step)
            #expect(try standby.apply(decoded) == .applied(replaced: 0, omitted: 0))
        }
        #expect(try standby.shippedRows() == active.shippedRows())
        #expect(try standby.position() == StepPosition(epoch: 1, step: 10))
        #expect(try standby.kept() == active.kept())
        #expect(try standby.keptCalibration() == active.keptCalibration())
        #expect(try standby.keptCalibration().map(\.level) == [-10, -20])
        #expect(try standby.pendingOutbox().map(\.message) == active.pendingOutbox().map(\.message))
        #expect(try standby.pendingOutbox().count == 10)
    }

    @Test func aStepDeliveredAgainIsSeenAndAMissedOneAsksForASnapshot() throws {
        let (active, shipped) = try Self.active()
        let standby = try StateStore(path: StateStoreTests.temporaryPath())
        try Self.work(active, round: 0)
        let first = shipped.take()
        for step in first { _ = try standby.apply(step) }
        // QoS 1 delivers again after a reconnect: nothing changes.
        let before = try standby.shippedRows()
        #expect(try standby.apply(first[0]) == .seen)
        #expect(try standby.shippedRows() == before)
        // Two steps, the first lost: the second is not made on this state.
        try Self.work(active, round: 1)
        let second = shipped.take()
        #expect(try standby.apply(second[1]) == .needsSnapshot(have: StepPosition(epoch: 1, step: 2)))
        #expect(try standby.shippedRows() == before)
        // The snapshot puts it where the active is; the next steps apply.
        let snapshot = try #require(StateSnapshot(payload: try active.snapshot().payload))
        #expect(snapshot.position == StepPosition(epoch: 1, step: 4))
        try standby.restore(snapshot)
        #expect(try standby.position() == snapshot.position)
        try Self.work(active, round: 2)
        for step in shipped.take() { #expect(try standby.apply(step) == .applied(replaced: 0, omitted: 0)) }
        #expect(try standby.shippedRows() == active.shippedRows())
    }

    /// The takeover: the standby ships from where it stands as the next epoch; the old active,
    /// back with steps it never shipped, cannot apply the new active's and asks for a snapshot,
    /// and a step of the old epoch that arrives late is ignored.
    @Test func afterATakeoverTheOldActivesStateIsReplacedNotMerged() throws {
        let (old, shippedByOld) = try Self.active(epoch: 1)
        let standby = try StateStore(path: StateStoreTests.temporaryPath())
        try Self.work(old, round: 0)
        for step in shippedByOld.take() { _ = try standby.apply(step) }
        // Committed on the old active, never shipped (it died).
        try Self.work(old, round: 1)
        let late = shippedByOld.take()
        // The standby takes over as epoch 2 and goes on from step 2.
        let shippedByNew = Shipped()
        try standby.startShipping(epoch: 2) { shippedByNew.add($0) }
        try Self.work(standby, round: 5)
        let new = shippedByNew.take()
        #expect(new.first?.base == StepPosition(epoch: 1, step: 2))
        #expect(new.first?.position == StepPosition(epoch: 2, step: 3))
        // The old active back, as a standby.
        old.stopShipping()
        #expect(try old.apply(new[0]) == .needsSnapshot(have: StepPosition(epoch: 1, step: 4)))
        try old.restore(try standby.snapshot())
        #expect(try old.shippedRows() == standby.shippedRows())
        // Its own late step, delivered to the new active's state, is of an epoch taken over.
        #expect(try old.apply(late[0]) == .seen)
    }

    /// An old active back has nothing of its own left to tell: the snapshot that replaces its
    /// state (its outbox among it) empties its `--events` journal too, whose lines beyond the
    /// file's end are of steps no other daemon has; a start as the active then appends none.
    @Test func aSnapshotReplacesTheOutboxAndEmptiesTheJournal() throws {
        let (old, _) = try Self.active()
        try Self.work(old, round: 0)
        try old.record([], journal: [JournalLine(file: "/tmp/events", offset: 0, text: "{\"type\":\"exit\"}")])
        #expect(try old.journal(file: "/tmp/events").count == 1)
        #expect(try !old.pendingOutbox().isEmpty)
        try old.restore(try StateStore(path: StateStoreTests.temporaryPath()).snapshot())
        #expect(try old.journal(file: "/tmp/events").isEmpty)
        #expect(try old.pendingOutbox().isEmpty)
    }

    /// Withholds everything.
    struct Fenced: StepAcknowledger {
        func verdict(through step: Int64) -> ShippedVerdict { .withheld }
        func awaitVerdict(through step: Int64, within limit: Duration) -> ShippedVerdict { .withheld }
    }

    /// A commit's outputs wait on what the acknowledger says of the steps shipped so far: always
    /// yes for a store that does not ship; its answer, for the last step shipped, for one that does.
    @Test func theOutputsOfAStepWaitOnTheAcknowledger() throws {
        let alone = try StateStore(path: StateStoreTests.temporaryPath())
        #expect(alone.shippedThrough == nil && alone.verdict(through: alone.shippedThrough) == .acknowledged)
        let fenced = try StateStore(path: StateStoreTests.temporaryPath())
        try fenced.startShipping(epoch: 1, ship: { _ in }, acknowledger: Fenced())
        #expect(fenced.shippedThrough == 0)
        try Self.work(fenced, round: 0)
        #expect(try fenced.shippedThrough == fenced.position().step && fenced.shippedThrough ?? 0 > 0)
        #expect(fenced.verdict(through: fenced.shippedThrough) == .withheld)
        #expect(fenced.awaitVerdict(through: 1, within: .zero) == .withheld)
        fenced.stopShipping()
        #expect(fenced.verdict(through: 1) == .acknowledged)
    }

    @Test func nothingIsShippedForAWriteThatChangesNoShippedTable() throws {
        let (active, shipped) = try Self.active()
        try active.cacheRules(
            source: "http://r.test/", document: Array("{}".utf8), fetchedAt: Timestamp(microseconds: 5))
        try active.record([], journal: [JournalLine(file: "/tmp/events", offset: 0, text: "{}")])
        #expect(shipped.all.isEmpty)
        #expect(try active.position() == .start)
        active.stopShipping()
        try Self.work(active, round: 0)
        #expect(shipped.all.isEmpty)
        #expect(try active.position() == .start)
    }

    @Test func garbageIsNeitherAStepNorASnapshotAndABrokenChangesetChangesNothing() throws {
        let short: [[UInt8]] = [[], Array("bws1".utf8), Array("bwn1".utf8), Array("bwn1".utf8) + [1]]
        for bytes in short + [Array(repeating: 0xFF, count: 64)] {
            #expect(ShippedStep(payload: bytes) == nil)
            #expect(StateSnapshot(payload: bytes) == nil)
        }
        let (active, shipped) = try Self.active()
        try Self.work(active, round: 0)
        let step = try #require(shipped.all.first)
        let empty = try StateStore(path: StateStoreTests.temporaryPath()).shippedRows()
        // Cut short, or bytes at random, with the right positions: said (thrown) or taken for a
        // step not made here; never applied, never half.
        var random = SystemRandomNumberGenerator()
        var broken = (0..<step.changeset.count).filter { $0 % 7 == 0 }.map { Array(step.changeset.prefix($0)) }
        broken += (0..<20).map { _ in (0..<step.changeset.count).map { _ in UInt8.random(in: 0...255, using: &random) }
        }
        for changeset in broken {
            let standby = try StateStore(path: StateStoreTests.temporaryPath())
            var garbled = step
            garbled.changeset = changeset
            if let verdict = try? standby.apply(garbled) {
                #expect(verdict == .needsSnapshot(have: .start))
            }
            #expect(try standby.position() == .start)
            #expect(try standby.shippedRows() == empty)
        }
        // A snapshot that is no database is refused, and the state stays.
        let standby = try StateStore(path: StateStoreTests.temporaryPath())
        try Self.work(standby, round: 3)
        let before = try standby.shippedRows()
        #expect(throws: StateStoreError.self) {
            try standby.restore(
                StateSnapshot(position: StepPosition(epoch: 1, step: 9), image: Array("not sqlite".utf8)))
        }
        #expect(try standby.shippedRows() == before)
    }

    @Test func aSnapshotOfAnotherSchemaIsRefused() throws {
        let (active, _) = try Self.active()
        try Self.work(active, round: 0)
        let snapshot = try active.snapshot()
        // The same image with a migration this beaconwatch does not have.
        let path = StateStoreTests.temporaryPath()
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(snapshot.image).write(to: URL(fileURLWithPath: path))
        #expect(
            try StateStoreTests.python(
                "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(\"INSERT INTO grdb_migrations VALUES ('v99: later')\"); c.commit()",
                [path]))
        let newer = StateSnapshot(
            position: snapshot.position, image: try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))))
        let standby = try StateStore(path: StateStoreTests.temporaryPath())
        let error = #expect(throws: StateStoreError.self) { try standby.restore(newer) }
        #expect(error?.description.contains("run the same version on every daemon") == true)
        #expect(try standby.position() == .start)
    }
}
