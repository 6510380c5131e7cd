import BeaconCore
import Foundation
import Engine
import Fleet
import Persistence
import RegionMonitor
import Rules
import Testing

@Suite struct StateStoreTests {
    static let migrations = [
        "v1: last reported class per beacon", "v2: MQTT outbox",
        "v3: rule counters, the day's notifications, the rules cache",
        "v4: alert statuses, dwell per region and day", "v5: the nearest beacon", "v6: the --events journal",
        "v7: state per fleet device", "v8: OwnTracks waypoints as the app reads them, presence per device",
        "v9: the own radio's presence", "v10: the own radio's presence in the device table",
        "v11: the cluster's position in the shipped steps",
        "v12: the scanners' calibration", "v13: the building's fingerprints",
    ]

    /// Runs a Python `script` with `arguments` (sqlite3 edits a database as another program
    /// would); whether it exited 0.
    static func python(_ script: String, _ arguments: [String]) throws -> Bool {
        let python = Process()
        python.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        python.arguments = ["python3", "-c", script] + arguments
        try python.run()
        python.waitUntilExit()
        return python.terminationStatus == 0
    }

    static func temporaryPath() -> String {
        FileManager.default.temporaryDirectory
            .appendingPathComponent("beaconwatch-store-\(UUID().uuidString)")
            .appendingPathComponent("state.sqlite").path
    }

    static func location(_ id: String, _ value: Proximity, at seconds: Double) -> MonitorOutput {
        .location(
            Timestamp(secondsSinceEpoch: 1_700_000_000 + seconds)!,
            LocationBeaconEvent(
                session: "s", address: "a", userid: "u", zone: id, distance: value, background: false,
                beacon: BeaconID(uuid: UUID(), major: 1, minor: 1), name: nil, area: "A", zoneName: "Z",
                rssi: nil, meters: nil
            )
        )
    }

    @Test func theLastReportedClassSurvivesReopening() throws {
        let path = Self.temporaryPath()
        do {
            let store = try StateStore(path: path)
            try store.record([Self.location("101", .near, at: 0), Self.location("102", .far, at: 0)])
            try store.record([Self.location("101", .immediate, at: 1)])
        }
        let reopened = try StateStore(path: path)
        #expect(try reopened.lastReported() == ["101": .immediate, "102": .far])
        #expect(try reopened.journalMode() == "wal")
        #expect(try reopened.appliedMigrations() == Self.migrations)
    }

    @Test func outboxEntriesComeBackInOrderUntilSettled() throws {
        let path = Self.temporaryPath()
        let messages = (0..<5).map { OutboxMessage(topic: "b/u/event", payload: "{\"n\":\($0)}", qos: 1) }
        do {
            let store = try StateStore(path: path)
            let first = try store.record([Self.location("101", .near, at: 0)], outbox: Array(messages[0..<3]))
            #expect(first.map(\.message) == Array(messages[0..<3]))
            #expect(first.map(\.sequence) == first.map(\.sequence).sorted())
            // The next step settles the first entry in its own transaction.
            let second = try store.record([], outbox: Array(messages[3...]), settled: [first[0].sequence])
            #expect(second.count == 2)
            try store.settle([second[0].sequence])
        }
        let reopened = try StateStore(path: path)
        #expect(try reopened.pendingOutbox().map(\.message) == [messages[1], messages[2], messages[4]])
        #expect(try reopened.lastReported() == ["101": .near])
    }

    @Test func ruleCountersAndTheDaysCountSurviveReopening() throws {
        let path = Self.temporaryPath()
        do {
            let store = try StateStore(path: path)
            var state = RuleState()
            state.rules[RuleKey(region: "1", rule: "11")] = RuleCounter(count: 2, fingerprint: "2-4")
            state.groups[GroupKey(group: "1000", trigger: "on_entry")] = RuleCounter(count: 3, fingerprint: "0-4,0-4")
            state.day = DayCount(date: "2013-11-04", count: 2)
            try store.record([], changes: StateChanges(rules: state))
            var later = RuleState()
            later.rules[RuleKey(region: "1", rule: "11")] = RuleCounter(count: 1, fingerprint: "2-5")
            later.day = DayCount(date: "2013-11-05", count: 1)
            try store.record([], changes: StateChanges(rules: later))
            try store.cacheRules(
                source: "http://r.test/", document: Array("{}".utf8), fetchedAt: Timestamp(microseconds: 5))
        }
        let reopened = try StateStore(path: path)
        let state = try reopened.ruleState()
        #expect(state.rules == [RuleKey(region: "1", rule: "11"): RuleCounter(count: 1, fingerprint: "2-5")])
        #expect(
            state.groups == [
                GroupKey(group: "1000", trigger: "on_entry"): RuleCounter(count: 3, fingerprint: "0-4,0-4")
            ])
        #expect(state.day == DayCount(date: "2013-11-05", count: 1))
        let kept = try #require(try reopened.cachedRules(source: "http://r.test/"))
        #expect(kept.document == Array("{}".utf8) && kept.fetchedAt == Timestamp(microseconds: 5))
        #expect(try reopened.cachedRules(source: "http://other.test/") == nil)
    }

    @Test func dwellAddsUpAndARestartLoadsOnlyTheLatestDay() throws {
        let path = Self.temporaryPath()
        func key(_ region: String, _ date: String) -> DwellKey { DwellKey(region: region, date: date) }
        do {
            let store = try StateStore(path: path)
            try store.record(
                [], changes: StateChanges(dwell: [key("A:1", "2013-11-04"): 600, key("A:2", "2013-11-04"): 5]))
            // Two steps of one transaction add up before they are written, then add to the row.
            var changes = StateChanges(dwell: [key("A:1", "2013-11-04"): 30, key("A:1", "2013-11-05"): 10])
            changes.merge(StateChanges(dwell: [key("A:1", "2013-11-05"): 20]))
            try store.record([], changes: changes)
        }
        let kept = try StateStore(path: path).kept()
        #expect(kept.dwell == [key("A:1", "2013-11-05"): 30])
        #expect(kept.dwellRegions == ["A:1", "A:2"])
        let rows = try StateStore(path: path).dwellHistory()
        #expect(rows == [key("A:1", "2013-11-04"): 630, key("A:1", "2013-11-05"): 30, key("A:2", "2013-11-04"): 5])
    }

    @Test func dwellHistoryKeepsStateKeepDaysAndPrunesTheRestWhenADayArrives() throws {
        func key(_ region: String, _ date: String) -> DwellKey { DwellKey(region: region, date: date) }
        let store = try StateStore(keepDays: 3)
        for date in ["2024-02-27", "2024-02-28", "2024-02-29", "2024-03-01"] {
            try store.record([], changes: StateChanges(dwell: [key("A:1", date): 60]))
        }
        // 2024-03-01 keeps 2024-02-27 (three days before: a leap year's February) and after.
        #expect(try store.dwellHistory().count == 4)
        try store.record([], changes: StateChanges(dwell: [key("A:1", "2024-03-02"): 60, key("A:2", "2024-03-02"): 1]))
        #expect(
            Set(try store.dwellHistory().keys.map(\.date)) == ["2024-02-28", "2024-02-29", "2024-03-01", "2024-03-02"])
        // A late write for a kept day prunes nothing more.
        try store.record([], changes: StateChanges(dwell: [key("A:1", "2024-02-28"): 5]))
        #expect(try store.dwellHistory()[key("A:1", "2024-02-28")] == 65)
        #expect(StateStore.day(400, before: "2025-01-01") == "2023-11-28")
        #expect(StateStore.day(1, before: "not a day") == nil)
    }

    @Test func theLastNearestSurvivesReopeningNoneIncluded() throws {
        let path = Self.temporaryPath()
        let time = Timestamp(secondsSinceEpoch: 1_700_000_000)!
        do {
            let store = try StateStore(path: path)
            #expect(try store.kept().nearest == nil)
            try store.record([
                .nearest(time, NearestChange(locationID: "101")), .nearest(time, NearestChange(locationID: "102")),
            ])
        }
        #expect(try StateStore(path: path).kept().nearest == "102")
        try StateStore(path: path).record([.nearest(time, NearestChange(locationID: nil))])
        #expect(try StateStore(path: path).kept().nearest == nil)
    }

    @Test func aVersionOneDatabaseIsMigratedInPlaceKeepingItsReports() throws {
        let path = Self.temporaryPath()
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        // The file as the first release left it.
        let sqlite = Process()
        sqlite.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        sqlite.arguments = [
            "python3", "-c",
            """
            import sqlite3,sys; c=sqlite3.connect(sys.argv[1])
            c.execute("CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)")
            c.execute("INSERT INTO grdb_migrations VALUES ('v1: last reported class per beacon')")
            c.execute("CREATE TABLE beaconReport (locationID TEXT PRIMARY KEY, proximity TEXT NOT NULL, reportedAt INTEGER NOT NULL)")
            c.execute("INSERT INTO beaconReport VALUES ('17081', 'far', 1)"); c.commit()
            """,
            path,
        ]
        try sqlite.run()
        sqlite.waitUntilExit()
        #expect(sqlite.terminationStatus == 0)
        let store = try StateStore(path: path)
        #expect(try store.appliedMigrations() == Self.migrations)
        #expect(try store.lastReported() == ["17081": .far])
        #expect(try store.pendingOutbox().isEmpty)
    }

    /// A single-device database of before the fleet (v6) upgrades in place: its counts, dwell,
    /// alerts and reports are the daemon's own; a fleet device's state is kept beside them.
    @Test func aSingleDeviceDatabaseUpgradesAndFleetDevicesKeepTheirOwnState() throws {
        let path = Self.temporaryPath()
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let script = """
            import sqlite3,sys; c=sqlite3.connect(sys.argv[1])
            c.execute("CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)")
            for m in sys.argv[2:]: c.execute("INSERT INTO grdb_migrations VALUES (?)", (m,))
            c.execute("CREATE TABLE beaconReport (locationID TEXT PRIMARY KEY, proximity TEXT NOT NULL, reportedAt INTEGER NOT NULL)")
            c.execute("INSERT INTO beaconReport VALUES ('17081', 'near', 1)")
            c.execute("CREATE TABLE outbox (sequence INTEGER PRIMARY KEY AUTOINCREMENT, topic TEXT NOT NULL, payload TEXT NOT NULL, qos INTEGER NOT NULL)")
            c.execute("CREATE TABLE ruleCounter (region TEXT NOT NULL, rule TEXT NOT NULL, count INTEGER NOT NULL, fingerprint TEXT NOT NULL, PRIMARY KEY (region, rule))")
            c.execute("INSERT INTO ruleCounter VALUES ('r1', '11', 3, 'f')")
            c.execute("CREATE TABLE groupCounter (groupID TEXT NOT NULL, trigger TEXT NOT NULL, count INTEGER NOT NULL, fingerprint TEXT NOT NULL, PRIMARY KEY (groupID, trigger))")
            c.execute("CREATE TABLE notificationDay (id INTEGER PRIMARY KEY CHECK (id = 1), date TEXT NOT NULL, count INTEGER NOT NULL)")
            c.execute("INSERT INTO notificationDay VALUES (1, '2026-11-22', 4)")
            c.execute("CREATE TABLE rulesCache (source TEXT PRIMARY KEY, document BLOB NOT NULL, fetchedAt INTEGER NOT NULL)")
            c.execute("CREATE TABLE alertRecord (locationID TEXT PRIMARY KEY, status TEXT NOT NULL, resetAt INTEGER)")
            c.execute("CREATE TABLE dwell (region TEXT NOT NULL, date TEXT NOT NULL, seconds DOUBLE NOT NULL, PRIMARY KEY (region, date))")
            c.execute("INSERT INTO dwell VALUES ('Z', '2026-11-22', 12.5)")
            c.execute("CREATE TABLE nearestBeacon (id INTEGER PRIMARY KEY CHECK (id = 1), locationID TEXT)")
            c.execute("INSERT INTO nearestBeacon VALUES (1, '17081')")
            c.execute("CREATE TABLE eventsJournal (sequence INTEGER PRIMARY KEY AUTOINCREMENT, file TEXT NOT NULL, offset INTEGER NOT NULL, line TEXT NOT NULL)")
            c.commit()
            """
        #expect(try Self.python(script, [path] + Self.migrations.prefix(6)))
        let store = try StateStore(path: path)
        #expect(try store.appliedMigrations() == Self.migrations)
        let own = try store.kept()
        #expect(own.classes == ["17081": .near] && own.nearest == "17081")
        #expect(own.rules.rules[RuleKey(region: "r1", rule: "11")]?.count == 3 && own.rules.day?.count == 4)
        #expect(own.dwell == [DwellKey(region: "Z", date: "2026-11-22"): 12.5])
        #expect(try store.keptDevices().isEmpty)

        // A device's reports and record, in the same transaction as the daemon's own, apart.
        let time = Timestamp(secondsSinceEpoch: 1_700_000_000)!
        let event = LocationBeaconEvent(
            session: "s", address: "a", userid: "cart-7", zone: "17081", distance: .far, background: false,
            beacon: BeaconID(uuid: UUID(), major: 1, minor: 1), name: nil, area: "A", zoneName: "Z", rssi: -70,
            meters: 3.2)
        try store.record(
            devices: [
                DeviceChanges(
                    device: .fleet("cart-7"), outputs: [.location(time, event)], changes: StateChanges(),
                    record: DeviceRow(source: "theengs"))
            ])
        #expect(try store.lastReported() == ["17081": .near])
        let devices = try store.keptDevices()
        #expect(devices.keys.sorted() == ["cart-7"])
        #expect(devices["cart-7"]?.state.classes == ["17081": .far] && devices["cart-7"]?.row?.source == "theengs")
    }

    /// A database of v9, where the own radio's presence had a table of its own, moves it into the
    /// one device table: a restart goes on inside the regions it was in, as a fleet device does.
    @Test func theOwnRadiosPresenceMovesIntoTheDeviceTable() throws {
        let path = Self.temporaryPath()
        do {
            let store = try StateStore(path: path)
            var phone = MonitorPresence()
            phone.currentZone = Region("B1A2C3D4-0000-4000-8000-000000000001:7")
            try store.record(devices: [
                DeviceChanges(
                    device: .fleet("ann-phone"), outputs: [], changes: StateChanges(),
                    record: DeviceRow(source: "owntracks", commandTopic: "owntracks/ann/phone/cmd", presence: phone))
            ])
        }
        // Back to v9's shape: the table had the fleet's name, the own radio a table of its own.
        let script = """
            import sqlite3,sys; c=sqlite3.connect(sys.argv[1])
            c.execute("ALTER TABLE deviceRecord RENAME TO fleetDevice")
            c.execute("CREATE TABLE ownPresence (id INTEGER PRIMARY KEY CHECK (id = 1), presence TEXT NOT NULL)")
            c.execute("INSERT INTO ownPresence VALUES (1, 'inside 1700000000000000 B1A2C3D4-0000-4000-8000-000000000001\\nseen 1700000000000000 17081')")
            c.execute("DELETE FROM grdb_migrations WHERE identifier LIKE 'v10:%' OR identifier LIKE 'v11:%' OR identifier LIKE 'v12:%' OR identifier LIKE 'v13:%'")
            c.execute("DROP TABLE clusterPosition")
            c.execute("DROP TABLE clusterLocal")
            c.execute("DROP TABLE scannerLevel")
            c.execute("DROP TABLE fingerprint")
            c.commit()
            """
        #expect(try Self.python(script, [path]))
        let store = try StateStore(path: path)
        #expect(try store.appliedMigrations() == Self.migrations)
        let own = try #require(try store.kept().presence)
        #expect(own.inside.keys.map(\.description) == ["B1A2C3D4-0000-4000-8000-000000000001"])
        #expect(own.sightings == ["17081": 1_700_000_000_000_000])
        // The phone's row is where it was, and the own radio is not one of the fleet.
        let fleet = try store.keptDevices()
        #expect(fleet.keys.sorted() == ["ann-phone"])
        #expect(fleet["ann-phone"]?.row?.commandTopic == "owntracks/ann/phone/cmd")
        #expect(fleet["ann-phone"]?.row?.presence?.currentZone?.description == "B1A2C3D4-0000-4000-8000-000000000001:7")
    }

    @Test func aDatabaseFromANewerVersionIsRefused() throws {
        let path = Self.temporaryPath()
        _ = try StateStore(path: path)
        // Another program's migration, as a newer beaconwatch would leave it.
        let sqlite = Process()
        sqlite.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        sqlite.arguments = [
            "python3", "-c",
            "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(\"INSERT INTO grdb_migrations VALUES ('v99: from the future')\"); c.commit()",
            path,
        ]
        try sqlite.run()
        sqlite.waitUntilExit()
        #expect(sqlite.terminationStatus == 0)
        #expect {
            _ = try StateStore(path: path)
        } throws: { error in
            "\(error)".contains("newer beaconwatch") && "\(error)".contains(path)
        }
    }

    @Test func aFileThatIsNotADatabaseIsReportedWithItsPath() throws {
        let path = Self.temporaryPath()
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: path))
        #expect {
            _ = try StateStore(path: path)
        } throws: { error in
            let text = "\(error)"
            return text.hasPrefix("state database \(path): ") && text.contains("State.database")
        }
        // The file is left as it was.
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(repeating: 0x41, count: 4096))
    }

    @Test func aTemporaryStoreStartsEmpty() throws {
        let store = try StateStore()
        #expect(try store.lastReported().isEmpty)
        try store.record([Self.location("7", .near, at: 0)])
        #expect(try store.lastReported() == ["7": .near])
    }
}
