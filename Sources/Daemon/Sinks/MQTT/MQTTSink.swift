import BeaconCore
import Configuration
import Engine
import Foundation
import MQTT
import Persistence
import RegionMonitor
import Synchronization

/// Publishes outputs and state to the broker (SPEC 10.1): events as they come, retained state
/// when it changes and again on every connect, `online`/`offline` on `B/status` (the will says
/// `offline` when the daemon dies).
///
/// Events are at-least-once: each is in the state database's outbox before it is handed to
/// libmosquitto (``outbox(for:)``), and leaves it on PUBACK (QoS 1) or once written to the socket
/// (QoS 0) and the connection has stayed up for ``confirmation`` since: a broker killed right after
/// acknowledging may never have passed a message on, so on an unclean disconnect everything
/// acknowledged within that time and everything unacknowledged is sent again, in outbox order,
/// on a fresh connection (duplicates are possible; losses are not). At most ``window`` events are
/// with libmosquitto at a time; the rest wait in order. Whatever is left at a stop or a crash is
/// sent first at the next start.
public final class MQTTSink: OutputSink {
    public let tree: TopicTree
    private let client: MQTTClient
    private let store: StateStore
    private let state = Mutex(State())
    private let discovery: [MQTTMessage]
    /// The configured beacons' Location IDs, in file order.
    private let beacons: [String]
    /// How many events may be with libmosquitto, unacknowledged, at once.
    public static let window = 100
    /// How long after its acknowledgement an event is resent if the connection drops.
    public static let confirmation = Duration.seconds(1)

    struct State {
        /// Retained topics and their latest message, republished on every connect.
        var retained: [String: MQTTMessage] = [:]
        var retainedOrder: [String] = []
        /// Retained messages not yet acknowledged (QoS 1).
        var retainedOutstanding: Set<Int32> = []
        /// Outbox entries waiting for their turn, oldest first (from `backlogStart`).
        var backlog: [OutboxEntry] = []
        var backlogStart = 0
        /// Outbox entries with libmosquitto, by message ID.
        var inflight: [Int32: OutboxEntry] = [:]
        /// Acknowledged entries not yet confirmed by ``confirmation`` of connection, oldest first.
        var recent: [(entry: OutboxEntry, at: ContinuousClock.Instant)] = []
        var recentStart = 0
        /// Delivered outbox entries not yet removed from the database.
        var settled: [Int64] = []
        var connected = false
        var waiting: Int { backlog.count - backlogStart + inflight.count }

        /// Moves acknowledged entries older than `confirmation` to `settled`.
        mutating func confirm(now: ContinuousClock.Instant = .now) {
            while recentStart < recent.count, now - recent[recentStart].at >= MQTTSink.confirmation {
                settled.append(recent[recentStart].entry.sequence)
                recentStart += 1
            }
            if recentStart > 4096, recentStart * 2 > recent.count {
                recent.removeFirst(recentStart)
                recentStart = 0
            }
        }

        /// After an unclean disconnect: every entry not confirmed goes back to the front of the
        /// backlog, in outbox order.
        mutating func takeBackUnconfirmed() {
            var again = recent[recentStart...].map(\.entry) + inflight.values
            again.sort { $0.sequence < $1.sequence }
            recent.removeAll()
            recentStart = 0
            inflight.removeAll()
            backlog.replaceSubrange(backlogStart..<backlogStart, with: again)
        }
    }

    /// A sink for `settings`, reporting for `userid` on `hierarchy`, with its outbox in `store`;
    /// nothing is sent before ``start()``.
    public init(settings: MQTTSettings, userid: String, hierarchy: Hierarchy, store: StateStore) throws {
        tree = TopicTree(topic: settings.topic, userid: userid, qos: Int32(settings.qos))
        self.store = store
        beacons = hierarchy.beacons.map(\.locationID)
        discovery =
            settings.homeAssistant
            ? tree.homeAssistantDiscovery(prefix: settings.discoveryPrefix, userid: userid, hierarchy: hierarchy) : []
        var connection = MQTTConnection(host: settings.host, port: Int32(settings.port), clientID: settings.clientID)
        connection.username = settings.username
        connection.password = try settings.password ?? settings.passwordFile.map(Self.readPassword)
        connection.tlsCA = settings.tlsCA
        connection.tlsCert = settings.tlsCert
        connection.tlsKey = settings.tlsKey
        connection.version = settings.version == .v5 ? .v5 : .v311
        connection.keepalive = Int32(settings.keepalive)
        let will = tree.status(online: false)
        connection.will = .init(topic: will.topic, payload: Array(will.payload.utf8), qos: will.qos, retain: true)
        let acknowledgements = Acknowledgements()
        client = try MQTTClient(connection, published: { acknowledgements.handle($0) })
        acknowledgements.attach(self)
    }

    static func readPassword(_ path: String) throws -> String {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw RuntimeFailure("cannot read MQTT.passwordFile \(path); check it exists and this user may read it")
        }
        return String(text.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
    }

    /// Queues what the outbox still holds from before (sent before anything new), takes the
    /// configured beacons' kept classes as retained state (a broker that lost its own hears them
    /// at connect; the engine's reports replace them), and connects in the background. Returns
    /// how many events were left from before.
    @discardableResult
    public func start() throws -> Int {
        let pending = try store.pendingOutbox()
        let kept = try store.lastReported()
        state.withLock { state in
            state.backlog = pending + state.backlog[state.backlogStart...]
            state.backlogStart = 0
        }
        for message in discovery { remember(message) }
        remember(tree.status(online: true))
        for id in beacons { if let proximity = kept[id] { remember(tree.beacon(id, proximity)) } }
        try client.start()
        return pending.count
    }

    /// Handles the client's events until it shuts down: on every connect, (re)publishes the
    /// retained state, subscribes to `B/cmd/+` and resumes the outbox; acknowledgements settle
    /// outbox entries; valid commands go to `command`, garbage is logged and ignored. Logs
    /// through `say`.
    public func run(say: @Sendable (String) -> Void, command: (DaemonCommand) -> Void = { _ in }) async {
        var outage = false
        for await event in client.events {
            switch event {
            case .connected(0):
                if outage { say("MQTT broker reachable again; republishing retained state, then the outbox") }
                outage = false
                do { _ = try client.subscribe(tree.commandFilter, qos: 1) } catch {
                    say("\(error); commands are not taken")
                }
                state.withLock { state in
                    state.connected = true
                    for message in state.retainedOrder.compactMap({ state.retained[$0] }) {
                        send(message, in: &state)
                    }
                    pump(&state)
                }
            case .connected(let code):
                say(
                    "MQTT broker refused the connection (CONNACK \(code)); check MQTT.username, MQTT.password and MQTT.clientId"
                )
            case .disconnected(let code):
                let (wasConnected, reset) = state.withLock { state -> (Bool, (any Error)?) in
                    let wasConnected = state.connected
                    state.connected = false
                    guard code != 0, wasConnected else { return (wasConnected, nil) }
                    state.takeBackUnconfirmed()
                    do { try client.reset() } catch { return (true, error) }
                    return (true, nil)
                }
                if let reset { say("\(reset)") }
                // A first connection that fails is said by whoever waits for it.
                if code != 0, wasConnected, !outage {
                    say("MQTT broker connection lost; reconnecting (1 s, doubling to 60 s); events wait in the outbox")
                    outage = true
                }
            case .published:
                break  // handled on the network thread: ``acknowledged(_:)``
            case .message(let topic, let payload, let retained):
                switch Self.command(topic: topic, payload: payload, retained: retained, tree: tree) {
                case .success(let taken?): command(taken)
                case .success(nil): break
                case .failure(let error): say("ignored a message on \(topic): \(error)")
                }
            case .subscribed:
                break
            }
        }
    }

    /// A PUBACK (or a QoS 0 message written), on the network thread: the entry waits for its
    /// confirmation, and the window has room for the next. The engine's next commit (or
    /// ``finish(within:)``) removes the confirmed entries from the outbox.
    func acknowledged(_ messageID: Int32) {
        state.withLock { state in
            if let entry = state.inflight.removeValue(forKey: messageID) {
                state.recent.append((entry, .now))
                state.confirm()
                pump(&state)
            } else {
                state.retainedOutstanding.remove(messageID)
            }
        }
    }

    /// The command a message on `B/cmd/...` carries. A retained `reload` or `alert` would act
    /// again on every connect, so those are ignored (a retained `mode` is a standing wish, and
    /// taken); other topics are `nil`.
    static func command(topic: String, payload: [UInt8], retained: Bool, tree: TopicTree) -> Result<
        DaemonCommand?, CommandError
    > {
        guard let name = tree.commandName(topic: topic) else { return .success(nil) }
        return DaemonCommand.parse(name: name, payload: payload).flatMap { command in
            if case .mode = command { return .success(command) }
            guard !retained else {
                return .failure(CommandError("\(name) was retained; publish this command without the retain flag"))
            }
            return .success(command)
        }
    }

    /// Whether the broker accepted the connection within `timeout`.
    public func waitConnected(within timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while ContinuousClock.now < deadline, !Task.isCancelled {
            if state.withLock({ $0.connected }) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return state.withLock { $0.connected }
    }

    /// How many events are waiting to be acknowledged (in the backlog or with libmosquitto).
    public var waiting: Int { state.withLock { $0.waiting } }

    public func outbox(for outputs: [MonitorOutput]) -> [OutboxMessage] {
        outputs.compactMap { output in
            tree.event(for: output).map { OutboxMessage(topic: $0.topic, payload: $0.payload, qos: $0.qos) }
        }
    }

    /// Queues the step's events (already in the outbox) and publishes the retained state they
    /// change, then `B/area`, `B/zone`, `B/nearest` and the step's `B/dwell` values when they
    /// changed.
    public func deliver(
        _ outputs: ArraySlice<MonitorOutput>, entries: ArraySlice<OutboxEntry>, whereabouts: Whereabouts
    )
        throws
    {
        let current = tree.current(area: whereabouts.area, zone: whereabouts.zone, nearest: whereabouts.nearest)
        state.withLock { state in
            state.backlog += entries
            for output in outputs {
                for message in tree.retained(for: output) { send(message, in: &state) }
            }
            let dwell = whereabouts.dwell.sorted { $0.key < $1.key }.map {
                tree.dwell(region: $0.key, seconds: $0.value)
            }
            for message in current + dwell where state.retained[message.topic] != message {
                send(message, in: &state)
            }
            pump(&state)
        }
    }

    public func takeSettled() -> [Int64] {
        state.withLock { state in
            if state.connected { state.confirm() }
            defer { state.settled.removeAll(keepingCapacity: true) }
            return state.settled
        }
    }

    private func remember(_ message: MQTTMessage) {
        state.withLock { remember(message, in: &$0) }
    }

    private func remember(_ message: MQTTMessage, in state: inout State) {
        guard message.retain else { return }
        if state.retained.updateValue(message, forKey: message.topic) == nil {
            state.retainedOrder.append(message.topic)
        }
    }

    /// Publishes retained state (remembered for the next connect). The lock is held: the
    /// acknowledgement is handled only after its ID is noted.
    private func send(_ message: MQTTMessage, in state: inout State) {
        remember(message, in: &state)
        guard
            let messageID = try? client.publish(
                topic: message.topic, payload: Array(message.payload.utf8), qos: message.qos, retain: true)
        else { return }  // sent again on the next connect
        if message.qos > 0 { state.retainedOutstanding.insert(messageID) }
    }

    /// Hands waiting events to libmosquitto, in order, while the window has room.
    private func pump(_ state: inout State) {
        while state.inflight.count < Self.window, state.backlogStart < state.backlog.count {
            let entry = state.backlog[state.backlogStart]
            guard
                let messageID = try? client.publish(
                    topic: entry.message.topic, payload: Array(entry.message.payload.utf8), qos: entry.message.qos,
                    retain: false)
            else { break }  // not connected (QoS 0): resumed on the next connect
            state.inflight[messageID] = entry
            state.backlogStart += 1
        }
        if state.backlogStart > 4096, state.backlogStart * 2 > state.backlog.count {
            state.backlog.removeFirst(state.backlogStart)
            state.backlogStart = 0
        }
    }

    /// Publishes `offline`, waits up to `timeout` for every event and retained message to be
    /// acknowledged, removes the delivered ones from the outbox, and disconnects. Returns how
    /// many events are left in the outbox for the next start.
    @discardableResult
    public func finish(within timeout: Duration) async -> Int {
        state.withLock { send(tree.status(online: false), in: &$0) }
        // Nothing can be acknowledged without a connection: a short grace for one to come.
        let connected = state.withLock { $0.connected }
        let deadline = ContinuousClock.now.advanced(by: connected ? timeout : min(timeout, .seconds(1)))
        while ContinuousClock.now < deadline,
            state.withLock({ $0.waiting > 0 || !$0.retainedOutstanding.isEmpty })
        {
            try? await Task.sleep(for: .milliseconds(2))
        }
        client.shutdown()
        // A clean disconnect: what the broker acknowledged is its own now.
        state.withLock { $0.confirm(now: .now.advanced(by: Self.confirmation)) }
        try? store.settle(takeSettled())
        return state.withLock { $0.waiting }
    }
}

/// Hands acknowledgements from the network thread to the sink, which owns the client (and so
/// cannot be named when the client is made).
final class Acknowledgements: Sendable {
    private struct Target {
        weak var sink: MQTTSink?
    }

    private let target = Mutex(Target())

    func attach(_ sink: MQTTSink) { target.withLock { $0.sink = sink } }

    func handle(_ messageID: Int32) { target.withLock { $0.sink }?.acknowledged(messageID) }
}

/// Runs blocking work (file reading, a radio) on its own thread, off the cooperative pool.
public func onDedicatedThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
