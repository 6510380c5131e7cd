import BeaconCore
import Foundation
import Synchronization

/// The one timer mechanism of the shells, on one injected ``DaemonClock``.
///
/// The shell's waits end in `poll(2)` (``Syscall/waitReadable(_:timeout:)``), with a few
/// exceptions docs/architecture.md lists ("One timer mechanism"): a thread waits on its
/// ``Wakeup``s so (the engine's loop, the MQTT network thread, the checkpointer, an HTTP fetch);
/// closures run at a deadline on the timers' one thread, which waits so for the earliest, its
/// timeout computed from this clock (script timeouts and their SIGKILL grace); and async code
/// sleeps through ``sleep(for:)``, a closure that resumes it. A scripted clock drives the timers
/// in tests: after moving it, ``clockMoved()`` makes the thread look.
/// A closure must be quick: it runs on the timers' thread.
package final class ShellTimers: Sendable {
    /// The timers of the machine's clock (``DaemonClock/system``).
    package static let shared = ShellTimers(clock: .system)

    /// The clock every deadline is read on.
    package let clock: DaemonClock

    private struct State {
        var queue = DeadlineQueue<Int>()
        var actions: [Int: (due: Int64, action: @Sendable () -> Void)] = [:]
        var next = 0
        var started = false

        /// Drops the queue's entries of cancelled actions once they are most of it: a wait
        /// woken early again and again (a long `Awaitable` wait, an event at a time) cancels
        /// its timer each time, and memory must not grow with that.
        mutating func compact() {
            guard queue.count > 64, queue.count > 2 * actions.count else { return }
            queue = DeadlineQueue()
            for (id, entry) in actions { queue.schedule(id, at: entry.due, rank: UInt64(id)) }
        }
    }

    private let state = Mutex(State())
    private let wakeup: Wakeup?

    package init(clock: DaemonClock) {
        self.clock = clock
        wakeup = try? Wakeup()
    }

    /// Microseconds on the clock that only moves forward.
    private var now: Int64 { clock.elapsed().microseconds }

    /// Runs `action` once `delay` has passed; returns a number that ``cancel(_:)`` takes.
    @discardableResult
    package func after(_ delay: Duration, _ action: @escaping @Sendable () -> Void) -> Int {
        at(clock.elapsed() + max(.zero, delay), action)
    }

    /// Runs `action` once ``clock``'s elapsed time reaches `deadline`; returns a number that
    /// ``cancel(_:)`` takes.
    @discardableResult
    package func at(_ deadline: Duration, _ action: @escaping @Sendable () -> Void) -> Int {
        let due = deadline.microseconds
        let (id, start) = state.withLock { state -> (Int, Bool) in
            state.next += 1
            state.actions[state.next] = (due, action)
            state.queue.schedule(state.next, at: due, rank: UInt64(state.next))
            defer { state.started = true }
            return (state.next, !state.started)
        }
        if start {
            let thread = Thread { [self] in run() }
            thread.name = "beaconwatch timers"
            thread.start()
        }
        wakeup?.signal()
        return id
    }

    /// Drops the action `after` returned `id` for, if it has not run.
    package func cancel(_ id: Int) {
        state.withLock { state in
            guard state.actions.removeValue(forKey: id) != nil else { return }
            state.compact()
        }
    }

    /// Entries in the queue, cancelled ones not yet dropped included (for tests).
    package var queued: Int { state.withLock { $0.queue.count } }
    /// Actions waiting to run (for tests).
    package var pending: Int { state.withLock { $0.actions.count } }

    /// The scripted clock moved: the thread reads it again and runs what fell due.
    package func clockMoved() { wakeup?.signal() }

    /// Suspends the calling task until `duration` has passed on ``clock``; throws
    /// `CancellationError` at once when the task is cancelled (a graceful shutdown).
    package func sleep(for duration: Duration) async throws {
        try await sleep(until: clock.elapsed() + max(.zero, duration))
    }

    /// Suspends the calling task until ``clock``'s elapsed time reaches `deadline`, as
    /// ``sleep(for:)``.
    package func sleep(until deadline: Duration) async throws {
        let sleeper = Sleeper()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                guard sleeper.hold(continuation) else { return }
                let id = at(deadline) { sleeper.finish(with: nil) }
                sleeper.noteTimer(id)
            }
        } onCancel: {
            if let id = sleeper.finish(with: CancellationError()) { cancel(id) }
        }
    }

    /// One sleeping task: its continuation, resumed once, by the timer or by a cancellation.
    private final class Sleeper: Sendable {
        private struct Slot {
            var continuation: CheckedContinuation<Void, any Error>?
            var timer: Int?
            var finished = false
        }

        private let slot = Mutex(Slot())

        /// Keeps the continuation; `false` when the task was cancelled before (it is resumed).
        func hold(_ continuation: CheckedContinuation<Void, any Error>) -> Bool {
            let finished = slot.withLock { slot -> Bool in
                if !slot.finished { slot.continuation = continuation }
                return slot.finished
            }
            if finished { continuation.resume(throwing: CancellationError()) }
            return !finished
        }

        func noteTimer(_ id: Int) { slot.withLock { $0.timer = id } }

        /// Resumes the task (with `error`, if any) unless it was; returns the timer to cancel.
        @discardableResult
        func finish(with error: (any Error)?) -> Int? {
            let (continuation, timer) = slot.withLock { slot -> (CheckedContinuation<Void, any Error>?, Int?) in
                slot.finished = true
                defer { slot.continuation = nil }
                return (slot.continuation, slot.timer)
            }
            if let error { continuation?.resume(throwing: error) } else { continuation?.resume() }
            return timer
        }
    }

    private func run() {
        while true {
            let (due, wait) = state.withLock { state -> ([@Sendable () -> Void], Duration?) in
                wakeup?.clear()
                var due: [@Sendable () -> Void] = []
                let time = now
                while let (_, id) = state.queue.popDue(atOrBefore: time) {
                    if let entry = state.actions.removeValue(forKey: id) { due.append(entry.action) }
                }
                return (due, state.queue.nextDue.map { .microseconds(max(0, $0 &- time)) })
            }
            for action in due { action() }
            guard due.isEmpty else { continue }
            // Until the earliest deadline, or a new one (a wake-up that cannot be made: short waits).
            if let wakeup {
                wakeup.wait(timeout: wait)
            } else {
                Syscall.sleep(min(wait ?? .milliseconds(50), .milliseconds(50)))
            }
        }
    }
}
