/// Taking over a controller nobody else has set up (docs/behaviour.md §3.1: `uart:` and `h4tcp:`),
/// as a state machine over commands and answers like ``ScanSetup``, which runs after it.
///
/// What the kernel does for `hciN` before beaconwatch sees the adapter: Reset; LE Read Local
/// Supported Features (kept, for `check` and the log); Set Event Mask with LE Meta events; LE Set
/// Event Mask with the advertising reports, legacy and extended. A failed status fails the set-up
/// with the command's name; the shell gives each command 2 s.
package struct ControllerSetup: Sendable {
    package enum Action: Sendable, Hashable {
        case send(HCICommand)
        /// The controller is ready for ``ScanSetup``; its LE features.
        case ready(LEFeatures)
        case failed(ScanSetupFailure)
    }

    static let commands: [HCICommand] = [.reset, .readLEFeatures, .setEventMask, .setLEEventMask]
    private var step = 0
    private var features = LEFeatures(rawValue: 0)

    package init() {}

    package mutating func start() -> Action {
        step = 0
        return .send(Self.commands[0])
    }

    /// An event from the controller (from the event code on); `nil` when it is not the answer
    /// awaited (a controller may send a vendor event or a no-op Command Complete after Reset).
    package mutating func handle(event: some Collection<UInt8>) -> Action? {
        guard step < Self.commands.count else { return nil }
        let awaited = Self.commands[step]
        guard let response = HCICommandResponse(event: event), response.opcode == awaited.opcode else { return nil }
        guard response.status == .success else {
            step = Self.commands.count
            return .failed(ScanSetupFailure(command: awaited.name, reason: .status(response.status)))
        }
        if awaited == .readLEFeatures {
            // Command Complete: code, length, packets, opcode (2), status, then 8 bytes of features.
            let bytes = Array(event)
            if bytes.count >= 14 {
                features = LEFeatures(rawValue: (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[6 + $1]) << ($1 * 8) })
            }
        }
        step += 1
        return step < Self.commands.count ? .send(Self.commands[step]) : .ready(features)
    }

    /// No answer came in time.
    package mutating func timedOut() -> Action {
        let name = step < Self.commands.count ? Self.commands[step].name : "controller set-up"
        step = Self.commands.count
        return .failed(ScanSetupFailure(command: name, reason: .timeout))
    }
}

/// A controller's LE feature mask (Core Vol 6 Part B §4.6).
package struct LEFeatures: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    package var rawValue: UInt64
    package init(rawValue: UInt64) { self.rawValue = rawValue }

    package var extendedAdvertising: Bool { rawValue & (1 << 12) != 0 }

    package var description: String {
        "LE features 0x" + Hex.encode((0..<8).reversed().map { UInt8(truncatingIfNeeded: rawValue >> ($0 * 8)) })
            + (extendedAdvertising ? " (extended advertising)" : "")
    }
}
