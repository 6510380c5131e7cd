import Logging
import BeaconCore
import BlueZ
import Fleet
import Foundation
import Persistence

/// `beaconwatch forward` (docs/behaviour.md §15): a scanner node that publishes what it decodes, as trace lines,
/// to `MQTT.topic/<userid>/sightings` for a fleet daemon, batched (at most 50 ms late) and kept
/// in the outbox first, so a broker outage loses nothing.
package struct ForwardRun: Sendable {
    package var source: SourceSpec
    package var store: StateStore
    package var sink: MQTTSink
    /// The topic the batches go to.
    package var topic: String
    package var qos: Int32
    package var skipBadLines = false
    /// The clock sightings are stamped with and batches are timed by.
    package var clock = DaemonClock.system

    /// What a run sent.
    package struct Summary: Sendable {
        package var sightings = 0
        package var messages = 0
        package var read = FileSource.Report()
    }

    package init(source: SourceSpec, store: StateStore, sink: MQTTSink, topic: String, qos: Int32) {
        self.source = source
        self.store = store
        self.sink = sink
        self.topic = topic
        self.qos = qos
    }

    /// Reads the source until its end (a file) or until `control` stops it (an adapter).
    ///
    /// Throws ``InputError`` (status 2), ``StateStoreError`` (status 1) or
    /// ``BluetoothUnavailable`` (status 3).
    package func run(control: EngineControl?, logger: Logger) throws -> Summary {
        var summary = Summary()
        var batch = ForwardBatch()
        func publish(_ payload: String?) throws {
            guard let payload else { return }
            let message = OutboxMessage(topic: topic, payload: payload, qos: qos)
            let entries = try store.record([], outbox: [message], settled: sink.takeSettled())
            sink.enqueue(entries)
            summary.messages += 1
        }
        if case .adapter(let name) = source {
            let scanner = try LiveScanner(adapter: name, logger: logger)
            defer { scanner.stop() }
            var radio = LiveAdvertisements()
            while control?.isStopping != true {
                let now = clock.now().microseconds
                try publish(batch.take(at: now))
                let wait = batch.due.map { Duration.microseconds(max(0, $0 - now)) } ?? .seconds(60)
                try radio.next(from: scanner, timeout: wait, wake: control?.wakeDescriptor, stamp: clock.now) {
                    time, advertisement in
                    summary.sightings += 1
                    try publish(batch.add(advertisement.jsonLine(at: time), at: time.microseconds))
                }
            }
            try publish(batch.take(at: 0, force: true))
            summary.read.decode = radio.decoder.statistics
            return summary
        }
        var file = FileSource(spec: source, skipBadLines: skipBadLines, logger: logger)
        file.wake = control?.wakeDescriptor
        // A file goes as fast as it reads: batches close on the source's own clock, and at once
        // whenever the input would wait (a quiet pipe).
        do {
            summary.read = try file.read(idle: { try publish(batch.take(at: 0, force: true)) }) { event in
                if control?.isStopping == true { throw Stopped() }
                guard case .advertisement(let time, let advertisement) = event else { return }
                summary.sightings += 1
                try publish(batch.take(at: time.microseconds))
                try publish(batch.add(advertisement.jsonLine(at: time), at: time.microseconds))
            }
        } catch is Stopped {}
        try publish(batch.take(at: 0, force: true))
        return summary
    }

    private struct Stopped: Error {}
}
