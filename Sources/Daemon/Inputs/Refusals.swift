import BeaconCore
import Fleet
import JSONText
import Synchronization

/// Every message the daemon refuses, counted and said in one place without flooding the log
/// (docs/fleet.md, "What the daemon says"): malformed fleet messages (the first ``perMinute`` of
/// each minute, then how many more), each undeclared device once (with `Fleet.autoAdd` off), the
/// device cap once, each device's first stale message once; another shard's devices never.
///
/// Told from the MQTT client's network thread (garbage) and from the engine's (what a device
/// table refused); each returns the line to log, if any.
package final class Refusals: Sendable {
    static let perMinute = 10
    /// Devices remembered as said, at most (a flood of new ids costs bounded memory).
    static let remembered = 10_000

    private struct State {
        var windowStart: Duration?
        var said = 0
        var unsaid = 0
        var garbage = 0
        var unknown: Set<String> = []
        var late: Set<String> = []
        var unplaced: Set<String> = []
        var capSaid = false
        var refused = 0
    }

    private let state = Mutex(State())
    let maxDevices: Int
    let maxAge: Double

    package init(maxDevices: Int = 0, maxAge: Double = 30) {
        self.maxDevices = maxDevices
        self.maxAge = maxAge
    }

    /// Fleet messages ignored as malformed, in all.
    package var garbageCount: Int { state.withLock { $0.garbage } }
    /// Fleet messages a device table refused (undeclared, over the cap, stale), in all.
    package var refusedCount: Int { state.withLock { $0.refused } }

    /// A malformed message (`problem` says why), at `now` (``DaemonClock/elapsed``): the line to
    /// log, if any.
    package func garbage(_ problem: String, at now: Duration) -> String? {
        state.withLock { state in
            state.garbage += 1
            var prefix = ""
            if let start = state.windowStart, now - start < .seconds(60) {
                guard state.said < Self.perMinute else {
                    state.unsaid += 1
                    return nil
                }
            } else {
                if state.unsaid > 0 {
                    prefix = "(\(state.unsaid) more fleet messages were ignored in the last minute) "
                }
                state.windowStart = now
                state.said = 0
                state.unsaid = 0
            }
            state.said += 1
            return prefix + problem
        }
    }

    /// What the table of devices refused of device `device`'s message: the line to log, if any.
    package func refused(_ refusal: Devices.Refusal, device: String) -> String? {
        state.withLock { state in
            switch refusal {
            case .unknownDevice:
                state.refused += 1
                guard state.unknown.count < Self.remembered, state.unknown.insert(device).inserted else { return nil }
                return "fleet: device \(device) is not declared and Fleet.autoAdd is off; its messages are ignored "
                    + "(declare it with Device.\(device) = name)"
            case .tooManyDevices:
                state.refused += 1
                guard !state.capSaid else { return nil }
                state.capSaid = true
                return "fleet: \(maxDevices) devices are tracked (Fleet.maxDevices); device \(device) and any further "
                    + "ones are ignored; raise Fleet.maxDevices or shard the fleet (Fleet.shard)"
            case .stale(let count):
                state.refused += 1
                guard state.late.count < Self.remembered, state.late.insert(device).inserted else { return nil }
                return "fleet: device \(device): \(count) observation(s) made more than Fleet.maxAge = "
                    + "\(JSONValue.numberText(maxAge)) s before they arrived were dropped (said once per device); "
                    + "a phone flushing its queue after an outage, or a clock that is off; raise Fleet.maxAge if its "
                    + "messages are always late"
            case .unplacedScanner(let scanner):
                state.refused += 1
                guard state.unplaced.count < Self.remembered, state.unplaced.insert(scanner).inserted else {
                    return nil
                }
                return "scanners: scanner '\(scanner.excerpt)' reports but no LocationScanner places it; its reports "
                    + "are ignored (place it with LocationScanner.<Location ID> = \(scanner.excerpt))"
            case .learn(let problem):
                return problem
            case .otherShard, .unknownTag:
                // A scanner hears every advertiser around it: most are none of the tags.
                return nil
            }
        }
    }
}

extension Devices.Refusal {
    /// The one line a refused learn command says (docs/behaviour.md §22); `nil` for other refusals.
    package var learnProblem: String? {
        if case .learn(let problem) = self { problem } else { nil }
    }
}
