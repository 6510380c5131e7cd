import ArgumentParser
import Daemon
import Foundation
import TestSupport

/// What the daemon costs when nothing happens (issue 19): `run` with its broker connection and
/// its web view up, a trace source that says nothing, its CPU time over some minutes.
struct IdleBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "idle",
        abstract: "CPU time per minute of an idle daemon (no advertisements), connected to a mosquitto on loopback.",
        discussion: """
            Runs `beaconwatch run` on a copy of etc/hsyco.ini with the MQTT broker on loopback, \
            the web view on a free port and a trace source (a FIFO) that never says anything. \
            After --settle seconds it reads the process's user and system time from \
            /proc/PID/stat, again after --minutes, and prints the difference per minute.
            """
    )

    @Option(help: "The beaconwatch binary.")
    var binary = ".build/release/beaconwatch"

    @Option(help: "Minutes measured.")
    var minutes = 5.0

    @Option(help: "Seconds after the start before measuring (the start's own work is not idling).")
    var settle = 5.0

    func run() throws {
        let broker = try Broker(persistent: false)
        defer { broker.kill(signal: SIGKILL, wait: false) }
        let folder = NSTemporaryDirectory() + "beaconwatch-idle-\(getpid())"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let example = try String(contentsOfFile: "etc/hsyco.ini", encoding: .utf8)
        let ini =
            example + """

                MQTT.host = 127.0.0.1
                MQTT.port = \(broker.port)
                State.database = \(folder)/state.sqlite
                """
        try ini.write(toFile: "\(folder)/hsyco.ini", atomically: true, encoding: .utf8)
        let fifo = "\(folder)/trace.fifo"
        guard mkfifo(fifo, 0o600) == 0 else { throw RuntimeFailure("cannot make \(fifo)") }
        // Open for reading and writing: the daemon's input stays open and silent.
        let writer = open(fifo, O_RDWR)
        defer { close(writer) }

        let daemon = Process()
        daemon.executableURL = URL(fileURLWithPath: binary)
        daemon.arguments = [
            "run", "--config", "\(folder)/hsyco.ini", "--source", "trace:\(fifo)", "--web-listen", "127.0.0.1:0",
            "--log-level", "warning",
        ]
        try daemon.run()
        defer {
            daemon.terminate()
            daemon.waitUntilExit()
        }
        Thread.sleep(forTimeInterval: settle)
        guard daemon.isRunning, let before = Self.cpuSeconds(of: daemon.processIdentifier) else {
            throw RuntimeFailure("the daemon did not stay up")
        }
        Thread.sleep(forTimeInterval: minutes * 60)
        guard daemon.isRunning, let after = Self.cpuSeconds(of: daemon.processIdentifier) else {
            throw RuntimeFailure("the daemon stopped while idle")
        }
        let perMinute = (after - before) / minutes
        print(
            "idle: `run` with MQTT and the web view, no advertisements, over \(format(minutes, 1)) min: "
                + "\(format(perMinute * 1000, 1)) ms CPU per minute (\(format(perMinute / 60 * 100, 3))% of a core)")
    }

    /// User plus system time of process `pid`, seconds.
    static func cpuSeconds(of pid: Int32) -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return nil }
        // After "pid (comm)": state is field 3; utime and stime are fields 14 and 15.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}
