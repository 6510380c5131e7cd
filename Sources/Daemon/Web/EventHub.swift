import Synchronization

/// Server-sent events to any number of clients (SPEC 16, `/api/v1/events`), fed from the
/// engine's thread without ever waiting for a client.
///
/// Each output is framed once and appended to the buffer of every client that wants it. A
/// client's writer takes its whole buffer at a time, so a burst goes out in one write. A client
/// whose buffer passes ``bufferLimit`` (it reads slower than the outputs come, or has vanished
/// without a word) is disconnected and counted: the engine is never held back.
public final class EventHub: Sendable {
    /// Bytes waiting for one client at most.
    public static let bufferLimit = 1 << 20

    private struct Client {
        var device: String?
        var buffer: [UInt8] = []
        var waiter: CheckedContinuation<Void, Never>?
        var closed = false
    }

    private struct State {
        var clients: [Int: Client] = [:]
        var nextID = 0
        var sequence = 0
        var disconnectedSlow = 0
        var closed = false
    }

    private let state = Mutex(State())

    public init() {}

    /// Clients connected now.
    public var clientCount: Int { state.withLock { $0.clients.count } }

    /// Events published to at least one client so far.
    public var published: Int { state.withLock { $0.sequence } }

    /// Clients disconnected because they fell behind.
    public var slowClientsDisconnected: Int { state.withLock { $0.disconnectedSlow } }

    /// A new client, for the outputs of `device` only (or all); `nil` once the hub is closed.
    public func subscribe(device: String?) -> Int? {
        state.withLock { state in
            guard !state.closed else { return nil }
            state.nextID += 1
            state.clients[state.nextID] = Client(device: device)
            return state.nextID
        }
    }

    public func unsubscribe(_ id: Int) {
        let waiter = state.withLock { $0.clients.removeValue(forKey: id)?.waiter }
        waiter?.resume()
    }

    /// One output's JSON, as an event for the clients that want `device`'s outputs.
    public func publish(json: String, device: String) {
        var frame: [UInt8] = []
        var woken: [CheckedContinuation<Void, Never>] = []
        state.withLock { state in
            guard !state.clients.isEmpty else { return }
            state.sequence += 1
            frame.reserveCapacity(json.utf8.count + 24)
            frame += "id: \(state.sequence)\ndata: ".utf8
            frame += json.utf8
            frame += "\n\n".utf8
            // By index, not over `keys`: iterating holds the storage, and every buffer would be
            // copied by the append it then makes.
            var index = state.clients.startIndex
            while index != state.clients.endIndex {
                if state.clients.values[index].device.map({ $0 == device }) ?? true {
                    Self.append(frame, at: index, in: &state, woken: &woken)
                }
                state.clients.formIndex(after: &index)
            }
        }
        for waiter in woken { waiter.resume() }
    }

    /// A comment to every client (a keep-alive): finds the ones that vanished.
    public func keepAlive() {
        var woken: [CheckedContinuation<Void, Never>] = []
        state.withLock { state in
            var index = state.clients.startIndex
            while index != state.clients.endIndex {
                Self.append(Array(": keep-alive\n\n".utf8), at: index, in: &state, woken: &woken)
                state.clients.formIndex(after: &index)
            }
        }
        for waiter in woken { waiter.resume() }
    }

    private static func append(
        _ frame: [UInt8], at index: Dictionary<Int, Client>.Index, in state: inout State,
        woken: inout [CheckedContinuation<Void, Never>]
    ) {
        // In place: a copy of the client would copy its whole buffer at every event.
        guard !state.clients.values[index].closed else { return }
        if state.clients.values[index].buffer.count + frame.count > bufferLimit {
            state.clients.values[index].closed = true
            state.clients.values[index].buffer = []
            state.disconnectedSlow += 1
        } else {
            state.clients.values[index].buffer.append(contentsOf: frame)
        }
        if let waiter = state.clients.values[index].waiter {
            woken.append(waiter)
            state.clients.values[index].waiter = nil
        }
    }

    /// The bytes waiting for client `id`, once there are some; `nil` when it must be
    /// disconnected (it fell behind, the hub closed, it was unsubscribed).
    public func next(_ id: Int) async -> [UInt8]? {
        while true {
            let taken: [UInt8]?? = state.withLock { state in
                guard let index = state.clients.index(forKey: id), !state.clients.values[index].closed else {
                    return .some(nil)
                }
                guard !state.clients.values[index].buffer.isEmpty else { return nil }
                var bytes: [UInt8] = []
                bytes.reserveCapacity(state.clients.values[index].buffer.count)
                swap(&bytes, &state.clients.values[index].buffer)
                return .some(bytes)
            }
            if let taken { return taken }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    guard var client = state.clients[id], !client.closed, client.buffer.isEmpty else { return true }
                    client.waiter = continuation
                    state.clients[id] = client
                    return false
                }
                if ready { continuation.resume() }
            }
        }
    }

    /// Ends every client's stream (a stopping daemon) and refuses new ones.
    public func close() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.closed = true
            var waiters: [CheckedContinuation<Void, Never>] = []
            for id in state.clients.keys {
                state.clients[id]?.closed = true
                if let waiter = state.clients[id]?.waiter { waiters.append(waiter) }
                state.clients[id]?.waiter = nil
            }
            return waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
