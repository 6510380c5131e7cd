import Synchronization

/// Server-sent events to any number of clients (docs/behaviour.md §16, `/api/v1/events`), fed from the
/// engine's thread without ever waiting for a client.
///
/// Each output is framed once into one shared log; a client is a cursor into it. Publishing
/// costs the same for one client or a hundred (an append, and a wake-up for the clients that
/// wait); each client's writer takes everything past its cursor at a time, so a burst goes out
/// in one write. The log keeps at most ``bufferLimit`` bytes: a client that falls further behind
/// (it reads slower than the outputs come, or vanished without a word) is disconnected and
/// counted; the engine is never held back.
package final class EventHub: Sendable {
    /// Bytes a client may fall behind at most: the log's size (one log for every client), of
    /// which at least half is kept when it is trimmed.
    package static let bufferLimit = 8 << 20

    private struct Frame {
        var device: String
        var bytes: [UInt8]
    }

    private struct Client {
        var device: String?
        /// The sequence number of the next frame it gets.
        var next: Int
        var waiter: CheckedContinuation<Void, Never>?
        var closed = false
    }

    private struct State {
        var frames: [Frame] = []
        /// The sequence number of `frames[start]`; frames before `start` are dropped.
        var first = 1
        var start = 0
        var bytes = 0
        var clients: [Int: Client] = [:]
        var nextID = 0
        /// The last frame's sequence number.
        var sequence = 0
        /// Outputs published (keep-alives not counted).
        var outputs = 0
        var disconnectedSlow = 0
        var closed = false
        /// Clients are waiting to be woken.
        var waiting = 0
    }

    private let state = Mutex(State())

    package init() {}

    /// Clients connected now.
    package var clientCount: Int { state.withLock { $0.clients.count } }

    /// Events published to at least one client so far.
    package var published: Int { state.withLock { $0.outputs } }

    /// Clients disconnected because they fell behind.
    package var slowClientsDisconnected: Int { state.withLock { $0.disconnectedSlow } }

    /// A new client, for the outputs of `device` only (or all), from the next output on; `nil`
    /// once the hub is closed.
    package func subscribe(device: String?) -> Int? {
        state.withLock { state in
            guard !state.closed else { return nil }
            state.nextID += 1
            state.clients[state.nextID] = Client(device: device, next: state.sequence + 1)
            return state.nextID
        }
    }

    package func unsubscribe(_ id: Int) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let client = state.clients.removeValue(forKey: id) else { return nil }
            if client.waiter != nil { state.waiting -= 1 }
            return client.waiter
        }
        waiter?.resume()
    }

    /// One output's JSON, as an event for the clients that want `device`'s outputs.
    package func publish(json: String, device: String) {
        var frame: [UInt8] = []
        frame.reserveCapacity(json.utf8.count + 24)
        let woken = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.clients.isEmpty else { return [] }
            state.sequence += 1
            state.outputs += 1
            frame += "id: \(state.outputs)\ndata: ".utf8
            frame += json.utf8
            frame += "\n\n".utf8
            return Self.append(Frame(device: device, bytes: frame), to: &state)
        }
        for waiter in woken { waiter.resume() }
    }

    /// A comment to every client (a keep-alive): finds the ones that vanished.
    package func keepAlive() {
        let woken = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.clients.isEmpty else { return [] }
            // A frame every client takes, with the next sequence number but no `id:` of its own.
            state.sequence += 1
            return Self.append(Frame(device: "", bytes: Array(": keep-alive\n\n".utf8)), to: &state)
        }
        for waiter in woken { waiter.resume() }
    }

    /// Appends `frame`, trims the log, and takes the waiters to wake (outside the lock).
    private static func append(_ frame: Frame, to state: inout State) -> [CheckedContinuation<Void, Never>] {
        state.frames.append(frame)
        state.bytes += frame.bytes.count
        if state.bytes > bufferLimit { trim(&state) }
        guard state.waiting > 0 else { return [] }
        var woken: [CheckedContinuation<Void, Never>] = []
        var index = state.clients.startIndex
        while index != state.clients.endIndex {
            if let waiter = state.clients.values[index].waiter {
                woken.append(waiter)
                state.clients.values[index].waiter = nil
            }
            state.clients.formIndex(after: &index)
        }
        state.waiting = 0
        return woken
    }

    /// Drops the oldest frames down to half the limit: first those every client has taken,
    /// then the ones slow clients still need (those clients are disconnected).
    private static func trim(_ state: inout State) {
        var keepFrom = state.sequence + 1
        var kept = 0
        // From the newest back, until half the limit is kept.
        var position = state.frames.count - 1
        while position >= state.start, kept + state.frames[position].bytes.count <= bufferLimit / 2 {
            kept += state.frames[position].bytes.count
            keepFrom = state.first + (position - state.start)
            position -= 1
        }
        var index = state.clients.startIndex
        while index != state.clients.endIndex {
            if !state.clients.values[index].closed, state.clients.values[index].next < keepFrom {
                state.clients.values[index].closed = true
                state.disconnectedSlow += 1
            }
            state.clients.formIndex(after: &index)
        }
        let drop = keepFrom - state.first
        state.start += drop
        state.first = keepFrom
        state.bytes = kept
        // Compacted once the dropped part is the larger: amortised, never per frame.
        if state.start > state.frames.count / 2 {
            state.frames.removeFirst(state.start)
            state.start = 0
        }
    }

    /// The bytes past client `id`'s cursor, once there are some; `nil` when it must be
    /// disconnected (it fell behind, the hub closed, it was unsubscribed).
    package func next(_ id: Int) async -> [UInt8]? {
        while true {
            // Under the lock only the frames' references are taken; they are joined outside it.
            let taken: [[UInt8]]?? = state.withLock { state in
                guard let index = state.clients.index(forKey: id), !state.clients.values[index].closed,
                    state.clients.values[index].next >= state.first
                else { return .some(nil) }
                let cursor = state.clients.values[index].next
                guard cursor <= state.sequence else { return nil }
                let device = state.clients.values[index].device
                var frames: [[UInt8]] = []
                frames.reserveCapacity(state.sequence - cursor + 1)
                for position in (state.start + cursor - state.first)..<state.frames.count {
                    let frame = state.frames[position]
                    if let device, !frame.device.isEmpty, frame.device != device { continue }
                    frames.append(frame.bytes)
                }
                state.clients.values[index].next = state.sequence + 1
                return .some(frames)
            }
            switch taken {
            case .some(nil): return nil
            case .some(let frames?) where !frames.isEmpty:
                var bytes: [UInt8] = []
                bytes.reserveCapacity(frames.reduce(0) { $0 + $1.count })
                for frame in frames { bytes += frame }
                return bytes
            case .some: continue  // only other devices' outputs: nothing for this client
            case nil: break
            }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    guard let index = state.clients.index(forKey: id), !state.clients.values[index].closed,
                        state.clients.values[index].next > state.sequence
                    else { return true }
                    state.clients.values[index].waiter = continuation
                    state.waiting += 1
                    return false
                }
                if ready { continuation.resume() }
            }
        }
    }

    /// Ends every client's stream (a stopping daemon) and refuses new ones.
    package func close() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.closed = true
            var waiters: [CheckedContinuation<Void, Never>] = []
            var index = state.clients.startIndex
            while index != state.clients.endIndex {
                state.clients.values[index].closed = true
                if let waiter = state.clients.values[index].waiter { waiters.append(waiter) }
                state.clients.values[index].waiter = nil
                state.clients.formIndex(after: &index)
            }
            state.waiting = 0
            return waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
