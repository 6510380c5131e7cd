import BeaconCore
import Testing

/// The scan set-up driven by a scripted controller, as the socket shell drives it on a real one.
@Suite struct ScanSetupTests {
    /// Answers each command by opcode with Command Complete and the scripted status; `nil` says
    /// nothing (a hung controller). Before each answer it sends an advertising report, which the
    /// set-up must ignore.
    struct Controller {
        var statuses: [UInt16: UInt8?] = [:]

        func answer(_ command: HCICommand) -> [[UInt8]] {
            let noise: [UInt8] = [0x3E, 0x03, 0x02, 0x00, 0x00]
            let status = statuses[command.opcode] ?? 0x00
            guard let status else { return [noise] }
            // A Command Complete for another opcode first, which is not the awaited answer either.
            let other: [UInt8] = [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]
            return [
                noise, other, [0x0E, 0x04, 0x01, UInt8(command.opcode & 0xFF), UInt8(command.opcode >> 8), status],
            ]
        }
    }

    /// Runs the set-up to its end; returns the names of the commands sent and the last action.
    static func run(_ controller: Controller) -> (sent: [String], end: ScanSetup.Action, setup: ScanSetup) {
        var setup = ScanSetup()
        var sent: [String] = []
        var action = setup.start()
        while case .send(let command) = action {
            sent.append(command.name)
            var next: ScanSetup.Action?
            for event in controller.answer(command) {
                if let answer = setup.handle(event: event) { next = answer }
            }
            action = next ?? setup.timedOut()
        }
        return (sent, action, setup)
    }

    @Test func aControllerThatAcceptsScansWithTheLegacyCommands() {
        let (sent, end, setup) = Self.run(Controller())
        #expect(sent == ["LE Set Scan Parameters", "LE Set Scan Enable"])
        #expect(end == .scanning(.legacy))
        #expect(setup.stopCommands == [.setScanEnable(false)])
    }

    @Test(arguments: [UInt16(0x200B), 0x200C])
    func commandDisallowedFallsBackToTheExtendedCommands(_ refused: UInt16) {
        let (sent, end, setup) = Self.run(Controller(statuses: [refused: 0x0C]))
        let legacy = refused == 0x200B ? ["LE Set Scan Parameters"] : ["LE Set Scan Parameters", "LE Set Scan Enable"]
        #expect(sent == legacy + ["LE Set Extended Scan Parameters", "LE Set Extended Scan Enable"])
        #expect(end == .scanning(.extended))
        #expect(setup.stopCommands == [.setExtendedScanEnable(false)])
    }

    @Test func anErrorStatusFailsNamingTheCommandAndTheStatus() {
        let (sent, end, setup) = Self.run(Controller(statuses: [0x200B: 0x12]))
        #expect(sent == ["LE Set Scan Parameters"])
        guard case .failed(let failure) = end else {
            Issue.record("expected a failure, got \(end)")
            return
        }
        #expect(failure.description.contains("LE Set Scan Parameters: Invalid HCI Command Parameters (0x12)"))
        #expect(setup.stopCommands.isEmpty)
    }

    @Test func extendedCommandsRefusedToo() {
        let (sent, end, _) = Self.run(Controller(statuses: [0x200B: 0x0C, 0x2041: 0x01]))
        #expect(sent == ["LE Set Scan Parameters", "LE Set Extended Scan Parameters"])
        #expect(
            end
                == .failed(
                    ScanSetupFailure(command: "LE Set Extended Scan Parameters", reason: .status(.unknownCommand))))
    }

    @Test func aControllerThatDoesNotAnswerTimesOut() {
        let (sent, end, _) = Self.run(Controller(statuses: [0x200C: UInt8?.none]))
        #expect(sent == ["LE Set Scan Parameters", "LE Set Scan Enable"])
        #expect(end == .failed(ScanSetupFailure(command: "LE Set Scan Enable", reason: .timeout)))
        #expect(ScanSetupFailure(command: "LE Set Scan Enable", reason: .timeout).description.contains("within 2 s"))
    }

    @Test func aCommandStatusErrorIsAnAnswerToo() {
        var setup = ScanSetup()
        _ = setup.start()
        #expect(setup.handle(event: [0x0F, 0x04, 0x11, 0x01, 0x0B, 0x20]) != nil)
        #expect(setup.mode == nil)
    }
}
