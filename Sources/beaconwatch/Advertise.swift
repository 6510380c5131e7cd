import ArgumentParser
import BeaconCore
import BlueZ
import Daemon
import Logging
import Foundation

/// `beaconwatch advertise`: make this machine an iBeacon.
struct Advertise: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make this machine an iBeacon (for testing a site, or calibrating another receiver).",
        discussion: """
            Sends LE Set Advertising Parameters (non-connectable, all channels), LE Set Advertising \
            Data (the iBeacon structure) and LE Set Advertising Enable, then advertises until \
            interrupted, when it disables advertising again. --print-hci prints the three commands \
            as bytes instead of sending them. Needs CAP_NET_RAW.
            """
    )

    @Option(
        help: "Proximity UUID.",
        transform: { text in
            guard let uuid = UUID(uuidString: text) else {
                throw ValidationError("'\(text)' is not a UUID; write it as 8-4-4-4-12 hex digits")
            }
            return uuid
        })
    var uuid: UUID

    @Option(help: "Major, 0-65535.")
    var major: UInt16

    @Option(help: "Minor, 0-65535.")
    var minor: UInt16

    @Option(parsing: .unconditional, help: "Measured power: the RSSI at 1 m, dBm (-128 to 127), such as -59.")
    var power: Int8

    @Option(help: "Advertising interval, milliseconds (20 to 10240).")
    var interval: Double = 100

    @Option(help: "The radio: hciN, uart:DEVICE[@BAUD] or h4tcp:HOST:PORT.")
    var adapter = "hci0"

    @Flag(help: "Print the HCI commands (type, opcode, length, parameters in hex) instead of sending them.")
    var printHci = false

    func validate() throws {
        guard (20...10240).contains(interval) else {
            throw ValidationError("--interval \(interval) is outside 20 to 10240 ms")
        }
    }

    var commands: [HCICommand] {
        let beacon = BeaconID(uuid: uuid, major: major, minor: minor)
        return [
            .setAdvertisingParameters(interval: UInt16((interval / 0.625).rounded())),
            .setAdvertisingData(AdvertisingData.iBeacon(beacon, power: power)),
            .setAdvertisingEnable(true),
        ]
    }

    func run() async throws {
        guard !printHci else {
            for command in commands { print(command) }
            return
        }
        let device = try openRadio(adapter)
        // Advertising starts under the stop signals' handling: a SIGTERM or Ctrl-C at any instant
        // after it began disables it again (the kernel test saw one arrive in between).
        let (radio, commands, adapter) = (Handed(device), commands, adapter)
        let (uuid, major, minor, power, interval) = (uuid, major, minor, power, interval)
        try await runUntilStopped(logger: Logger(label: "beaconwatch")) { control in
            for command in commands {
                let status = try radio.value.execute(command)
                guard status == .success else {
                    throw RuntimeFailure(
                        "the controller refused \(command.name): \(status); stop other programs advertising on \(adapter) "
                            + "(or 'sudo hciconfig \(adapter) reset') and try again")
                }
            }
            print(
                "advertising \(uuid.uuidString):\(major):\(minor) at \(power) dBm every \(interval) ms on \(adapter); Ctrl-C stops"
            )
            // Until SIGINT or SIGTERM, which the service group turns into a stop that wakes the wait.
            while !control.isStopping {
                _ = try radio.value.nextEvent(timeout: .seconds(60), wake: control.wakeDescriptor)
            }
        }
        _ = try? device.execute(.setAdvertisingEnable(false), timeout: .milliseconds(500))
        device.close()
    }
}
