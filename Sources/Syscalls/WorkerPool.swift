import Foundation
import Synchronization

/// A bounded number of threads for the shells' blocking jobs (script runs, server calls): jobs run
/// in the order they are submitted, at most ``width`` at once; a job that blocks holds one thread
/// and no more. Threads start as jobs need them and stay.
///
/// Workers wait the way the engine's loop does, on a ``Wakeup`` (docs/architecture.md, "Threads").
package final class WorkerPool: Sendable {
    /// The daemon's pool: scripts (one run of a script at a time) and the rules' server calls.
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
