import BeaconCore

/// One parser (or the engine) driven by arbitrary bytes, for libFuzzer and for the regression
/// tests that replay what it found (issue 16).
///
/// Each target takes any bytes without crashing, and checks what its code promises with
/// `precondition`: a broken promise is a crash, which is what the fuzzer looks for.
package enum FuzzTarget: String, CaseIterable, Sendable {
    /// One HCI event through ``AdvertisingReportDecoder``.
    case hci
    /// A whole btsnoop capture: header, records, their times, the events they carry.
    case btsnoop
    /// A JSON-lines trace, line by line through ``TraceParser``.
    case trace
    /// An hsyco.ini through the configuration loader.
    case ini
    /// A u_beacons.json rules document, and each region's schedule asked about.
    case rules
    /// A rule server's reply (the first two bytes are the HTTP status).
    case reply
    /// A `B/cmd/<name>` message: the name up to the first NUL, then the payload.
    case command
    /// A program of sightings, clock steps, modes and commands through the whole ``Engine``.
    case engine
    /// A fleet message: the source in the first byte, the topic up to a NUL, the payload.
    case fleet
    /// A JSON document through ``JSONReader``, held equal to `JSONDecoder`'s reading.
    case json
    /// A fixed scanner's message: the source in the first byte, the topic up to a NUL, the
    /// payload; each report resolved to a tag.
    case scanners
    /// A controller's H4 byte stream (`uart:`, `h4tcp:`), cut as the first byte says, through
    /// ``H4Framer``; each event decoded and offered to ``ControllerSetup``.
    case h4
    /// A presence sensor's message (docs/behaviour.md §23): the kind in the first byte, the field
    /// path up to a NUL, the payload; read, then through an ``OccupancyMonitor``.
    case sensor

    /// Runs the target on `bytes`.
    package func run(_ bytes: UnsafeRawBufferPointer) {
        switch self {
        case .hci: ParserTargets.hci(bytes)
        case .btsnoop: ParserTargets.btsnoop(Array(bytes))
        case .trace: ParserTargets.trace(Array(bytes))
        case .ini: DocumentTargets.ini(Array(bytes))
        case .rules: DocumentTargets.rules(Array(bytes))
        case .reply: DocumentTargets.reply(Array(bytes))
        case .command: DocumentTargets.command(Array(bytes))
        case .engine: EngineTarget.run(Array(bytes))
        case .fleet: FleetTarget.run(Array(bytes))
        case .json: ParserTargets.json(Array(bytes))
        case .scanners: ScannerTarget.run(Array(bytes))
        case .h4: ParserTargets.h4(Array(bytes))
        case .sensor: SensorTarget.run(Array(bytes))
        }
    }

    /// Runs the target on `bytes`.
    package func run(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { run($0) }
    }
}
