import BeaconCore
import Foundation
import Synchronization

/// The one timer mechanism of the shells: closures run at a deadline on one thread, which waits
/// for the earliest as the engine's loop does (a ``Wakeup`` and a timeout). Script timeouts and
/// their SIGKILL grace use it. A closure must be quick: it runs on the timers' thread.
public final class ShellTimers: Sendable {
    public static let shared = ShellTimers()

    private struct State {
        var queue = DeadlineQueue<Int>()
        var actions: [Int: @Sendable () -> Void] = [:]
        var next = 0
        var started = false
    }

    private let state = Mutex(State())
    private let wakeup: Wakeup?
    private let origin = ContinuousClock.now

    init() { wakeup = try? Wakeup() }

    /// Microseconds since the timers were made, on the clock that only moves forward.
    private var now: Int64 { (ContinuousClock.now - origin).microseconds }

    /// Runs `action` once `delay` has passed.
    public func after(_ delay: Duration, _ action: @escaping @Sendable () -> Void) {
        let due = now &+ max(0, delay.microseconds)
        let start = state.withLock { state -> Bool in
            state.next += 1
            state.actions[state.next] = action
            state.queue.schedule(state.next, at: due)
            defer { state.started = true }
            return !state.started
        }
        if start {
            let thread = Thread { [self] in run() }
            thread.name = "beaconwatch timers"
            thread.start()
        }
        wakeup?.signal()
    }

    private func run() {
        while true {
            let (due, wait) = state.withLock { state -> ([@Sendable () -> Void], Duration?) in
                wakeup?.clear()
                var due: [@Sendable () -> Void] = []
                let time = now
                while let (_, id) = state.queue.popDue(atOrBefore: time) {
                    if let action = state.actions.removeValue(forKey: id) { due.append(action) }
                }
                return (due, state.queue.nextDue.map { .microseconds(max(0, $0 &- time)) })
            }
            for action in due { action() }
            guard due.isEmpty else { continue }
            // Until the earliest deadline, or a new one (a wake-up that cannot be made: short waits).
            _ = try? Syscall.waitReadable(
                wakeup.map { [$0.descriptor] } ?? [],
                timeout: wakeup == nil ? min(wait ?? .milliseconds(50), .milliseconds(50)) : wait)
        }
    }
}
