import BeaconCore
import Floorplan
import Foundation
import Persistence
import Testing

/// The building's fingerprints in the state database (docs/behaviour.md §22): migrated onto an
/// older database, replaced by retraining, deleted by a forget, read back exactly, and shipped
/// to a cluster's standby (docs/behaviour.md §21, docs/failover.md) by step and by snapshot.
@Suite struct FingerprintStoreTests {
    static let kitchen = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1"
    static let bathroom = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:4"
    static let office = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:3"

    /// A room's training: a sample per level, a second apart from `start` (µs), by scanners in turn.
    static func training(
        _ room: String, _ levels: [Double], device: String = "anna", start: Int64 = 1_700_000_000_000_000,
        trainedAt: Int64 = 1_700_000_030_000_000
    ) -> Fingerprints.Room {
        let scanners = ["hall", "kitchen", "office"]
        let samples = levels.enumerated().map { index, level in
            FingerprintSample(
                room: room, scanner: scanners[index % scanners.count], level: level,
                at: start + Int64(index) * 1_000_000)
        }
        return Fingerprints.Room(samples: samples, device: device, trainedAt: trainedAt)
    }

    /// `record` of the rooms' changes alone.
    static func keep(_ store: StateStore, _ changes: FingerprintChange...) throws {
        try store.record(devices: [], fingerprints: changes)
    }

    /// The rows of the table, as another program reads them: `room sequence scanner level`.
    static func rows(_ store: StateStore) throws -> [String] {
        try store.shippedRows().filter { $0.hasPrefix("fingerprint: ") }
    }

    @Test func aV12DatabaseGainsTheTableKeepingWhatItHeld() throws {
        let path = StateStoreTests.temporaryPath()
        do {
            let store = try StateStore(path: path)
            try store.record(devices: [], calibration: [ScannerLevelFixture.kitchenHears])
        }
        // Back to v12: no fingerprint table, v13 never applied.
        let script = """
            import sqlite3,sys; c=sqlite3.connect(sys.argv[1])
            c.execute("DROP TABLE fingerprint")
            c.execute("DELETE FROM grdb_migrations WHERE identifier LIKE 'v13:%'")
            c.commit()
            """
        #expect(try StateStoreTests.python(script, [path]))
        let store = try StateStore(path: path)
        #expect(try store.appliedMigrations() == StateStoreTests.migrations)
        #expect(try store.appliedMigrations().last == "v13: the building's fingerprints")
        #expect(try store.keptFingerprints().isEmpty)
        #expect(try store.keptCalibration() == [ScannerLevelFixture.kitchenHears])
        // The new table takes a room at once.
        try Self.keep(store, FingerprintChange(room: Self.kitchen, training: Self.training(Self.kitchen, [-1, -17])))
        #expect(try store.keptFingerprints().rooms.keys.sorted() == [Self.kitchen])
    }

    @Test func aRoomsTrainingIsKeptAndReadBackExactly() throws {
        let path = StateStoreTests.temporaryPath()
        let kitchen = Self.training(Self.kitchen, [-1.25, -17.5, -29.000000000000004, -0.1], device: "anna")
        let bathroom = Self.training(
            Self.bathroom, [-8.3, -12.7, -29.9], device: "ben", start: 1_700_000_040_123_456,
            trainedAt: 1_700_000_070_654_321)
        do {
            let store = try StateStore(path: path)
            try Self.keep(
                store, FingerprintChange(room: Self.kitchen, training: kitchen),
                FingerprintChange(room: Self.bathroom, training: bathroom))
            #expect(try Self.rows(store).count == 7)
        }
        // Reopened, as a restart reads it.
        let kept = try StateStore(path: path).keptFingerprints()
        #expect(kept.rooms == [Self.kitchen: kitchen, Self.bathroom: bathroom])
        #expect(kept.rooms[Self.bathroom]?.device == "ben")
        #expect(kept.rooms[Self.bathroom]?.trainedAt == 1_700_000_070_654_321)
        #expect(kept.rooms[Self.kitchen]?.samples.map(\.level) == [-1.25, -17.5, -29.000000000000004, -0.1])
        #expect(kept.rooms[Self.kitchen]?.samples.map(\.at) == kitchen.samples.map(\.at))
        // What the table of devices holds after the same training, room for room.
        var trained = Fingerprints()
        trained.replace(room: Self.kitchen, with: kitchen.samples, device: "anna", at: kitchen.trainedAt)
        trained.replace(room: Self.bathroom, with: bathroom.samples, device: "ben", at: bathroom.trainedAt)
        #expect(kept.rooms == trained.rooms)
        #expect(kept.samples == trained.samples)
    }

    @Test func retrainingARoomReplacesEveryOneOfItsRowsAndNoOtherRoomsRows() throws {
        let store = try StateStore(path: StateStoreTests.temporaryPath())
        let office = Self.training(Self.office, [-30, -20, -2])
        try Self.keep(
            store,
            FingerprintChange(
                room: Self.kitchen, training: Self.training(Self.kitchen, Array(repeating: -5, count: 9))),
            FingerprintChange(room: Self.office, training: office))
        // Fewer samples, from another tag, later: none of the first session's remain.
        let again = Self.training(
            Self.kitchen, [-3, -19], device: "ben", start: 1_700_000_500_000_000, trainedAt: 1_700_000_530_000_000)
        try Self.keep(store, FingerprintChange(room: Self.kitchen, training: again))
        let kept = try store.keptFingerprints()
        #expect(kept.rooms[Self.kitchen] == again)
        #expect(kept.rooms[Self.office] == office)
        let allRows = try Self.rows(store)
        let kitchenRows = allRows.filter { $0.hasPrefix("fingerprint: \"\(Self.kitchen)\",") }
        #expect(kitchenRows.count == 2, "\(allRows)")
        #expect(kitchenRows.allSatisfy { $0.contains("\"ben\"") && !$0.contains("-5.0") }, "\(kitchenRows)")
    }

    @Test func forgettingARoomDeletesItsRowsAndForgettingEveryRoomDeletesThemAll() throws {
        let path = StateStoreTests.temporaryPath()
        let store = try StateStore(path: path)
        try Self.keep(
            store, FingerprintChange(room: Self.kitchen, training: Self.training(Self.kitchen, [-1, -2])),
            FingerprintChange(room: Self.bathroom, training: Self.training(Self.bathroom, [-3, -4])),
            FingerprintChange(room: Self.office, training: Self.training(Self.office, [-5, -6])))
        try Self.keep(store, FingerprintChange(room: Self.bathroom, training: nil))
        #expect(try store.keptFingerprints().rooms.keys.sorted() == [Self.office, Self.kitchen].sorted())
        #expect(try Self.rows(store).count == 4)
        // A room that was never trained: nothing else goes.
        try Self.keep(store, FingerprintChange(room: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:2", training: nil))
        #expect(try Self.rows(store).count == 4)
        try Self.keep(store, FingerprintChange(room: "*", training: nil))
        #expect(try Self.rows(store).isEmpty)
        #expect(try StateStore(path: path).keptFingerprints().isEmpty)
    }

    @Test func forgettingEveryRoomAndTrainingOneInTheSameCommitKeepsTheOne() throws {
        let store = try StateStore(path: StateStoreTests.temporaryPath())
        let office = Self.training(Self.office, [-7])
        try Self.keep(store, FingerprintChange(room: Self.kitchen, training: Self.training(Self.kitchen, [-1, -2])))
        try Self.keep(
            store, FingerprintChange(room: "*", training: nil), FingerprintChange(room: Self.office, training: office))
        #expect(try store.keptFingerprints().rooms == [Self.office: office])
    }

    @Test func aLevelThatIsNotFiniteIsNotKept() throws {
        let store = try StateStore(path: StateStoreTests.temporaryPath())
        let training = Self.training(Self.kitchen, [-1, .nan, -3, .infinity, -.infinity, -6])
        try Self.keep(store, FingerprintChange(room: Self.kitchen, training: training))
        let kept = try #require(try store.keptFingerprints().rooms[Self.kitchen])
        #expect(kept.samples == training.samples.filter(\.level.isFinite))
        #expect(kept.samples.map(\.level) == [-1, -3, -6])
        #expect(kept.device == training.device && kept.trainedAt == training.trainedAt)
    }

    /// The table is one of those a standby holds: each training, retraining and forget reaches it as
    /// a step, and a snapshot carries it whole.
    @Test func aStandbyHoldsTheFingerprintsByStepAndBySnapshot() throws {
        let (active, shipped) = try ShippingTests.active()
        let standby = try StateStore(path: StateStoreTests.temporaryPath())
        #expect(StateStore.shippedTables.contains("fingerprint"))
        func follow() throws {
            for step in shipped.take() { #expect(try standby.apply(step) == .applied(replaced: 0, omitted: 0)) }
            #expect(try standby.shippedRows() == active.shippedRows())
            #expect(try standby.keptFingerprints().rooms == active.keptFingerprints().rooms)
        }
        let kitchen = Self.training(Self.kitchen, [-1, -17, -29, -2, -16])
        try Self.keep(
            active, FingerprintChange(room: Self.kitchen, training: kitchen),
            FingerprintChange(room: Self.bathroom, training: Self.training(Self.bathroom, [-8, -12, -29])))
        try follow()
        #expect(try standby.keptFingerprints().rooms[Self.kitchen] == kitchen)
        #expect(try Self.rows(standby).count == 8)
        // Retrained with fewer samples: the rows beyond go on the standby too.
        let again = Self.training(Self.kitchen, [-4], device: "ben", trainedAt: 1_700_000_900_000_000)
        try Self.keep(active, FingerprintChange(room: Self.kitchen, training: again))
        try follow()
        #expect(try standby.keptFingerprints().rooms[Self.kitchen] == again)
        #expect(try Self.rows(standby).count == 4)
        try Self.keep(active, FingerprintChange(room: Self.bathroom, training: nil))
        try follow()
        #expect(try standby.keptFingerprints().rooms.keys.sorted() == [Self.kitchen])

        // A standby that missed a step asks for a snapshot, which carries the table.
        try Self.keep(active, FingerprintChange(room: Self.office, training: Self.training(Self.office, [-3, -5])))
        let missed = shipped.take()
        let late = try StateStore(path: StateStoreTests.temporaryPath())
        #expect(try late.apply(missed[0]) == .needsSnapshot(have: .start))
        let snapshot = try #require(StateSnapshot(payload: try active.snapshot().payload))
        try late.restore(snapshot)
        #expect(try late.shippedRows() == active.shippedRows())
        #expect(try late.keptFingerprints().rooms == active.keptFingerprints().rooms)
        #expect(try late.keptFingerprints().rooms.keys.sorted() == [Self.office, Self.kitchen].sorted())
        // Forgetting every room, after the snapshot: the step empties the table there too.
        try Self.keep(active, FingerprintChange(room: "*", training: nil))
        for step in shipped.take() { #expect(try late.apply(step) == .applied(replaced: 0, omitted: 0)) }
        #expect(try late.keptFingerprints().isEmpty)
        #expect(try Self.rows(late).isEmpty)
    }

    /// What the standby holds is what its start reads: the next active, once it ships, goes on
    /// from the trained rooms, and a retraining of its own replaces them on the old active's copy.
    @Test func theNextActiveShipsItsOwnRetrainingOnTopOfWhatItWasShipped() throws {
        let (old, shippedByOld) = try ShippingTests.active(epoch: 1)
        let standby = try StateStore(path: StateStoreTests.temporaryPath())
        try Self.keep(old, FingerprintChange(room: Self.kitchen, training: Self.training(Self.kitchen, [-1, -2, -3])))
        for step in shippedByOld.take() { _ = try standby.apply(step) }
        let shippedByNew = ShippingTests.Shipped()
        try standby.startShipping(epoch: 2) { shippedByNew.add($0) }
        let again = Self.training(Self.kitchen, [-9], device: "ben")
        try Self.keep(standby, FingerprintChange(room: Self.kitchen, training: again))
        old.stopShipping()
        for step in shippedByNew.take() { #expect(try old.apply(step) == .applied(replaced: 0, omitted: 0)) }
        #expect(try old.keptFingerprints().rooms == [Self.kitchen: again])
        #expect(try old.shippedRows() == standby.shippedRows())
    }
}

/// A calibration row, to show a migration keeps what was there.
enum ScannerLevelFixture {
    static let kitchenHears = ScannerLevel(receiver: "kitchen", transmitter: "hall", level: -16)
}
