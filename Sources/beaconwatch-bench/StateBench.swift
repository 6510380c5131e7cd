import ArgumentParser
import BeaconConfiguration
import BeaconCore
import Daemon
import Fleet
import Foundation
import Logging
import Persistence
import Synchronization
import Syscalls
import TestSupport

/// `/api/v1/state` of a daemon tracking a fleet, under `wrk` on loopback (docs/behaviour.md §16, issue 18).
struct StateBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "web-state",
        abstract: "Latency of /api/v1/state for a fleet of --devices devices, measured by wrk on loopback.",
        discussion: """
            A daemon with no radio of its own (its engine loop, its state database on disk) takes \
            one Theengs report per device, each device in one of 10 Zones; then wrk (Debian's \
            package) asks /api/v1/state from --connections connections for --seconds. The reading \
            of the engines is refreshed when outputs come or every second; each answer renders \
            every device.
            """
    )

    @Option(help: "Fleet devices.")
    var devices = 1000

    @Option(help: "wrk connections.")
    var connections = 10

    @Option(help: "wrk seconds.")
    var seconds = 10

    static let uuid = "5A4BCFCE-174E-4BAC-A814-092E77F6B7E5"

    func run() async throws {
        let folder = try scratchFolder("bench-web-state")
        var ini = """
            Monitor.userid = bench
            Monitor.source = none
            MQTT.host = 127.0.0.1
            Fleet.theengs = home/+/BTtoMQTT/#
            Fleet.maxDevices = \(devices)
            State.database = \(folder.path)/state.sqlite

            """
        for zone in 1...10 { ini += "LocationBaseBeacon.\(zone) = \(Self.uuid),\(zone),1\n" }
        let configuration = try Configuration.load(Array(ini.utf8), path: folder.path + "/bench.ini").get()
        let store = try StateStore(path: folder.path + "/state.sqlite")
        let control = EngineControl()
        let state = WebState(configuration: configuration, ownID: "bench", control: control)
        async let engine: Void = runOnThreadOfItsOwn(named: "bench engine") {
            defer { control.endQueries() }
            try LiveRun(configuration: configuration).run(
                source: nil, store: store, output: { _ in }, sinks: [state], control: control)
        }
        let filter = TopicFilter("home/+/BTtoMQTT/#")!
        for device in 0..<devices {
            let payload = Array(
                #"{"id":"0A:0B:0C:0D:0E:0F","mfid":"4c00","uuid":"\#(Self.uuid)","major":\#(device % 10 + 1),"minor":1,"txpower":-59,"rssi":-60}"#
                    .utf8)
            if case .success(let message?) = FleetMessage.parse(
                source: .theengs, filter: filter, topic: "home/tag-\(device)/BTtoMQTT/x", payload: payload)
            {
                control.post(message)
            }
        }
        var tracked = 0
        for _ in 0..<600 where tracked < devices + 1 {
            tracked = await state.current(maxAge: .zero).devices.count
        }
        guard tracked == devices + 1 else { throw RuntimeFailure("only \(tracked) devices are tracked") }

        let bound = Mutex<Int?>(nil)
        let server = WebService(
            settings: WebSettings(host: "127.0.0.1", port: 0, explicit: true),
            responder: WebResponder(state: state, token: nil), logger: Logger(label: "bench-web"),
            bound: { port in bound.withLock { $0 = port } })
        // Cancelled and awaited when this scope ends.
        async let _ = server.run()
        guard try await E2EBench.until(within: .seconds(10), { bound.withLock { $0 } != nil }),
            let port = bound.withLock({ $0 })
        else { throw RuntimeFailure("the web server did not start") }
        let size = try await HTTPProbe.request("GET", "/api/v1/state", port: port).body.utf8.count

        let wrk = Process()
        wrk.executableURL = URL(fileURLWithPath: "/usr/bin/wrk")
        wrk.arguments = [
            "-t2", "-c\(connections)", "-d\(seconds)s", "--latency", "http://127.0.0.1:\(port)/api/v1/state",
        ]
        let pipe = Pipe()
        wrk.standardOutput = pipe
        try wrk.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        wrk.waitUntilExit()
        control.stop()
        state.hub.close()
        _ = try? await engine

        func line(_ prefix: String) -> String {
            output.split(separator: "\n").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix(prefix) }
                .map { $0.trimmingCharacters(in: .whitespaces) } ?? "?"
        }
        print(
            "web-state: /api/v1/state of \(devices) devices (\(size / 1024) KiB), wrk -c\(connections) \(seconds) s: "
                + "\(line("50%")), \(line("99%")); \(line("Requests/sec"))")
    }
}
