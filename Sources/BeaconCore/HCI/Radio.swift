/// Where a live radio is (docs/behaviour.md §3.1): a kernel adapter (`hci0`), a controller on a
/// serial line speaking HCI H4 (`uart:/dev/ttyACM0@1000000`), or the same byte stream over TCP
/// (`h4tcp:192.0.2.7:9001`). On the last two no kernel Bluetooth stack is involved: beaconwatch
/// owns the controller (``ControllerSetup``) and reads its bytes (``H4Framer``).
package enum Radio: Hashable, Sendable, CustomStringConvertible {
    case hci(String)
    case uart(device: String, baud: Int)
    case h4tcp(host: String, port: UInt16)

    /// The baud rate of `uart:` when none is given: what Zephyr's `hci_uart` and ESP-IDF's
    /// HCI-UART examples are built with.
    package static let defaultBaud = 1_000_000
    /// The rates a Linux serial line can be set to (termios' `B…` constants).
    package static let baudRates: [Int] = [
        9600, 19200, 38400, 57600, 115_200, 230_400, 460_800, 500_000, 576_000, 921_600, 1_000_000, 1_152_000,
        1_500_000, 2_000_000, 2_500_000, 3_000_000, 3_500_000, 4_000_000,
    ]

    /// Reads `hciN`, `uart:DEVICE[@BAUD]` or `h4tcp:HOST:PORT` (an IPv6 host in brackets); `nil`
    /// for anything else, ``problem(_:)`` says what is wrong.
    package init?(_ text: String) {
        guard case .success(let radio) = Self.parse(text) else { return nil }
        self = radio
    }

    /// Why `text` is not a radio, in words for a message, or `nil` when it is one.
    package static func problem(_ text: String) -> String? {
        if case .failure(let reason) = parse(text) { return reason.text }
        return nil
    }

    /// Whether `text` means to name a radio (so a malformed one is reported as such).
    package static func looksLikeRadio(_ text: String) -> Bool {
        text.hasPrefix("uart:") || text.hasPrefix("h4tcp:") || isAdapterName(text)
    }

    /// `hci` followed by digits.
    package static func isAdapterName(_ text: String) -> Bool {
        text.hasPrefix("hci") && text.count > 3 && text.dropFirst(3).allSatisfy { $0.isASCII && $0.isNumber }
    }

    struct Reason: Error { var text: String }

    static func parse(_ text: String) -> Result<Radio, Reason> {
        if isAdapterName(text) { return .success(.hci(text)) }
        if text.hasPrefix("uart:") {
            var device = Substring(text.dropFirst("uart:".count))
            var baud = defaultBaud
            if let at = device.lastIndex(of: "@") {
                let rate = device[device.index(after: at)...]
                guard let value = Int(rate), baudRates.contains(value) else {
                    return .failure(
                        Reason(
                            text: "'\(rate)' in '\(text)' is not a serial baud rate; use one of "
                                + baudRates.map(String.init).joined(separator: ", ")))
                }
                baud = value
                device = device[..<at]
            }
            guard !device.isEmpty else {
                return .failure(Reason(text: "'\(text)' names no serial device; write uart:/dev/ttyACM0[@BAUD]"))
            }
            return .success(.uart(device: String(device), baud: baud))
        }
        if text.hasPrefix("h4tcp:") {
            let address = text.dropFirst("h4tcp:".count)
            guard let colon = address.lastIndex(of: ":"), let port = UInt16(address[address.index(after: colon)...]),
                port > 0
            else {
                return .failure(Reason(text: "'\(text)' has no port from 1 to 65535; write h4tcp:HOST:PORT"))
            }
            var host = address[..<colon]
            if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
            guard !host.isEmpty else {
                return .failure(Reason(text: "'\(text)' names no host; write h4tcp:HOST:PORT"))
            }
            return .success(.h4tcp(host: String(host), port: port))
        }
        return .failure(Reason(text: "'\(text)' is not a radio; write hciN, uart:DEVICE[@BAUD] or h4tcp:HOST:PORT"))
    }

    /// Whether beaconwatch owns the controller (H4) rather than the kernel.
    package var ownsController: Bool {
        if case .hci = self { return false }
        return true
    }

    package var description: String {
        switch self {
        case .hci(let name): name
        case .uart(let device, let baud): baud == Self.defaultBaud ? "uart:\(device)" : "uart:\(device)@\(baud)"
        case .h4tcp(let host, let port): host.contains(":") ? "h4tcp:[\(host)]:\(port)" : "h4tcp:\(host):\(port)"
        }
    }
}
