import Logging
import BeaconCore
import Syscalls

#if canImport(Glibc)
    import Glibc
#endif

/// What the scanner needs of an open adapter: ``HCIDevice``, or a scripted one in tests.
package protocol HCITransport: AnyObject {
    func send(_ command: HCICommand) throws(BluetoothUnavailable)
    /// The next event within `timeout`; `nil` also when file descriptor `wake` turns readable.
    func nextEvent(timeout: Duration, wake: Int32?) throws(BluetoothUnavailable) -> [UInt8]?
    func close()
}

extension HCITransport {
    /// Sends `command` and waits up to `timeout` for its answer; other events meanwhile are dropped.
    package func execute(
        _ command: HCICommand, timeout: Duration = .seconds(2), clock: DaemonClock = .system
    ) throws -> HCIStatus {
        try send(command)
        let deadline = clock.elapsed() + timeout
        while clock.elapsed() < deadline {
            guard let event = try nextEvent(timeout: deadline - clock.elapsed()) else { continue }
            if let response = HCICommandResponse(event: event), response.opcode == command.opcode {
                return response.status
            }
        }
        throw ScanSetupFailure(command: command.name, reason: .timeout)
    }

    func nextEvent(timeout: Duration) throws(BluetoothUnavailable) -> [UInt8]? {
        try nextEvent(timeout: timeout, wake: nil)
    }
}

extension HCIDevice: HCITransport {}

/// Opens a live radio by its name (``Radio``): a kernel adapter or an H4 line.
package func openRadio(_ name: String) throws(BluetoothUnavailable) -> HCITransport {
    guard let radio = Radio(name) else {
        throw .other(name, errno: EINVAL, message: Radio.problem(name) ?? "not a radio")
    }
    switch radio {
    case .hci(let adapter): return try HCIDevice(adapter: adapter)
    case .uart, .h4tcp: return try H4Line(radio: radio)
    }
}

extension BluetoothUnavailable {
    /// A radio lost while in use, which the scanner reports once and opens again.
    var isLoss: Bool {
        switch self {
        case .adapterRemoved, .lineLost: true
        default: false
        }
    }
}

/// A running LE scan on one adapter, delivering its events; set up through ``ScanSetup`` and
/// stopped with its stop commands.
///
/// When the adapter goes away while scanning, it says so once, tries to open it again every 3 s
/// and scans again when it returns; meanwhile it delivers no event, so regions exit on time.
package final class LiveScanner: HCIEventSource {
    package let adapter: String
    package let scan: HCICommand.ScanParameters
    /// Where it says the adapter went away and came back.
    private let logger: Logger
    private let openTransport: (String) throws -> HCITransport
    private let uptime: () -> Duration
    private let sleep: (Duration) -> Void
    private var device: HCITransport?
    private var setup: ScanSetup
    private var retryAt: Duration?
    /// The adapter is open, its scan not enabled yet (``start()``).
    private var waitingToStart = false
    static let retryInterval = Duration.seconds(3)

    /// Opens `adapter` and starts scanning, or with `scanning` false opens it only (``start()``
    /// enables the scan); throws ``BluetoothUnavailable`` or ``ScanSetupFailure``.
    ///
    /// `open`, `uptime` (a monotonic clock) and `sleep` are the real ones unless a test scripts them.
    package init(
        adapter: String,
        scan: HCICommand.ScanParameters = .init(),
        logger: Logger,
        scanning: Bool = true,
        open: @escaping (String) throws -> HCITransport = { try openRadio($0) },
        uptime: @escaping () -> Duration = DaemonClock.system.elapsed,
        sleep: @escaping (Duration) -> Void = { Syscall.sleep($0) }
    ) throws {
        self.adapter = adapter
        self.scan = scan
        self.logger = logger
        self.openTransport = open
        self.uptime = uptime
        self.sleep = sleep
        setup = ScanSetup(scan)
        if scanning {
            try self.open()
        } else {
            device = try openTransport(adapter)
            waitingToStart = true
        }
    }

    /// Enables the scan on the adapter opened with `scanning` false, and says so (`scanning`,
    /// with the mode the controller accepted); nothing when it scans already. The daemon calls
    /// it once its run is built, so that no report waits for the run (docs/live-radio.md).
    package func start() throws {
        guard waitingToStart, let device else { return }
        waitingToStart = false
        self.device = nil
        try setUp(device)
        logger.info("scanning", metadata: ["adapter": "\(adapter)", "mode": "\(mode?.rawValue ?? "?")"])
    }

    deinit { stop() }

    /// The scan mode the controller accepted.
    package var mode: ScanSetup.Mode? { setup.mode }

    private func open() throws {
        try setUp(try openTransport(adapter))
    }

    /// Enables the scan on `device` (kept once scanning; closed when the controller refuses).
    private func setUp(_ device: HCITransport) throws {
        setup = ScanSetup(scan)
        var action = setup.start()
        while case .send(let command) = action {
            try device.send(command)
            let deadline = uptime() + .seconds(2)
            var next: ScanSetup.Action?
            while next == nil, uptime() < deadline {
                guard let event = try device.nextEvent(timeout: deadline - uptime()) else { continue }
                next = setup.handle(event: event)
            }
            action = next ?? setup.timedOut()
        }
        if case .failed(let failure) = action {
            device.close()
            throw failure
        }
        self.device = device
    }

    package func nextEvent(timeout: Duration) throws -> [UInt8]? { try nextEvent(timeout: timeout, wake: nil) }

    package func nextEvent(timeout: Duration, wake: Int32?) throws -> [UInt8]? {
        guard let device else {
            let now = uptime()
            if let retryAt, now < retryAt {
                if let wake {
                    _ = try? Syscall.waitReadable([wake], timeout: min(retryAt - now, timeout))
                } else {
                    sleep(min(retryAt - now, timeout))
                }
                return nil
            }
            do {
                try open()
                logger.warning("Bluetooth adapter \(adapter) is back; scanning again")
            } catch {
                retryAt = uptime() + Self.retryInterval
            }
            return nil
        }
        do {
            return try device.nextEvent(timeout: timeout, wake: wake)
        } catch {
            guard error.isLoss else { throw error }
            logger.warning("\(error.description)")
            device.close()
            self.device = nil
            retryAt = uptime() + Self.retryInterval
            return nil
        }
    }

    /// Stops the scan and restores the adapter's HCI filter.
    package func stop() {
        guard let device else { return }
        for command in setup.stopCommands {
            try? device.send(command)
            _ = try? device.nextEvent(timeout: .milliseconds(200))
        }
        device.close()
        self.device = nil
    }
}
