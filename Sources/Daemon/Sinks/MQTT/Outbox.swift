import MQTT
import Persistence

/// The MQTT outbox as a state machine (docs/behaviour.md §10.1, §12): what is waiting, what libmosquitto holds,
/// what the broker acknowledged, and what may leave the database. No I/O and no clock of its own:
/// each event comes in as a call with its instant, and what the shell must do comes out as an
/// ``Action``. ``MQTTSink`` is the shell: it holds the machine under a lock only for a call, and
/// performs the actions after letting go, so it never calls into libmosquitto with a lock held
/// that the library's network thread may want.
///
/// Delivery is at-least-once and in order. Nothing is handed out before the broker accepted the
/// connection (then retained state goes first, then the events). Events are handed out in outbox order, at most
/// ``window`` at a time, and by one publisher at a time (``Action/publish(_:)`` is given to one
/// caller, who reports back with ``sent(_:generation:at:)`` before anyone gets the next batch), so two
/// threads never interleave. An event leaves the outbox once acknowledged and the connection has
/// stayed up for ``confirmation`` since: a broker killed right after acknowledging may never have
/// passed it on. On an unclean disconnect every event not yet confirmed goes back to the front,
/// in outbox order, and the client is reset (``Action/reset``) so that libmosquitto does not
/// resend its own copies ahead of them; acknowledgements from before the reset (an older
/// ``generation``) are ignored. Retained state is remembered and published again on every connect.
///
/// Memory is bounded whatever the length of an outage: at most ``memoryLimit`` waiting events
/// are held; the rest stay only in the database (they are there since their step's commit) and
/// are read back in order, a window at a time, as the broker takes them (``Action/load(after:limit:)``).
package struct Outbox: Sendable {
    /// What the shell does.
    package enum Action: Sendable, Hashable {
        /// Publish these, in order, to client generation `generation` (the one the batch was cut
        /// for: a client reset since then must refuse them, or a newer event would reach the new
        /// connection ahead of older ones put back by the reset), then report with
        /// ``Outbox/sent(_:generation:at:)``.
        case publish([Publication], generation: UInt64)
        /// Drop the connection and everything libmosquitto holds, and connect anew as generation
        /// ``Outbox/generation``.
        case reset
        /// Read at most `limit` events of the outbox after sequence `after`, oldest first, and
        /// hand them to ``Outbox/loaded(_:)``.
        case load(after: Int64, limit: Int)
    }

    /// One message to publish: an event from the outbox, or retained state.
    package enum Publication: Sendable, Hashable {
        case event(OutboxEntry)
        case retained(MQTTMessage)

        package var message: MQTTMessage {
            switch self {
            case .event(let entry):
                MQTTMessage(
                    topic: entry.message.topic, payload: entry.message.payload, qos: entry.message.qos, retain: false)
            case .retained(let message): message
            }
        }
    }

    /// How many events may be with libmosquitto, unacknowledged, at once.
    package let window: Int
    /// How many waiting events are held in memory at most; the rest are read back as needed.
    package let memoryLimit: Int
    /// The newest event kept in the outbox that this machine knows of.
    private var stored: Int64 = 0
    /// The newest event brought into memory: those after it, up to ``stored``, are on disk only.
    private var loadedThrough: Int64 = 0
    /// Events on disk only.
    private var onDiskOnly = 0
    /// A ``Action/load(after:limit:)`` is being carried out.
    private var loading = false
    /// The last read failed: not tried again before the next enqueue or connect.
    private var loadFailed = false
    /// How long after its acknowledgement an event is resent if the connection drops, in
    /// microseconds.
    package let confirmation: Int64

    /// The client generation acknowledgements must come from: one more at every reset.
    package private(set) var generation: UInt64 = 0
    package private(set) var isConnected = false
    /// Connection ends heard on libmosquitto's thread (``connectionEnded()``) and handled
    /// (``disconnected(clean:)``): while more were heard than handled, the connection this
    /// machine counts as up is gone, and nothing is confirmed or handed out.
    private var endsHeard = 0
    private var endsHandled = 0
    /// A connection's end was heard and not yet handled.
    package var isEnding: Bool { endsHeard > endsHandled }
    /// Retained topics and their latest message, republished on every connect.
    private var retained: [String: MQTTMessage] = [:]
    private var retainedOrder: [String] = []
    /// Retained messages to publish at the next batch, in order.
    private var retainedQueue: [MQTTMessage] = []
    /// Retained messages with libmosquitto, by message ID.
    private var retainedOutstanding: Set<Int32> = []
    /// Events waiting their turn, oldest first (from `backlogStart`).
    private var backlog: [OutboxEntry] = []
    private var backlogStart = 0
    /// Events with libmosquitto, by message ID.
    private var inflight: [Int32: OutboxEntry] = [:]
    /// Acknowledgements that came before their publisher reported the message ID.
    private var early: Set<Int32> = []
    /// Acknowledged events not yet confirmed, oldest first (from `recentStart`), with the instant.
    private var recent: [(entry: OutboxEntry, at: Int64)] = []
    private var recentStart = 0
    /// Confirmed events not yet removed from the database.
    private var settled: [Int64] = []
    /// A publisher holds the turn: nobody else is handed a batch.
    private var publishing = false
    /// Events in the batch being published.
    private var handedOut = 0
    /// A publish failed (the client was being reset): nothing more until the next connect.
    private var paused = false

    package init(window: Int = 100, confirmation: Int64 = 1_000_000, memoryLimit: Int = 4096) {
        self.window = max(window, 1)
        self.confirmation = confirmation
        self.memoryLimit = max(memoryLimit, self.window)
    }

    /// Events waiting to be acknowledged: on disk, in the backlog or with libmosquitto.
    package var waiting: Int { onDiskOnly + backlog.count - backlogStart + handedOut + inflight.count }

    /// Waiting events held in memory.
    package var inMemory: Int { backlog.count - backlogStart + handedOut + inflight.count }

    /// Retained messages handed to libmosquitto and not yet acknowledged.
    package var retainedWaiting: Int { retainedOutstanding.count + retainedQueue.count }

    // MARK: - Inputs

    /// Events kept in the outbox (from before a restart, or a step just committed), in order,
    /// with the retained state the step sets: the retained messages that changed go first.
    package mutating func enqueue(_ entries: some Sequence<OutboxEntry>, retained messages: [MQTTMessage] = [])
        -> Action?
    {
        for message in messages { queueIfChanged(message, always: false) }
        loadFailed = false
        for entry in entries {
            // Read back already: a read can see a step committed before its sink delivered it.
            guard entry.sequence > loadedThrough else { continue }
            stored = max(stored, entry.sequence)
            // Behind events on disk only, or past the limit: on disk only too, read back in turn.
            if onDiskOnly > 0 || inMemory >= memoryLimit {
                onDiskOnly += 1
                continue
            }
            backlog.append(entry)
            loadedThrough = entry.sequence
        }
        return pump()
    }

    /// At start: `count` events kept in the outbox from before, the newest `newest`, none in
    /// memory yet; they are read back in order as the broker takes them.
    package mutating func resume(kept count: Int, newest: Int64) -> Action? {
        guard count > 0 else { return pump() }
        stored = max(stored, newest)
        onDiskOnly += count
        return pump()
    }

    /// The events a ``Action/load(after:limit:)`` read, oldest first (`nil`: the read failed, and
    /// is tried again at the next enqueue or connect).
    package mutating func loaded(_ entries: [OutboxEntry]?) -> Action? {
        loading = false
        guard let entries else {
            loadFailed = true
            return pump()
        }
        for entry in entries where entry.sequence > loadedThrough {
            backlog.append(entry)
            loadedThrough = entry.sequence
            onDiskOnly = max(onDiskOnly - 1, 0)
        }
        // Nothing more to read: what was counted on disk is gone (settled by an earlier run).
        if entries.isEmpty || loadedThrough >= stored { onDiskOnly = 0 }
        return pump()
    }

    /// Retained state: remembered for every connect, and published now when it changed (or
    /// `always`, as `offline` at a stop).
    package mutating func retain(_ message: MQTTMessage, always: Bool = false) -> Action? {
        queueIfChanged(message, always: always)
        return pump()
    }

    private mutating func queueIfChanged(_ message: MQTTMessage, always: Bool) {
        guard message.retain else { return }
        // Most steps set what is set already: look before writing.
        let previous = retained[message.topic]
        guard always || previous != message else { return }
        retained[message.topic] = message
        if previous == nil { retainedOrder.append(message.topic) }
        // Without a connection, the next connect publishes every retained topic's latest message:
        // queueing each change meanwhile would grow with the outage.
        guard isConnected else { return }
        retainedQueue.append(message)
    }

    /// Remembers retained state without publishing it now: it goes out at the next connect.
    package mutating func remember(_ message: MQTTMessage) {
        guard message.retain, retained.updateValue(message, forKey: message.topic) == nil else { return }
        retainedOrder.append(message.topic)
    }

    /// Whether `topic`'s retained message is `message` already.
    package func holds(_ message: MQTTMessage) -> Bool { retained[message.topic] == message }

    /// CONNACK accepted: every retained message again, then the events waiting.
    package mutating func connected(at now: Int64) -> Action? {
        isConnected = true
        paused = false
        loadFailed = false
        retainedQueue = retainedOrder.compactMap { retained[$0] }
        return pump()
    }

    /// The connection ended. Clean (we asked for it) or before any connection: nothing to undo.
    /// Unclean after a connection: every event not confirmed goes back to the front in order,
    /// and the client must be reset.
    package mutating func disconnected(clean: Bool) -> Action? {
        let wasConnected = isConnected
        isConnected = false
        endsHandled &+= 1
        endsHeard = max(endsHeard, endsHandled)
        guard !clean, wasConnected else { return nil }
        var again = recent[recentStart...].map(\.entry) + inflight.values
        again.sort { $0.sequence < $1.sequence }
        recent.removeAll()
        recentStart = 0
        inflight.removeAll()
        early.removeAll()
        retainedOutstanding.removeAll()
        putBack(again)
        generation &+= 1
        // Nothing is handed to the old client; the new one is fed on its connect.
        paused = true
        return .reset
    }

    /// The connection ended, as libmosquitto's thread hears it, before the shell handles it with
    /// ``disconnected(clean:)``: from now until then nothing is confirmed (an acknowledgement in
    /// the last ``confirmation`` may come from a broker killed before it saved the message; the
    /// shell handles the end on another thread, late on a loaded machine) and nothing is handed out.
    package mutating func connectionEnded() {
        endsHeard &+= 1
    }

    /// A PUBACK (or a QoS 0 message written) from client generation `generation`: the event
    /// waits for its confirmation, and the window has room for the next.
    package mutating func acknowledged(_ messageID: Int32, generation: UInt64, at now: Int64) -> Action? {
        guard generation == self.generation else { return nil }
        if let entry = inflight.removeValue(forKey: messageID) {
            recent.append((entry, now))
            confirm(at: now)
            return pump()
        }
        if retainedOutstanding.remove(messageID) != nil { return nil }
        early.insert(messageID)
        return nil
    }

    /// The publisher's report on a batch, published to client generation `generation`: each
    /// publication with its message ID, or `nil` when the client refused it (then it and what
    /// follows wait for the next connect). Returns the next batch, for the same publisher, or
    /// `nil` when the turn ends. A batch that went to a client since reset is taken back whole.
    package mutating func sent(_ results: [(Publication, Int32?)], generation: UInt64, at now: Int64) -> Action? {
        publishing = false
        handedOut = 0
        var back: [OutboxEntry] = []
        for (publication, messageID) in results {
            guard generation == self.generation, let messageID else {
                if case .event(let entry) = publication { back.append(entry) }
                continue
            }
            switch publication {
            case .event(let entry):
                if early.remove(messageID) != nil {
                    recent.append((entry, now))
                } else {
                    inflight[messageID] = entry
                }
            case .retained:
                if early.remove(messageID) == nil { retainedOutstanding.insert(messageID) }
            }
        }
        if !back.isEmpty {
            putBack(back)
            paused = true
        }
        confirm(at: now)
        return pump()
    }

    /// Returns events to the backlog in outbox order (the backlog is kept sorted by sequence).
    private mutating func putBack(_ entries: [OutboxEntry]) {
        let waiting = backlog[backlogStart...]
        var merged: [OutboxEntry] = []
        merged.reserveCapacity(waiting.count + entries.count)
        var left = waiting.startIndex
        var right = entries.sorted { $0.sequence < $1.sequence }.makeIterator()
        var next = right.next()
        while let entry = next {
            if left < waiting.endIndex, waiting[left].sequence < entry.sequence {
                merged.append(waiting[left])
                left += 1
            } else {
                merged.append(entry)
                next = right.next()
            }
        }
        merged.append(contentsOf: waiting[left...])
        backlog = merged
        backlogStart = 0
    }

    /// Moves acknowledged events older than ``confirmation`` to the settled list, while connected.
    package mutating func confirm(at now: Int64) {
        guard isConnected, !isEnding else { return }
        while recentStart < recent.count, now &- recent[recentStart].at >= confirmation {
            settled.append(recent[recentStart].entry.sequence)
            recentStart += 1
        }
        if recentStart > 4096, recentStart * 2 > recent.count {
            recent.removeFirst(recentStart)
            recentStart = 0
        }
    }

    /// A clean stop: what the broker acknowledged is its own now.
    package mutating func confirmAll() {
        settled += recent[recentStart...].map(\.entry.sequence)
        recent.removeAll()
        recentStart = 0
    }

    /// Confirmed events to remove from the database, since the last call.
    package mutating func takeSettled(at now: Int64) -> [Int64] {
        confirm(at: now)
        defer { settled.removeAll(keepingCapacity: true) }
        return settled
    }

    // MARK: - Publishing

    /// The next batch for a publisher, if nobody holds the turn: the retained messages queued,
    /// then events in order while the window has room. Before that, a read of the events on disk
    /// only when fewer than half the memory limit are left in the backlog.
    private mutating func pump() -> Action? {
        guard isConnected, !isEnding, !publishing, !paused, !loading else { return nil }
        if onDiskOnly > 0, !loadFailed, backlog.count - backlogStart < memoryLimit / 2, inMemory < memoryLimit {
            loading = true
            return .load(after: loadedThrough, limit: memoryLimit - inMemory)
        }
        var batch: [Publication] = retainedQueue.map { .retained($0) }
        let retainedCount = batch.count
        retainedQueue.removeAll()
        var room = window - inflight.count
        while room > 0, backlogStart < backlog.count {
            batch.append(.event(backlog[backlogStart]))
            backlogStart += 1
            room -= 1
        }
        if backlogStart > 4096, backlogStart * 2 > backlog.count {
            backlog.removeFirst(backlogStart)
            backlogStart = 0
        }
        guard !batch.isEmpty else { return nil }
        publishing = true
        handedOut = batch.count - retainedCount
        return .publish(batch, generation: generation)
    }
}
