import BeaconCore
import BeaconConfiguration
import Engine
import Fleet
import Persistence
import RegionMonitor
import Rules
import Synchronization
import Syscalls

/// What the shell tells a running engine between two events: commands from `B/cmd/...`, a new
/// configuration (SIGHUP, `cmd/reload`), the fleet's messages and scanners' reports, servers'
/// answers, and stop (SIGTERM, SIGINT).
///
/// Posted from any thread into one queue; the run loop takes the orders between events, in the
/// order they were posted, on its own clock, so the engine stays single-threaded and its state
/// machines see them as one more input.
package final class EngineControl: Sendable {
    /// What the shell tells the table of devices (``Devices/Input``).
    package typealias Order = Devices.Input

    /// A look at the engine between two events, on its thread (the web view's readings): given
    /// the driver, or `nil` once the run loop has ended.
    package typealias Query = @Sendable (EngineDriver?) -> Void

    /// What the run loop says of an order posted with ``ask(_:within:)``.
    package enum Answer: Sendable, Hashable {
        /// Handled, and its outputs committed.
        case taken
        /// Handled and refused: nothing changed.
        case refused(Devices.Refusal)
        /// Never handled: the run loop has ended, or takes no such order (a file run takes
        /// only the daemon's orders and learn commands).
        case dropped
    }

    /// An order in the queue, with who waits for its answer (``ask(_:within:)``), if anyone.
    package struct Posted: Sendable {
        package var order: Order
        package var reply: (@Sendable (Answer) -> Void)?
    }

    private struct State {
        var orders: [Posted] = []
        /// Messages and reports waiting (what the limit counts).
        var observations = 0
        var queries: [Query] = []
        var droppedFleet = 0
        var stopping = false
        /// The run loop has ended: queries are answered with `nil` at once.
        var ended = false
    }

    /// Fleet messages waiting for the engine at most; beyond, the oldest are dropped (counted).
    package static let fleetQueueLimit = 100_000

    private let state = Mutex(State())
    /// Readable while orders or a stop wait: the run loop waits on it beside its input.
    package let wakeup: Wakeup?

    /// Where a reading's limit (``read(within:_:)``) is timed.
    let timers: ShellTimers

    package init(timers: ShellTimers = .shared) {
        wakeup = try? Wakeup()
        self.timers = timers
    }

    /// The descriptor a blocking wait should also watch (`nil` if none could be made).
    package var wakeDescriptor: Int32? { wakeup?.descriptor }

    /// An input for the daemon as a whole (a command, a reload, new rules).
    package func post(_ input: EngineInput) { post(.daemon(input)) }

    /// Posts what `command` asks of the engine; `reload` is the shell's (it reads the file).
    package func post(_ command: DaemonCommand) {
        switch command {
        case .mode(let mode): post(EngineInput.mode(mode))
        case .alert: command.traceCommand.map { post(EngineInput.command($0)) }
        case .learn(let learn): post(Order.learn(learn))
        case .reload: break
        }
    }

    /// A fleet message for the engine, taken at the daemon's clock when the loop gets to it.
    package func post(_ message: FleetMessage) { post(.message(message)) }

    /// A scanner's report, queued as a fleet message is.
    package func post(_ report: ScannerReport) { post(.report(report)) }

    /// An order, queued after those waiting. Beyond ``fleetQueueLimit`` messages and reports the
    /// oldest of them is dropped (counted); an answer or a command never is.
    ///
    /// Wakes the loop only when the queue was empty: the loop clears the wake-up only when it
    /// takes the last order, so a queue with orders in it always has one pending (a busy fleet
    /// costs no system call per message).
    package func post(_ order: Order) { post(Posted(order: order)) }

    private func post(_ posted: Posted) {
        let wasEmpty = state.withLock { state in
            let wasEmpty = state.orders.isEmpty
            state.orders.append(posted)
            guard posted.order.isObservation else { return wasEmpty }
            state.observations += 1
            if state.observations > Self.fleetQueueLimit,
                let oldest = state.orders.firstIndex(where: \.order.isObservation)
            {
                state.orders.remove(at: oldest)
                state.observations -= 1
                state.droppedFleet += 1
            }
            return wasEmpty
        }
        if wasEmpty { wakeup?.signal() }
    }

    /// Posts `order` as ``post(_:)-(Order)`` does and waits for the run loop's answer: whether it was
    /// taken (its outputs committed) or refused, and why (docs/behaviour.md §22: a learn command's
    /// checks need the engine's state). `nil` when no answer came within `limit` (a stuck loop:
    /// the order is still handled when the loop gets to it).
    package func ask(_ order: Order, within limit: Duration = .seconds(2)) async -> Answer? {
        let answer = Mutex<Answer?>(nil)
        let answered = Awaitable(timers: timers)
        let reply: @Sendable (Answer) -> Void = { value in
            answer.withLock { $0 = value }
            answered.changed()
        }
        guard !state.withLock({ $0.ended }) else { return .dropped }
        post(Posted(order: order, reply: reply))
        guard await answered.wait(within: limit, until: { answer.withLock { $0 != nil } }) else { return nil }
        return answer.withLock { $0 }
    }

    /// Wakes the run loop to look again with no order (outputs that waited for the broker may
    /// go out: ``EngineDriver/release()``).
    package func wake() { wakeup?.signal() }

    /// Fleet messages dropped because the engine fell behind.
    package var droppedFleetMessages: Int { state.withLock { $0.droppedFleet } }

    /// Asks the run loop to stop after its current event.
    package func stop() {
        state.withLock { $0.stopping = true }
        wakeup?.signal()
    }

    package var isStopping: Bool { state.withLock { $0.stopping } }

    /// Runs `body` on the engine's thread between two events, with the driver (`nil` when the
    /// run loop has ended or ends before it gets to it).
    package func query(_ body: @escaping Query) {
        let ended = state.withLock { state in
            if !state.ended { state.queries.append(body) }
            return state.ended
        }
        if ended { body(nil) } else { wakeup?.signal() }
    }

    /// `body`'s answer on the engine's thread; `nil` when the run loop has ended, or has not
    /// answered within `limit` (a loop that is stuck: the answer is dropped when it comes).
    package func read<T: Sendable>(
        within limit: Duration = .seconds(2), _ body: @escaping @Sendable (EngineDriver) -> T
    ) async -> T? {
        let answer = Mutex<(done: Bool, value: T?)>((false, nil))
        let answered = Awaitable(timers: timers)
        query { driver in
            let value = driver.map(body)
            answer.withLock { $0 = (true, value) }
            answered.changed()
        }
        guard await answered.wait(within: limit, until: { answer.withLock { $0.done } }) else { return nil }
        return answer.withLock { $0.value }
    }

    /// Answers the waiting queries with `driver` (the run loop, between events).
    func answerQueries(_ driver: EngineDriver) {
        let queries = state.withLock { state in
            if !state.stopping, state.orders.isEmpty { wakeup?.clear() }
            defer { state.queries.removeAll() }
            return state.queries
        }
        for query in queries { query(driver) }
    }

    /// Whether the run loop has ended.
    package var hasEnded: Bool { state.withLock { $0.ended } }

    /// The run loop has ended: waiting and later queries are answered with `nil`.
    package func endQueries() {
        let (queries, replies) = state.withLock { state in
            state.ended = true
            defer {
                state.queries.removeAll()
                state.orders.removeAll { $0.reply != nil }
            }
            return (state.queries, state.orders.compactMap(\.reply))
        }
        for query in queries { query(nil) }
        for reply in replies { reply(.dropped) }
    }

    /// The orders waiting, oldest first.
    func take() -> [Posted] {
        state.withLock { state in
            if !state.stopping, state.queries.isEmpty { wakeup?.clear() }
            state.observations = 0
            defer { state.orders.removeAll(keepingCapacity: true) }
            return state.orders
        }
    }
}
