import BeaconCore
import Configuration
import Foundation
import MQTT
import RegionMonitor
import Synchronization

/// Publishes outputs and state to the broker (SPEC 10.1): events as they come, retained state
/// when it changes and again on every connect, `online`/`offline` on `B/status` (the will says
/// `offline` when the daemon dies).
///
/// QoS 1 messages published while the broker is away are queued by libmosquitto and sent on
/// reconnect. (The persistent outbox of SPEC 12, which survives a restart, is still to come.)
public final class MQTTSink: Sendable {
    public let tree: TopicTree
    private let client: MQTTClient
    private let state = Mutex(State())

    struct State {
        /// Retained topics and their latest message, republished on every connect.
        var retained: [String: MQTTMessage] = [:]
        var retainedOrder: [String] = []
        /// QoS 1 messages not yet acknowledged, and acknowledgements that came first.
        var outstanding: Set<Int32> = []
        var earlyAcks: Set<Int32> = []
        var connected = false
    }

    private let discovery: [MQTTMessage]

    /// A sink for `settings`, reporting for `userid` on `hierarchy`; nothing is sent before ``start()``.
    public init(settings: MQTTSettings, userid: String, hierarchy: Hierarchy) throws {
        tree = TopicTree(topic: settings.topic, userid: userid, qos: Int32(settings.qos))
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
        client = try MQTTClient(connection)
    }

    static func readPassword(_ path: String) throws -> String {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw RuntimeFailure("cannot read MQTT.passwordFile \(path); check it exists and this user may read it")
        }
        return String(text.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
    }

    /// Connects in the background.
    public func start() throws {
        for message in discovery { remember(message) }
        remember(tree.status(online: true))
        try client.start()
    }

    /// Handles the client's events until it shuts down: on every connect, (re)publishes the
    /// retained state; acknowledgements clear outstanding messages. Logs through `say`.
    public func run(say: @Sendable (String) -> Void) async {
        var outage = false
        for await event in client.events {
            switch event {
            case .connected(0):
                state.withLock { $0.connected = true }
                if outage { say("MQTT broker reachable again; republishing retained state") }
                outage = false
                let retained = state.withLock { state in state.retainedOrder.compactMap { state.retained[$0] } }
                for message in retained { try? send(message) }
            case .connected(let code):
                say(
                    "MQTT broker refused the connection (CONNACK \(code)); check MQTT.username, MQTT.password and MQTT.clientId"
                )
            case .disconnected(let code):
                state.withLock { $0.connected = false }
                if code != 0, !outage {
                    say("MQTT broker connection lost; reconnecting (1 s, doubling to 60 s)")
                    outage = true
                }
            case .published(let messageID):
                state.withLock { state in
                    if state.outstanding.remove(messageID) == nil { state.earlyAcks.insert(messageID) }
                }
            case .subscribed, .message:
                break
            }
        }
    }

    /// Whether the broker accepted the connection within `timeout`.
    public func waitConnected(within timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while ContinuousClock.now < deadline {
            if state.withLock({ $0.connected }) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return state.withLock { $0.connected }
    }

    /// Publishes one step's outputs, then `B/area` and `B/zone` when they changed.
    public func publish(_ outputs: [MonitorOutput], area: String?, zone: String?) throws {
        for output in outputs {
            for message in tree.messages(for: output) { try send(message) }
        }
        for message in tree.current(area: area, zone: zone)
        where state.withLock({ $0.retained[message.topic]?.payload != message.payload }) {
            try send(message)
        }
    }

    private func remember(_ message: MQTTMessage) {
        guard message.retain else { return }
        state.withLock { state in
            if state.retained.updateValue(message, forKey: message.topic) == nil {
                state.retainedOrder.append(message.topic)
            }
        }
    }

    private func send(_ message: MQTTMessage) throws {
        remember(message)
        let messageID = try client.publish(
            topic: message.topic, payload: Array(message.payload.utf8), qos: message.qos, retain: message.retain)
        guard message.qos > 0 else { return }
        state.withLock { state in
            if state.earlyAcks.remove(messageID) == nil { state.outstanding.insert(messageID) }
        }
    }

    /// Publishes `offline`, waits up to `timeout` for every QoS 1 message to be acknowledged,
    /// and disconnects. Returns how many stayed unacknowledged.
    @discardableResult
    public func finish(within timeout: Duration) async -> Int {
        try? send(tree.status(online: false))
        // Nothing can be acknowledged without a connection: a short grace for one to come.
        let connected = state.withLock { $0.connected }
        let deadline = ContinuousClock.now.advanced(by: connected ? timeout : min(timeout, .seconds(1)))
        while ContinuousClock.now < deadline, !state.withLock({ $0.outstanding.isEmpty }) {
            try? await Task.sleep(for: .milliseconds(5))
        }
        let left = state.withLock { $0.outstanding.count }
        client.shutdown()
        return left
    }
}

/// Runs blocking work (file reading, a radio) on its own thread, off the cooperative pool.
public func onDedicatedThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
