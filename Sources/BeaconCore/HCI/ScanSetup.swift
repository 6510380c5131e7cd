/// Setting up a passive (or active) LE scan, as a state machine over commands and responses, so
/// that a scripted controller can drive it without a socket (docs/behaviour.md §3.1).
///
/// Legacy first: LE Set Scan Parameters, then LE Set Scan Enable. When the controller answers
/// either with Command Disallowed (controllers that speak only the extended commands once any was
/// used, or that refuse legacy scanning), the extended pair follows: LE Set Extended Scan
/// Parameters and LE Set Extended Scan Enable. Any other error status, or no answer in time, fails
/// with the command's name and the status.
package struct ScanSetup: Sendable {
    package enum Mode: String, Sendable, Hashable {
        case legacy, extended
    }

    /// What the shell must do next.
    package enum Action: Sendable, Hashable {
        /// Send this command and hand every event that arrives to ``handle(event:)``.
        case send(HCICommand)
        /// The scan runs; advertising reports follow.
        case scanning(Mode)
        case failed(ScanSetupFailure)
    }

    enum Step: Sendable, Hashable {
        case idle, parameters(Mode), enable(Mode), scanning(Mode), failed
    }

    package let scan: HCICommand.ScanParameters
    private(set) var step = Step.idle

    package init(_ scan: HCICommand.ScanParameters = .init()) {
        self.scan = scan
    }

    /// The scan mode once running.
    package var mode: Mode? {
        if case .scanning(let mode) = step { return mode }
        return nil
    }

    package mutating func start() -> Action {
        step = .parameters(.legacy)
        return .send(command(for: step)!)
    }

    /// An event from the controller (from the event code on). `nil` when it is not the answer
    /// awaited: keep waiting.
    package mutating func handle(event: some Collection<UInt8>) -> Action? {
        guard let awaited = command(for: step), let response = HCICommandResponse(event: event),
            response.opcode == awaited.opcode
        else { return nil }
        if response.status == .commandDisallowed, case .legacy? = modeOfStep {
            step = .parameters(.extended)
            return .send(command(for: step)!)
        }
        guard response.status == .success else {
            step = .failed
            return .failed(ScanSetupFailure(command: awaited.name, reason: .status(response.status)))
        }
        switch step {
        case .parameters(let mode):
            step = .enable(mode)
            return .send(command(for: step)!)
        case .enable(let mode):
            step = .scanning(mode)
            return .scanning(mode)
        default:
            return nil
        }
    }

    /// No answer came in time.
    package mutating func timedOut() -> Action {
        let name = command(for: step)?.name ?? "scan set-up"
        step = .failed
        return .failed(ScanSetupFailure(command: name, reason: .timeout))
    }

    /// The commands that stop the scan this set-up started (none when it never enabled one).
    package var stopCommands: [HCICommand] {
        switch step {
        case .scanning(.legacy): [.setScanEnable(false)]
        case .scanning(.extended): [.setExtendedScanEnable(false)]
        default: []
        }
    }

    private var modeOfStep: Mode? {
        switch step {
        case .parameters(let mode), .enable(let mode), .scanning(let mode): mode
        default: nil
        }
    }

    private func command(for step: Step) -> HCICommand? {
        switch step {
        case .parameters(.legacy): .setScanParameters(scan)
        case .enable(.legacy): .setScanEnable(true, filterDuplicates: scan.filterDuplicates)
        case .parameters(.extended): .setExtendedScanParameters(scan)
        case .enable(.extended): .setExtendedScanEnable(true, filterDuplicates: scan.filterDuplicates)
        default: nil
        }
    }
}

/// The scan could not be set up: which command, and why.
package struct ScanSetupFailure: Error, Sendable, Hashable, CustomStringConvertible {
    package enum Reason: Sendable, Hashable {
        case status(HCIStatus)
        case timeout
    }

    package var command: String
    package var reason: Reason

    package init(command: String, reason: Reason) {
        self.command = command
        self.reason = reason
    }

    package var description: String {
        switch reason {
        case .status(let status):
            "the controller refused \(command): \(status); another program may be scanning (stop it, "
                + "or 'sudo btmgmt power off && sudo btmgmt power on'), or the adapter does not support LE scanning"
        case .timeout:
            "the controller did not answer \(command) within 2 s; reset the adapter ('sudo hciconfig hciN reset')"
        }
    }
}
