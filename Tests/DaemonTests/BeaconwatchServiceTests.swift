import Daemon
import Foundation
import Logging
import TestSupport
import Testing

/// The root service, run in-process without the command line: its wiring of the engine loop,
/// the sinks and the services.
@Suite struct BeaconwatchServiceTests {
    @Test func theRootServiceRunsAFileToItsEndAndWritesEveryOutputBeforeItStops() async throws {
        let scenario = try Conformance.Scenario("areas-then-zones")
        let folder = try scratchFolder("root-service")
        let state = folder.appendingPathComponent("state.sqlite").path
        let ini = try String(contentsOf: scenario.ini, encoding: .utf8) + "\nState.database = \(state)\n"
        try ini.write(to: folder.appendingPathComponent("hsyco.ini"), atomically: true, encoding: .utf8)
        let events = folder.appendingPathComponent("events.jsonl")
        var options = BeaconwatchService.Options(config: folder.appendingPathComponent("hsyco.ini").path)
        options.source = .trace(path: scenario.trace.path)
        options.events = events.path
        options.noMQTT = true
        options.webListen = ""
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        try await BeaconwatchService(options: options, logger: logger).run()

        // A daemon stops at the end of its input without running the clock on: what `replay`
        // prints up to the last line's time.
        let compared = Set(scenario.types)
        let written = try Conformance.Scenario.objects(String(contentsOf: events, encoding: .utf8))
            .filter { compared.contains($0["type"] as? String ?? "") }
        let expected = try scenario.expected()
        #expect(!written.isEmpty)
        #expect(written.count <= expected.count)
        let types = written.compactMap { $0["type"] as? String }
        #expect(types == expected.prefix(written.count).compactMap { $0["type"] as? String })
        #expect(FileManager.default.fileExists(atPath: state))
    }

    /// A run whose stop waits for an unreachable broker (up to `MQTTService.flushLimit`) while
    /// the web view sees the engine end: the web view stays up until its own turn to stop, and
    /// the run ends without an error (issue 38: it ended with "A service has finished
    /// unexpectedly", status 1, every time; `scripts/clean-exits` runs it as a process).
    @Test func aWebViewThatSeesTheEngineEndBeforeItsTurnToStopDoesNotFailTheRun() async throws {
        let scenario = try Conformance.Scenario("areas-then-zones")
        let folder = try scratchFolder("root-service-web-stop")
        let ini =
            try String(contentsOf: scenario.ini, encoding: .utf8)
            + "\nState.database = \(folder.path)/state.sqlite\nMQTT.host = 127.0.0.1\nMQTT.port = \(try Broker.freePort())\n"
        try ini.write(to: folder.appendingPathComponent("hsyco.ini"), atomically: true, encoding: .utf8)
        var options = BeaconwatchService.Options(config: folder.appendingPathComponent("hsyco.ini").path)
        options.source = .trace(path: scenario.trace.path)
        options.webListen = "127.0.0.1:0"
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        try await BeaconwatchService(options: options, logger: logger).run()
    }
}
