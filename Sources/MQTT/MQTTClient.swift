import BeaconCore
import CMosquitto
import Foundation
import Synchronization

/// How to reach the broker (docs/behaviour.md §2.3), and the will it should publish for us.
package struct MQTTConnection: Sendable, Hashable {
    package enum Version: Sendable, Hashable {
        case v311, v5
    }

    package struct Will: Sendable, Hashable {
        package var topic: String
        package var payload: [UInt8]
        package var qos: Int32
        package var retain: Bool

        package init(topic: String, payload: [UInt8], qos: Int32, retain: Bool) {
            self.topic = topic
            self.payload = payload
            self.qos = qos
            self.retain = retain
        }
    }

    package var host: String
    package var port: Int32
    package var clientID: String
    package var username: String?
    package var password: String?
    package var tlsCA: String?
    package var tlsCert: String?
    package var tlsKey: String?
    package var version: Version = .v311
    package var keepalive: Int32 = 30
    /// A persistent session keeps subscriptions and queued QoS 1 messages across reconnects.
    package var cleanSession = true
    /// QoS 1 messages sent but not yet acknowledged, at most (MQTT 5 Receive Maximum's limit).
    package var maximumInflight = 100
    package var will: Will?

    package init(host: String, port: Int32, clientID: String) {
        self.host = host
        self.port = port
        self.clientID = clientID
    }
}

/// What the network thread reports: handed to Swift as values on an `AsyncStream`.
package enum MQTTEvent: Sendable, Hashable {
    /// CONNACK: code 0 is accepted; others are the broker's refusal.
    case connected(code: Int32)
    /// The connection ended: code 0 when we asked for it.
    case disconnected(code: Int32)
    /// A QoS 1 message was acknowledged (PUBACK), or a QoS 0 one was handed to the socket.
    case published(messageID: Int32)
    case subscribed(messageID: Int32)
    case message(topic: String, payload: [UInt8], retained: Bool)
}

/// A libmosquitto failure, in words.
package struct MQTTError: Error, Sendable, Hashable, CustomStringConvertible {
    package var operation: String
    package var code: Int32

    package var description: String {
        let text = String(cString: mosquitto_strerror(code))
        return "MQTT \(operation) failed: \(text)"
    }
}

/// One libmosquitto client: it owns the handle and its network thread (a ``NetworkLoop`` of
/// ours, not libmosquitto's: it reconnects as docs/behaviour.md §10.1 says and writes bursts in one turn).
///
/// The C callbacks capture nothing; they find their way back through the `userdata` pointer
/// (``Relay``, retained by the client) and only yield an ``MQTTEvent`` to ``events``. Publishing is
/// safe from any thread while the loop runs (libmosquitto locks internally). ``shutdown()``
/// disconnects, stops the loop, destroys the handle and finishes the stream, once.
package final class MQTTClient: Sendable {
    package let events: AsyncStream<MQTTEvent>
    /// The libmosquitto handle, the relay its callbacks find us through and the thread that
    /// drives it (one of each per generation; no thread before ``start()``).
    private let handle: Mutex<(mosq: OpaquePointer?, relay: Relay, loop: NetworkLoop?)>
    /// Set by ``shutdown()``: a ``reset()`` under way then puts no new handle in.
    private let ended = Atomic<Bool>(false)
    private let connection: MQTTConnection
    /// The clock a stopping network thread's farewell is timed on.
    private let clock: DaemonClock

    /// Carries events from the network thread to Swift: one per libmosquitto handle, so that an
    /// acknowledgement says which generation of the connection it comes from.
    final class Relay: Sendable {
        let continuation: AsyncStream<MQTTEvent>.Continuation
        let published: (@Sendable (Int32, UInt64) -> Void)?
        let received: (@Sendable (String, [UInt8], Bool) -> Void)?
        let connection: (@Sendable (MQTTEvent) -> Void)?
        let generation: UInt64
        /// The broker accepted a connection (CONNACK 0) since the network thread last looked.
        let accepted = Atomic<Bool>(false)
        init(
            _ continuation: AsyncStream<MQTTEvent>.Continuation, published: (@Sendable (Int32, UInt64) -> Void)?,
            received: (@Sendable (String, [UInt8], Bool) -> Void)?,
            connection: (@Sendable (MQTTEvent) -> Void)?, generation: UInt64
        ) {
            self.continuation = continuation
            self.published = published
            self.received = received
            self.connection = connection
            self.generation = generation
        }

        func next() -> Relay {
            Relay(
                continuation, published: published, received: received, connection: connection,
                generation: generation + 1)
        }

        /// A connection's start or end, or a subscription's acknowledgement: to `connection` when
        /// there is one, then to the stream.
        func said(_ event: MQTTEvent) {
            connection?(event)
            continuation.yield(event)
        }
    }

    /// The handle's generation: 0 at first, one more at every ``reset()``.
    package var generation: UInt64 { handle.withLock { $0.relay.generation } }

    private static let initialised: Bool = {
        mosquitto_lib_init()
        return true
    }()

    /// Makes the client and sets its options; nothing is sent until ``start()``.
    ///
    /// With `published`, acknowledgements (message ID, ``generation``) are handed to it on the
    /// network thread, at once, instead of to ``events``: for a publisher that must keep up with
    /// thousands a second, a hop to another thread per message is what it cannot afford.
    /// Likewise `received` takes incoming messages (topic, payload, retained). `connectionEvents`
    /// hears the connection's `.connected`, `.disconnected` and `.subscribed` events first, on the
    /// network thread, before ``events`` has them too: for a state that must follow the connection
    /// even when the cooperative pool is busy (the cluster's election: an active whose connection
    /// ended stops counting as one at once; the outbox stops confirming). All must be quick, must not block, and
    /// must not wait for anything a caller of this client may hold. One `.disconnected` is told
    /// elsewhere: a first attempt that fails is said by ``start()`` or ``reset()`` on the caller's
    /// thread, before the network thread starts, with this client's lock held; `connectionEvents`
    /// must then not call the client (the cluster link only notes the state).
    package init(
        _ connection: MQTTConnection, published: (@Sendable (Int32, UInt64) -> Void)? = nil,
        received: (@Sendable (String, [UInt8], Bool) -> Void)? = nil,
        connectionEvents said: (@Sendable (MQTTEvent) -> Void)? = nil, clock: DaemonClock = .system
    ) throws {
        _ = Self.initialised
        self.connection = connection
        self.clock = clock
        let (stream, continuation) = AsyncStream<MQTTEvent>.makeStream(bufferingPolicy: .unbounded)
        events = stream
        let relay = Relay(continuation, published: published, received: received, connection: said, generation: 0)
        let userdata = Unmanaged.passRetained(relay).toOpaque()
        guard let created = mosquitto_new(connection.clientID, connection.cleanSession, userdata) else {
            throw MQTTError(operation: "client creation", code: MOSQ_ERR_NOMEM.rawValue)
        }
        do {
            try Self.configure(created, connection)
        } catch {
            mosquitto_destroy(created)
            Unmanaged.passUnretained(relay).release()
            continuation.finish()
            throw error
        }
        handle = Mutex((created, relay, nil))
    }

    deinit { shutdown() }

    private static func configure(_ mosq: OpaquePointer, _ connection: MQTTConnection) throws {
        func check(_ operation: String, _ code: Int32) throws {
            guard code == MOSQ_ERR_SUCCESS.rawValue else { throw MQTTError(operation: operation, code: code) }
        }
        let version = connection.version == .v5 ? MQTT_PROTOCOL_V5 : MQTT_PROTOCOL_V311
        try check("protocol version", mosquitto_int_option(mosq, MOSQ_OPT_PROTOCOL_VERSION, Int32(version)))
        if let username = connection.username {
            try check("credentials", mosquitto_username_pw_set(mosq, username, connection.password))
        }
        if let ca = connection.tlsCA {
            try check("TLS set-up", mosquitto_tls_set(mosq, ca, nil, connection.tlsCert, connection.tlsKey, nil))
        }
        if let will = connection.will {
            try check(
                "will",
                will.payload.withUnsafeBytes {
                    mosquitto_will_set(mosq, will.topic, Int32($0.count), $0.baseAddress, will.qos, will.retain)
                })
        }
        // QoS 1 messages in flight at once: libmosquitto's default of 20 makes every message past
        // the twentieth wait in its queue for a PUBACK. The caller bounds what it hands over.
        try check(
            "in-flight limit", mosquitto_int_option(mosq, MOSQ_OPT_SEND_MAXIMUM, Int32(connection.maximumInflight)))
        // Each event leaves at once: with Nagle's algorithm a small message waits for the
        // acknowledgement of the one before, which the broker may delay by up to 40 ms.
        try check("TCP_NODELAY", mosquitto_int_option(mosq, MOSQ_OPT_TCP_NODELAY, 1))
        // Publications from other threads are queued for the network thread to write.
        try check("threaded use", mosquitto_threaded_set(mosq, true))
        mosquitto_connect_callback_set(mosq) { _, userdata, code in
            guard let relay = MQTTClient.relay(userdata) else { return }
            if code == 0 { relay.accepted.store(true, ordering: .relaxed) }
            relay.said(.connected(code: code))
        }
        mosquitto_disconnect_callback_set(mosq) { _, userdata, code in
            MQTTClient.relay(userdata)?.said(.disconnected(code: code))
        }
        mosquitto_publish_callback_set(mosq) { _, userdata, messageID in
            guard let relay = MQTTClient.relay(userdata) else { return }
            if let published = relay.published {
                published(messageID, relay.generation)
            } else {
                relay.continuation.yield(.published(messageID: messageID))
            }
        }
        mosquitto_subscribe_callback_set(mosq) { _, userdata, messageID, _, _ in
            MQTTClient.relay(userdata)?.said(.subscribed(messageID: messageID))
        }
        mosquitto_message_callback_set(mosq) { _, userdata, message in
            guard let message = message?.pointee, let topic = message.topic else { return }
            let payload =
                message.payload.map {
                    Array(UnsafeRawBufferPointer(start: $0, count: Int(message.payloadlen)))
                } ?? []
            guard let relay = MQTTClient.relay(userdata) else { return }
            if let received = relay.received {
                received(String(cString: topic), payload, message.retain)
            } else {
                relay.continuation.yield(
                    .message(topic: String(cString: topic), payload: payload, retained: message.retain))
            }
        }
    }

    private static func relay(_ userdata: UnsafeMutableRawPointer?) -> Relay? {
        userdata.map { Unmanaged<Relay>.fromOpaque($0).takeUnretainedValue() }
    }

    /// Starts the network thread and connects in the background; it reconnects by itself.
    package func start() throws {
        try handle.withLock { current in
            guard let mosq = current.mosq, current.loop == nil else {
                throw MQTTError(operation: "start", code: MOSQ_ERR_INVAL.rawValue)
            }
            current.loop = try connect(mosq, relay: current.relay)
        }
    }

    /// Makes the first attempt to connect `mosq` and starts its network thread, which retries
    /// (1 s, doubling to 60 s) while the broker is not there. A name that does not resolve yet
    /// is retried too (at boot the resolver may come up after the daemon). An attempt that fails
    /// for another reason (invalid arguments) throws, and no thread is started.
    private func connect(_ mosq: OpaquePointer, relay: Relay) throws -> NetworkLoop {
        let code = mosquitto_connect_async(mosq, connection.host, connection.port, connection.keepalive)
        let retried = [MOSQ_ERR_SUCCESS, MOSQ_ERR_ERRNO, MOSQ_ERR_EAI].map(\.rawValue)
        guard retried.contains(code) else {
            throw MQTTError(operation: "connect to \(connection.host):\(connection.port)", code: code)
        }
        let loop: NetworkLoop
        do {
            loop = try NetworkLoop(mosq, relay: relay, clock: clock)
        } catch {
            throw MQTTError(operation: "network thread (\(error))", code: MOSQ_ERR_ERRNO.rawValue)
        }
        // Said before the thread starts, so that nothing it says can come first (the caller
        // holds the client's lock: see `connectionEvents` in ``init``).
        if code != MOSQ_ERR_SUCCESS.rawValue { relay.said(.disconnected(code: code)) }
        loop.start(connected: code == MOSQ_ERR_SUCCESS.rawValue)
        return loop
    }

    /// The handle, taken out from under the lock (the caller owns it now), its relay and thread.
    private func takeHandle() -> TakenHandle? {
        handle.withLock { current -> TakenHandle? in
            guard let mosq = current.mosq else { return nil }
            current.mosq = nil
            defer { current.loop = nil }
            return TakenHandle(pointer: mosq, relay: current.relay, loop: current.loop)
        }
    }

    /// A handle on its way out of the lock: only its taker uses it from then on.
    private struct TakenHandle: @unchecked Sendable {
        let pointer: OpaquePointer
        let relay: Relay
        let loop: NetworkLoop?

        /// Disconnects and ends the handle: its thread writes the `DISCONNECT`, destroys the
        /// handle and ends (waited for here), or, never started, it is destroyed here.
        func end() {
            mosquitto_disconnect(pointer)
            if let loop {
                loop.stop()
            } else {
                mosquitto_destroy(pointer)
                Unmanaged.passUnretained(relay).release()
            }
        }
    }

    /// Drops the connection and everything libmosquitto holds for it (messages not yet
    /// acknowledged, which it would otherwise resend ahead of anything published later), and
    /// connects anew in the background as the next ``generation``. The caller resends what it
    /// still needs, in its order.
    ///
    /// The old handle is stopped with no lock held: stopping waits for its network thread, whose
    /// callbacks may publish or take the caller's locks. Meanwhile ``publish(topic:payload:qos:retain:)``
    /// throws (no handle). Call it from a thread that may block, never from a callback.
    ///
    /// A client shut down stays down: a reset after ``shutdown()``, or one under way when it
    /// comes, does nothing more (a daemon stepping down shuts its client while the connection's
    /// end asks for a reset: the chaos run found both).
    package func reset() throws {
        guard !ended.load(ordering: .acquiring), let taken = takeHandle() else { return }
        let relay = taken.relay
        taken.end()
        let next = relay.next()
        let userdata = Unmanaged.passRetained(next).toOpaque()
        guard let created = mosquitto_new(connection.clientID, connection.cleanSession, userdata) else {
            Unmanaged.passUnretained(next).release()
            throw MQTTError(operation: "reset", code: MOSQ_ERR_NOMEM.rawValue)
        }
        do {
            try Self.configure(created, connection)
        } catch {
            mosquitto_destroy(created)
            Unmanaged.passUnretained(next).release()
            throw error
        }
        let installed = try handle.withLock { current -> Bool in
            guard !ended.load(ordering: .acquiring) else { return false }
            current = (created, next, nil)
            current.loop = try connect(created, relay: next)
            return true
        }
        if !installed {
            mosquitto_destroy(created)
            Unmanaged.passUnretained(next).release()
            next.continuation.finish()
        }
    }

    /// Publishes a message; returns its message ID (matched by ``MQTTEvent/published(messageID:)``).
    /// QoS 1 messages published while disconnected are queued by libmosquitto and sent on reconnect.
    @discardableResult
    package func publish(topic: String, payload: some Collection<UInt8>, qos: Int32, retain: Bool) throws -> Int32 {
        try publishTagged(topic: topic, payload: payload, qos: qos, retain: retain).messageID
    }

    /// Publishes a message; returns its message ID and the ``generation`` it went to, read together.
    /// With `expecting`, only to that generation: after a ``reset()`` to another one the message is
    /// refused (`MOSQ_ERR_NO_CONN`) before libmosquitto has it.
    package func publishTagged(
        topic: String, payload: some Collection<UInt8>, qos: Int32, retain: Bool, expecting: UInt64? = nil
    ) throws -> (messageID: Int32, generation: UInt64) {
        try handle.withLock { current in
            guard let mosq = current.mosq else { throw MQTTError(operation: "publish", code: MOSQ_ERR_INVAL.rawValue) }
            if let expecting, expecting != current.relay.generation {
                throw MQTTError(operation: "publish to a connection since reset", code: MOSQ_ERR_NO_CONN.rawValue)
            }
            var messageID: Int32 = 0
            let bytes = Array(payload)
            let code = bytes.withUnsafeBytes {
                mosquitto_publish(mosq, &messageID, topic, Int32($0.count), $0.baseAddress, qos, retain)
            }
            guard code == MOSQ_ERR_SUCCESS.rawValue || (code == MOSQ_ERR_NO_CONN.rawValue && qos > 0) else {
                throw MQTTError(operation: "publish to \(topic)", code: code)
            }
            current.loop?.wake()
            return (messageID, current.relay.generation)
        }
    }

    @discardableResult
    package func subscribe(_ pattern: String, qos: Int32) throws -> Int32 {
        try handle.withLock { current in
            guard let mosq = current.mosq else {
                throw MQTTError(operation: "subscribe", code: MOSQ_ERR_INVAL.rawValue)
            }
            var messageID: Int32 = 0
            let code = mosquitto_subscribe(mosq, &messageID, pattern, qos)
            guard code == MOSQ_ERR_SUCCESS.rawValue else {
                throw MQTTError(operation: "subscribe to \(pattern)", code: code)
            }
            current.loop?.wake()
            return messageID
        }
    }

    /// Disconnects cleanly (no will), stops the network thread, destroys the handle, and ends
    /// ``events``. Safe to call more than once.
    package func shutdown() {
        ended.store(true, ordering: .releasing)
        // No handle: shut down already, or a reset has it and ends the stream itself.
        guard let taken = takeHandle() else { return }
        taken.end()
        taken.relay.continuation.finish()
    }
}
