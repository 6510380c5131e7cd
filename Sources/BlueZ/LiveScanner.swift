import BeaconCore

/// A running LE scan on one adapter, delivering its events; set up through ``ScanSetup`` and
/// stopped with its stop commands.
///
/// When the adapter goes away while scanning, it says so once, tries to open it again every 3 s
/// and scans again when it returns; meanwhile it delivers no event, so regions exit on time.
public final class LiveScanner: HCIEventSource {
    public let adapter: String
    public let scan: HCICommand.ScanParameters
    private let say: (String) -> Void
    private var device: HCIDevice?
    private var setup: ScanSetup
    private var retryAt: ContinuousClock.Instant?
    private let clock = ContinuousClock()
    static let retryInterval = Duration.seconds(3)

    /// Opens `adapter` and starts scanning; throws ``BluetoothUnavailable`` or ``ScanSetupFailure``.
    public init(adapter: String, scan: HCICommand.ScanParameters = .init(), say: @escaping (String) -> Void) throws {
        self.adapter = adapter
        self.scan = scan
        self.say = say
        setup = ScanSetup(scan)
        try open()
    }

    deinit { stop() }

    /// The scan mode the controller accepted.
    public var mode: ScanSetup.Mode? { setup.mode }

    private func open() throws {
        let device = try HCIDevice(adapter: adapter)
        setup = ScanSetup(scan)
        var action = setup.start()
        while case .send(let command) = action {
            try device.send(command)
            let deadline = clock.now.advanced(by: .seconds(2))
            var next: ScanSetup.Action?
            while next == nil, clock.now < deadline {
                guard let event = try device.nextEvent(timeout: deadline - clock.now) else { continue }
                next = setup.handle(event: event)
            }
            action = next ?? setup.timedOut()
        }
        if case .failed(let failure) = action { throw failure }
        self.device = device
    }

    public func nextEvent(timeout: Duration) throws -> [UInt8]? {
        guard let device else {
            let now = clock.now
            if let retryAt, now < retryAt {
                Syscall.sleep(min(retryAt, now.advanced(by: timeout)) - now)
                return nil
            }
            do {
                try open()
                say("Bluetooth adapter \(adapter) is back; scanning again")
            } catch {
                retryAt = clock.now.advanced(by: Self.retryInterval)
            }
            return nil
        }
        do {
            return try device.nextEvent(timeout: timeout)
        } catch .adapterRemoved(let name) {
            say(BluetoothUnavailable.adapterRemoved(name).description)
            device.close()
            self.device = nil
            retryAt = clock.now.advanced(by: Self.retryInterval)
            return nil
        }
    }

    /// Stops the scan and restores the adapter's HCI filter.
    public func stop() {
        guard let device else { return }
        for command in setup.stopCommands { _ = try? device.execute(command, timeout: .milliseconds(500)) }
        device.close()
        self.device = nil
    }
}
