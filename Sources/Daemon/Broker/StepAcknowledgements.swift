import BeaconCore
import Foundation
import Persistence
import Synchronization
import Syscalls

/// The active's shipped steps the broker has not acknowledged yet (PUBACK), which the outputs of
/// their commits wait for (docs/failover.md, "Outputs wait for the broker").
///
/// The broker acknowledges a QoS 1 step once it holds it, and by then it has routed it to the
/// standby's persistent session: a step acknowledged is in the state the next active starts
/// from, so its outputs may go out. A step never acknowledged (the active cut off, killed, or
/// stepped down) is in no one's state but its maker's, and its outputs are withheld: the next
/// active tells what happened from its own state.
///
/// Locking: ``sending(step:_:)`` holds the lock while libmosquitto takes the message, so that an
/// acknowledgement (on the network thread, holding only libmosquitto's callback lock) always
/// finds the step it acknowledges. While it is held nothing else is taken but libmosquitto's own
/// locks and, in ``verdict(through:isActive:)`` and ``wait(through:within:isActive:)``, the
/// link's election lock, which is never held while taking this one. A wait ends in `poll(2)` on a
/// ``Wakeup`` that each acknowledgement and change of role signals, its deadline read from the
/// daemon's clock (docs/architecture.md, "One timer mechanism").
final class StepAcknowledgements: Sendable {
    private struct State {
        /// The steps sent and not acknowledged: message id → (the connection's generation, step number).
        var pending: [Int32: (generation: UInt64, step: Int64)] = [:]
        /// The step numbers sent, in order (they only increase), from `head` on; those acknowledged
        /// out of order wait in `done` until the ones before them are.
        var sent: [Int64] = []
        var head = 0
        var done: Set<Int64> = []
        /// Told when a step is acknowledged or the role changes (the engine's loop looks again).
        var progressed: (@Sendable () -> Void)?

        /// ``StepAcknowledgements/verdict(through:isActive:)`` with the lock held.
        mutating func verdict(through step: Int64, isActive: () -> Bool) -> ShippedVerdict {
            guard isActive() else {
                pending.removeAll()
                sent.removeAll()
                head = 0
                done.removeAll()
                return .withheld
            }
            while head < sent.count, done.remove(sent[head]) != nil { head += 1 }
            if head > 1024, head * 2 > sent.count {
                sent.removeFirst(head)
                head = 0
            }
            // The oldest step the broker does not hold yet: the outputs up to the one before may go.
            return head < sent.count && sent[head] <= step ? .waiting : .acknowledged
        }
    }

    private let state = Mutex(State())
    /// Signalled at every acknowledgement and change of role, for ``wait(through:within:recheck:isActive:)``.
    private let changed: Wakeup
    private let clock: DaemonClock

    init(clock: DaemonClock = .system) throws {
        changed = try Wakeup()
        self.clock = clock
    }

    /// Hands step number `step` to libmosquitto through `publish` (which returns its message id
    /// and the connection's generation), remembering it until the broker acknowledges it.
    func sending(step: Int64, _ publish: () throws -> (messageID: Int32, generation: UInt64)) rethrows {
        try state.withLock { state in
            let message = try publish()
            state.pending[message.messageID] = (message.generation, step)
            state.sent.append(step)
        }
    }

    /// The broker acknowledged message `messageID` of connection `generation` (the network thread).
    /// Other messages of the connection (beats, requests, snapshots) are not steps: ignored.
    func acknowledge(_ messageID: Int32, generation: UInt64) {
        let (known, progressed) = state.withLock { state -> (Bool, (@Sendable () -> Void)?) in
            guard let sent = state.pending[messageID], sent.generation == generation else { return (false, nil) }
            state.pending[messageID] = nil
            state.done.insert(sent.step)
            return (true, state.progressed)
        }
        guard known else { return }
        changed.signal()
        progressed?()
    }

    /// From now on `body` is told of every acknowledgement and change of role.
    func whenProgressed(_ body: @escaping @Sendable () -> Void) {
        state.withLock { $0.progressed = body }
    }

    /// The role may have changed: the waits look again.
    func roleChanged() {
        let progressed = state.withLock { $0.progressed }
        changed.signal()
        progressed?()
    }

    /// Whether the outputs of the steps up to number `step` may go out: acknowledged when none of
    /// them waits for the broker, withheld once `isActive` (the link's role) no longer holds,
    /// when the steps not acknowledged are given up.
    func verdict(through step: Int64, isActive: () -> Bool) -> ShippedVerdict {
        state.withLock { $0.verdict(through: step, isActive: isActive) }
    }

    /// Waits at most `limit` for ``verdict(through:isActive:)`` to be other than waiting, woken by
    /// each acknowledgement and change of role, and reading the role again at least every `recheck`.
    func wait(
        through step: Int64, within limit: Duration, recheck: Duration = .milliseconds(100), isActive: () -> Bool
    ) -> ShippedVerdict {
        let deadline = clock.elapsed() + limit
        while true {
            // Cleared before looking: a signal after the look leaves the wake-up readable.
            changed.clear()
            let verdict = verdict(through: step, isActive: isActive)
            let left = deadline - clock.elapsed()
            guard verdict == .waiting, left > .zero else { return verdict }
            changed.wait(timeout: min(left, recheck))
        }
    }
}
