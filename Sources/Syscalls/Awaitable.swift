import Synchronization

/// Lets async code wait for a condition that other threads make true, woken by their
/// ``changed()`` rather than by polling, with a deadline.
///
/// A waiter checks its condition, and is woken to check again at every ``changed()`` after
/// that; a change between its check and its sleep is not lost (the generation tells).
package final class Awaitable: Sendable {
    private struct State {
        var generation = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextID = 0
    }

    private let state = Mutex(State())
    private let timers: ShellTimers

    /// An awaitable whose deadlines are read and slept on `timers`.
    package init(timers: ShellTimers = .shared) { self.timers = timers }

    /// Something the waiters' conditions read may have changed: wakes them all to look.
    package func changed() {
        let woken = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.generation += 1
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in woken { waiter.resume() }
    }

    /// Waits until `condition` holds or `timeout` passes; returns whether it holds.
    package func wait(within timeout: Duration, until condition: () -> Bool) async -> Bool {
        let clock = timers.clock
        let deadline = clock.elapsed() + timeout
        // One timer for the whole wait, however often it is woken: the deadline is a change too.
        var timer: Int?
        defer { if let timer { timers.cancel(timer) } }
        while true {
            let generation = state.withLock { $0.generation }
            if condition() { return true }
            guard clock.elapsed() < deadline, !Task.isCancelled else { return false }
            if timer == nil { timer = timers.at(deadline) { [self] in changed() } }
            await nextChange(after: generation)
        }
    }

    /// Returns at the first ``changed()`` after `generation` (at once if there was one), or when
    /// cancelled.
    private func nextChange(after generation: Int) async {
        let id = state.withLock { state -> Int in
            state.nextID += 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let already = state.withLock { state -> Bool in
                    guard state.generation == generation, !Task.isCancelled else { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if already { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
