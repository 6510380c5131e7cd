import GRDB

/// The database's schema, one migration a version (docs/behaviour.md §12).
extension StateStore {
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
        migrator.registerMigration("v2: MQTT outbox") { db in
            try db.create(table: "outbox") { table in
                table.autoIncrementedPrimaryKey("sequence")
                table.column("topic", .text).notNull()
                table.column("payload", .text).notNull()
                table.column("qos", .integer).notNull()
            }
        }
        migrator.registerMigration("v3: rule counters, the day's notifications, the rules cache") { db in
            try db.create(table: "ruleCounter") { table in
                table.column("region", .text).notNull()
                table.column("rule", .text).notNull()
                table.column("count", .integer).notNull()
                table.column("fingerprint", .text).notNull()
                table.primaryKey(["region", "rule"])
            }
            try db.create(table: "groupCounter") { table in
                table.column("groupID", .text).notNull()
                table.column("trigger", .text).notNull()
                table.column("count", .integer).notNull()
                table.column("fingerprint", .text).notNull()
                table.primaryKey(["groupID", "trigger"])
            }
            try db.create(table: "notificationDay") { table in
                table.primaryKey("id", .integer).check { $0 == 1 }
                table.column("date", .text).notNull()
                table.column("count", .integer).notNull()
            }
            try db.create(table: "rulesCache") { table in
                table.primaryKey("source", .text)
                table.column("document", .blob).notNull()
                table.column("fetchedAt", .integer).notNull()  // microseconds since the Unix epoch
            }
        }
        migrator.registerMigration("v4: alert statuses, dwell per region and day") { db in
            try db.create(table: "alertRecord") { table in
                table.primaryKey("locationID", .text)
                table.column("status", .text).notNull()
                table.column("resetAt", .integer)  // microseconds since the Unix epoch
            }
            FaultPoint.reach("migration v4")
            try db.create(table: "dwell") { table in
                table.column("region", .text).notNull()
                table.column("date", .text).notNull()
                table.column("seconds", .double).notNull()
                table.primaryKey(["region", "date"])
            }
        }
        migrator.registerMigration("v5: the nearest beacon") { db in
            try db.create(table: "nearestBeacon") { table in
                table.primaryKey("id", .integer).check { $0 == 1 }
                table.column("locationID", .text)  // NULL: none
            }
        }
        migrator.registerMigration("v6: the --events journal") { db in
            try db.create(table: "eventsJournal") { table in
                table.autoIncrementedPrimaryKey("sequence")
                table.column("file", .text).notNull()
                table.column("offset", .integer).notNull()
                table.column("line", .text).notNull()
            }
        }
        migrator.registerMigration("v7: state per fleet device") { db in
            // Every table of a device's state gains the device ('' for the daemon's own radio),
            // keeping what is in it as the daemon's own.
            try db.execute(
                sql: """
                    CREATE TABLE beaconReport7 (device TEXT NOT NULL DEFAULT '', locationID TEXT NOT NULL,
                        proximity TEXT NOT NULL, reportedAt INTEGER NOT NULL, PRIMARY KEY (device, locationID));
                    INSERT INTO beaconReport7 (locationID, proximity, reportedAt)
                        SELECT locationID, proximity, reportedAt FROM beaconReport;
                    DROP TABLE beaconReport; ALTER TABLE beaconReport7 RENAME TO beaconReport;
                    CREATE TABLE ruleCounter7 (device TEXT NOT NULL DEFAULT '', region TEXT NOT NULL, rule TEXT NOT NULL,
                        count INTEGER NOT NULL, fingerprint TEXT NOT NULL, PRIMARY KEY (device, region, rule));
                    INSERT INTO ruleCounter7 (region, rule, count, fingerprint)
                        SELECT region, rule, count, fingerprint FROM ruleCounter;
                    DROP TABLE ruleCounter; ALTER TABLE ruleCounter7 RENAME TO ruleCounter;
                    CREATE TABLE groupCounter7 (device TEXT NOT NULL DEFAULT '', groupID TEXT NOT NULL,
                        trigger TEXT NOT NULL, count INTEGER NOT NULL, fingerprint TEXT NOT NULL,
                        PRIMARY KEY (device, groupID, trigger));
                    INSERT INTO groupCounter7 (groupID, trigger, count, fingerprint)
                        SELECT groupID, trigger, count, fingerprint FROM groupCounter;
                    DROP TABLE groupCounter; ALTER TABLE groupCounter7 RENAME TO groupCounter;
                    CREATE TABLE notificationDay7 (device TEXT NOT NULL DEFAULT '' PRIMARY KEY, date TEXT NOT NULL,
                        count INTEGER NOT NULL);
                    INSERT INTO notificationDay7 (date, count) SELECT date, count FROM notificationDay;
                    DROP TABLE notificationDay; ALTER TABLE notificationDay7 RENAME TO notificationDay;
                    CREATE TABLE alertRecord7 (device TEXT NOT NULL DEFAULT '', locationID TEXT NOT NULL,
                        status TEXT NOT NULL, resetAt INTEGER, PRIMARY KEY (device, locationID));
                    INSERT INTO alertRecord7 (locationID, status, resetAt) SELECT locationID, status, resetAt FROM alertRecord;
                    DROP TABLE alertRecord; ALTER TABLE alertRecord7 RENAME TO alertRecord;
                    CREATE TABLE dwell7 (device TEXT NOT NULL DEFAULT '', region TEXT NOT NULL, date TEXT NOT NULL,
                        seconds DOUBLE NOT NULL, PRIMARY KEY (device, region, date));
                    INSERT INTO dwell7 (region, date, seconds) SELECT region, date, seconds FROM dwell;
                    DROP TABLE dwell; ALTER TABLE dwell7 RENAME TO dwell;
                    CREATE TABLE nearestBeacon7 (device TEXT NOT NULL DEFAULT '' PRIMARY KEY, locationID TEXT);
                    INSERT INTO nearestBeacon7 (locationID) SELECT locationID FROM nearestBeacon;
                    DROP TABLE nearestBeacon; ALTER TABLE nearestBeacon7 RENAME TO nearestBeacon;
                    CREATE TABLE fleetDevice (device TEXT NOT NULL PRIMARY KEY, source TEXT NOT NULL,
                        commandTopic TEXT, waypoints TEXT NOT NULL DEFAULT '');
                    """)
        }
        migrator.registerMigration("v8: OwnTracks waypoints as the app reads them, presence per device") { db in
            // `waypointForm` 1: the phone holds `desc: bw:<region>` waypoints without a rid (the
            // form before docs/behaviour.md §15.1's), deleted by the next start; 2: named waypoints with a rid.
            try db.execute(
                sql: """
                    ALTER TABLE fleetDevice ADD COLUMN waypointForm INTEGER NOT NULL DEFAULT 1;
                    ALTER TABLE fleetDevice ADD COLUMN ownWaypoints INTEGER;
                    ALTER TABLE fleetDevice ADD COLUMN presence TEXT;
                    """)
        }
        migrator.registerMigration("v9: the own radio's presence") { db in
            // Where the own radio's wearer is, as a fleet device's presence is kept: a restart,
            // even after SIGKILL, goes on inside the regions it was in (no second enter).
            try db.create(table: "ownPresence") { table in
                table.primaryKey("id", .integer).check { $0 == 1 }
                table.column("presence", .text).notNull()
            }
        }
        migrator.registerMigration("v10: the own radio's presence in the device table") { db in
            // The own radio is a device like any other (device '', source `radio`): its presence
            // moves into the one table, renamed for what it now holds.
            try db.execute(
                sql: """
                    ALTER TABLE fleetDevice RENAME TO deviceRecord;
                    INSERT INTO deviceRecord (device, source, waypointForm, presence)
                        SELECT '', 'radio', 2, presence FROM ownPresence WHERE id = 1
                        ON CONFLICT(device) DO UPDATE SET presence = excluded.presence;
                    DROP TABLE ownPresence;
                    """)
        }
        migrator.registerMigration("v11: the cluster's position in the shipped steps") { db in
            // Which committed step of which active this state is at (docs/behaviour.md §21): a
            // standby applies a shipped step only on the state it was made on. One row; (0, 0) for
            // a state that was never shipped. `clusterLocal` (never shipped): the epoch this daemon
            // last shipped as, until its state is replaced: what it committed then may be
            // unshipped.
            try db.execute(
                sql: """
                    CREATE TABLE clusterPosition (id INTEGER PRIMARY KEY CHECK (id = 1), epoch INTEGER NOT NULL,
                        step INTEGER NOT NULL);
                    INSERT INTO clusterPosition (id, epoch, step) VALUES (1, 0, 0);
                    CREATE TABLE clusterLocal (id INTEGER PRIMARY KEY CHECK (id = 1), activeEpoch INTEGER NOT NULL);
                    INSERT INTO clusterLocal (id, activeEpoch) VALUES (1, 0);
                    """)
        }
        migrator.registerMigration("v12: the scanners' calibration") { db in
            // What each fixed scanner hears of each other, settled (docs/behaviour.md §19): a
            // restart, or a cluster's next active (docs/behaviour.md §21), corrects the receivers
            // at once.
            try db.execute(
                sql: """
                    CREATE TABLE scannerLevel (receiver TEXT NOT NULL, transmitter TEXT NOT NULL, level REAL NOT NULL,
                        PRIMARY KEY (receiver, transmitter));
                    """)
        }
        migrator.registerMigration("v13: the building's fingerprints") { db in
            // Each trained room's samples from its last session (docs/behaviour.md §22): a restart,
            // or a cluster's next active, places tags with them at once.
            try db.execute(
                sql: """
                    CREATE TABLE fingerprint (room TEXT NOT NULL, sequence INTEGER NOT NULL, scanner TEXT NOT NULL,
                        level REAL NOT NULL, at INTEGER NOT NULL, device TEXT NOT NULL, trainedAt INTEGER NOT NULL,
                        PRIMARY KEY (room, sequence));
                    """)
        }
        return migrator
    }
}
