import ArgumentParser
import BeaconConfiguration
import Daemon

/// `beaconwatch check [--config PATH]`.
struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Validate the configuration; print the hierarchy, the monitoring plan and warnings.",
        discussion: "Exits 2 with one 'file:line: message' per error when the file is not valid."
    )

    @Option(help: "The hsyco.ini file.")
    var config = "etc/hsyco.ini"

    func run() throws {
        switch Configuration.load(contentsOf: config) {
        case .failure(let errors):
            throw errors
        case .success(let configuration):
            let output = LineWriter()
            for line in CheckJob(configuration: configuration).report() { output.write(line: line) }
            output.flush()
        }
    }
}
