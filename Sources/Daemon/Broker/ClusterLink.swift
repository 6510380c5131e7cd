import BeaconConfiguration
import BeaconCore
import Cluster
import Logging
import MQTT
import Persistence
import Synchronization
import Syscalls

/// A daemon's part in its cluster's election (docs/behaviour.md §21, docs/failover.md), through the
/// broker: a connection of its own (keepalive `Cluster.keepalive`, client id
/// `<MQTT.clientId>-cluster`, will: the leader record cleared), subscribed to
/// `MQTT.topic/_cluster/<name>/leader`, that feeds a ``ClusterElection`` and publishes what it
/// says. The shell around the pure machine: it reads the clock, arms one timer for the machine's
/// next deadline, and holds the machine under a lock only while asking it (libmosquitto is called
/// with no lock held).
///
/// The same connection carries the state (ClusterLink+Shipping): the active's steps, a
/// standby's request for a snapshot and the snapshot. Its session is persistent, so a standby
/// that was away gets the steps it missed, as far as the broker queues them.
package final class ClusterLink: Sendable {
    /// The leader topic.
    package let topic: String
    /// Where the active beats (QoS 0, not retained).
    package let beatTopic: String
    /// Where the active's committed steps go (QoS 1).
    package let stepsTopic: String
    /// Where a standby asks for a snapshot (its member id).
    package let requestTopic: String
    /// Where the snapshots for this daemon come.
    package let snapshotTopic: String
    /// The topics' root, `MQTT.topic/_cluster/<name>`.
    let root: String
    package let member: String
    let client: MQTTClient
    private let timers: ShellTimers
    let logger: Logger
    let state: Mutex<State>
    let changes: Awaitable
    /// Applies steps and snapshots, and makes snapshots, one at a time off libmosquitto's thread.
    let worker = WorkerPool.shared.lane()
    /// The active life's reload request (its reloader's), for SIGHUP: ``ClusterService`` owns the
    /// signal in a cluster daemon and hands it on while this daemon is the active.
    private let reloadHook = Mutex<(@Sendable (String) -> Void)?>(nil)
    /// The steps shipped and not yet acknowledged by the broker, which their outputs wait for.
    let acks: StepAcknowledgements

    struct State {
        var election: ClusterElection
        var timer: Int?
        /// A standby's database, which the steps go to.
        var follower: Follower?
        /// The active's database, which snapshots are made of.
        var served: StateStore?
        /// Where the active's state stands (its beats say it): at ``serve(_:)``, then each step shipped.
        var shipped: StepPosition?
    }

    /// A link for the cluster `name` under `settings` (its broker and topic), as `member`, with
    /// the cluster connection's keepalive `keepalive` seconds; nothing is sent before ``start()``.
    /// Each change of its election is told to `changes` (its own unless given: one shared by two
    /// links lets a wait watch both).
    package init(
        settings: MQTTSettings, name: String, keepalive: Int, member: String, timers: ShellTimers = .shared,
        changes: Awaitable? = nil, logger: Logger
    ) throws {
        root = "\(settings.topic)/_cluster/\(name)"
        topic = "\(root)/leader"
        beatTopic = "\(root)/beat"
        stepsTopic = "\(root)/steps"
        requestTopic = "\(root)/snapshot/request"
        snapshotTopic = "\(root)/snapshot/\(member)"
        self.member = member
        self.timers = timers
        self.logger = logger
        self.changes = changes ?? Awaitable(timers: timers)
        // A quarter keepalive: the active beats every two settles; a standby takes 6 settles
        // (1.5 keepalives) of silence for a dead active, and waits two settles after a cleared
        // record before it claims (docs/failover.md).
        // Clamped: the keepalive comes from the configuration (MQTT allows at most 65,535 s).
        let seconds = min(max(keepalive, 1), 65_535)
        let settle = Int64(seconds) * 250_000
        state = Mutex(State(election: ClusterElection(member: member, settle: settle)))
        var connection = MQTTConnection(
            host: settings.host, port: Int32(settings.port), clientID: "\(settings.clientID)-cluster")
        connection.username = settings.username
        connection.password = try settings.password ?? settings.passwordFile.map(BrokerConnection.readPassword)
        connection.tlsCA = settings.tlsCA
        connection.tlsCert = settings.tlsCert
        connection.tlsKey = settings.tlsKey
        connection.version = settings.version == .v5 ? .v5 : .v311
        // libmosquitto refuses a keepalive under 5 s (mosquitto.h: MOSQ_ERR_INVAL "if keepalive < 5"),
        // where `Cluster.keepalive` defaults to 2: the broker notices a silent active after 7.5 s,
        // not 3. A cut that closes the connection is noticed at once; a silent one by the standby,
        // through the active's beats, after 1.5 × Cluster.keepalive (docs/behaviour.md §21.2,
        // docs/failover.md).
        connection.keepalive = Int32(max(5, seconds))
        connection.will = .init(topic: topic, payload: [], qos: 1, retain: true)
        // Persistent: the steps published while this daemon was away wait for it at the broker.
        connection.cleanSession = false
        let inbox = Inbox()
        let acks = try StepAcknowledgements(clock: timers.clock)
        self.acks = acks
        client = try MQTTClient(
            connection, published: { id, generation in acks.acknowledge(id, generation: generation) },
            received: { topic, payload, _ in inbox.link?.received(topic: topic, payload: payload) },
            connectionEvents: { inbox.link?.connection($0) }, clock: timers.clock)
        inbox.attach(self)
    }

    /// Connects in the background (it reconnects by itself).
    package func start() throws { try client.start() }

    /// The election as it stands.
    package var election: ClusterElection { state.withLock { $0.election } }

    /// The role now.
    package var role: ClusterElection.Role { state.withLock { $0.election.role } }

    /// Whether this daemon is the cluster's active now.
    package var isActive: Bool { state.withLock { $0.election.isActive } }

    /// Waits until `condition` holds of the election, or `timeout` passes; whether it holds.
    package func wait(within timeout: Duration, until condition: @escaping (ClusterElection) -> Bool) async -> Bool {
        await changes.wait(within: timeout) { state.withLock { condition($0.election) } }
    }

    /// Wakes the waits to look again (something they read besides the election changed).
    package func poke() { changes.changed() }

    /// Waits until ``stop()`` (the connection's events are handled on libmosquitto's thread, as
    /// they come: ``connection(_:)``).
    package func run() async {
        for await _ in client.events {}
    }

    /// The connection began or ended (libmosquitto's thread). Handled here, not by a task: an
    /// active whose connection ended stops counting as one at once, however busy the cooperative
    /// pool is (a task took seconds to hear it on a loaded machine; CI, ClusterLinkTests).
    /// From now on a reload request while this daemon is the active goes to `hook` (each active
    /// life sets its reloader's).
    func onReload(_ hook: @escaping @Sendable (String) -> Void) { reloadHook.withLock { $0 = hook } }

    /// Hands a reload request to the active life's reloader; false when this daemon is not the
    /// active (a standby reads the file when it becomes it).
    func requestReload(_ reason: String) -> Bool {
        guard isActive, let hook = reloadHook.withLock({ $0 }) else { return false }
        hook(reason)
        return true
    }

    fileprivate func connection(_ event: MQTTEvent) {
        switch event {
        case .connected(0):
            // Told to the machine before subscribing: the retained record comes after the
            // subscription, and a record heard while the machine thinks it is disconnected is
            // dropped (it then claimed over a live active after a broker restart).
            ask {
                $0.connected(at: now); return []
            }
            // The leader at QoS 0: the session queues no record heard while away (a stale
            // one of its own would make it active for a moment); the retained one comes.
            do {
                _ = try client.subscribe(topic, qos: 0)
                _ = try client.subscribe(beatTopic, qos: 0)
                for state in [stepsTopic, requestTopic, snapshotTopic] { _ = try client.subscribe(state, qos: 1) }
            } catch {
                logger.warning("\(error); the cluster's leader and state are not heard")
            }
        case .connected(let code):
            logger.warning("MQTT broker refused the cluster connection (CONNACK \(code))")
        case .disconnected:
            // Only the state, never the client: a failed first attempt is said from `start()` or
            // `reset()` with the client's lock held (MQTTClient's `connectionEvents`).
            ask {
                $0.disconnected(); return []
            }
        default:
            break
        }
    }

    /// Stops: an active clears its record first (a clean stop fires no will), then disconnects.
    package func stop() {
        if isActive { _ = try? client.publish(topic: topic, payload: [UInt8](), qos: 1, retain: true) }
        client.shutdown()
    }

    /// Microseconds on the clock that only moves forward.
    var now: Int64 { timers.clock.elapsed().microseconds }

    /// A message on the leader topic (libmosquitto's thread).
    fileprivate func received(topic: String, payload: [UInt8]) {
        if topic == beatTopic {
            guard let (record, position) = Self.readBeat(payload) else { return }
            ask {
                $0.beat(record, at: now); return []
            }
            if let position, record.member != member, record == election.leader { heard(position) }
            return
        }
        guard topic == self.topic else {
            receivedState(topic: topic, payload: payload)
            return
        }
        let reading = LeaderRecord.read(payload)
        ask { $0.received(reading, at: now) }
    }

    /// A beat: the leader's record, then where its state stands (`<epoch> <member> <epoch> <step>`;
    /// without the position from a daemon that does not say it). `nil` for anything else.
    static func readBeat(_ payload: [UInt8]) -> (LeaderRecord, StepPosition?)? {
        guard payload.count <= 160, let text = String(validating: payload, as: UTF8.self) else { return nil }
        let parts = text.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 2 || parts.count == 4,
            case .record(let record) = LeaderRecord.read(Array(parts[0..<2].joined(separator: " ").utf8))
        else { return nil }
        guard parts.count == 4 else { return (record, nil) }
        guard let epoch = Int64(parts[2]), let step = Int64(parts[3]), epoch >= 0, step >= 0 else { return nil }
        return (record, StepPosition(epoch: epoch, step: step))
    }

    /// Asks the machine and re-arms the timer for its next deadline under the lock (two threads
    /// asking at once, libmosquitto's and the timers', must not leave a timer armed that nobody
    /// cancels, or the timer of an older deadline as the one kept), and carries out what it said
    /// with no lock held. The timers' lock is taken inside this one and never the other way: their
    /// thread runs an action with no lock held.
    private func ask(_ body: (inout ClusterElection) -> [ClusterElection.Action]) {
        let timers = timers
        let actions = state.withLock { state -> [ClusterElection.Action] in
            let actions = body(&state.election)
            if let armed = state.timer { timers.cancel(armed) }
            state.timer = state.election.deadline.map { due in
                timers.at(.microseconds(due)) { [weak self] in self?.ask { $0.advance(to: self?.now ?? .max) } }
            }
            return actions
        }
        for action in actions {
            switch action {
            case .publish(let record):
                do {
                    _ = try client.publish(topic: topic, payload: Array(record.description.utf8), qos: 1, retain: true)
                } catch {
                    logger.warning("\(error); the claim is made again at the next connect")
                }
            case .role(let role):
                logger.notice("cluster: \(member) is \(role) (\(topic))")
            case .unreadable:
                logger.warning("cluster: \(topic) holds something that is not a leader record; taken as none")
            case .reconnect:
                logger.warning(
                    "cluster: \(member) hears nothing of itself through the broker; stepping down and connecting again")
                // Not on this thread (a timer's or libmosquitto's): a reset joins the network thread.
                worker.submit { [client, logger] in
                    do { try client.reset() } catch {
                        logger.warning("\(error); the cluster connection is tried again")
                    }
                }
            case .beat(let record):
                let position = state.withLock { $0.shipped }.map { " \($0.epoch) \($0.step)" } ?? ""
                _ = try? client.publish(
                    topic: beatTopic, payload: Array("\(record)\(position)".utf8), qos: 0, retain: false)
            }
        }
        changes.changed()
        acks.roleChanged()
    }
}

/// Hands the client's messages to the link, which owns the client (and so cannot be named when
/// the client is made).
private final class Inbox: Sendable {
    private struct Target { weak var link: ClusterLink? }
    private let target = Mutex(Target())
    var link: ClusterLink? { target.withLock { $0.link } }
    func attach(_ link: ClusterLink) { target.withLock { $0.link = link } }
}
