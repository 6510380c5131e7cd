import BeaconConfiguration
import BeaconCore
import Logging
import MQTT
import Foundation
import Synchronization
import Syscalls

/// The daemon's one connection to the broker (docs/mqtt.md), shared by what comes in and what
/// goes out: made from `MQTT.*` with the will `B/status offline`, it hands every incoming message
/// unread to the ``MQTTInput`` attached to it (subscribed to its topics at every connect) and
/// every acknowledgement to the ``MQTTSink`` attached to it. Neither owns the other, and neither
/// owns the connection: the service makes it and gives it to both.
package final class BrokerConnection: Sendable {
    /// The libmosquitto client: publishing is safe from any thread while it runs.
    package let client: MQTTClient
    private let attached = Attached()

    /// Who the network thread hands things to (a class: the client's callbacks capture it).
    private final class Attached: Sendable {
        struct Receivers {
            var input: MQTTInput?
            /// Weak: the sink holds the connection.
            weak var sink: MQTTSink?
        }

        let receivers = Mutex(Receivers())
        var input: MQTTInput? { receivers.withLock { $0.input } }
        var sink: MQTTSink? { receivers.withLock { $0.sink } }
    }

    /// A connection for `settings` whose will is `will`; nothing is sent before ``MQTTClient/start()``.
    /// An unreadable password or TLS file is an error naming the key and the fix.
    package init(settings: MQTTSettings, will: MQTTMessage, timers: ShellTimers = .shared) throws {
        var connection = MQTTConnection(host: settings.host, port: Int32(settings.port), clientID: settings.clientID)
        connection.username = settings.username
        connection.password = try settings.password ?? settings.passwordFile.map(Self.readPassword)
        // libmosquitto says only "invalid function arguments" of a TLS file it cannot read.
        for (key, path) in settings.tlsFiles {
            if let reason = FileAccess.unreadable(path) {
                throw RuntimeFailure("\(key) \(path) \(reason); check the path and that this user may read it")
            }
        }
        connection.tlsCA = settings.tlsCA
        connection.tlsCert = settings.tlsCert
        connection.tlsKey = settings.tlsKey
        connection.version = settings.version == .v5 ? .v5 : .v311
        connection.keepalive = Int32(settings.keepalive)
        connection.will = .init(topic: will.topic, payload: Array(will.payload.utf8), qos: will.qos, retain: true)
        let attached = attached
        // Both on the network thread: a hop to another thread per message is what a fleet cannot afford.
        client = try MQTTClient(
            connection,
            published: { id, generation in
                attached.sink?.acknowledged(id, generation: generation)
            },
            received: { topic, payload, retained in
                attached.input?.received(topic: topic, payload: payload, retained: retained)
            },
            // Heard at once, however busy the pool that handles the rest of it (the sink's
            // confirmations must stop with the connection: docs/mqtt.md).
            connectionEvents: { event in
                if case .disconnected = event { attached.sink?.connectionEnded() }
            }, clock: timers.clock)
    }

    static func readPassword(_ path: String) throws -> String {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            let reason = FileAccess.unreadable(path) ?? "is not UTF-8 text"
            throw RuntimeFailure("MQTT.passwordFile \(path) \(reason); check the path and that this user may read it")
        }
        return String(text.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
    }

    /// What comes in goes to `input` from now on, and its topics are subscribed at every connect.
    package func attach(_ input: MQTTInput) { attached.receivers.withLock { $0.input = input } }

    /// The broker's acknowledgements go to `sink` from now on.
    func attach(_ sink: MQTTSink) { attached.receivers.withLock { $0.sink = sink } }

    /// The input's presence sensors of a reloaded `configuration` from now on (docs/behaviour.md
    /// §23): a new sensor topic is subscribed at once (while disconnected, at the next connect,
    /// as every topic is).
    func reconfigure(_ configuration: Configuration, logger: Logger) {
        guard let input = attached.input else { return }
        for (filter, lost) in input.reconfigure(occupancy: configuration.occupancy) {
            do { _ = try client.subscribe(filter, qos: 1) } catch {
                logger.warning("\(error); \(lost) until the broker is connected again")
            }
        }
    }

    /// Subscribes the input's topics (at a connect: the session is clean); a subscription that
    /// fails is said with what is lost.
    func subscribeInput(logger: Logger) {
        for (filter, lost) in attached.input?.subscriptions ?? [] {
            do { _ = try client.subscribe(filter, qos: 1) } catch { logger.warning("\(error); \(lost)") }
        }
    }
}
