import BeaconCore
import Foundation
import Persistence
import RegionMonitor
import Testing

@Suite struct StateStoreTests {
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
        #expect(try reopened.appliedMigrations() == ["v1: last reported class per beacon"])
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
