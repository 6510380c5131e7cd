import BeaconCore
import Daemon
import Engine
import Foundation
import Persistence
import RegionMonitor
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `--events FILE` (docs/behaviour.md §13): every committed output is in the file, whatever kills the daemon;
/// the state database's journal is the reference.
@Suite(.serialized) struct EventsFileTests {
    static let uuid = LifecycleTests.area

    /// `count` outputs of one step each, at seconds 0, 1, …
    static func outputs(_ count: Int, from start: Int = 0) -> [[MonitorOutput]] {
        (start..<start + count).map { n in
            let region = Region.zone(UUID(uuidString: uuid)!, major: UInt16(n % 7 + 1))
            let time = Timestamp(secondsSinceEpoch: 1_700_000_000 + Double(n))!
            return [
                .transition(
                    time, .init(direction: n % 2 == 0 ? .enter : .exit, region: region, name: nil, how: .monitored))
            ]
        }
    }

    /// Commits `steps` through a batch, as the engine's driver does, with `file` as the sink.
    static func commit(_ steps: [[MonitorOutput]], file: EventsFile, store: StateStore) throws {
        var batch = StepBatch()
        for step in steps {
            batch.add(step, state: StateChanges(), sinks: [file], whereabouts: Whereabouts(area: nil, zone: nil))
        }
        try batch.commit(store: store, sinks: [file])
    }

    static func lines(_ url: URL) -> [String] {
        ((try? String(contentsOf: url, encoding: .utf8)) ?? "").split(separator: "\n", omittingEmptySubsequences: false)
            .dropLast().map(String.init)
    }

    /// The journal of `file` as its lines.
    static func journal(_ store: StateStore, _ file: URL) throws -> [String] {
        try store.journal(file: file.standardizedFileURL.path).map(\.text)
    }

    @Test func everyCommitIsWrittenAtOnceAndJournaled() throws {
        let folder = try scratchFolder("events")
        let url = folder.appendingPathComponent("events.jsonl")
        let store = try StateStore(path: folder.appendingPathComponent("state.sqlite").path)
        let file = try EventsFile(path: url.path, store: store, logger: .issues)
        try Self.commit(Self.outputs(3), file: file, store: store)
        // On disk before anything else happens: no buffer waits for a full block or the exit.
        #expect(Self.lines(url).count == 3)
        try Self.commit(Self.outputs(2, from: 3), file: file, store: store)
        #expect(Self.lines(url) == Self.outputs(5).flatMap { $0 }.map(\.json))
        #expect(try Self.journal(store, url) == Self.lines(url))
    }

    /// Lines committed but never written (the process was killed in between) are appended when
    /// the file is opened again, and a line cut short is written again whole.
    @Test(arguments: [false, true])
    func aRestartAppendsWhatACrashLeftOut(cutShort: Bool) throws {
        let folder = try scratchFolder("events")
        let url = folder.appendingPathComponent("events.jsonl")
        let store = try StateStore(path: folder.appendingPathComponent("state.sqlite").path)
        do {
            let file = try EventsFile(path: url.path, store: store, logger: .issues)
            try Self.commit(Self.outputs(4), file: file, store: store)
        }
        // The next commit reaches the database only: as if killed before the write.
        let name = url.standardizedFileURL.path
        var offset = Int64(try Data(contentsOf: url).count)
        let lost = Self.outputs(3, from: 4).flatMap { $0 }.map(\.json)
        let journal = lost.map { line in
            defer { offset += Int64(line.utf8.count) + 1 }
            return JournalLine(file: name, offset: offset, text: line)
        }
        try store.record([], journal: journal)
        if cutShort {
            let handle = try FileHandle(forWritingTo: url)
            try handle.seekToEnd()
            handle.write(Data(lost[0].utf8.prefix(20)))
            try handle.close()
        }
        let said = LogCapture()
        _ = try EventsFile(path: url.path, store: store, logger: said.logger)
        #expect(Self.lines(url) == Self.outputs(7).flatMap { $0 }.map(\.json))
        #expect(
            said.messages == [
                "--events \(url.path): appended 3 outputs committed before the last stop but not yet written"
            ])
        #expect(try Self.journal(store, url) == Self.lines(url))
    }

    /// A file truncated while the daemon runs (logrotate's `copytruncate`) is journaled from
    /// where it ends now, so a crash after that is still completed.
    @Test func aFileTruncatedWhileRunningIsJournaledFromItsNewEnd() throws {
        let folder = try scratchFolder("events")
        let url = folder.appendingPathComponent("events.jsonl")
        let store = try StateStore(path: folder.appendingPathComponent("state.sqlite").path)
        let file = try EventsFile(path: url.path, store: store, logger: .issues)
        try Self.commit(Self.outputs(3), file: file, store: store)
        #expect(truncate(url.path, 0) == 0)
        try Self.commit(Self.outputs(2, from: 3), file: file, store: store)
        let after = Self.outputs(2, from: 3).flatMap { $0 }.map(\.json)
        #expect(Self.lines(url) == after)
        let journal = try store.journal(file: url.standardizedFileURL.path)
        #expect(journal.suffix(2).map(\.offset) == [0, Int64(after[0].utf8.count) + 1])

        // Killed after the next commit but before its write: the truncated file is completed.
        let lost = Self.outputs(1, from: 5).flatMap { $0 }.map(\.json)
        let offset = Int64(try Data(contentsOf: url).count)
        try store.record(
            [], journal: [JournalLine(file: url.standardizedFileURL.path, offset: offset, text: lost[0])])
        let said = LogCapture()
        _ = try EventsFile(path: url.path, store: store, logger: said.logger)
        #expect(Self.lines(url) == after + lost, "\(said.messages)")
    }

    /// A damaged journal (an offset no file has, one at the end of the 64-bit range) is said.messages and
    /// forgotten, never a trap.
    @Test func aDamagedJournalIsForgottenWithoutATrap() throws {
        let folder = try scratchFolder("events")
        let url = folder.appendingPathComponent("events.jsonl")
        let store = try StateStore(path: folder.appendingPathComponent("state.sqlite").path)
        try "{}\n".write(to: url, atomically: false, encoding: .utf8)
        let name = url.standardizedFileURL.path
        try store.record(
            [],
            journal: [
                JournalLine(file: name, offset: -5, text: "{}"), JournalLine(file: name, offset: .max - 1, text: "{}"),
            ])
        let said = LogCapture()
        _ = try EventsFile(path: url.path, store: store, logger: said.logger)
        #expect(Self.lines(url) == ["{}"])
        #expect(
            said.messages.count == 1 && said.messages[0].contains("does not end as the state database recorded"),
            "\(said.messages)")
    }

    /// A file that is not the one the journal describes (rotated, edited) gets nothing appended,
    /// and the daemon says so.
    @Test func aFileThatChangedIsNotCompletedAndThatIsSaid() throws {
        let folder = try scratchFolder("events")
        let url = folder.appendingPathComponent("events.jsonl")
        let store = try StateStore(path: folder.appendingPathComponent("state.sqlite").path)
        do {
            let file = try EventsFile(path: url.path, store: store, logger: .silent)
            try Self.commit(Self.outputs(4), file: file, store: store)
        }
        try store.record([], journal: [JournalLine(file: url.standardizedFileURL.path, offset: 10_000, text: "{}")])
        try "rotated\n".write(to: url, atomically: false, encoding: .utf8)
        let said = LogCapture()
        _ = try EventsFile(path: url.path, store: store, logger: said.logger)
        #expect(Self.lines(url) == ["rotated"])
        #expect(
            said.messages.count == 1 && said.messages[0].contains("does not end as the state database recorded"),
            "\(said.messages)")
        #expect(try Self.journal(store, url).isEmpty)
    }

    /// The daemon killed between a commit and its write (a fault point): the next start appends
    /// the lines.
    @Test func theDaemonKilledBetweenCommitAndWriteCompletesTheFileAtItsNextStart() async throws {
        let folder = try MQTTRunTests.folder(port: 1, userid: "kill")
        let killed = try LifecycleTests.Daemon(
            in: folder, extra: ["--no-mqtt"], environment: ["BEACONWATCH_FAULT": "events write"])
        killed.sight(major: 3, at: 1_700_000_000)
        try await Eventually.until("the daemon to be killed") { !killed.process.isRunning }
        #expect(killed.process.terminationReason == .uncaughtSignal && killed.process.terminationStatus == SIGKILL)
        let url = folder.appendingPathComponent("events.jsonl")
        #expect(Self.lines(url).isEmpty)

        let again = try LifecycleTests.Daemon(in: folder, extra: ["--no-mqtt"])
        try again.input.fileHandleForWriting.close()
        #expect(try await again.exit(within: Eventually.patience) == 0)
        #expect(again.logText.contains("appended"), "\(again.logText)")
        let store = try StateStore(path: folder.appendingPathComponent("state.sqlite").path)
        let lines = Self.lines(url)
        #expect(lines.contains { $0.contains(#""type":"location""#) }, "\(lines)")
        #expect(try Self.journal(store, url.resolvingSymlinksInPath()) == lines)
    }

    /// SIGKILL ten times at random instants of a run of a hundred visits, restarting each time:
    /// every output the state database committed is in the file, in order, once.
    @Test func tenKillsLoseNoCommittedOutput() async throws {
        let folder = try MQTTRunTests.folder(port: 1, userid: "kills")
        // A hundred visits: a few sightings of one Zone, then the next, ten seconds apart.
        var visits: [[String]] = []
        for visit in 0..<100 {
            let start = 1_700_000_000 + Double(visit) * 30
            visits.append(
                (0..<4).map { n in
                    #"{"t": \#(start + Double(n) * 2), "uuid": "\#(Self.uuid)", "major": \#(visit % 12 + 1), "minor": 1, "rssi": -59}"#
                })
        }
        var generator = SeededGenerator(seed: 23)
        let events = folder.appendingPathComponent("events.jsonl")
        for round in 0..<11 {
            let before = Self.lines(events.resolvingSymlinksInPath()).count
            let daemon = try LifecycleTests.Daemon(in: folder, extra: ["--no-mqtt"])
            let chunk = visits[(round * 9)..<min(round * 9 + 9, 100)].flatMap { $0 }
            daemon.input.fileHandleForWriting.write(Data((chunk.joined(separator: "\n") + "\n").utf8))
            if round < 10 {
                // Once the round's work has begun (on a loaded machine a start takes a while), a
                // random instant of it, not a wait for anything: the kill lands anywhere after.
                try await Eventually.until("an output of round \(round)") {
                    Self.lines(events.resolvingSymlinksInPath()).count > before || !daemon.process.isRunning
                }
                try await Task.sleep(for: .milliseconds(Int.random(in: 0...150, using: &generator)))
                kill(daemon.process.processIdentifier, SIGKILL)
                try await Eventually.until("the daemon to be killed") { !daemon.process.isRunning }
            } else {
                try daemon.input.fileHandleForWriting.close()
                #expect(try await daemon.exit(within: Eventually.patience) == 0, "\(daemon.logText)")
            }
        }
        let url = folder.appendingPathComponent("events.jsonl").resolvingSymlinksInPath()
        let store = try StateStore(path: folder.appendingPathComponent("state.sqlite").path)
        let committed = try Self.journal(store, url)
        let lines = Self.lines(url)
        // Each killed round wrote something before its kill, the last round its whole chunk.
        #expect(committed.count > 95)
        #expect(lines == committed)
        #expect(lines.allSatisfy { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) != nil })
    }
}
