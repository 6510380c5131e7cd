import BeaconCore
import Configuration
import Engine
import Fleet
import Persistence
import RegionMonitor
import Rules
import Synchronization
import Syscalls

/// What the shell tells a running engine between two events: commands from `B/cmd/...`, a new
/// configuration (SIGHUP, `cmd/reload`), and stop (SIGTERM, SIGINT).
///
/// Posted from any thread; the run loop takes the orders between events, on its own clock, so
/// the engine stays single-threaded and its state machines see them as one more input.
public final class EngineControl: Sendable {
    /// What the shell tells the engine: an ``EngineInput`` other than a sighting.
    public typealias Order = EngineInput

    /// What the shell tells the fleet: a device's message, or the answer to a device's server call.
    public enum FleetOrder: Sendable {
        case message(FleetMessage)
        case answer(device: String, ServerAnswer, call: Int)
    }

    private struct State {
        var orders: [Order] = []
        var fleet: [FleetOrder] = []
        var droppedFleet = 0
        var stopping = false
    }

    /// Fleet messages waiting for the engine at most; beyond, the oldest are dropped (counted).
    public static let fleetQueueLimit = 100_000

    private let state = Mutex(State())
    /// Readable while orders or a stop wait: the run loop waits on it beside its input.
    public let wakeup: Wakeup?

    public init() {
        wakeup = try? Wakeup()
    }

    /// The descriptor a blocking wait should also watch (`nil` if none could be made).
    public var wakeDescriptor: Int32? { wakeup?.descriptor }

    public func post(_ order: Order) {
        state.withLock { $0.orders.append(order) }
        wakeup?.signal()
    }

    /// Posts what `command` asks of the engine; `reload` is the shell's (it reads the file).
    public func post(_ command: DaemonCommand) {
        switch command {
        case .mode(let mode): post(EngineInput.mode(mode))
        case .alert: command.traceCommand.map { post(.command($0)) }
        case .reload: break
        }
    }

    /// A fleet message for the engine, taken at the daemon's clock when the loop gets to it.
    public func post(_ message: FleetMessage) { post(.message(message)) }

    /// A fleet order: a message (bounded queue: the oldest are dropped beyond the limit) or an answer.
    ///
    /// Wakes the loop only when the queue was empty: the loop clears the wake-up only when it
    /// takes the last order, so a queue with orders in it always has one pending (a busy fleet
    /// costs no system call per message).
    public func post(_ order: FleetOrder) {
        let wasEmpty = state.withLock { state in
            let wasEmpty = state.fleet.isEmpty && state.orders.isEmpty
            state.fleet.append(order)
            if state.fleet.count > Self.fleetQueueLimit {
                state.fleet.removeFirst(state.fleet.count - Self.fleetQueueLimit)
                state.droppedFleet += 1
            }
            return wasEmpty
        }
        if wasEmpty { wakeup?.signal() }
    }

    /// Fleet messages dropped because the engine fell behind.
    public var droppedFleetMessages: Int { state.withLock { $0.droppedFleet } }

    /// Asks the run loop to stop after its current event.
    public func stop() {
        state.withLock { $0.stopping = true }
        wakeup?.signal()
    }

    public var isStopping: Bool { state.withLock { $0.stopping } }

    func take() -> [Order] {
        state.withLock { state in
            if !state.stopping, state.fleet.isEmpty { wakeup?.clear() }
            defer { state.orders.removeAll() }
            return state.orders
        }
    }

    /// The fleet orders waiting, oldest first.
    func takeFleet() -> [FleetOrder] {
        state.withLock { state in
            if !state.stopping, state.orders.isEmpty { wakeup?.clear() }
            defer { state.fleet.removeAll(keepingCapacity: true) }
            return state.fleet
        }
    }
}
