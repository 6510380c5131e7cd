import Foundation
import MQTT
import TestSupport
import Synchronization
import Testing

/// The libmosquitto wrapper against a real broker.
@Suite struct MQTTClientTests {
    /// Waits for the first event that `match` turns into a value, up to `seconds`.
    static func first<T: Sendable>(
        _ events: AsyncStream<MQTTEvent>,
        within seconds: Double = Eventually.patience,
        _ match: @escaping @Sendable (MQTTEvent) -> T?
    ) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                for await event in events { if let value = match(event) { return value } }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: .seconds(seconds))
                return nil
            }
            defer { group.cancelAll() }
            guard let value = try await group.next() ?? nil else {
                throw BrokerError("no such MQTT event within \(seconds) s")
            }
            return value
        }
    }

    @Test func publishSubscribeAndRetainThroughARealBroker() async throws {
        let broker = try Broker()
        let publisher = try MQTTClient(
            MQTTConnection(host: "127.0.0.1", port: broker.port, clientID: "pub-\(UUID().uuidString.prefix(8))"))
        try publisher.start()
        _ = try await Self.first(publisher.events) { if case .connected(0) = $0 { true } else { nil } }
        let messageID = try publisher.publish(topic: "t/state", payload: Array("near".utf8), qos: 1, retain: true)
        _ = try await Self.first(publisher.events) { if case .published(messageID) = $0 { true } else { nil } }

        // A subscriber that comes later gets the retained message, marked retained.
        let subscriber = try MQTTClient(
            MQTTConnection(host: "127.0.0.1", port: broker.port, clientID: "sub-\(UUID().uuidString.prefix(8))"))
        try subscriber.start()
        _ = try await Self.first(subscriber.events) { if case .connected(0) = $0 { true } else { nil } }
        try subscriber.subscribe("t/#", qos: 1)
        let (topic, payload, retained) = try await Self.first(subscriber.events) {
            if case .message(let topic, let payload, let retained) = $0 { (topic, payload, retained) } else { nil }
        }
        #expect(topic == "t/state")
        #expect(payload == Array("near".utf8))
        #expect(retained)
        publisher.shutdown()
        publisher.shutdown()  // twice is harmless
        subscriber.shutdown()
        #expect(throws: MQTTError.self) { try publisher.publish(topic: "t", payload: [], qos: 0, retain: false) }
    }

    @Test func handlersTakeAcknowledgementsAndMessagesOnTheNetworkThreadInsteadOfTheStream() async throws {
        let broker = try Broker(persistent: false)
        let acknowledged = Mutex<[Int32]>([])
        let received = Mutex<[String]>([])
        let client = try MQTTClient(
            MQTTConnection(host: "127.0.0.1", port: broker.port, clientID: "both-\(UUID().uuidString.prefix(8))"),
            published: { id, _ in
                acknowledged.withLock { $0.append(id) }
                Eventually.changed()
            },
            received: { topic, payload, _ in
                received.withLock { $0.append("\(topic) \(String(decoding: payload, as: UTF8.self))") }
                Eventually.changed()
            })
        try client.start()
        _ = try await Self.first(client.events) { if case .connected(0) = $0 { true } else { nil } }
        try client.subscribe("h/#", qos: 1)
        _ = try await Self.first(client.events) { if case .subscribed = $0 { true } else { nil } }
        let ids = try (0..<3).map {
            try client.publish(topic: "h/\($0)", payload: Array("m\($0)".utf8), qos: 1, retain: false)
        }
        try? await Eventually.until("three messages and their acknowledgements") {
            received.withLock({ $0.count }) >= 3 && acknowledged.withLock({ $0.count }) >= 3
        }
        #expect(received.withLock { $0 } == ["h/0 m0", "h/1 m1", "h/2 m2"])
        #expect(Set(acknowledged.withLock { $0 }) == Set(ids))
        client.shutdown()
        // The stream got neither.
        var streamed: [MQTTEvent] = []
        for await event in client.events { streamed.append(event) }
        #expect(
            !streamed.contains { if case .published = $0 { true } else if case .message = $0 { true } else { false } })
    }

    @Test func aResetClientDropsWhatItHeldAndConnectsAgain() async throws {
        let broker = try Broker()
        let client = try MQTTClient(
            MQTTConnection(host: "127.0.0.1", port: broker.port, clientID: "reset-\(UUID().uuidString.prefix(8))"))
        try client.start()
        _ = try await Self.first(client.events) { if case .connected(0) = $0 { true } else { nil } }
        try await broker.stop(signal: SIGKILL)
        _ = try await Self.first(client.events) {
            if case .disconnected(let code) = $0, code != 0 { true } else { nil }
        }
        // Queued while the broker is away, then dropped by the reset: never acknowledged.
        let dropped = try client.publish(topic: "t/x", payload: Array("old".utf8), qos: 1, retain: false)
        try client.reset()
        // What was meant for the old connection is refused by the new one before libmosquitto has
        // it (the outbox's batches: a newer event must not overtake older ones put back); were it
        // queued, its acknowledgement would come before the fresh one's below.
        #expect(client.generation == 1)
        #expect(throws: MQTTError.self) {
            try client.publishTagged(topic: "t/x", payload: Array("stale".utf8), qos: 1, retain: false, expecting: 0)
        }
        try broker.start()
        _ = try await Self.first(client.events) { if case .connected(0) = $0 { true } else { nil } }
        let fresh = try client.publish(topic: "t/x", payload: Array("new".utf8), qos: 1, retain: false)
        let acknowledged = try await Self.first(client.events) {
            if case .published(let id) = $0 { id } else { nil }
        }
        #expect(acknowledged == fresh)
        _ = dropped
        client.shutdown()
    }

    /// A client shut down stays down: a reset then (the connection's end, seen while the daemon
    /// stops) neither fails nor connects again.
    @Test func aResetAfterShutdownDoesNothing() async throws {
        let broker = try Broker()
        let client = try MQTTClient(
            MQTTConnection(host: "127.0.0.1", port: broker.port, clientID: "ended-\(UUID().uuidString.prefix(8))"))
        try client.start()
        _ = try await Self.first(client.events) { if case .connected(0) = $0 { true } else { nil } }
        client.shutdown()
        try client.reset()
        #expect(client.generation == 0)
        #expect(throws: MQTTError.self) { try client.publish(topic: "t/x", payload: [1], qos: 1, retain: false) }
        // The stream ended with the shutdown: nothing more comes.
        var after = 0
        for await _ in client.events { after += 1 }
        #expect(after <= 1)
    }

    /// Without a reset, the client's own network thread reconnects (after 1 s, doubling) once the
    /// broker is back, and what was queued meanwhile is delivered.
    @Test func aLostConnectionIsTakenUpAgainWhenTheBrokerReturns() async throws {
        let broker = try Broker()
        let client = try MQTTClient(
            MQTTConnection(host: "127.0.0.1", port: broker.port, clientID: "again-\(UUID().uuidString.prefix(8))"))
        try client.start()
        _ = try await Self.first(client.events) { if case .connected(0) = $0 { true } else { nil } }
        try await broker.stop(signal: SIGKILL)
        _ = try await Self.first(client.events) {
            if case .disconnected(let code) = $0, code != 0 { true } else { nil }
        }
        try broker.start()
        _ = try await Self.first(client.events) { if case .connected(0) = $0 { true } else { nil } }
        let sent = try client.publish(topic: "t/again", payload: Array("back".utf8), qos: 1, retain: false)
        let acknowledged = try await Self.first(client.events) { if case .published(let id) = $0 { id } else { nil } }
        #expect(acknowledged == sent)
        client.shutdown()
    }

    @Test func aBadOptionIsReportedInWords() {
        var connection = MQTTConnection(host: "127.0.0.1", port: 1, clientID: "x")
        connection.tlsCA = "/nonexistent/ca.pem"
        #expect {
            _ = try MQTTClient(connection)
        } throws: { error in
            "\(error)".hasPrefix("MQTT TLS set-up failed: ")
        }
    }
}
