import BeaconCore
import Syscalls

#if canImport(Glibc)
    import Glibc
#endif

/// A controller beaconwatch owns on an HCI H4 byte stream (docs/behaviour.md §3.1): a serial
/// line (`uart:`) or a TCP connection (`h4tcp:`). The thin shell around ``H4Framer`` and
/// ``ControllerSetup``: it opens the line, takes the controller over (Reset, LE features, event
/// masks), writes commands and reads events. Calls block: use it from a dedicated thread.
///
/// A controller that sends nothing for ``quietLimit`` is asked for its address; no answer within
/// 2 s, a line that closes or bytes that are not H4 end the line with
/// ``BluetoothUnavailable/lineLost(_:reason:)``, which ``LiveScanner`` reports once and retries.
package final class H4Line: HCITransport {
    package let radio: Radio
    /// The controller's LE features, read at set-up.
    package private(set) var features = LEFeatures(rawValue: 0)
    private var descriptor: Int32
    private var framer = H4Framer()
    private var events: [[UInt8]] = []
    private let clock: DaemonClock
    private var lastHeard: Duration
    private var probedAt: Duration?
    /// How long a scanning controller may be silent before it is asked whether it still answers.
    package static let quietLimit = Duration.seconds(10)
    static let answerLimit = Duration.seconds(2)

    /// Opens `radio` (`uart:` or `h4tcp:`) and sets its controller up, or says in one line why not.
    package init(radio: Radio, clock: DaemonClock = .system) throws(BluetoothUnavailable) {
        self.radio = radio
        self.clock = clock
        switch radio {
        case .hci(let name): throw .other(name, errno: EINVAL, message: "an hciN adapter is not an H4 line")
        case .uart(let device, let baud): descriptor = try Self.openSerial(device, baud: baud, name: radio.description)
        case .h4tcp(let host, let port): descriptor = try Self.connect(host, port: port, name: radio.description)
        }
        lastHeard = clock.elapsed()
        do throws(BluetoothUnavailable) {
            var setup = ControllerSetup()
            var action = setup.start()
            while case .send(let command) = action {
                try send(command)
                let deadline = clock.elapsed() + Self.answerLimit
                var next: ControllerSetup.Action?
                while next == nil, clock.elapsed() < deadline {
                    guard let event = try receive(until: deadline, wake: nil) else { continue }
                    next = setup.handle(event: event)
                }
                action = next ?? setup.timedOut()
            }
            switch action {
            case .ready(let features): self.features = features
            case .failed(let failure):
                if case .timeout = failure.reason {
                    throw BluetoothUnavailable.line(
                        radio.description,
                        "the controller on \(radio) did not answer \(failure.command) within 2 s; check that it is "
                            + "powered, runs an HCI H4 firmware (Zephyr hci_uart, ESP-IDF HCI-UART)"
                            + (radio.isSerial ? " and that the baud rate is its own" : ""))
                }
                throw BluetoothUnavailable.line(
                    radio.description, "the controller on \(radio) refused \(failure.command): \(failure.reason)")
            case .send: break
            }
        } catch {
            close()
            throw error
        }
        events.removeAll()
    }

    deinit { close() }

    package func send(_ command: HCICommand) throws(BluetoothUnavailable) {
        let packet = command.packet
        let result = packet.withUnsafeBytes { Syscall.writeAll(descriptor, $0) }
        if let error = result.error {
            throw .lineLost(radio.description, reason: "could not be written to (\(error.reason))")
        }
    }

    package func nextEvent(timeout: Duration, wake: Int32?) throws(BluetoothUnavailable) -> [UInt8]? {
        let now = clock.elapsed()
        var deadline = now + timeout
        // A silent controller is asked once; the wait ends no later than its answer is due.
        if probedAt == nil, now - lastHeard >= Self.quietLimit {
            try send(.readAddress)
            probedAt = now
        }
        if let probedAt {
            guard now - probedAt < Self.answerLimit else {
                throw .lineLost(
                    radio.description,
                    reason:
                        "stopped answering (no answer within 2 s after \(Self.quietLimit.components.seconds) s of silence)"
                )
            }
            deadline = min(deadline, probedAt + Self.answerLimit)
        } else {
            deadline = min(deadline, lastHeard + Self.quietLimit)
        }
        guard let event = try receive(until: deadline, wake: wake) else { return nil }
        if let response = HCICommandResponse(event: event), response.opcode == HCICommand.readAddress.opcode {
            return nil  // the answer to the probe, not the scanner's business
        }
        return event
    }

    /// The next event before `deadline`, reading the line as needed; `nil` at the deadline or
    /// when `wake` turns readable.
    private func receive(until deadline: Duration, wake: Int32?) throws(BluetoothUnavailable) -> [UInt8]? {
        while events.isEmpty {
            let left = deadline - clock.elapsed()
            guard left > .zero else { return nil }
            let ready: [Int16]
            do {
                ready = try Syscall.waitReadable([descriptor] + (wake.map { [$0] } ?? []), timeout: left)
            } catch {
                throw .lineLost(radio.description, reason: "could not be waited on (\(error.reason))")
            }
            if ready.count > 1, ready[1] != 0, ready[0] == 0 { return nil }
            guard ready[0] != 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count: Int
            do {
                count = try Syscall.retrying("read") {
                    buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                }
            } catch {
                throw .lineLost(radio.description, reason: "could not be read (\(error.reason))")
            }
            guard count > 0 else { throw .lineLost(radio.description, reason: "closed the line") }
            do {
                events += try framer.feed(buffer[..<count])
            } catch {
                throw .lineLost(
                    radio.description,
                    reason: "sent bytes that are not HCI H4 (\(error))"
                        + (radio.isSerial ? "; check the baud rate" : ""))
            }
            if !events.isEmpty {
                lastHeard = clock.elapsed()
                probedAt = nil
            }
        }
        return events.removeFirst()
    }

    package func close() {
        guard descriptor >= 0 else { return }
        Syscall.close(descriptor)
        descriptor = -1
    }

    // MARK: - Opening

    static func openSerial(_ device: String, baud: Int, name: String) throws(BluetoothUnavailable) -> Int32 {
        let opened: Int
        do {
            opened = try Syscall.retrying("open") { Int(open(device, O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK)) }
        } catch {
            let fix =
                switch error.code {
                case ENOENT: "check the device (ls /dev/ttyACM* /dev/ttyUSB*) and that the dongle is plugged in"
                case EACCES, EPERM: "add the user to the dialout group, or run as root"
                case EBUSY: "another program (btattach, ModemManager) holds it; stop that program"
                default: "check the device"
                }
            throw .line(name, "cannot open \(device) for \(name): \(error.reason); \(fix)")
        }
        let descriptor = Int32(opened)
        var settings = termios()
        guard tcgetattr(descriptor, &settings) == 0 else {
            let reason = String(cString: strerror(errno))
            Syscall.close(descriptor)
            throw .line(name, "\(device) is not a serial line (\(reason)); give the controller's tty to uart:")
        }
        cfmakeraw(&settings)
        settings.c_cflag |= tcflag_t(CLOCAL) | tcflag_t(CREAD) | tcflag_t(CRTSCTS)
        settings.c_cflag &= ~(tcflag_t(CSTOPB) | tcflag_t(PARENB))
        settings.c_cc.6 = 0  // VMIN: reads return what there is (poll says when)
        settings.c_cc.5 = 0  // VTIME
        let speed = speedConstant(baud)
        cfsetispeed(&settings, speed)
        cfsetospeed(&settings, speed)
        guard tcsetattr(descriptor, TCSANOW, &settings) == 0 else {
            let reason = String(cString: strerror(errno))
            Syscall.close(descriptor)
            throw .line(name, "cannot set \(device) to \(baud) baud, 8N1, RTS/CTS: \(reason)")
        }
        tcflush(descriptor, TCIOFLUSH)
        // Blocking again: reads happen after poll says there are bytes.
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
        return descriptor
    }

    static func speedConstant(_ baud: Int) -> speed_t {
        switch baud {
        case 9600: speed_t(B9600)
        case 19200: speed_t(B19200)
        case 38400: speed_t(B38400)
        case 57600: speed_t(B57600)
        case 115_200: speed_t(B115200)
        case 230_400: speed_t(B230400)
        case 460_800: speed_t(B460800)
        case 500_000: speed_t(B500000)
        case 576_000: speed_t(B576000)
        case 921_600: speed_t(B921600)
        case 1_152_000: speed_t(B1152000)
        case 1_500_000: speed_t(B1500000)
        case 2_000_000: speed_t(B2000000)
        case 2_500_000: speed_t(B2500000)
        case 3_000_000: speed_t(B3000000)
        case 3_500_000: speed_t(B3500000)
        case 4_000_000: speed_t(B4000000)
        default: speed_t(B1000000)
        }
    }

    static func connect(_ host: String, port: UInt16, name: String) throws(BluetoothUnavailable) -> Int32 {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var found: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &found)
        guard status == 0, let first = found else {
            throw .line(name, "cannot find host \(host) for \(name): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(found) }
        var lastError = ECONNREFUSED
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let address = entry {
            entry = address.pointee.ai_next
            let made: Int32
            do throws(SyscallError) {
                made = Int32(
                    try Syscall.once("socket") {
                        Int(
                            socket(
                                address.pointee.ai_family, address.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue),
                                address.pointee.ai_protocol))
                    })
            } catch {
                lastError = error.code
                continue
            }
            do throws(SyscallError) {
                try Syscall.once("connect") {
                    Int(Glibc.connect(made, address.pointee.ai_addr, address.pointee.ai_addrlen))
                }
                var on: Int32 = 1
                setsockopt(made, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
                return made
            } catch {
                lastError = error.code
                Syscall.close(made)
            }
        }
        throw .line(
            name,
            "cannot connect to \(name): \(String(cString: strerror(lastError))); start the controller's bridge "
                + "(or check the address)")
    }
}

extension Radio {
    var isSerial: Bool {
        if case .uart = self { return true }
        return false
    }
}
