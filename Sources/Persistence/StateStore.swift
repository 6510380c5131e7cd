import BeaconCore
import Foundation
import GRDB
import RegionMonitor

/// The SQLite state of SPEC 12 (WAL, versioned migrations): for now each beacon's last reported
/// class, so that a restart repeats no LocationBeaconEvent.
///
/// A state change and the outputs that caused it are written in one transaction
/// (``record(_:)``), so a crash loses neither nor writes one without the other.
public final class StateStore: Sendable {
    /// Where the state lives, for messages (`:memory:` for a temporary one).
    public let path: String
    private let database: DatabaseQueue

    /// Opens (creating its folder and the file when missing) and migrates the database at `path`.
    ///
    /// Throws ``StateStoreError`` for a file that is not a database, cannot be written, or was
    /// written by a newer beaconwatch.
    public init(path: String) throws {
        self.path = path
        var configuration = GRDB.Configuration()
        configuration.journalMode = .wal
        configuration.busyMode = .timeout(5)
        do {
            let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            database = try DatabaseQueue(path: path, configuration: configuration)
        } catch {
            throw StateStoreError(path: path, problem: Self.describe(error))
        }
        try migrate()
    }

    /// A state that lives in memory for one run: `replay` without `--state`.
    public init() throws {
        path = ":memory:"
        database = try DatabaseQueue()
        try migrate()
    }

    /// The migrations, oldest first. Never edit one that has shipped; add the next.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: last reported class per beacon") { db in
            try db.create(table: "beaconReport") { table in
                table.primaryKey("locationID", .text)
                table.column("proximity", .text).notNull()
                table.column("reportedAt", .integer).notNull()  // microseconds since the Unix epoch
            }
        }
        return migrator
    }

    private func migrate() throws {
        do {
            let migrator = Self.migrator
            if try database.read({ try migrator.hasBeenSuperseded($0) }) {
                throw StateStoreError(
                    path: path,
                    problem:
                        "was written by a newer beaconwatch; upgrade beaconwatch, or set State.database to another file"
                )
            }
            try migrator.migrate(database)
        } catch let error as StateStoreError {
            throw error
        } catch {
            throw StateStoreError(path: path, problem: Self.describe(error))
        }
    }

    /// The last reported class of each beacon that was reported, by Location ID.
    public func lastReported() throws -> [String: Proximity] {
        do {
            return try database.read { db in
                var classes: [String: Proximity] = [:]
                for row in try Row.fetchAll(db, sql: "SELECT locationID, proximity FROM beaconReport") {
                    if let value = Proximity(rawValue: row["proximity"]) { classes[row["locationID"]] = value }
                }
                return classes
            }
        } catch {
            throw StateStoreError(path: path, problem: Self.describe(error))
        }
    }

    /// Writes what a step's outputs change in the state, in one transaction (none when they
    /// change nothing kept).
    public func record(_ outputs: some Collection<MonitorOutput>) throws {
        guard outputs.contains(where: { if case .location = $0 { true } else { false } }) else { return }
        do {
            try database.write { db in
                for case .location(let time, let event) in outputs {
                    try db.execute(
                        sql: """
                            INSERT INTO beaconReport (locationID, proximity, reportedAt) VALUES (?, ?, ?)
                            ON CONFLICT(locationID) DO UPDATE SET proximity = excluded.proximity,
                            reportedAt = excluded.reportedAt
                            """,
                        arguments: [event.zone, event.distance.rawValue, time.microseconds]
                    )
                }
            }
        } catch {
            throw StateStoreError(path: path, problem: Self.describe(error))
        }
    }

    /// The names of the applied migrations, oldest first.
    public func appliedMigrations() throws -> [String] {
        try database.read { try Self.migrator.appliedMigrations($0) }
    }

    /// The journal mode SQLite reports (`wal` for a file).
    public func journalMode() throws -> String {
        try database.read { try String.fetchOne($0, sql: "PRAGMA journal_mode") ?? "" }
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? DatabaseError {
            return
                "\(error.message ?? "SQLite error \(error.resultCode.rawValue)"); move the file aside or set State.database"
        }
        return "\(error.localizedDescription); check the folder exists and is writable, or set State.database"
    }
}

/// The state database cannot be used; says which file and what to do.
public struct StateStoreError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var problem: String
    public var description: String { "state database \(path): \(problem)" }
}
