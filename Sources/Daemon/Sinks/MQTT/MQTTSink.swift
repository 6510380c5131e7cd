import BeaconCore
import BeaconConfiguration
import Engine
import Fleet
import Foundation
import Logging
import MQTT
import Persistence
import RegionMonitor
import Synchronization
import Syscalls

/// Publishes outputs and state to the broker (docs/behaviour.md §10.1): events as they come, retained state
/// when it changes and again on every connect, `online`/`offline` on `B/status` (the will says
/// `offline` when the daemon dies).
///
/// Events are at-least-once: each is in the state database's outbox before it is handed to
/// libmosquitto (``outbox(for:)``); the ``Outbox`` state machine decides what is published, when
/// an event may leave the database, and when the client must be reset (duplicates are possible;
/// losses are not). This class is its shell: it holds the machine under a lock only while asking
/// it, and calls libmosquitto with no lock held, so the library's network thread (which delivers
/// PUBACKs here) never waits for a caller that waits for it. Whatever is left at a stop or a crash
/// is sent first at the next start.
///
/// It publishes over the daemon's one ``BrokerConnection``, which it shares with the
/// ``MQTTInput``; it handles the connection's events (the outbox goes on at every connect, when
/// the connection has subscribed the input's topics).
package final class MQTTSink: OutputSink {
    package let tree: TopicTree
    /// The connection to the broker, shared with the input.
    package let connection: BrokerConnection
    /// What Home Assistant discovery is published with, when it is on (docs/home-assistant.md).
    let homeAssistant: HomeAssistantDiscovery?
    /// The fleet devices whose discovery is published (once a run, retained).
    private let announced = Mutex<Set<String>>([])
    /// The regions whose occupancy discovery is published, with the name it was published
    /// under (again when a reload renames the region).
    private let occupancyAnnounced = Mutex<[Region: String?]>([:])
    /// `MQTT.topic`: fleet devices' topics are under it too.
    let topic: String
    private let client: MQTTClient
    private let store: StateStore
    private let state: Mutex<Shared>
    private let discovery: [MQTTMessage]
    /// The start failed (``withdraw()``): the retained topics it published are cleared, and the
    /// stop publishes no `offline` after that.
    private let withdrawn = Mutex(false)
    /// The configured beacons' Location IDs, in file order.
    private let beacons: [String]
    /// The daemon's timers: the machine's clock, and the waits on it.
    private let timers: ShellTimers
    private let seams: Seams
    /// How many events may be with libmosquitto, unacknowledged, at once.
    package static let window = 100
    /// How long after its acknowledgement an event is resent if the connection drops.
    package static let confirmation = Duration.seconds(1)

    /// Told after every change of the machine: what ``wait(within:until:)`` waits on.
    private let changes: Awaitable
    /// Reads of the outbox the machine asked for (``Outbox/Action/load(after:limit:)``), carried
    /// out by ``run(logger:)`` on a thread of their own: never on libmosquitto's thread.
    private let loads: AsyncStream<(after: Int64, limit: Int)>
    private let loadRequests: AsyncStream<(after: Int64, limit: Int)>.Continuation

    /// The machine, and what the sink knows of the connection beside it.
    struct Shared {
        var outbox: Outbox
        /// The last attempt to connect failed (the broker is not there), as opposed to one still
        /// under way on a slow machine.
        var unreachable = false
    }

    /// Places where a test may hold a thread to force an interleaving of the network thread and
    /// the sink (both `nil` in the daemon).
    package struct Seams: Sendable {
        /// On the network thread, as a PUBACK arrives, before the sink looks at it.
        package var beforeAcknowledgement: (@Sendable () -> Void)?
        /// On the thread that resets the client, before it stops libmosquitto's thread.
        package var beforeReset: (@Sendable () -> Void)?

        package init() {}
    }

    /// The will of a daemon reporting for `userid` under `settings`: `B/status` `offline`, retained.
    package static func will(settings: MQTTSettings, userid: String) -> MQTTMessage {
        TopicTree(topic: settings.topic, userid: userid, qos: Int32(settings.qos)).status(online: false)
    }

    /// A sink for `settings`, reporting for `userid` on `hierarchy`, with its outbox in `store`,
    /// on a connection of its own that hands what comes in to `input` (the daemon's way is
    /// ``init(settings:userid:hierarchy:store:connection:seams:timers:)`` with the connection its
    /// input shares); nothing is sent before ``start()``.
    package convenience init(
        settings: MQTTSettings, userid: String, hierarchy: Hierarchy, store: StateStore, input: MQTTInput? = nil,
        seams: Seams = Seams(), timers: ShellTimers = .shared
    ) throws {
        let connection = try BrokerConnection(
            settings: settings, will: Self.will(settings: settings, userid: userid), timers: timers)
        if let input { connection.attach(input) }
        self.init(
            settings: settings, userid: userid, hierarchy: hierarchy, store: store, connection: connection,
            seams: seams,
            timers: timers)
    }

    /// A sink for `settings`, reporting for `userid` on `hierarchy`, with its outbox in `store`,
    /// publishing over `connection`; nothing is sent before ``start()``. Home Assistant discovery
    /// describes the daemon's own radio only when it has one (`ownRadio`), and makes its ids
    /// unique with `cluster` (`Cluster.name`), else `MQTT.clientId`.
    package init(
        settings: MQTTSettings, userid: String, hierarchy: Hierarchy, store: StateStore, connection: BrokerConnection,
        ownRadio: Bool = true, cluster: String? = nil, seams: Seams = Seams(), timers: ShellTimers = .shared
    ) {
        self.seams = seams
        self.timers = timers
        changes = Awaitable(timers: timers)
        self.connection = connection
        client = connection.client
        (loads, loadRequests) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
        tree = TopicTree(topic: settings.topic, userid: userid, qos: Int32(settings.qos))
        topic = settings.topic
        let homeAssistant =
            settings.homeAssistant
            ? HomeAssistantDiscovery(
                prefix: settings.discoveryPrefix, scope: cluster ?? settings.clientID, homeAreas: settings.homeAreas,
                hierarchy: hierarchy) : nil
        self.homeAssistant = homeAssistant
        self.store = store
        state = Mutex(
            Shared(outbox: Outbox(window: Self.window, confirmation: Self.confirmation.microseconds)))
        beacons = hierarchy.beacons.map(\.locationID)
        let tree = tree
        discovery =
            homeAssistant.map {
                tree.homeAssistantLegacy(prefix: $0.prefix, objects: TopicTree.legacyObjects(hierarchy: hierarchy))
                    + tree.homeAssistantDiscovery($0, userid: userid, hierarchy: hierarchy, ownRadio: ownRadio)
            } ?? []
        connection.attach(self)
    }

    /// Microseconds on the daemon's clock that only moves forward: the machine's clock.
    private var now: Int64 { timers.clock.elapsed().microseconds }

    /// Queues what the outbox still holds from before (sent before anything new), takes the
    /// configured beacons' kept classes as retained state (a broker that lost its own hears them
    /// at connect; the engine's reports replace them), and connects in the background. Returns
    /// how many events were left from before.
    @discardableResult
    package func start() throws -> Int {
        let pending = try store.outboxSummary()
        let kept = try store.lastReported()
        let action = state.withLock { shared -> Outbox.Action? in
            for message in discovery { shared.outbox.remember(message) }
            shared.outbox.remember(tree.status(online: true))
            for id in beacons { if let proximity = kept[id] { shared.outbox.remember(tree.beacon(id, proximity)) } }
            return shared.outbox.resume(kept: pending.count, newest: pending.newest)
        }
        perform(action)
        try client.start()
        return pending.count
    }

    /// Handles the client's events until it shuts down: on every connect, (re)publishes the
    /// retained state, subscribes to the input's topics and resumes the outbox; an unclean
    /// disconnect resets the client (on a thread of its own: stopping libmosquitto's thread
    /// blocks); through `logger`. Reads of the outbox the machine asks for are done here too,
    /// each on a thread of its own.
    package func run(logger: Logger) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [self] in
                for await load in loads {
                    let store = store
                    let entries = try? await WorkerPool.shared.run {
                        try store.pendingOutbox(after: load.after, limit: load.limit)
                    }
                    perform(update { $0.loaded(entries) })
                }
            }
            await handleEvents(logger: logger)
            loadRequests.finish()
        }
    }

    private func handleEvents(logger: Logger) async {
        var outage = false
        for await event in client.events {
            switch event {
            case .connected(0):
                if outage {
                    logger.warning("MQTT broker reachable again; republishing retained state, then the outbox")
                }
                outage = false
                connection.subscribeInput(logger: logger)
                state.withLock { $0.unreachable = false }
                perform(update { $0.connected(at: now) })
            case .connected(let code):
                state.withLock { $0.unreachable = true }
                logger.warning(
                    "MQTT broker refused the connection (CONNACK \(code)); check MQTT.username, MQTT.password and MQTT.clientId"
                )
            case .disconnected(let code):
                let wasConnected = await disconnected(code: code, logger: logger)
                // A first connection that fails is said by whoever waits for it.
                if code != 0, wasConnected, !outage {
                    logger.warning(
                        "MQTT broker connection lost; reconnecting (1 s, doubling to 60 s); events wait in the outbox")
                    outage = true
                }
            case .published, .message:
                // Taken on the network thread by the connection: ``acknowledged(_:generation:)``,
                // and the input's ``MQTTInput/received(topic:payload:retained:)``.
                break
            case .subscribed:
                break
            }
        }
    }

    /// The connection ended with `code` (0: we asked for it). After a connection, an unclean end
    /// resets the client, on a thread of its own (stopping libmosquitto's thread blocks until its
    /// callbacks return, and they may be on their way into this sink: no lock is held here).
    /// Returns whether the sink was connected.
    package func disconnected(code: Int32, logger: Logger) async -> Bool {
        let wasConnected = state.withLock { shared in
            if !shared.outbox.isConnected, code != 0 { shared.unreachable = true }
            return shared.outbox.isConnected
        }
        guard update({ $0.disconnected(clean: code == 0) }) == .reset else { return wasConnected }
        let (client, seams) = (client, seams)
        do {
            // Stopping libmosquitto's thread blocks until it ends: a thread of its own, no lock held.
            try await WorkerPool.shared.run {
                seams.beforeReset?()
                try client.reset()
            }
        } catch {
            logger.warning("\(error)")
        }
        return wasConnected
    }

    /// The connection ended, on the network thread, at once: the machine confirms nothing and hands
    /// out nothing until ``disconnected(code:logger:)`` has handled it.
    func connectionEnded() {
        state.withLock { $0.outbox.connectionEnded() }
        changes.changed()
    }

    /// A PUBACK (or a QoS 0 message written), on the network thread: the machine notes it, and
    /// the next batch (if the window opened) is published from here.
    func acknowledged(_ messageID: Int32, generation: UInt64) {
        seams.beforeAcknowledgement?()
        perform(update { $0.acknowledged(messageID, generation: generation, at: now) })
    }

    /// Asks the machine under the lock, wakes whoever waits for the state it reaches, and returns
    /// the action for ``perform(_:)`` to carry out once the lock is let go.
    private func update(_ body: (inout Outbox) -> Outbox.Action?) -> Outbox.Action? {
        let action = state.withLock { body(&$0.outbox) }
        changes.changed()
        return action
    }

    /// Publishes the machine's batches, in order, with no lock held, until the turn ends. A
    /// refused publication (no handle while the client is reset) ends the batch: it and the rest
    /// go back to the machine. ``Outbox/Action/reset`` is never returned here.
    private func perform(_ action: Outbox.Action?) {
        var next = action
        while let action = next {
            // Events on disk only, read back a window at a time by ``run(logger:)``; the machine
            // waits for them (it asks nothing else while a read is under way).
            if case .load(let after, let limit) = action {
                loadRequests.yield((after, limit))
                return
            }
            guard case .publish(let batch, let cutFor) = action else { return }
            var results: [(Outbox.Publication, Int32?)] = []
            results.reserveCapacity(batch.count)
            for publication in batch {
                let message = publication.message
                // Only to the generation the batch was cut for, refused under the client's lock
                // before libmosquitto has it: a reset between the cut and here (this thread
                // descheduled on a busy machine) would otherwise queue newer events into the new
                // connection, ahead of the older ones the reset put back (found by OutboxScheduleTests
                // under load: one adjacent pair out of order across a broker restart).
                guard results.last.map({ $0.1 != nil }) ?? true,
                    let (messageID, _) = try? client.publishTagged(
                        topic: message.topic, payload: Array(message.payload.utf8), qos: message.qos,
                        retain: message.retain, expecting: cutFor)
                else {
                    results.append((publication, nil))
                    continue
                }
                results.append((publication, messageID))
            }
            next = update { $0.sent(results, generation: cutFor, at: now) }
        }
    }

    /// Waits until `condition` holds of the machine, or `timeout` passes; returns whether it holds.
    /// Woken by the state change itself, never by polling.
    func wait(within timeout: Duration, until condition: (Outbox) -> Bool) async -> Bool {
        await changes.wait(within: timeout) { state.withLock { condition($0.outbox) } }
    }

    /// Whether the broker accepted the connection within `timeout`.
    package func waitConnected(within timeout: Duration) async -> Bool {
        await wait(within: timeout) { $0.isConnected }
    }

    /// How many events are waiting to be acknowledged (in the backlog or with libmosquitto).
    package var waiting: Int { state.withLock { $0.outbox.waiting } }

    /// The broker has acknowledged the current connection.
    package var isConnected: Bool { state.withLock { $0.outbox.isConnected } }

    /// How many retained messages are waiting to be published or acknowledged.
    package var retainedWaiting: Int { state.withLock { $0.outbox.retainedWaiting } }

    package func outbox(for outputs: [MonitorOutput], context: StepContext) -> [OutboxMessage] {
        let tree = tree(for: context)
        return context.commands
            + outputs.compactMap { output in
                tree.event(for: output).map { OutboxMessage(topic: $0.topic, payload: $0.payload, qos: $0.qos) }
            }
    }

    /// The topics of the step's device: the daemon's own, or `MQTT.topic/<device userid>`.
    func tree(for context: StepContext) -> TopicTree {
        guard let device = context.device else { return tree }
        return TopicTree(topic: topic, userid: device.userid, qos: tree.qos, device: device.id)
    }

    /// Queues the step's events (already in the outbox) after the retained state they change,
    /// then `B/area`, `B/zone`, `B/nearest` and the step's `B/dwell` values when they changed.
    package func deliver(
        _ outputs: ArraySlice<MonitorOutput>, entries: ArraySlice<OutboxEntry>, context: StepContext
    )
        throws
    {
        let tree = tree(for: context)
        let whereabouts = context.whereabouts
        var retained: [MQTTMessage] = []
        if let device = context.device, let homeAssistant,
            announced.withLock({ $0.insert(device.id).inserted })
        {
            retained += tree.homeAssistantLegacy(
                prefix: homeAssistant.prefix,
                objects: [("device_tracker", "location"), ("sensor", "zone"), ("sensor", "nearest")])
            retained += tree.homeAssistantDevice(
                homeAssistant, name: device.name ?? device.id, daemon: self.tree, tag: device.isTag,
                positioned: device.isPositioned)
        }
        for output in outputs {
            if case .occupancy(_, let change) = output, let homeAssistant,
                occupancyAnnounced.withLock({ $0.updateValue(change.name, forKey: change.region) != .some(change.name) }
                )
            {
                // A region's entities, announced with its first state (docs/behaviour.md §23): the
                // regions with an occupancy are the ones the engine announces, reload or not.
                let object = TopicTree.objectID(change.region.description)
                retained += self.tree.homeAssistantLegacy(
                    prefix: homeAssistant.prefix,
                    objects: [("binary_sensor", "occupancy_" + object), ("sensor", "occupants_" + object)])
                retained += self.tree.homeAssistantOccupancy(homeAssistant, region: change.region, name: change.name)
            }
            retained += tree.retained(for: output)
        }
        retained += tree.current(area: whereabouts.area, zone: whereabouts.zone, nearest: whereabouts.nearest)
        if let geofences = whereabouts.geofences { retained.append(tree.geofences(geofences)) }
        retained += whereabouts.dwell.sorted { $0.key < $1.key }.map { tree.dwell(region: $0.key, seconds: $0.value) }
        let outputsRetained = retained
        perform(update { $0.enqueue(entries, retained: outputsRetained) })
    }

    /// Queues outbox entries written by someone other than the engine (a `forward` node's
    /// batches), in order, after what is queued.
    package func enqueue(_ entries: [OutboxEntry]) {
        perform(update { $0.enqueue(entries) })
    }

    /// The start failed (the radio cannot be opened: exit 3): the retained topics this start
    /// published that say the daemon exists — its discovery configs and `B/status` — are cleared
    /// (empty, retained), so that Home Assistant shows no device that never ran; ``finish(within:)``
    /// then sends them before it disconnects. An earlier run's entities go too; the next start
    /// that works publishes them again (docs/decisions.md).
    package func withdraw() {
        withdrawn.withLock { $0 = true }
        for message in discovery + [tree.status(online: true)] where !message.payload.isEmpty {
            perform(
                update { $0.retain(MQTTMessage(topic: message.topic, payload: "", qos: 1, retain: true), always: true) }
            )
        }
    }

    package func takeSettled() -> [Int64] {
        let now = now
        return state.withLock { $0.outbox.takeSettled(at: now) }
    }

    /// Publishes `offline`, waits up to `timeout` for every event and retained message to be
    /// acknowledged, removes the delivered ones from the outbox, and disconnects. Returns how
    /// many events are left in the outbox for the next start.
    @discardableResult
    package func finish(within timeout: Duration) async -> Int {
        if !withdrawn.withLock({ $0 }) { perform(update { $0.retain(tree.status(online: false), always: true) }) }
        // Nothing can be acknowledged without a connection: the whole time while one is under way
        // (a loaded machine may take seconds), a short grace when the broker was found absent.
        let unreachable = state.withLock { !$0.outbox.isConnected && $0.unreachable }
        // After a failed start, the clearing must reach the broker: a connection still under way
        // may be about to publish what the start remembered (``withdraw()``).
        let withdrawn = withdrawn.withLock { $0 }
        _ = await wait(within: unreachable ? min(timeout, .seconds(1)) : timeout) {
            $0.waiting == 0 && $0.retainedWaiting == 0 && (!withdrawn || $0.isConnected)
        }
        // Joining libmosquitto's thread (up to its own timeout) and the last write block: on a
        // dedicated thread, off the cooperative pool.
        return
            (try? await WorkerPool.shared.run { [self] in
                client.shutdown()
                // A clean disconnect: what the broker acknowledged is its own now.
                let settled = state.withLock { shared -> [Int64] in
                    shared.outbox.confirmAll()
                    return shared.outbox.takeSettled(at: .max)
                }
                try? store.settle(settled)
                return state.withLock { $0.outbox.waiting }
            }) ?? 0
    }
}
