import ArgumentParser
import BeaconConfiguration
import Daemon

/// `beaconwatch check [--config PATH]`.
struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Validate the configuration; print the hierarchy, the monitoring plan and warnings.",
        discussion: """
            Exits 2 with one 'file:line: message' per error on standard error when the file is not \
            valid, or when run would stop at start with it on this machine (a capture or rules \
            file that cannot be read, a state database that cannot be written, MQTT credential \
            or TLS files that cannot be read). Warnings (an adapter that is not present, a \
            script that cannot run) do not change the exit status.
            """
    )

    @Option(help: "The hsyco.ini file.")
    var config = "etc/hsyco.ini"

    func run() throws {
        switch Configuration.load(contentsOf: config) {
        case .failure(let errors):
            throw errors
        case .success(let configuration):
            let output = LineWriter()
            let (lines, errors) = CheckJob(configuration: configuration).report()
            for line in lines { output.write(line: line) }
            output.flush()
            if !errors.isEmpty { throw ConfigurationErrors(errors: errors) }
        }
    }
}
