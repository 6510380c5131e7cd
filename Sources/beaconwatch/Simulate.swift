import ArgumentParser
import BeaconCore
import BeaconConfiguration
import Daemon
import Foundation
import RegionMonitor
import Simulation

/// `beaconwatch simulate --config INI --walk PLAN [--seed N]`.
struct Simulate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a trace of a person walking through the configured building.",
        discussion: """
            The plan lists stops, one a line: a Location ID (standing at that beacon) or a Zone (its \
            name or UUID:major), seconds to stay, and optionally seconds to walk to the next stop. \
            Standing at a beacon, the walker hears it at 1 m and the Zone's other beacons at 4 m; \
            standing in a Zone, each of its beacons at 2 m; walking, nothing. Each beacon advertises \
            every --interval seconds; RSSI follows the log-distance model (Monitor.pathLossExponent) \
            with Gaussian shadowing of --sigma dB, and --loss percent of advertisements are lost. The \
            same seed writes the same trace. Replay it with `beaconwatch replay INI trace:FILE`.
            """
    )

    @Option(help: "The hsyco.ini file.")
    var config = "etc/hsyco.ini"

    @Option(help: "The walk plan.")
    var walk: String

    @Option(help: "Seed of the noise and losses.")
    var seed: UInt64 = 1

    @Option(help: "Seconds between two advertisements of a beacon.")
    var interval = 1.0

    @Option(help: "Shadowing, dB (standard deviation).")
    var sigma = 4.0

    @Option(help: "Advertisements lost, percent.")
    var loss = 20.0

    @Option(help: "When the walk starts: ISO-8601 with an offset, or seconds since 1970.")
    var start = "2023-11-14T22:13:20Z"

    func validate() throws {
        guard interval > 0, interval.isFinite else { throw ValidationError("--interval must be more than 0 seconds") }
        guard sigma >= 0, sigma.isFinite else { throw ValidationError("--sigma must be 0 or more dB") }
        guard (0..<100).contains(loss) else { throw ValidationError("--loss must be from 0 up to (not including) 100") }
    }

    func run() throws {
        let configuration = try Configuration.load(contentsOf: config).get()
        guard let text = try? String(contentsOfFile: walk, encoding: .utf8) else {
            throw InputError(file: walk, message: "cannot be read; check the path of the walk plan")
        }
        let plan = try WalkPlan.parse(text, file: walk, hierarchy: configuration.hierarchy).get()
        guard let begin = Timestamp(iso8601: start) ?? Double(start).flatMap(Timestamp.init(secondsSinceEpoch:)) else {
            throw InputError(
                file: "--start", message: "'\(start)' is neither ISO-8601 with an offset nor seconds since 1970")
        }
        var simulation = WalkSimulation()
        simulation.seed = seed
        simulation.interval = interval
        simulation.sigma = sigma
        simulation.loss = loss / 100
        simulation.pathLossExponent = configuration.monitor.pathLossExponent
        let output = LineWriter()
        let progress = TerminalProgress.make(label: "simulate \(walk)", unit: .items("lines"))
        let sightings = simulation.run(plan, through: configuration.hierarchy, from: begin).sightings
        // The `decode` line is a trace line (docs/behaviour.md §3.3): one format for both.
        for (index, event) in sightings.enumerated() {
            guard case .advertisement(let time, let advertisement) = event else { continue }
            output.write(line: advertisement.jsonLine(at: time))
            if index & 1023 == 0 { progress?.update(done: index, total: sightings.count) }
        }
        output.flush()
        progress?.clear()
    }
}
