import BeaconCore
import Engine
import Fleet

// The tests feed the table one kind of input at a time; the daemon has one entry point
// (``Devices/handle(_:at:into:)`` with a ``Devices/Input``), and these name its cases.
extension Devices {
    @discardableResult
    mutating func handle(_ message: FleetMessage, at time: Timestamp, into actions: inout [Action]) -> Refusal? {
        handle(.message(message), at: time, into: &actions)
    }

    @discardableResult
    mutating func handle(_ report: ScannerReport, at time: Timestamp, into actions: inout [Action]) -> Refusal? {
        handle(.report(report), at: time, into: &actions)
    }

    mutating func handle(_ input: EngineInput, at time: Timestamp, into actions: inout [Action]) {
        handle(.daemon(input), at: time, into: &actions)
    }

    mutating func handle(_ input: EngineInput, for device: String, at time: Timestamp, into actions: inout [Action]) {
        handle(.device(.fleet(device), input), at: time, into: &actions)
    }

    mutating func scannerStatus(_ scanner: String, online: Bool) {
        var actions: [Action] = []
        handle(.scannerStatus(scanner, online: online), at: now, into: &actions)
    }
}
