import BeaconConfiguration
import Daemon
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Daemons starting at the same moment with the default web address (docs/behaviour.md §16): one of them
/// serves the web view, every other says so in one line and runs on without it.
@Suite(.serialized) struct WebStartTests {
    static let defaultAddress = WebSettings(host: "127.0.0.1", port: 8080, explicit: false)

    @Test func twentyDaemonsStartedAtOnceAllRunAndOneServesTheWebView() async throws {
        // The default address must be free here for one of them to take it.
        try #require(WebService.bindProblem(Self.defaultAddress) == nil, "127.0.0.1:8080 is taken on this machine")
        var daemons: [(process: Process, log: URL)] = []
        for n in 0..<20 {
            let folder = try scratchFolder("web-start")
            try """
            Monitor.userid = d\(n)
            LocationBaseBeacon.1 = 74278BDA-B644-4520-8F0C-720EAF059935,1,1
            Monitor.source = none
            State.database = state.sqlite

            """.write(to: folder.appendingPathComponent("hsyco.ini"), atomically: true, encoding: .utf8)
            let process = Process()
            process.currentDirectoryURL = folder
            process.executableURL = DecodeCommandTests.productsDirectory.appendingPathComponent("beaconwatch")
            process.arguments = ["run", "--config", "hsyco.ini"]
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            daemons.append((process, folder.appendingPathComponent("daemon.log")))
        }
        for daemon in daemons { try Eventually.start(daemon.process, loggingTo: daemon.log) }
        func log(_ daemon: (process: Process, log: URL)) -> String {
            (try? String(contentsOf: daemon.log, encoding: .utf8)) ?? ""
        }
        try await Eventually.until("every daemon to say where its web view is") {
            daemons.allSatisfy {
                let text = log($0)
                return text.contains("web view at http://127.0.0.1:8080/") || text.contains("web view not started")
            }
        }
        let stopped = daemons.filter { !$0.process.isRunning }.map { log($0) }
        #expect(stopped.isEmpty, "\(stopped)")
        let serving = daemons.filter { log($0).contains("web view at http://127.0.0.1:8080/") }
        #expect(serving.count == 1)
        for daemon in daemons where !log(daemon).contains("web view at") {
            let said = log(daemon).split(separator: "\n").filter { $0.contains("web view not started") }
            #expect(said.count == 1 && said[0].contains("127.0.0.1:8080"), "\(log(daemon))")
        }
        for daemon in daemons { kill(daemon.process.processIdentifier, SIGTERM) }
        try await Eventually.until("the daemons to stop") { daemons.allSatisfy { !$0.process.isRunning } }
        let failed = daemons.filter { $0.process.terminationStatus != 0 }.map { log($0) }
        #expect(failed.isEmpty, "\(failed)")
    }
}
