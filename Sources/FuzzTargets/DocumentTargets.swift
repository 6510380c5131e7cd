import BeaconCore
import BeaconConfiguration
import Engine
import Foundation
import RegionMonitor
import Rules

/// The documents and messages that come from people and servers: configurations, rules, server
/// replies, commands.
enum DocumentTargets {
    static func ini(_ bytes: [UInt8]) {
        switch Configuration.load(bytes, path: "fuzz.ini") {
        case .success(let configuration):
            // Whatever loads runs: the monitoring policy of any hierarchy and cap.
            var engine = Engine(
                configuration: configuration, identity: MonitorIdentity(session: "s", address: "a", userid: "u"))
            var actions: [EngineAction] = []
            engine.start(at: Timestamp(microseconds: 1_700_000_000_000_000), into: &actions)
            precondition(!actions.isEmpty, "a start without its monitoring output")
            for warning in configuration.warnings { Message.check(warning.description) }
        case .failure(let errors):
            precondition(!errors.errors.isEmpty, "a failure without an error")
            for error in errors.errors { Message.check(error.description) }
        }
    }

    /// Instants to ask schedules about: the ends of the capture and trace ranges, a spring-forward night in
    /// Paris, and now-ish.
    static let instants: [Timestamp] = [
        Timestamp.captureRange.lowerBound, Timestamp.traceRange.lowerBound, Timestamp.traceRange.upperBound,
        Timestamp(microseconds: 1_711_846_800_000_000), Timestamp(microseconds: 1_700_000_000_000_000),
    ]

    static func rules(_ bytes: [UInt8]) {
        let loaded = RulesDocument.load(bytes, name: "fuzz.json")
        if case .failure(let error) = loaded { Message.check(error.description) }
        guard case .success(let document) = loaded else { return }
        for region in document.regions.prefix(4) {
            let zone = region.timeZone ?? TimeZone(identifier: "UTC") ?? .current
            for instant in instants {
                _ = region.schedule.isOpen(at: instant, in: zone)
                if let next = region.schedule.nextChange(after: instant, in: zone, horizon: 8) {
                    precondition(next > instant, "the next change \(next) is not after \(instant)")
                }
            }
        }
    }

    static func reply(_ bytes: [UInt8]) {
        let status = bytes.count >= 2 ? Int(bytes[0]) * 4 + Int(bytes[1] % 4) : 200
        _ = ServerAnswer.reply(status: status, body: Array(bytes.dropFirst(2)))
    }

    static func command(_ bytes: [UInt8]) {
        let cut = bytes.firstIndex(of: 0) ?? 0
        let name = String(decoding: bytes[..<cut], as: UTF8.self)
        let payload = bytes[min(cut + 1, bytes.count)...]
        switch DaemonCommand.parse(name: name, payload: payload) {
        case .success(let command): _ = (command.description, command.traceCommand)
        case .failure(let error): Message.check(error.description)
        }
    }
}

/// What every message about input promises (docs/behaviour.md §13): one line, no control character that could
/// rewrite a terminal, and input quoted in short excerpts, so a 70 KB value makes a short line.
package enum Message {
    /// The longest message: a sentence with a few quoted excerpts.
    package static let lengthLimit = 480

    package static func check(_ message: String) {
        precondition(message.unicodeScalars.count <= lengthLimit, "a message of \(message.utf8.count) bytes")
        precondition(
            !message.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) },
            "a control character in \(message.debugDescription)")
    }
}
