import BeaconCore
import GRDB

/// The `--events` journal and the MQTT outbox: written in the transaction of the step that made
/// them, read back at a restart (docs/behaviour.md §12).
extension StateStore {
    /// The lines of the `--events` journal kept at most: far more than a crash can leave
    /// unwritten (one commit), so a restart can always append what is missing.
    package static let journalLimit: Int64 = 10_000

    static func write(_ journal: [JournalLine], in db: Database) throws {
        guard !journal.isEmpty else { return }
        let statement = try db.cachedStatement(sql: "INSERT INTO eventsJournal (file, offset, line) VALUES (?, ?, ?)")
        for line in journal { try statement.execute(arguments: [line.file, line.offset, line.text]) }
        try db.execute(
            sql: "DELETE FROM eventsJournal WHERE sequence <= ?", arguments: [db.lastInsertedRowID - journalLimit])
    }

    /// The journal of the `--events` file at `path`, oldest first: the last
    /// ``journalLimit`` lines committed for it, each with the offset it goes at.
    package func journal(file path: String) throws -> [JournalLine] {
        try reading { db in
            try Row.fetchAll(
                db, sql: "SELECT offset, line FROM eventsJournal WHERE file = ? ORDER BY sequence", arguments: [path]
            ).map { JournalLine(file: path, offset: $0["offset"], text: $0["line"]) }
        }
    }

    /// Forgets the journal (of every file): the file it describes is another now.
    package func clearJournal() throws {
        do {
            try database.write { try $0.execute(sql: "DELETE FROM eventsJournal") }
        } catch {
            throw StateStoreError(path: path, problem: Self.describe(error))
        }
    }

    /// Removes delivered outbox entries.
    package func settle(_ sequences: [Int64]) throws {
        guard !sequences.isEmpty else { return }
        do {
            try commit { try Self.remove(sequences, in: $0) }
        } catch {
            throw StateStoreError(path: path, problem: Self.describe(error))
        }
    }

    static func remove(_ sequences: [Int64], in db: Database) throws {
        guard !sequences.isEmpty else { return }
        let statement = try db.cachedStatement(sql: "DELETE FROM outbox WHERE sequence = ?")
        for sequence in sequences { try statement.execute(arguments: [sequence]) }
    }

    /// How many outbox entries are not yet delivered, and the newest one's sequence (0 for none).
    package func outboxSummary() throws -> (count: Int, newest: Int64) {
        do {
            return try database.read { db in
                let row = try Row.fetchOne(db, sql: "SELECT COUNT(*) AS count, MAX(sequence) AS newest FROM outbox")
                return (row?["count"] ?? 0, row?["newest"] ?? 0)
            }
        } catch {
            throw StateStoreError(path: path, problem: Self.describe(error))
        }
    }

    /// The outbox entries not yet delivered after sequence `after`, oldest first, at most
    /// `limit`: what a restart sends before anything new, read a window at a time.
    package func pendingOutbox(after: Int64 = 0, limit: Int = .max) throws -> [OutboxEntry] {
        do {
            return try database.read { db in
                try Row.fetchAll(
                    db,
                    sql:
                        "SELECT sequence, topic, payload, qos FROM outbox WHERE sequence > ? ORDER BY sequence LIMIT ?",
                    arguments: [after, Int64(clamping: limit)]
                ).map {
                    OutboxEntry(
                        sequence: $0["sequence"],
                        message: OutboxMessage(topic: $0["topic"], payload: $0["payload"], qos: $0["qos"]))
                }
            }
        } catch {
            throw StateStoreError(path: path, problem: Self.describe(error))
        }
    }
}
