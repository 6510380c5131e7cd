import Foundation
import TestSupport
import Testing

/// `advertise` and `calibrate` through the binary (docs/behaviour.md §11).
@Suite struct RadioCommandTests {
    static let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"

    @Test func advertisePrintsTheThreeCommands() async throws {
        let run = try await DecodeCommandTests.beaconwatch([
            "advertise", "--uuid", Self.uuid.lowercased(), "--major", "1", "--minor", "2", "--power", "-59",
            "--interval", "152.5", "--print-hci",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.stdout.split(separator: "\n") == [
                // 152.5 ms = 244 units of 0.625 ms = 0x00F4.
                "LE Set Advertising Parameters: 01 06 20 0f f4 00 f4 00 03 00 00 00 00 00 00 00 00 07 00",
                "LE Set Advertising Data: 01 08 20 20 1e 02 01 06 1a ff 4c 00 02 15 e2 c5 6d b5 df fb 48 d2 b0 60 d0 f5 a7 10 96 e0 00 01 00 02 c5 00",
                "LE Set Advertising Enable: 01 0a 20 01 01",
            ])
    }

    @Test(arguments: [
        ["--uuid", "nope", "--major", "1", "--minor", "2", "--power", "-59"],
        ["--uuid", uuid, "--major", "70000", "--minor", "2", "--power", "-59"],
        ["--uuid", uuid, "--major", "1", "--minor", "2", "--power", "-200"],
        ["--uuid", uuid, "--major", "1", "--minor", "2", "--power", "-59", "--interval", "10"],
    ])
    func badAdvertiseArgumentsExit2(_ arguments: [String]) async throws {
        let run = try await DecodeCommandTests.beaconwatch(["advertise"] + arguments + ["--print-hci"])
        #expect(run.status == 2)
        #expect(!run.stderr.isEmpty)
    }

    @Test func advertisingWithoutBluetoothExits3() async throws {
        guard !FileManager.default.fileExists(atPath: "/sys/class/bluetooth") else { return }
        let run = try await DecodeCommandTests.beaconwatch([
            "advertise", "--uuid", Self.uuid, "--major", "1", "--minor", "2", "--power", "-59", "--adapter", "hci0",
        ])
        #expect(run.status == 3)
        #expect(run.stderr.contains("AF_BLUETOOTH"))
    }

    static func folder(trace: [(Double, Int, Int)]) throws -> URL {
        let folder = try scratchFolder("calibrate")
        try
            "LocationBaseBeacon.17081 = \(uuid),1,17081\nLocationBeaconName.17081 = Desk\nLocationBaseBeacon.2 = \(uuid),1,2\n"
            .write(to: folder.appendingPathComponent("hsyco.ini"), atomically: true, encoding: .utf8)
        let lines = trace.map { time, minor, rssi in
            #"{"t": \#(1_700_000_000 + time), "uuid": "\#(uuid)", "major": 1, "minor": \#(minor), "rssi": \#(rssi)}"#
        }
        try (lines.joined(separator: "\n") + "\n").write(
            to: folder.appendingPathComponent("held.jsonl"), atomically: true, encoding: .utf8)
        return folder
    }

    @Test func calibrateFromATracePrintsTheMedianAndTheLine() async throws {
        // 17081 at 1 m from t = 3 on; the last two are past the 10 s window; minor 2 is another beacon.
        var trace: [(Double, Int, Int)] = [(1, 2, -40)]
        for (index, rssi) in [-60, -62, -61, -70, -59, -61, -63, -60, -61, -62, -61].enumerated() {
            trace.append((3 + Double(index), 17081, rssi))
        }
        trace += [(14, 17081, -90), (15, 17081, -90)]
        let run = try await DecodeCommandTests.beaconwatch(
            ["calibrate", "--id", "17081", "--seconds", "10", "--config", "hsyco.ini", "--source", "trace:held.jsonl"],
            in: Self.folder(trace: trace))
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.stdout == """
                17081 (\(Self.uuid):1:17081) "Desk": 11 sightings in 10.0 s, median RSSI -61 dBm (min -70, max -59)
                LocationBeaconPower.17081 = -61

                """)
    }

    @Test func calibratingAnUnknownIDIsBadInputAndABeaconNeverHeardAFailure() async throws {
        let folder = try Self.folder(trace: [(0, 2, -50)])
        let unknown = try await DecodeCommandTests.beaconwatch(
            ["calibrate", "--id", "999", "--config", "hsyco.ini", "--source", "trace:held.jsonl"], in: folder)
        #expect(unknown.status == 2)
        #expect(unknown.stderr.contains("no beacon with Location ID '999'"))
        let unheard = try await DecodeCommandTests.beaconwatch(
            ["calibrate", "--id", "17081", "--config", "hsyco.ini", "--source", "trace:held.jsonl"], in: folder)
        #expect(unheard.status == 1)
        #expect(unheard.stderr.contains("no advertisement of 17081"))
        #expect(unheard.stderr.split(separator: "\n").count == 1)
    }
}
