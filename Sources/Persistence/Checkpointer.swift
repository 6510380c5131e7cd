import BeaconCore
import Foundation
import GRDB
import Synchronization
import Syscalls

/// Copies the WAL into the database file from its own connection and thread, every ``period``
/// while commits come: a passive checkpoint never blocks the writer, so most of the copying and
/// syncing is off the engine's path. It cannot reset the WAL while writes go on; the writer's own
/// checkpoint (every 4,000 pages) does, finding little left to copy. With no commit since its last
/// round it sleeps until the next (an idle daemon's CPU time: `scripts/bench idle`).
final class Checkpointer: Sendable {
    static let period = Duration.milliseconds(100)
    /// Signalled by a commit the thread sleeps for, and by the stop.
    private let wake: Wakeup
    private let stopped = Mutex(false)
    /// A commit came since the last checkpoint.
    private let dirty = Atomic<Bool>(true)
    /// The thread waits for a commit, without a timeout: an idle daemon does not wake for it.
    private let sleeping = Atomic<Bool>(false)

    /// Set when the thread has closed its connection and returned.
    private let finished = Mutex(false)
    /// Signalled then, for ``stopAndWait()``.
    private let finishedSignal: Wakeup

    init(path: String, configuration: GRDB.Configuration) throws {
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        wake = try Wakeup()
        finishedSignal = try Wakeup()
        // Checkpoints block on the disk: a thread of their own, which holds this object until ``stop()``.
        let thread = Thread { [self] in
            var paced = true
            while true {
                if paced {
                    wake.wait(timeout: Self.period)
                    wake.clear()
                }
                paced = true
                let stopping = stopped.withLock { $0 }
                if dirty.exchange(false, ordering: .sequentiallyConsistent) || stopping {
                    // Failures (a busy file) only delay the copy to the next round.
                    _ = try? queue.writeWithoutTransaction { try $0.checkpoint(.passive) }
                    if stopping {
                        try? queue.close()
                        finished.withLock { $0 = true }
                        finishedSignal.signal()
                        return
                    }
                } else {
                    // Nothing written since the last round: sleep until a commit (or the stop).
                    sleeping.store(true, ordering: .sequentiallyConsistent)
                    if !dirty.load(ordering: .sequentiallyConsistent), !stopped.withLock({ $0 }) {
                        wake.wait(timeout: nil)
                        wake.clear()
                    }
                    sleeping.store(false, ordering: .sequentiallyConsistent)
                    paced = false
                }
            }
        }
        thread.name = "checkpoint"
        thread.start()
    }

    /// The writer committed: the next round copies the WAL.
    func committed() {
        dirty.store(true, ordering: .sequentiallyConsistent)
        if sleeping.load(ordering: .sequentiallyConsistent) { wake.signal() }
    }

    func stop() {
        stopped.withLock { $0 = true }
        wake.signal()
    }

    /// Stops the thread and waits (at most 5 s: a checkpoint stuck on the disk) until it has closed
    /// its connection.
    func stopAndWait(clock: DaemonClock = .system) {
        stop()
        let deadline = clock.elapsed() + .seconds(5)
        while !finished.withLock({ $0 }) {
            let left = deadline - clock.elapsed()
            guard left > .zero else { return }
            finishedSignal.wait(timeout: left)
        }
    }

    /// Tells the checkpointer of the writer connection's commits.
    final class CommitObserver: TransactionObserver {
        let checkpointer: Checkpointer

        init(_ checkpointer: Checkpointer) { self.checkpointer = checkpointer }

        func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { false }
        func databaseDidChange(with event: DatabaseEvent) {}
        func databaseDidCommit(_ db: Database) { checkpointer.committed() }
        func databaseDidRollback(_ db: Database) {}
    }
}
