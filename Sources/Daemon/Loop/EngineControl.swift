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

    private struct State {
        var orders: [Order] = []
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
    package func post(_ order: Order) {
        let wasEmpty = state.withLock { state in
            let wasEmpty = state.orders.isEmpty
            state.orders.append(order)
            guard order.isObservation else { return wasEmpty }
            state.observations += 1
            if state.observations > Self.fleetQueueLimit,
                let oldest = state.orders.firstIndex(where: \.isObservation)
            {
                state.orders.remove(at: oldest)
                state.observations -= 1
                state.droppedFleet += 1
            }
            return wasEmpty
        }
        if wasEmpty { wakeup?.signal() }
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
        let queries = state.withLock { state in
            state.ended = true
            defer { state.queries.removeAll() }
            return state.queries
        }
        for query in queries { query(nil) }
    }

    /// The orders waiting, oldest first.
    func take() -> [Order] {
        state.withLock { state in
            if !state.stopping, state.queries.isEmpty { wakeup?.clear() }
            state.observations = 0
            defer { state.orders.removeAll(keepingCapacity: true) }
            return state.orders
        }
    }
}
