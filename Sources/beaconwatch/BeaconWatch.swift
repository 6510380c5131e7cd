import ArgumentParser
import BeaconCore
import BlueZ
import BeaconConfiguration
import Daemon
import Logging
import MQTT
import Persistence

#if canImport(Glibc)
    import Glibc
#endif

/// The `beaconwatch` command and its subcommands (docs/behaviour.md §11).
struct BeaconWatch: AsyncParsableCommand {
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "beaconwatch",
        abstract: "Tells a building automation system where a device is, from iBeacon advertisements.",
        discussion: """
            Exit status: 0 success, 1 runtime failure, 2 bad input (configuration, trace, \
            arguments), 3 Bluetooth unavailable.
            """,
        version: "beaconwatch \(version) (commit \(BuildInfo.commit), libmosquitto \(Mosquitto.libraryVersion))",
        subcommands: [
            Run.self, Replay.self, Check.self, Decode.self, ScheduleCommand.self, Simulate.self, Advertise.self,
            Calibrate.self, Forward.self, Learn.self,
        ]
    )
}

extension BeaconWatch {
    /// With no subcommand: the help on standard error and status 2, argument-parser's convention
    /// for a usage error (`--help` and `--version` still exit 0).
    func run() async throws {
        printError(Self.helpMessage())
        throw ExitCode(Status.badInput)
    }
}

/// Exit statuses of docs/behaviour.md §11.
enum Status {
    static let runtimeFailure: Int32 = 1
    static let badInput: Int32 = 2
    static let bluetoothUnavailable: Int32 = 3
}

@main
enum Main {
    static func main() async {
        do {
            var command = try BeaconWatch.parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(status(for: error))
        }
    }

    /// Prints the one-line message for `error` and returns the exit status docs/behaviour.md §11 gives it.
    static func status(for error: any Error) -> Int32 {
        switch error {
        case let error as InputError:
            printError("beaconwatch: \(error)")
            return Status.badInput
        case let errors as ConfigurationErrors:
            for error in errors.errors { printError("beaconwatch: \(error)") }
            return Status.badInput
        case let error as BluetoothUnavailable:
            printError("beaconwatch: \(error)")
            return Status.bluetoothUnavailable
        case let error as ScanSetupFailure:
            printError("beaconwatch: \(error)")
            return Status.bluetoothUnavailable
        case let error as StateStoreError:
            printError("beaconwatch: \(error)")
            return Status.runtimeFailure
        case let error as RuntimeFailure:
            printError("beaconwatch: \(error)")
            return Status.runtimeFailure
        case let error as ExitCode:
            return error.rawValue
        default:
            let code = BeaconWatch.exitCode(for: error)
            let message = BeaconWatch.fullMessage(for: error)
            if code == .success {
                if !message.isEmpty { print(message) }
                return 0
            }
            if !message.isEmpty { printError(message) }
            // Argument errors are bad input (2), not sysexits' 64.
            return code == .validationFailure ? Status.badInput : Status.runtimeFailure
        }
    }
}

/// A log handler for the one-shot commands: each message one line on standard error, as
/// `beaconwatch: warning: …`, whatever its level (what a replay's server hook says, for one).
struct WarningLines: LogHandler {
    static var logger: Logger { logger() }

    /// A logger whose lines go out after `before` (a progress line cleared first).
    static func logger(before: @escaping @Sendable () -> Void = {}) -> Logger {
        Logger(label: "beaconwatch") { _ in WarningLines(before: before) }
    }

    var before: @Sendable () -> Void = {}
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        before()
        printError("beaconwatch: warning: \(event.message)")
    }
}
