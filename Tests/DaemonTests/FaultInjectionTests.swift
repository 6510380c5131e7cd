import Foundation
import MQTT
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon against broken surroundings (issue 16): its state database on a file system that
/// fills up, a database file that is garbage, cut short or read-only. Real file systems: a small
/// tmpfs mounted for the test (which needs root; the tests that need it skip without).
@Suite(.serialized) struct FaultInjectionTests {
    typealias Subscriber = MQTTRunTests.Subscriber

    /// A tmpfs of `kilobytes` mounted on a new folder, unmounted when released.
    final class SmallDisk {
        let folder: URL
        private var mounted = false

        init(kilobytes: Int) throws {
            folder = try scratchFolder("disk")
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/mount")
            process.arguments = ["-t", "tmpfs", "-o", "size=\(kilobytes)k", "tmpfs", folder.path]
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { throw Unavailable() }
            mounted = true
        }

        /// Fills what is left with one file; returns it (remove it to free the space).
        func fill() -> URL {
            let filler = folder.appendingPathComponent("filler")
            let descriptor = open(filler.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            let chunk = [UInt8](repeating: 0xAA, count: 4096)
            while chunk.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) > 0 {}
            close(descriptor)
            return filler
        }

        deinit {
            guard mounted else { return }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/umount")
            process.arguments = ["-l", folder.path]
            try? process.run()
            process.waitUntilExit()
        }

        struct Unavailable: Error {}

        /// Whether this machine lets the tests mount one (root, and a kernel that allows it here).
        static let available: Bool = (try? SmallDisk(kilobytes: 64)) != nil
    }

    @Test(.enabled(if: SmallDisk.available, "needs root to mount a small tmpfs"))
    func aFullDiskHoldsOutputsInMemoryAndWritesThemWhenSpaceReturns() async throws {
        let broker = try Broker()
        let folder = try MQTTRunTests.folder(port: broker.port, userid: "full")
        let disk = try SmallDisk(kilobytes: 2048)
        let ini = folder.appendingPathComponent("hsyco.ini")
        try String(contentsOf: ini, encoding: .utf8)
            .replacingOccurrences(
                of: "State.database = state.sqlite", with: "State.database = \(disk.folder.path)/s.db"
            )
            .write(to: ini, atomically: true, encoding: .utf8)
        let watcher = try await Subscriber(port: broker.port, filter: "beaconwatch/full/event")
        let daemon = try LifecycleTests.Daemon(in: folder)
        daemon.sight(major: 3, at: 1_700_000_000)
        try await Subscriber.until("the first event") { watcher.payloads("/event").count == 1 }

        let filler = disk.fill()
        // SQLite may still reuse its WAL's frames after a checkpoint: sightings go on, each of a
        // new beacon 100 s after the last (an event each), until a commit needs space it cannot have.
        var major = 3
        var time = 1_700_000_000.0
        let full = "the disk is full; free space on its file system"
        while !daemon.logText.contains(full) {
            let before = watcher.payloads("/event").count
            major = major % 12 + 1
            time += 100
            daemon.sight(major: major, at: time)
            try await Subscriber.until("an event, or the daemon to say the disk is full") {
                watcher.payloads("/event").count > before || daemon.logText.contains(full)
            }
        }
        let published = watcher.payloads("/event").count
        #expect(daemon.process.isRunning)
        // The step that could not be kept was not published either.
        #expect(
            !watcher.payloads("/event").contains { $0.contains(#""zone":"\#(1000 + major)""#) && $0.contains("near") })
        daemon.sight(major: major, at: time + 1)

        try FileManager.default.removeItem(at: filler)
        // Retried within a second of the last try, with no more input.
        try await Subscriber.until("the held outputs to go out") {
            watcher.payloads("/event").count > published
        }
        try await Subscriber.until("the daemon to say so") { daemon.logText.contains("is written again") }
        kill(daemon.process.processIdentifier, SIGTERM)
        #expect(try await daemon.exit(within: 10) == 0)
        // Every event once, the held ones last: the beacon seen when the disk filled is reported.
        let events = watcher.payloads("/event")
        #expect(Set(events).count == events.count)
        #expect(events.dropFirst(published).contains { $0.contains(#""zone":"\#(1000 + major)""#) }, "\(events)")
    }

    /// A damaged database is never silently replaced: one line naming it and the fix, status 1.
    @Test func aDatabaseThatIsGarbageOrCutShortStopsTheStartInOneLine() async throws {
        let folder = try scratchFolder("damaged")
        let capture = Conformance.url("capture-1002.btsnoop").path
        let config = Conformance.url("scenarios/zones-mode/hsyco.ini").path
        let good = folder.appendingPathComponent("good.db").path
        #expect(
            try await DecodeCommandTests.beaconwatch(["replay", "--state", good, config, "btsnoop:" + capture]).status
                == 0)
        let garbage = folder.appendingPathComponent("garbage.db")
        try Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7919) }).write(to: garbage)
        // Everything into the file itself (the replay may leave its last commits in the WAL).
        let checkpoint = try await Child.run(
            URL(fileURLWithPath: "/usr/bin/python3"),
            [
                "-c", "import sqlite3, sys; sqlite3.connect(sys.argv[1]).execute('PRAGMA wal_checkpoint(TRUNCATE)')",
                good,
            ])
        #expect(checkpoint.status == 0, "\(checkpoint.stderr)")
        let cut = folder.appendingPathComponent("cut.db")
        try FileManager.default.copyItem(atPath: good, toPath: cut.path)
        #expect(try Data(contentsOf: cut).count > 8192)
        let handle = try FileHandle(forWritingTo: cut)
        try handle.truncate(atOffset: 3000)
        try handle.close()
        for (file, words) in [(garbage, "file is not a database"), (cut, "malformed")] {
            let before = try Data(contentsOf: file)
            let run = try await DecodeCommandTests.beaconwatch([
                "replay", "--state", file.path, config, "btsnoop:" + capture,
            ])
            #expect(run.status == 1, "\(file.lastPathComponent): \(run.stderr)")
            #expect(run.stderr.split(separator: "\n").count == 1, "\(run.stderr)")
            #expect(run.stderr.contains("state database \(file.path): "), "\(run.stderr)")
            #expect(run.stderr.contains(words), "\(run.stderr)")
            #expect(try Data(contentsOf: file) == before, "the damaged file was changed")
        }
    }

    @Test(.enabled(if: SmallDisk.available, "needs root to mount a read-only file system"))
    func aDatabaseOnAReadOnlyFileSystemStopsTheStartInOneLine() async throws {
        let disk = try SmallDisk(kilobytes: 1024)
        let capture = Conformance.url("capture-1002.btsnoop").path
        let config = Conformance.url("scenarios/zones-mode/hsyco.ini").path
        let path = disk.folder.appendingPathComponent("state.db").path
        #expect(
            try await DecodeCommandTests.beaconwatch(["replay", "--state", path, config, "btsnoop:" + capture]).status
                == 0)
        let remount = try await Child.run(URL(fileURLWithPath: "/bin/mount"), ["-o", "remount,ro", disk.folder.path])
        try #require(remount.status == 0, "\(remount.stderr)")
        let run = try await DecodeCommandTests.beaconwatch(["replay", "--state", path, config, "btsnoop:" + capture])
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stderr.split(separator: "\n").count == 1, "\(run.stderr)")
        #expect(run.stderr.contains("state database \(path): is on a read-only file system"), "\(run.stderr)")
        #expect(run.stderr.contains("writable"), "\(run.stderr)")
    }

    /// Killed halfway through a migration (between its two tables), the next start finishes it:
    /// the migration's transaction never committed, so it runs again whole.
    @Test func aStartKilledMidMigrationIsFinishedByTheNext() async throws {
        let folder = try scratchFolder("migration")
        let scenario = Conformance.url("scenarios/zones-mode")
        let path = folder.appendingPathComponent("state.db").path
        let arguments = [
            "replay", "--state", path, scenario.appendingPathComponent("hsyco.ini").path,
            "trace:" + scenario.appendingPathComponent("trace.jsonl").path,
        ]
        let killed = Process()
        killed.executableURL = DecodeCommandTests.productsDirectory.appendingPathComponent("beaconwatch")
        killed.arguments = arguments
        killed.environment = ProcessInfo.processInfo.environment.merging(["BEACONWATCH_FAULT": "migration v4"]) { $1 }
        killed.standardOutput = FileHandle.nullDevice
        killed.standardError = FileHandle.nullDevice
        Eventually.watchExit(of: killed)
        try killed.run()
        _ = try await Child.exit(of: killed, "the replay killed mid-migration")
        #expect(killed.terminationReason == .uncaughtSignal && killed.terminationStatus == SIGKILL)

        let run = try await DecodeCommandTests.beaconwatch(arguments)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains(#""type":"enter""#))
        // Every migration is recorded, and the second start's state is there for a third.
        let again = try await DecodeCommandTests.beaconwatch(arguments)
        #expect(again.status == 0, "\(again.stderr)")
        let tables = try await Child.run(
            URL(fileURLWithPath: "/usr/bin/python3"),
            [
                "-c",
                "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
                    + "print(c.execute('SELECT COUNT(*) FROM grdb_migrations').fetchone()[0], "
                    + "c.execute(\"SELECT COUNT(*) FROM sqlite_master WHERE name IN ('alertRecord', 'dwell')\").fetchone()[0])",
                path,
            ])
        #expect(tables.stdout == "13 2\n", "\(tables.stderr)")
    }
}
