import CSQLiteSession
import Foundation
import GRDB

/// The cluster's state shipping (docs/behaviour.md §21, docs/failover.md): the active records the
/// rows each committed step changes (an SQLite session) and hands them on as a ``ShippedStep``; a
/// standby applies the steps to its own database in order, or replaces its state with a
/// ``StateSnapshot`` when it cannot.
extension StateStore {
    /// What a restart reads, so what a standby must hold to take over: every device's reports,
    /// counters, alerts, dwell, nearest beacon and record, the outbox, the scanners' calibration,
    /// the building's fingerprints, and the position. Not the
    /// `--events` journal (of a file on the active's machine) nor the rules cache (each daemon
    /// fetches its own rules).
    package static let shippedTables = [
        "beaconReport", "ruleCounter", "groupCounter", "notificationDay", "alertRecord", "dwell", "nearestBeacon",
        "deviceRecord", "outbox", "scannerLevel", "fingerprint", "clusterPosition",
    ]
    static let shippedTableSet = Set(shippedTables)

    /// The position of this state in its cluster's steps.
    package func position() throws -> StepPosition {
        try reading { db in try Self.position(in: db) }
    }

    static func position(in db: Database) throws -> StepPosition {
        guard let row = try Row.fetchOne(db, sql: "SELECT epoch, step FROM clusterPosition WHERE id = 1") else {
            return .start
        }
        return StepPosition(epoch: row["epoch"], step: row["step"])
    }

    /// From now on, hands each committed step that changed a shipped table to `ship`, in commit
    /// order (called on the writer's queue, right after the commit: it must not block), as a
    /// step of the active of `epoch`; `acknowledger` says whether the outputs of the steps
    /// shipped up to a step number may go out (always, without one).
    package func startShipping(
        epoch: Int64, ship: @escaping @Sendable (ShippedStep) -> Void, acknowledger: (any StepAcknowledger)? = nil
    ) throws {
        do {
            try database.writeWithoutTransaction { db in
                try db.execute(sql: "UPDATE clusterLocal SET activeEpoch = ? WHERE id = 1", arguments: [epoch])
                let session = try Self.session(on: db)
                let sent = try Self.position(in: db).step
                let previous = shipping.withLock { state -> OpaquePointer? in
                    let previous = state?.session.pointer
                    state = Shipping(
                        session: SessionPointer(pointer: session), epoch: epoch, ship: ship, sent: sent,
                        acknowledger: acknowledger)
                    return previous
                }
                if let previous { sqlite3session_delete(previous) }
            }
        } catch {
            throw StateStoreError(path: path, problem: Self.describe(error))
        }
    }

    /// The number of the last step shipped (`nil` when the state does not ship): a commit's
    /// outputs may go out once ``verdict(through:)`` of it says so.
    package var shippedThrough: Int64? { shipping.withLock { $0?.sent } }

    /// Whether the outputs of the steps shipped up to step `step` may go out (always, for `nil`
    /// or a state that does not ship). In a cluster, only once the broker holds those steps, so
    /// the next active has them: a step in no one's state but this one's has outputs no one may
    /// publish (docs/failover.md, "Outputs wait for the broker").
    package func verdict(through step: Int64?) -> ShippedVerdict {
        guard let step, let acknowledger = shipping.withLock({ $0?.acknowledger }) else { return .acknowledged }
        return acknowledger.verdict(through: step)
    }

    /// ``verdict(through:)`` once it no longer waits, or after `limit` (then `.waiting`): the
    /// last commit of a run, whose outputs cannot wait for a later turn.
    package func awaitVerdict(through step: Int64?, within limit: Duration) -> ShippedVerdict {
        guard let step, let acknowledger = shipping.withLock({ $0?.acknowledger }) else { return .acknowledged }
        return acknowledger.awaitVerdict(through: step, within: limit)
    }

    /// Ships no more steps.
    package func stopShipping() {
        database.writeWithoutTransaction { _ in
            let previous = shipping.withLock { state -> OpaquePointer? in
                defer { state = nil }
                return state?.session.pointer
            }
            if let previous { sqlite3session_delete(previous) }
        }
    }

    /// A new session on `db`'s connection recording the shipped tables.
    private static func session(on db: Database) throws -> OpaquePointer {
        var session: OpaquePointer?
        let code = bw_session_create(db.sqliteConnection, &session)
        guard code == SQLITE_OK, let session else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: "cannot record the steps to ship")
        }
        for table in shippedTables {
            let attached = sqlite3session_attach(session, table)
            guard attached == SQLITE_OK else {
                sqlite3session_delete(session)
                throw DatabaseError(resultCode: ResultCode(rawValue: attached), message: "cannot record table \(table)")
            }
        }
        return session
    }

    /// Runs `body` in one transaction and, when the state ships, moves the position one step on
    /// in it (when `body` changed a shipped table) and ships the step after the commit. Errors
    /// are SQLite's: the caller says which file.
    func commit<T>(_ body: (Database) throws -> T) throws -> T {
        try database.writeWithoutTransaction { db in
            var results: [T] = []
            var step: (base: StepPosition, position: StepPosition)?
            do {
                try db.inTransaction {
                    results.append(try body(db))
                    step = try advance(in: db)
                    return .commit
                }
            } catch {
                // What the session recorded of the rolled-back transaction is not a step.
                try renewSession(on: db)
                throw error
            }
            if let step { try ship(step, on: db) }
            guard let result = results.first else {
                throw DatabaseError(message: "the transaction ended without its result")
            }
            return result
        }
    }

    /// In the transaction, when shipping and something shipped changed: the position's next step.
    private func advance(in db: Database) throws -> (base: StepPosition, position: StepPosition)? {
        guard let (session, epoch) = shipping.withLock({ $0.map { ($0.session.pointer, $0.epoch) } }),
            sqlite3session_isempty(session) == 0
        else { return nil }
        let base = try Self.position(in: db)
        let next = StepPosition(epoch: epoch, step: base.step &+ 1)
        try db.execute(
            sql: "UPDATE clusterPosition SET epoch = ?, step = ? WHERE id = 1", arguments: [next.epoch, next.step])
        return (base, next)
    }

    /// After the commit: the session's changeset shipped, a fresh session for the next step.
    private func ship(_ step: (base: StepPosition, position: StepPosition), on db: Database) throws {
        guard let (session, ship) = shipping.withLock({ $0.map { ($0.session.pointer, $0.ship) } }) else { return }
        var size: Int32 = 0
        var bytes: UnsafeMutableRawPointer?
        let code = sqlite3session_changeset(session, &size, &bytes)
        defer { CSQLiteSession.sqlite3_free(bytes) }
        guard code == SQLITE_OK else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: "cannot read the step to ship")
        }
        let changeset = bytes.map { [UInt8](UnsafeRawBufferPointer(start: $0, count: Int(max(size, 0)))) } ?? []
        try renewSession(on: db)
        shipping.withLock { $0?.sent = step.position.step }
        ship(ShippedStep(base: step.base, position: step.position, changeset: changeset))
    }

    /// Replaces the session (SQLite has no way to empty one) when shipping.
    private func renewSession(on db: Database) throws {
        guard shipping.withLock({ $0 != nil }) else { return }
        let fresh = try Self.session(on: db)
        let previous = shipping.withLock { state -> OpaquePointer? in
            let previous = state?.session.pointer
            state?.session = SessionPointer(pointer: fresh)
            return previous
        }
        if let previous { sqlite3session_delete(previous) }
    }

    /// Applies a step the active shipped, when it was made on this state (its base is this
    /// state's position); says what it did.
    package func apply(_ step: ShippedStep) throws -> StepVerdict {
        do {
            return try database.writeWithoutTransaction { db in
                let have = try Self.position(in: db)
                if step.position.epoch < have.epoch
                    || (step.position.epoch == have.epoch && step.position.step <= have.step)
                {
                    return .seen
                }
                guard step.base == have, step.changeset.count <= Int32.max,
                    ChangesetLayout.isWellFormed(step.changeset, tables: Self.shippedTableSet)
                else { return .needsSnapshot(have: have) }
                var counts = bw_apply_counts()
                var verdict = StepVerdict.needsSnapshot(have: have)
                // In a transaction of its own: a changeset that applies but does not lead to its
                // position (it was not made as a step) is undone, not half kept.
                try db.inTransaction {
                    var changeset = step.changeset
                    let code = changeset.withUnsafeMutableBytes { raw in
                        bw_changeset_apply(db.sqliteConnection, Int32(raw.count), raw.baseAddress, &counts)
                    }
                    if counts.positionConflict != 0 { return .rollback }
                    guard code == SQLITE_OK else {
                        throw DatabaseError(
                            resultCode: ResultCode(rawValue: code),
                            message:
                                "the shipped \(step.position) does not apply (\(String(cString: sqlite3_errstr(code))))"
                        )
                    }
                    guard try Self.position(in: db) == step.position else { return .rollback }
                    verdict = .applied(replaced: Int(counts.replaced), omitted: Int(counts.omitted))
                    return .commit
                }
                return verdict
            }
        } catch {
            throw StateStoreError(path: path, problem: Self.describe(error))
        }
    }

    /// A copy of the shipped state as it is now, at its position (taken between two commits).
    package func snapshot() throws -> StateSnapshot {
        let file = scratchFile("snapshot")
        defer { try? FileManager.default.removeItem(atPath: file) }
        do {
            let position = try database.writeWithoutTransaction { db in
                let position = try Self.position(in: db)
                try db.execute(sql: "VACUUM INTO ?", arguments: [file])
                return position
            }
            let image = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
            return StateSnapshot(position: position, image: image)
        } catch {
            throw StateStoreError(path: path, problem: Self.describe(error))
        }
    }

    /// Replaces the shipped state with `snapshot`'s, in one transaction; the state is then at its
    /// position. A snapshot of another schema (another beaconwatch) is refused.
    ///
    /// The `--events` journal (not shipped) is emptied with it: what it held beyond the file's end
    /// is of steps no other daemon has (their outputs were withheld), replaced now by the
    /// active's; a start as the active must not append them to the file.
    package func restore(_ snapshot: StateSnapshot) throws {
        let file = scratchFile("restore")
        defer { try? FileManager.default.removeItem(atPath: file) }
        do {
            try Data(snapshot.image).write(to: URL(fileURLWithPath: file))
            try database.writeWithoutTransaction { db in
                try db.execute(sql: "ATTACH DATABASE ? AS snapshot", arguments: [file])
                defer { try? db.execute(sql: "DETACH DATABASE snapshot") }
                let migrations = "SELECT identifier FROM %@.grdb_migrations ORDER BY identifier"
                let theirs = try String.fetchAll(db, sql: migrations.replacingOccurrences(of: "%@", with: "snapshot"))
                let ours = try String.fetchAll(db, sql: migrations.replacingOccurrences(of: "%@", with: "main"))
                guard theirs == ours else {
                    throw StateStoreError(
                        path: path,
                        problem:
                            "the active's state is of another beaconwatch (\(theirs.count) migrations, here \(ours.count)); "
                            + "run the same version on every daemon of the cluster")
                }
                try db.inTransaction {
                    try db.execute(sql: "UPDATE clusterLocal SET activeEpoch = 0 WHERE id = 1")
                    try db.execute(sql: "DELETE FROM eventsJournal")
                    for table in Self.shippedTables {
                        try db.execute(sql: "DELETE FROM main.\(table)")
                        try db.execute(sql: "INSERT INTO main.\(table) SELECT * FROM snapshot.\(table)")
                    }
                    return .commit
                }
            }
        } catch let error as StateStoreError {
            throw error
        } catch {
            throw StateStoreError(path: path, problem: Self.describe(error))
        }
    }

    /// Every shipped row, a line each (`table: values`), in table order, sorted within a table: two states
    /// that print the same hold the same.
    package func shippedRows() throws -> [String] {
        try reading { db in
            var lines: [String] = []
            for table in Self.shippedTables {
                lines += try Row.fetchAll(db, sql: "SELECT * FROM \(table)").map {
                    "\(table): \($0.databaseValues.map(\.description).joined(separator: ", "))"
                }.sorted()
            }
            return lines
        }
    }

    /// A file name of its own beside the database (in the temporary folder for one in memory).
    private func scratchFile(_ purpose: String) -> String {
        let folder =
            path == ":memory:"
            ? NSTemporaryDirectory() : URL(fileURLWithPath: path).deletingLastPathComponent().path
        return "\(folder)/.beaconwatch-\(purpose)-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).db"
    }
}

/// The state of shipping: the session recording the step in the making, the active's epoch, and
/// where the steps go.
struct Shipping {
    var session: SessionPointer
    var epoch: Int64
    var ship: @Sendable (ShippedStep) -> Void
    /// The number of the last step shipped.
    var sent: Int64
    var acknowledger: (any StepAcknowledger)?
}

/// An `sqlite3_session *`, used only on the writer's queue (GRDB serializes it).
struct SessionPointer: @unchecked Sendable {
    var pointer: OpaquePointer
}
