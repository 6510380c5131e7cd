import BeaconCore
import Foundation
import GRDB
import RegionMonitor
import Rules
import Engine
import Synchronization
import Syscalls

/// The SQLite state of docs/behaviour.md §12 (WAL, versioned migrations): each beacon's last reported class, so
/// that a restart repeats no LocationBeaconEvent; the MQTT outbox, so that no event is lost; the
/// rule and group counters with their limits' fingerprints and the day's notification count; the
/// cached rules document of a URL source.
///
/// A state change and the outputs that caused it are written in one transaction
/// (``record(_:outbox:settled:)``), so a crash loses neither nor writes one without the other.
/// `synchronous = NORMAL` under WAL: a commit survives the process being killed at any instant;
/// only a power cut may lose the last commits.
package final class StateStore: Sendable {
    /// Where the state lives, for messages (`:memory:` for a temporary one).
    package let path: String
    let database: DatabaseQueue
    private let checkpointer: Checkpointer?
    /// Days of dwell history kept (`State.keepDays`); a newer day prunes what falls out.
    package let keepDays: Int
    /// The newest dwell day written, whose arrival pruned the history last.
    private let prunedFor = Mutex<String?>(nil)
    /// Set while the state ships its steps to a cluster's standbys (StateStore+Shipping).
    let shipping = Mutex<Shipping?>(nil)

    /// Opens (creating its folder and the file when missing) and migrates the database at `path`.
    ///
    /// Throws ``StateStoreError`` for a file that is not a database, cannot be written, or was
    /// written by a newer beaconwatch.
    package init(path: String, keepDays: Int = 400) throws {
        self.path = path
        self.keepDays = keepDays
        var configuration = GRDB.Configuration()
        configuration.journalMode = .wal
        configuration.busyMode = .timeout(5)
        // Asked first: what SQLite says of a file it cannot write depends on how far it got.
        if let reason = FileAccess.unwritable(path) {
            throw StateStoreError(path: path, problem: "\(reason); make it writable or set State.database elsewhere")
        }
        do {
            let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            var writer = configuration
            // The checkpointer's own connection copies the WAL into the database as it grows, so
            // the copy and its fsync are not inside a commit the engine waits for; the writer's
            // own (rarer) checkpoint then finds little left and resets the WAL.
            writer.prepareDatabase { db in
                try db.execute(sql: "PRAGMA synchronous = NORMAL; PRAGMA wal_autocheckpoint = 4000")
            }
            database = try DatabaseQueue(path: path, configuration: writer)
            try Self.migrate(database, path: path)
            try Self.check(database, path: path)
            let checkpointer = try Checkpointer(path: path, configuration: configuration)
            self.checkpointer = checkpointer
            try database.write { db in
                db.add(transactionObserver: Checkpointer.CommitObserver(checkpointer), extent: .databaseLifetime)
            }
        } catch let error as StateStoreError {
            throw error
        } catch {
            throw StateStoreError(path: path, problem: Self.describe(error))
        }
    }

    deinit { checkpointer?.stop() }

    /// Closes the database after a clean stop: the checkpointer's connection first, then the writer's,
    /// whose close as the last connection copies the WAL into the database and removes the `-wal` and
    /// `-shm` files (a crash leaves them, and the next open recovers from them). Nothing may use the
    /// store after this; a failure is returned, not thrown, for the stop to log.
    @discardableResult
    package func close() -> String? {
        stopShipping()
        checkpointer?.stopAndWait()
        do {
            _ = try database.writeWithoutTransaction { try $0.checkpoint(.truncate) }
            try database.close()
            return nil
        } catch {
            return Self.describe(error)
        }
    }

    /// A state that lives in memory for one run: `replay` without `--state`.
    package init(keepDays: Int = 400) throws {
        path = ":memory:"
        self.keepDays = keepDays
        database = try DatabaseQueue()
        checkpointer = nil
        try Self.migrate(database, path: path)
    }

    /// Refuses a damaged file or one that cannot be written, at start and in one line, rather than
    /// going on from a part of it or failing at the first output.
    private static func check(_ database: DatabaseQueue, path: String) throws {
        do {
            try database.writeWithoutTransaction { db in
                let verdict = try String.fetchAll(db, sql: "PRAGMA quick_check(3)")
                guard verdict == ["ok"] else {
                    throw StateStoreError(
                        path: path,
                        problem: "is damaged (\(verdict.joined(separator: "; ").prefix(120).printable)); move it aside "
                            + "(beaconwatch then starts a new one) or restore a copy")
                }
                // Rewrites the header as it is: a read-only file or file system shows now.
                try db.execute(sql: "PRAGMA user_version = \(try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0)")
            }
        } catch let error as StateStoreError {
            throw error
        } catch {
            throw StateStoreError(path: path, problem: Self.describe(error))
        }
    }

    private static func migrate(_ database: DatabaseQueue, path: String) throws {
        do {
            let migrator = migrator
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
    package func lastReported(device: DeviceID = .own) throws -> [String: Proximity] {
        try reading { db in try Self.classes(in: db, device: device.column) }
    }

    private static func classes(in db: Database, device: String) throws -> [String: Proximity] {
        var classes: [String: Proximity] = [:]
        for row in try Row.fetchAll(
            db, sql: "SELECT locationID, proximity FROM beaconReport WHERE device = ?", arguments: [device])
        {
            if let value = Proximity(rawValue: row["proximity"]) { classes[row["locationID"]] = value }
        }
        return classes
    }

    /// Runs `body` in one read transaction; a failure is a ``StateStoreError``.
    func reading<T>(_ body: (Database) throws -> T) throws -> T {
        do {
            return try database.read { db in try body(db) }
        } catch {
            throw StateStoreError(path: path, problem: Self.describe(error))
        }
    }

    /// Writes what the own radio's outputs change in its state with `outbox`,
    /// `settled` and `journal`, as ``record(devices:outbox:settled:journal:)`` does.
    @discardableResult
    package func record(
        _ outputs: some Collection<MonitorOutput>, outbox: [OutboxMessage] = [], settled: [Int64] = [],
        changes: StateChanges = StateChanges(), journal: [JournalLine] = []
    ) throws -> [OutboxEntry] {
        try record(
            devices: [DeviceChanges(device: .own, outputs: Array(outputs), changes: changes)], outbox: outbox,
            settled: settled, journal: journal)
    }

    /// Writes what each device's outputs change in its state (`devices`, the own radio's
    /// among them), the messages they put in the outbox, the lines of the `--events` journal,
    /// the removal of `settled` outbox entries (acknowledged since) and the scanners'
    /// `calibration` when it changed (every level, replacing those kept) and the rooms whose
    /// `fingerprints` changed, in one transaction;
    /// none when there is nothing to write. Returns the outbox entries as written, in order.
    @discardableResult
    package func record(
        devices: [DeviceChanges], outbox: [OutboxMessage] = [], settled: [Int64] = [], journal: [JournalLine] = [],
        calibration: [ScannerLevel]? = nil, fingerprints: [FingerprintChange] = []
    ) throws -> [OutboxEntry] {
        guard
            devices.contains(where: \.writes) || !outbox.isEmpty || !settled.isEmpty || !journal.isEmpty
                || calibration != nil || !fingerprints.isEmpty
        else { return [] }
        do {
            return try commit { db in
                try Self.write(journal, in: db)
                if let calibration { try Self.write(calibration, in: db) }
                try Self.write(fingerprints, in: db)
                for share in devices where share.writes { try write(share, in: db) }
                try Self.remove(settled, in: db)
                var entries: [OutboxEntry] = []
                entries.reserveCapacity(outbox.count)
                if !outbox.isEmpty {
                    let statement = try db.cachedStatement(
                        sql: "INSERT INTO outbox (topic, payload, qos) VALUES (?, ?, ?)")
                    for message in outbox {
                        try statement.execute(arguments: [message.topic, message.payload, message.qos])
                        entries.append(OutboxEntry(sequence: db.lastInsertedRowID, message: message))
                    }
                }
                return entries
            }
        } catch {
            throw StateStoreError(path: path, problem: Self.describe(error))
        }
    }

    /// One device's state changes (its reports, nearest beacon, rules, alerts, dwell, and for a
    /// fleet device what the daemon knows of it).
    func write(_ share: DeviceChanges, in db: Database) throws {
        let device = share.device.column
        try Self.write(share.changes.rules, device: device, in: db)
        try Self.write(alerts: share.changes.alerts, dwell: share.changes.dwell, device: device, in: db)
        try pruneDwell(after: share.changes.dwell.keys, in: db)
        var nearest: NearestChange?
        let statement = try db.cachedStatement(
            sql: """
                INSERT INTO beaconReport (device, locationID, proximity, reportedAt) VALUES (?, ?, ?, ?)
                ON CONFLICT(device, locationID) DO UPDATE SET proximity = excluded.proximity,
                reportedAt = excluded.reportedAt
                """)
        for output in share.outputs {
            switch output {
            case .location(let time, let event):
                try statement.execute(arguments: [device, event.zone, event.distance.rawValue, time.microseconds])
            case .nearest(_, let change): nearest = change
            default: continue
            }
        }
        if let nearest {
            try db.execute(
                sql: """
                    INSERT INTO nearestBeacon (device, locationID) VALUES (?, ?)
                    ON CONFLICT(device) DO UPDATE SET locationID = excluded.locationID
                    """, arguments: [device, nearest.locationID])
        }
        if let record = share.record {
            // The form is 2 once the legacy waypoints are deleted; a record without presence
            // keeps the one kept before.
            try db.execute(
                sql: """
                    INSERT INTO deviceRecord (device, source, commandTopic, waypoints, waypointForm, ownWaypoints, presence)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT(device) DO UPDATE SET source = excluded.source, commandTopic = excluded.commandTopic,
                    waypoints = excluded.waypoints, waypointForm = excluded.waypointForm,
                    ownWaypoints = excluded.ownWaypoints, presence = COALESCE(excluded.presence, presence)
                    """,
                arguments: [
                    device, record.source, record.commandTopic,
                    (record.legacy.isEmpty ? record.waypoints : record.legacy).map(\.description).joined(
                        separator: "\n"),
                    record.legacy.isEmpty ? 2 : 1, record.ownWaypoints, record.presence?.text,
                ])
        }
    }

    static func write(_ rules: RuleState, device: String, in db: Database) throws {
        guard !rules.isEmpty else { return }
        for (key, counter) in rules.rules {
            try db.execute(
                sql: """
                    INSERT INTO ruleCounter (device, region, rule, count, fingerprint) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT(device, region, rule) DO UPDATE SET count = excluded.count,
                    fingerprint = excluded.fingerprint
                    """, arguments: [device, key.region, key.rule, counter.count, counter.fingerprint])
        }
        for (key, counter) in rules.groups {
            try db.execute(
                sql: """
                    INSERT INTO groupCounter (device, groupID, trigger, count, fingerprint) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT(device, groupID, trigger) DO UPDATE SET count = excluded.count,
                    fingerprint = excluded.fingerprint
                    """, arguments: [device, key.group, key.trigger, counter.count, counter.fingerprint])
        }
        if let day = rules.day {
            try db.execute(
                sql: """
                    INSERT INTO notificationDay (device, date, count) VALUES (?, ?, ?)
                    ON CONFLICT(device) DO UPDATE SET date = excluded.date, count = excluded.count
                    """, arguments: [device, day.date, day.count])
        }
    }

    /// Deletes the dwell days older than ``keepDays`` before the newest day in `written`, once
    /// per new day (a day is `YYYY-MM-DD`, which sorts as it reads).
    private func pruneDwell(after written: some Collection<DwellKey>, in db: Database) throws {
        guard let newest = written.map(\.date).max(), prunedFor.withLock({ $0.map { newest > $0 } ?? true }),
            let cutoff = Self.day(keepDays, before: newest)
        else { return }
        try db.execute(sql: "DELETE FROM dwell WHERE date < ?", arguments: [cutoff])
        prunedFor.withLock { $0 = newest }
    }

    /// The date `days` days before `date` (`YYYY-MM-DD`), or `nil` for a date that is none.
    package static func day(_ days: Int, before date: String) -> String? {
        guard let local = LocalDate(date) else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        guard let start = calendar.date(from: DateComponents(year: local.year, month: local.month, day: local.day)),
            let earlier = calendar.date(byAdding: .day, value: -days, to: start)
        else { return nil }
        let parts = calendar.dateComponents([.year, .month, .day], from: earlier)
        guard let year = parts.year, let month = parts.month, let day = parts.day else { return nil }
        return LocalDate(year: year, month: month, day: day).description
    }

    static func write(
        alerts: [String: AlertRecord], dwell: [DwellKey: Double], device: String, in db: Database
    ) throws {
        for (locationID, record) in alerts {
            try db.execute(
                sql: """
                    INSERT INTO alertRecord (device, locationID, status, resetAt) VALUES (?, ?, ?, ?)
                    ON CONFLICT(device, locationID) DO UPDATE SET status = excluded.status, resetAt = excluded.resetAt
                    """, arguments: [device, locationID, record.status.rawValue, record.resetAt?.microseconds])
        }
        for (key, seconds) in dwell {
            try db.execute(
                sql: """
                    INSERT INTO dwell (device, region, date, seconds) VALUES (?, ?, ?, ?)
                    ON CONFLICT(device, region, date) DO UPDATE SET seconds = seconds + excluded.seconds
                    """, arguments: [device, key.region, key.date, seconds])
        }
    }

    /// Everything a restart starts from: the last reported classes, the rule state, the alert
    /// records, the dwell totals and the nearest beacon.
    package func kept(device: DeviceID = .own) throws -> KeptState {
        try reading { db in try Self.kept(in: db, device: device.column) }
    }

    private static func kept(in db: Database, device: String) throws -> KeptState {
        var state = KeptState()
        state.classes = try classes(in: db, device: device)
        state.rules = try ruleState(in: db, device: device)
        for row in try Row.fetchAll(
            db, sql: "SELECT locationID, status, resetAt FROM alertRecord WHERE device = ?", arguments: [device])
        {
            guard let status = AlertStatus(rawValue: row["status"]) else { continue }
            let reset: Int64? = row["resetAt"]
            state.alerts[row["locationID"]] = AlertRecord(
                status: status, resetAt: reset.map { Timestamp(microseconds: $0) })
        }
        // The latest day's totals (a restart goes on with them) and every region's name (its
        // `B/dwell` is set again); earlier days stay in the table, as history.
        state.dwell = try dwell(
            in: db, device: device, where: "date = (SELECT MAX(date) FROM dwell WHERE device = ?)")
        state.dwellRegions = Set(
            try String.fetchAll(db, sql: "SELECT DISTINCT region FROM dwell WHERE device = ?", arguments: [device]))
        state.nearest = try String.fetchOne(
            db, sql: "SELECT locationID FROM nearestBeacon WHERE device = ?", arguments: [device])
        state.presence = try String.fetchOne(
            db, sql: "SELECT presence FROM deviceRecord WHERE device = ?", arguments: [device]
        ).map { MonitorPresence(text: $0) }
        return state
    }

    /// Every kept dwell total, per region and day: the history that restarts do not load.
    package func dwellHistory(device: DeviceID = .own) throws -> [DwellKey: Double] {
        try reading { db in try Self.dwell(in: db, device: device.column) }
    }

    /// The dwell rows matching `condition`, per region and day.
    private static func dwell(in db: Database, device: String, where condition: String? = nil) throws -> [DwellKey:
        Double]
    {
        var totals: [DwellKey: Double] = [:]
        let sql = "SELECT region, date, seconds FROM dwell WHERE device = ?" + (condition.map { " AND \($0)" } ?? "")
        let arguments: StatementArguments = condition == nil ? [device] : [device, device]
        for row in try Row.fetchAll(db, sql: sql, arguments: arguments) {
            totals[DwellKey(region: row["region"], date: row["date"])] = row["seconds"]
        }
        return totals
    }

    /// Every fleet device with kept state (docs/behaviour.md §15): its state, and its row (with
    /// its presence) when one was written. The own radio's is ``kept(device:)``'s.
    package func keptDevices() throws -> [String: KeptDevice] {
        // One transaction for them all: a fleet of thousands starts without thousands of reads.
        try reading { db in
            var rows: [String: DeviceRow] = [:]
            let columns = "device, source, commandTopic, waypoints, waypointForm, ownWaypoints, presence"
            for row in try Row.fetchAll(db, sql: "SELECT \(columns) FROM deviceRecord WHERE device != ''") {
                let list: String = row["waypoints"]
                let regions = list.split(separator: "\n").compactMap { Region($0) }
                let legacy = (row["waypointForm"] as Int?) == 1
                rows[row["device"]] = DeviceRow(
                    source: row["source"], commandTopic: row["commandTopic"],
                    waypoints: legacy ? [] : regions, legacy: legacy ? regions : [],
                    ownWaypoints: row["ownWaypoints"],
                    presence: (row["presence"] as String?).map { MonitorPresence(text: $0) })
            }
            let tables = [
                "beaconReport", "ruleCounter", "groupCounter", "notificationDay", "alertRecord", "dwell",
                "nearestBeacon", "deviceRecord",
            ]
            let sql = tables.map { "SELECT device FROM \($0) WHERE device != ''" }.joined(separator: " UNION ")
            var kept: [String: KeptDevice] = [:]
            for device in try String.fetchAll(db, sql: sql) {
                kept[device] = KeptDevice(state: try Self.kept(in: db, device: device), row: rows[device])
            }
            return kept
        }
    }

    /// The kept rule and group counters and the day's notification count.
    package func ruleState(device: DeviceID = .own) throws -> RuleState {
        try reading { db in try Self.ruleState(in: db, device: device.column) }
    }

    private static func ruleState(in db: Database, device: String) throws -> RuleState {
        var state = RuleState()
        for row in try Row.fetchAll(
            db, sql: "SELECT region, rule, count, fingerprint FROM ruleCounter WHERE device = ?", arguments: [device])
        {
            state.rules[RuleKey(region: row["region"], rule: row["rule"])] = RuleCounter(
                count: row["count"], fingerprint: row["fingerprint"])
        }
        for row in try Row.fetchAll(
            db, sql: "SELECT groupID, trigger, count, fingerprint FROM groupCounter WHERE device = ?",
            arguments: [device])
        {
            state.groups[GroupKey(group: row["groupID"], trigger: row["trigger"])] = RuleCounter(
                count: row["count"], fingerprint: row["fingerprint"])
        }
        if let row = try Row.fetchOne(
            db, sql: "SELECT date, count FROM notificationDay WHERE device = ?", arguments: [device])
        {
            state.day = DayCount(date: row["date"], count: row["count"])
        }
        return state
    }

    /// The last good rules document fetched from `source` (a URL), and when.
    package func cachedRules(source: String) throws -> (document: [UInt8], fetchedAt: Timestamp)? {
        do {
            return try database.read { db in
                guard
                    let row = try Row.fetchOne(
                        db, sql: "SELECT document, fetchedAt FROM rulesCache WHERE source = ?", arguments: [source])
                else { return nil }
                let document: Data = row["document"]
                return ([UInt8](document), Timestamp(microseconds: row["fetchedAt"]))
            }
        } catch {
            throw StateStoreError(path: path, problem: Self.describe(error))
        }
    }

    /// Keeps a good rules document fetched from `source`, replacing the one before.
    package func cacheRules(source: String, document: [UInt8], fetchedAt: Timestamp) throws {
        do {
            try database.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO rulesCache (source, document, fetchedAt) VALUES (?, ?, ?)
                        ON CONFLICT(source) DO UPDATE SET document = excluded.document, fetchedAt = excluded.fetchedAt
                        """, arguments: [source, Data(document), fetchedAt.microseconds])
            }
        } catch {
            throw StateStoreError(path: path, problem: Self.describe(error))
        }
    }

    /// The names of the applied migrations, oldest first.
    package func appliedMigrations() throws -> [String] {
        try database.read { try Self.migrator.appliedMigrations($0) }
    }

    /// The journal mode SQLite reports (`wal` for a file).
    package func journalMode() throws -> String {
        try database.read { try String.fetchOne($0, sql: "PRAGMA journal_mode") ?? "" }
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? DatabaseError {
            switch error.resultCode {
            case .SQLITE_FULL:
                return "the disk is full; free space on its file system"
            case .SQLITE_READONLY:
                return "cannot be written (a read-only file, folder or file system); make it writable by this user"
            case .SQLITE_CANTOPEN:
                return "cannot be opened (no permission, or a read-only file system); make its folder writable "
                    + "by this user, or set State.database"
            case .SQLITE_IOERR:
                return "\(error.message ?? "input/output error"); check the disk and its file system"
            default:
                return
                    "\(error.message ?? "SQLite error \(error.resultCode.rawValue)"); move the file aside or set State.database"
            }
        }
        return "\(error.localizedDescription); check the folder exists and is writable, or set State.database"
    }
}

extension DeviceID {
    /// The `device` column's value: a fleet device's id, and `''` for the own radio (the key
    /// every database since the fleet's first keeps it under; the table of devices takes no
    /// fleet device with an empty id). Only this store reads or writes it.
    var column: String { fleetID ?? "" }
}
