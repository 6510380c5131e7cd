import Cluster
import Logging
import MQTT
import Persistence

/// The state half of the cluster connection (docs/behaviour.md §21, docs/failover.md): the active
/// ships each committed step and answers a standby's request with a snapshot; a standby applies the
/// steps to its own database in order and asks for a snapshot when one does not apply. Steps and
/// snapshots are applied, and snapshots made, on the link's one worker thread, in the order they
/// came: never on libmosquitto's thread.
extension ClusterLink: StepAcknowledger {
    /// A standby's database and where its following stands.
    struct Follower {
        var store: StateStore
        /// A snapshot was asked for, at this time (microseconds on the link's clock).
        var requestedAt: Int64?
        /// Steps heard while the snapshot is awaited, in order: applied after it.
        var waiting: [ShippedStep] = []
        var applied = 0
        var restored = 0
        /// The active's position a beat gave that this state had not reached, and since when:
        /// not reached within ``behindLimit``, the steps that lead there are lost (docs/failover.md).
        var behind: (target: StepPosition, since: Int64)?
    }

    /// Microseconds a standby waits for the steps to a position a beat gave before it asks for a
    /// snapshot: steps still on their way (a beat, QoS 0, can pass them) come well within it.
    static let behindLimit: Int64 = 3_000_000

    /// At most this many steps wait for a snapshot; beyond, the wait starts again.
    static let waitingLimit = 50_000
    /// A snapshot not come after this many microseconds is asked for again (at the next step).
    static let requestAgainAfter: Int64 = 5_000_000

    /// The epoch this daemon ships its steps as while it is the active.
    package var epoch: Int64? {
        state.withLock { state in
            state.election.isActive ? state.election.mine.map { Int64(clamping: $0.epoch) } : nil
        }
    }

    /// As a standby: every step heard from now on goes to `store`.
    package func follow(_ store: StateStore) {
        state.withLock { $0.follower = Follower(store: store) }
    }

    /// Stops following, once the steps already taken in are applied (the store may be closed then).
    package func unfollow() async {
        await drained()
        state.withLock { $0.follower = nil }
        await drained()
    }

    /// As the active: snapshots of `store` answer the standbys' requests, and the beats say where
    /// its state stands.
    package func serve(_ store: StateStore) {
        let position = try? store.position()
        state.withLock { state in
            state.served = store
            state.shipped = position
        }
    }

    /// Stops serving snapshots, once one being made is sent.
    package func unserve() async {
        state.withLock { state in
            state.served = nil
            state.shipped = nil
        }
        await drained()
    }

    /// Steps applied and snapshots restored while following, and whether a snapshot is awaited.
    package var following: (applied: Int, restored: Int, awaitingSnapshot: Bool)? {
        state.withLock { state in
            state.follower.map { ($0.applied, $0.restored, $0.requestedAt != nil) }
        }
    }

    /// Ships a committed step (the active's store calls this right after the commit, in commit
    /// order; libmosquitto queues it, and sends it again after a reconnect, in order). A step
    /// made once this daemon is no longer the active is not shipped: its outputs are withheld.
    package func ship(_ step: ShippedStep) {
        guard isStillActive else { return }
        state.withLock { $0.shipped = step.position }
        do {
            try acks.sending(step: step.position.step) {
                try client.publishTagged(topic: stepsTopic, payload: step.payload, qos: 1, retain: false)
            }
        } catch {
            logger.warning("\(error); \(step.position) is not shipped: a standby that misses it asks for a snapshot")
        }
    }

    /// Whether the outputs of the steps shipped up to number `step` may go out: once the broker
    /// holds them (so the standby's session does); withheld when this daemon stopped being the
    /// active first (cut off and fenced, or another heard), when they are in no state but this
    /// daemon's and the next active tells what happened from its own (docs/failover.md).
    package func verdict(through step: Int64) -> ShippedVerdict {
        acks.verdict(through: step) { isStillActive }
    }

    /// ``verdict(through:)`` once it is no longer waiting, or after `limit` (then `.waiting`).
    package func awaitVerdict(through step: Int64, within limit: Duration) -> ShippedVerdict {
        acks.wait(through: step, within: limit) { isStillActive }
    }

    /// From now on `body` is told when steps are acknowledged or the role changes (an engine
    /// whose outputs wait looks again).
    package func whenShippingProgresses(_ body: @escaping @Sendable () -> Void) {
        acks.whenProgressed(body)
    }

    /// Still the active, if perhaps disconnected for now: a daemon whose cluster connection is
    /// down keeps its role until it hears whether another took over (``ClusterElection``).
    private var isStillActive: Bool { state.withLock { $0.election.role == .active } }

    /// Returns once the worker has done what was handed to it before.
    private func drained() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            worker.submit { done.resume() }
        }
    }

    /// A message on one of the state topics (libmosquitto's thread).
    func receivedState(topic: String, payload: [UInt8]) {
        switch topic {
        case stepsTopic:
            guard let step = ShippedStep(payload: payload) else {
                logger.warning("cluster: \(topic) holds something that is not a step; ignored")
                return
            }
            worker.submit { [self] in apply(step) }
        case requestTopic:
            guard let requester = String(validating: payload, as: UTF8.self), LeaderRecord.isMember(requester),
                requester != member
            else { return }
            worker.submit { [self] in sendSnapshot(to: requester) }
        case snapshotTopic:
            guard let snapshot = StateSnapshot(payload: payload) else {
                logger.warning("cluster: \(topic) holds something that is not a snapshot; ignored")
                return
            }
            worker.submit { [self] in restore(snapshot) }
        default:
            break
        }
    }

    /// The leader's beat says its state is at `position` (libmosquitto's thread): a standby whose
    /// state does not reach it within ``behindLimit`` asks for a snapshot. A standby that joined
    /// while the active had nothing to commit, or whose session lost steps, would otherwise wait
    /// for the next step to notice, and take over without them if none came.
    func heard(_ position: StepPosition) {
        worker.submit { [self] in check(against: position) }
    }

    /// ``heard(_:)`` on the worker, after the steps that came before the beat.
    private func check(against position: StepPosition) {
        guard
            let (store, requestedAt, behind) = state.withLock({ state in
                state.follower.map { ($0.store, $0.requestedAt, $0.behind) }
            })
        else { return }
        if let requestedAt {
            if now - requestedAt > Self.requestAgainAfter { requestSnapshot() }
            return
        }
        guard let have = try? store.position() else { return }
        func reached(_ target: StepPosition) -> Bool {
            have == target || (have.epoch >= target.epoch && have.step >= target.step)
        }
        if reached(position) || behind.map({ reached($0.target) }) == true {
            // Where it stands, or where the active stood at an earlier beat: the steps are coming.
            state.withLock { $0.follower?.behind = reached(position) ? nil : (position, now) }
            return
        }
        guard let behind else {
            state.withLock { $0.follower?.behind = (position, now) }
            return
        }
        guard now - behind.since >= Self.behindLimit else { return }
        logger.notice(
            "cluster: the active is at \(position), this state at \(have) and no step leads there: asking for a snapshot"
        )
        state.withLock { $0.follower?.behind = nil }
        requestSnapshot()
    }

    /// Applies a step to the follower's store, or keeps it for after the snapshot (the worker).
    private func apply(_ step: ShippedStep) {
        guard let (store, requestedAt) = state.withLock({ $0.follower.map { ($0.store, $0.requestedAt) } }) else {
            return
        }
        if let requestedAt {
            let again = now - requestedAt > Self.requestAgainAfter
            let overflow = state.withLock { state -> Bool in
                state.follower?.waiting.append(step)
                return (state.follower?.waiting.count ?? 0) > Self.waitingLimit
            }
            if overflow { state.withLock { $0.follower?.waiting = [step] } }
            if again || overflow { requestSnapshot() }
            return
        }
        do {
            switch try store.apply(step) {
            case .applied(let replaced, let omitted):
                state.withLock { $0.follower?.applied += 1 }
                if replaced + omitted > 0 {
                    logger.warning(
                        "cluster: \(step.position) applied with \(replaced) rows replaced and \(omitted) changes not found; this state had gone its own way"
                    )
                }
            case .seen:
                break
            case .needsSnapshot(let have):
                logger.notice("cluster: \(step.position) is not made on this state (\(have)): asking for a snapshot")
                state.withLock { $0.follower?.waiting = [step] }
                requestSnapshot()
            }
        } catch {
            logger.error("cluster: \(error); asking for a snapshot")
            state.withLock { $0.follower?.waiting = [step] }
            requestSnapshot()
        }
    }

    private func requestSnapshot() {
        state.withLock { $0.follower?.requestedAt = now }
        do { _ = try client.publish(topic: requestTopic, payload: Array(member.utf8), qos: 1, retain: false) } catch {
            logger.warning("\(error); the snapshot is asked for again at the next step")
        }
    }

    /// Replaces the follower's state with the snapshot, then applies the steps that waited (the worker).
    private func restore(_ snapshot: StateSnapshot) {
        guard let store = state.withLock({ $0.follower?.requestedAt != nil ? $0.follower?.store : nil }) else { return }
        do {
            try store.restore(snapshot)
        } catch {
            logger.error("cluster: \(error)")
            return
        }
        logger.notice("cluster: state restored from the active's snapshot at \(snapshot.position)")
        defer { changes.changed() }
        let waiting = state.withLock { state -> [ShippedStep] in
            state.follower?.restored += 1
            state.follower?.requestedAt = nil
            defer { state.follower?.waiting = [] }
            return state.follower?.waiting ?? []
        }
        for step in waiting { apply(step) }
    }

    /// Makes a snapshot of the served store and sends it to `requester` (the worker).
    private func sendSnapshot(to requester: String) {
        guard let store = state.withLock({ $0.served }) else { return }
        do {
            let snapshot = try store.snapshot()
            _ = try client.publish(
                topic: "\(root)/snapshot/\(requester)", payload: snapshot.payload, qos: 1, retain: false)
            logger.notice(
                "cluster: snapshot at \(snapshot.position) (\(snapshot.image.count) bytes) sent to \(requester)")
        } catch {
            logger.error("cluster: \(error); no snapshot for \(requester), which asks again")
        }
    }
}
