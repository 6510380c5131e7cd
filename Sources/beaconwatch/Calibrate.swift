import ArgumentParser
import BeaconCore
import BlueZ
import BeaconConfiguration
import Daemon
import Logging
import Foundation
import RegionMonitor

/// `beaconwatch calibrate --id ID --seconds N`.
struct Calibrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Measure a beacon held 1 m from the receiver; print its median RSSI and the LocationBeaconPower line.",
        discussion: """
            Hold the beacon 1 m from the adapter, in the open, and keep still. The median RSSI over \
            N seconds from its first advertisement is its measured power at 1 m; paste the printed \
            line into hsyco.ini. A capture or trace (--source) is read from the beacon's first \
            sighting on.
            """
    )

    @Option(help: "The beacon's Location ID (LocationBaseBeacon.<id>).")
    var id: String

    @Option(help: "How long to listen, seconds.")
    var seconds: Double = 10

    @Option(help: "The hsyco.ini file.")
    var config = "etc/hsyco.ini"

    @Option(
        help:
            "Where sightings come from, overriding Monitor.source: hciN, uart:DEVICE[@BAUD], h4tcp:HOST:PORT, btsnoop:PATH, trace:PATH, trace:-.",
        transform: parseSource)
    var source: SourceSpec?

    func validate() throws {
        guard seconds > 0, seconds <= 3600 else { throw ValidationError("--seconds must be from 0 to 3600") }
    }

    func run() async throws {
        let configuration = try Configuration.load(contentsOf: config).get()
        let hierarchy = configuration.hierarchy
        guard let index = hierarchy.index(ofLocation: id) else {
            throw ValidationError("no beacon with Location ID '\(id)' in \(config); 'beaconwatch check' lists them")
        }
        let beacon = hierarchy.beacons[index]
        var calibration = Calibration(seconds: seconds)
        switch source ?? configuration.monitor.source {
        case .adapter(let name):
            let scanner = try LiveScanner(adapter: name, logger: WarningLines.logger)
            let clock = DaemonClock.system
            let end = clock.elapsed() + .milliseconds(Int64(seconds * 1000))
            printError("listening for \(beacon.locationID) (\(beacon.id)) for \(seconds) s on \(name)...")
            // Until the time is up, or SIGINT or SIGTERM (the service group's stop wakes the wait).
            let (id, start, radio) = (beacon.id, calibration, Handed(scanner))
            calibration = try await runUntilStopped(logger: Logger(label: "beaconwatch")) { control in
                let scanner = radio.value
                var calibration = start
                var radio = LiveAdvertisements()
                while !control.isStopping, clock.elapsed() < end {
                    try radio.next(
                        from: scanner, timeout: end - clock.elapsed(), wake: control.wakeDescriptor,
                        stamp: clock.now
                    ) { time, advertisement in
                        if advertisement.beacon == id { calibration.add(rssi: advertisement.rssi, at: time) }
                    }
                }
                scanner.stop()
                return calibration
            }
        case let file:
            _ = try FileSource(spec: file, logger: WarningLines.logger).read { event in
                if case .advertisement(let time, let advertisement) = event, advertisement.beacon == beacon.id {
                    calibration.add(rssi: advertisement.rssi, at: time)
                }
            }
        }
        guard let median = calibration.median, let low = calibration.samples.min(), let high = calibration.samples.max()
        else {
            throw RuntimeFailure(
                "no advertisement of \(beacon.locationID) (\(beacon.id)) was heard; check that it is on, in range, "
                    + "and configured with that UUID, major and minor ('beaconwatch decode' shows what is heard)")
        }
        let name = beacon.name.map { " \"\($0)\"" } ?? ""
        print(
            "\(beacon.locationID) (\(beacon.id))\(name): \(calibration.samples.count) sightings in "
                + "\(String(format: "%.1f", calibration.span)) s, median RSSI \(median) dBm (min \(low), max \(high))")
        print("LocationBeaconPower.\(beacon.locationID) = \(median)")
    }
}
