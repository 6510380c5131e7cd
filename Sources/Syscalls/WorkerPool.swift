import Foundation
import Synchronization

/// The one executor of the shells' blocking work, of a fixed size: loading the configuration,
/// opening and closing the state database, reading outbox pages, stopping libmosquitto's thread
/// (a join), script runs, the rules' server calls and the cluster's state shipping (a ``Lane``).
/// Jobs run in the order they are submitted, at most ``width`` at once; a job that blocks holds
/// one thread and no more. Threads start as jobs need them and stay. Async code waits for a job
/// with ``run(_:)``, which holds no thread of the cooperative pool. What lives as long as its
/// service (the engine's loop, the checkpointer, libmosquitto's network thread) has a thread of
/// its own instead (``runOnThreadOfItsOwn(named:_:)``).
///
/// Workers wait the way the engine's loop does, on a ``Wakeup`` (docs/architecture.md, "Threads").
package final class WorkerPool: Sendable {
    /// The daemon's pool, for all of the above.
    package static let shared = WorkerPool(width: 8, name: "beaconwatch worker")

    private struct State {
        var jobs: [@Sendable () -> Void] = []
        var start = 0
        var threads = 0
        var idle = 0
    }

    package let width: Int
    let name: String
    private let state = Mutex(State())
    private let wakeup: Wakeup?

    package init(width: Int, name: String) {
        self.width = max(1, width)
        self.name = name
        wakeup = try? Wakeup()
    }

    /// Jobs waiting for a thread.
    package var waiting: Int { state.withLock { $0.jobs.count - $0.start } }

    /// Runs `body` on one of the pool's threads and returns what it returns, or throws what it
    /// throws; the caller's task waits without holding a thread.
    package func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            submit { continuation.resume(with: Result { try body() }) }
        }
    }

    /// Jobs that must run one at a time, in order, on this pool's threads (one at most at once).
    package func lane() -> Lane { Lane(pool: self) }

    /// A serial queue of jobs on a ``WorkerPool``: each starts after the one before it ended.
    package final class Lane: Sendable {
        private let pool: WorkerPool
        private let state = Mutex((jobs: [@Sendable () -> Void](), draining: false))

        init(pool: WorkerPool) { self.pool = pool }

        /// Runs `job` after every job submitted before it.
        package func submit(_ job: @escaping @Sendable () -> Void) {
            let start = state.withLock { state -> Bool in
                state.jobs.append(job)
                guard !state.draining else { return false }
                state.draining = true
                return true
            }
            if start { pool.submit { [self] in drain() } }
        }

        /// Runs the lane's jobs until none is left, on one pool thread.
        private func drain() {
            while true {
                let jobs = state.withLock { state -> [@Sendable () -> Void] in
                    defer { state.jobs.removeAll() }
                    if state.jobs.isEmpty { state.draining = false }
                    return state.jobs
                }
                guard !jobs.isEmpty else { return }
                for job in jobs { job() }
            }
        }
    }

    /// Runs `job` on one of the pool's threads, as soon as one is free.
    package func submit(_ job: @escaping @Sendable () -> Void) {
        let startThread = state.withLock { state -> Bool in
            state.jobs.append(job)
            // A thread more when the waiting jobs outnumber the idle threads (up to the width).
            guard state.jobs.count - state.start > state.idle, state.threads < width else { return false }
            state.threads += 1
            return true
        }
        if startThread {
            let thread = Thread { [self] in work() }
            thread.name = name
            thread.start()
        }
        wakeup?.signal()
    }

    private func work() {
        while true {
            let job = state.withLock { state -> (@Sendable () -> Void)? in
                guard state.start < state.jobs.count else {
                    state.idle += 1
                    wakeup?.clear()
                    return nil
                }
                let job = state.jobs[state.start]
                state.start += 1
                if state.start > 256, state.start * 2 > state.jobs.count {
                    state.jobs.removeFirst(state.start)
                    state.start = 0
                }
                return job
            }
            if let job {
                job()
                continue
            }
            // No job: wait for one (a wake-up that cannot be made leaves a short poll).
            _ = try? Syscall.waitReadable(
                wakeup.map { [$0.descriptor] } ?? [], timeout: wakeup == nil ? .milliseconds(50) : nil)
            state.withLock { $0.idle -= 1 }
        }
    }
}

/// Runs `body`, a loop that lives as long as its service (the engine's loop: file reads, the
/// radio's poll, SQLite commits), on a thread of its own named `name`, and returns what it returns;
/// the caller's task waits without holding a thread of the cooperative pool. Short blocking jobs go
/// to ``WorkerPool/shared`` instead.
package func runOnThreadOfItsOwn<T: Sendable>(named name: String, _ body: @escaping @Sendable () throws -> T)
    async throws -> T
{
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.name = name
        thread.start()
    }
}
