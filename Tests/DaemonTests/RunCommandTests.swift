import Foundation
import TestSupport
import Testing

@Suite struct RunCommandTests {
    static func folder(_ ini: String) throws -> URL {
        let folder = try scratchFolder("run")
        try ("LocationBaseBeacon.101 = E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,1,1\nState.database = state.sqlite\n" + ini)
            .write(to: folder.appendingPathComponent("hsyco.ini"), atomically: true, encoding: .utf8)
        return folder
    }

    @Test func anUnreachableBrokerIsSaidAndTheRunStillWritesItsEvents() async throws {
        let line =
            #"{"t": 1700000000, "uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "major": 1, "minor": 1, "rssi": -59}"#
        let run = try await DecodeCommandTests.beaconwatch(
            [
                "run", "--web-listen", "", "--config", "hsyco.ini", "--source", "trace:-", "--events", "-",
                "--log-level", "warning",
            ],
            stdin: line + "\n", in: Self.folder("MQTT.host = 127.0.0.1\nMQTT.port = 9\n"))
        #expect(run.status == 0)
        #expect(run.stderr.contains("MQTT broker 127.0.0.1:9 is not reachable yet"))
        #expect(run.stderr.contains("were not acknowledged before stopping"))
        #expect(run.stdout.contains(#""type":"location""#))
    }

    /// A broker name that does not resolve (yet: at boot the resolver may start after the daemon)
    /// is a broker not there, retried with backoff, not an error that ends the run.
    @Test func aBrokerNameThatDoesNotResolveIsRetriedLikeAnAbsentBroker() async throws {
        let line =
            #"{"t": 1700000000, "uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "major": 1, "minor": 1, "rssi": -59}"#
        let folder = try Self.folder("MQTT.host = broker.nonexistent.invalid\n")
        let run = try await DecodeCommandTests.beaconwatch(
            [
                "run", "--web-listen", "", "--config", "hsyco.ini", "--source", "trace:-", "--events", "-",
                "--log-level", "warning",
            ],
            stdin: line + "\n", in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.stderr.contains("MQTT broker broker.nonexistent.invalid:1883 is not reachable yet"), "\(run.stderr)")
        #expect(run.stderr.contains("were not acknowledged before stopping; sent at the next start"))
        #expect(run.stdout.contains(#""type":"location""#))
    }

    @Test func runOnAnAdapterWithoutKernelSupportExits3() async throws {
        guard !FileManager.default.fileExists(atPath: "/sys/class/bluetooth") else { return }
        let run = try await DecodeCommandTests.beaconwatch(
            ["run", "--web-listen", "", "--config", "hsyco.ini", "--source", "hci0", "--no-mqtt"], in: Self.folder(""))
        #expect(run.status == 3)
        #expect(run.stderr.contains("AF_BLUETOOTH"))
        // One line, with the fix for a daemon whose scanners hear the tags (issue 72).
        let message = try #require(run.stderr.split(separator: "\n").last { $0.contains("AF_BLUETOOTH") })
        #expect(message.contains("Monitor.source = none"), "\(run.stderr)")
    }

    /// A clean stop closes the state database: its -wal and -shm files are gone (issue 47: a stopped
    /// daemon left them behind), and what it kept is in the database itself.
    @Test func aCleanStopLeavesTheDatabaseWithoutItsWALFiles() async throws {
        let folder = try Self.folder("Monitor.mode = foreground\n")
        let line =
            #"{"t": 1700000000, "uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "major": 1, "minor": 1, "rssi": -59}"#
        let run = try await DecodeCommandTests.beaconwatch(
            [
                "run", "--web-listen", "", "--config", "hsyco.ini", "--source", "trace:-", "--no-mqtt", "--log-level",
                "error",
            ],
            stdin: line + "\n", in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(files.contains("state.sqlite"))
        #expect(!files.contains("state.sqlite-wal") && !files.contains("state.sqlite-shm"), "\(files)")
        // What the run committed is in the file itself: the same sighting replayed from it is no news.
        let fresh = try await DecodeCommandTests.beaconwatch(
            ["replay", "--config", "hsyco.ini", "trace:-"], stdin: line + "\n", in: folder)
        let again = try await DecodeCommandTests.beaconwatch(
            ["replay", "--config", "hsyco.ini", "--state", "state.sqlite", "trace:-"], stdin: line + "\n", in: folder)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(
            fresh.stdout.contains(#""type":"enter""#) && !again.stdout.contains(#""type":"enter""#), "\(again.stdout)")
    }

    @Test func runAppendsItsEventsToAFile() async throws {
        let folder = try Self.folder("Monitor.mode = foreground\n")
        let line =
            #"{"t": 1700000000, "uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "major": 1, "minor": 1, "rssi": -59}"#
        for _ in 0..<2 {
            let run = try await DecodeCommandTests.beaconwatch(
                [
                    "run", "--web-listen", "", "--config", "hsyco.ini", "--source", "trace:-", "--events", "out.jsonl",
                    "--log-level",
                    "error",
                ],
                stdin: line + "\n", in: folder)
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.stdout.isEmpty)
        }
        let lines = try String(contentsOf: folder.appendingPathComponent("out.jsonl"), encoding: .utf8)
            .split(separator: "\n")
        // First start: monitoring, 3 enters, location near, nearest 101. Second: monitoring only:
        // where the wearer is (the regions inside), the class and the nearest are all kept, so a
        // restart enters nothing again.
        #expect(lines.count == 7)
        #expect(lines.filter { $0.contains(#""type":"enter""#) }.count == 3)
        #expect(lines.filter { $0.contains(#""type":"location""#) }.count == 1)
        #expect(lines.filter { $0.contains(#""type":"nearest""#) }.count == 1)
    }
}
