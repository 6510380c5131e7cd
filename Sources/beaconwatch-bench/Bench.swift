import ArgumentParser
import Foundation
import BeaconCore
import Daemon
import MQTT
import Synchronization

/// `scripts/bench`: release-build benchmarks, each printing rates from one run.
@main
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "beaconwatch-bench",
        abstract: "beaconwatch benchmarks (run them through scripts/bench, in a release build).",
        subcommands: [
            DecodeBench.self, PipelineBench.self, E2EBench.self, QualityBench.self, SoakBench.self, OutageBench.self,
            FleetBench.self, RoomsBench.self, WebBench.self, StateBench.self, DecodeCommandBench.self,
            ReplayCommandBench.self,
            IdleBench.self, GeofenceBench.self, FleetReplay.self, RoomQualityBench.self, PositionIngestBench.self,
            OccupancyBench.self, OccupancyIngestBench.self, RealRadioBench.self,
        ]
    )
}

/// HCI event bytes to advertisements, on one core, over a mixed corpus.
struct DecodeBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Decoded advertising reports per second on one core, from a mixed corpus of HCI events."
    )

    @Option(help: "Advertising reports to decode.")
    var reports = 30_000_000

    @Option(help: "A btsnoop capture whose HCI events are decoded instead of the built-in corpus.")
    var capture: String?

    func run() throws {
        let corpus = try capture.map(DecodeCorpus.init(capture:)) ?? DecodeCorpus(seed: 7)
        var decoder = AdvertisingReportDecoder()
        var checksum = 0
        // Warm up caches and branch predictors on one pass.
        for event in corpus.events { decoder.decode(event: event) { checksum &+= Int($0.beacon.minor) } }
        decoder = AdvertisingReportDecoder()

        let rounds = max(1, reports / corpus.reportCount)
        let clock = ContinuousClock()
        let elapsed = clock.measure {
            for _ in 0..<rounds {
                for event in corpus.events {
                    decoder.decode(event: event) { checksum &+= Int($0.beacon.minor) &+ Int($0.rssi) }
                }
            }
        }
        let seconds = elapsed.inSeconds
        let stats = decoder.statistics
        let rate = Double(stats.reports) / seconds
        print("decode: \(corpus.description)")
        print(
            "decode: \(stats.reports) reports (\(stats.beacons) beacons) in \(format(seconds, 3)) s on one core: "
                + "\(format(rate / 1e6, 2)) million reports/s, \(format(seconds / Double(stats.reports) * 1e9, 1)) ns/report"
        )
        print("decode: \(stats.summary) (checksum \(checksum & 0xFFFF))")
    }
}

/// A mix shaped like a busy office: mostly iBeacons, some AltBeacons, two-report events, extended
/// reports, other devices' advertisements, RSSI-less and malformed reports.
struct DecodeCorpus: CustomStringConvertible {
    var events: [[UInt8]] = []
    var reportCount = 0
    /// Where the events came from, when not made here.
    var source: String?

    /// The HCI events of a btsnoop capture, in memory (one report each, as
    /// `scripts/make-bench-capture` writes them).
    init(capture path: String) throws {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        guard case .success(let datalink) = BTSnoop.parseHeader(bytes) else {
            throw RuntimeFailure("\(path) is not a btsnoop capture")
        }
        var offset = BTSnoop.headerSize
        while case .success(let (record, next)) = BTSnoop.parseRecord(bytes, at: offset) {
            if let event = BTSnoop.event(in: record, datalink: datalink) { events.append(Array(event)) }
            offset = next
        }
        reportCount = events.count
        source = "\(events.count) HCI events of \(path)"
    }

    init(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        for index in 0..<1000 {
            let rssi = UInt8(bitPattern: Int8(-40 - Int(random.next() % 50)))
            let major = UInt16(random.next() % 8)
            let minor = UInt16(random.next() % 4000)
            switch index % 20 {
            case 0..<10:
                events.append(Self.legacy([Self.ibeacon(major: major, minor: minor)], rssi: rssi))
                reportCount += 1
            case 10, 11:
                events.append(Self.legacy([Self.altbeacon(major: major, minor: minor)], rssi: rssi))
                reportCount += 1
            case 12, 13:
                events.append(
                    Self.legacy(
                        [Self.ibeacon(major: major, minor: minor), Self.ibeacon(major: major, minor: minor &+ 1)],
                        rssi: rssi)
                )
                reportCount += 2
            case 14, 15:
                events.append(Self.extended(Self.ibeacon(major: major, minor: minor), rssi: rssi))
                reportCount += 1
            case 16, 17:
                events.append(Self.legacy([[0x02, 0x01, 0x06, 0x08, 0x09] + Array("Thermo1".utf8)], rssi: rssi))
                reportCount += 1
            case 18:
                events.append(Self.legacy([Self.ibeacon(major: major, minor: minor)], rssi: 0x7F))
                reportCount += 1
            default:
                var bad = Self.legacy([Self.ibeacon(major: major, minor: minor)], rssi: rssi)
                // The iBeacon structure's length (after 13 event and report bytes and the flags) runs past the data.
                bad[16] = 0x30
                events.append(bad)
                reportCount += 1
            }
        }
    }

    var description: String {
        if let source { return source }
        return "corpus of \(events.count) events, \(reportCount) reports: 50% iBeacon, 10% AltBeacon, 10% two-report "
            + "events, 10% extended, 10% other devices, 5% RSSI 127, 5% malformed"
    }

    static let uuid: [UInt8] = [
        0xAC, 0xFD, 0x16, 0x5E, 0xC0, 0xC0, 0x11, 0xE3, 0x9B, 0xBE, 0x1A, 0x51, 0x49, 0x32, 0xAC, 0x01,
    ]

    static func ibeacon(major: UInt16, minor: UInt16) -> [UInt8] {
        [0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15] + uuid
            + [UInt8(major >> 8), UInt8(major & 0xFF), UInt8(minor >> 8), UInt8(minor & 0xFF), 0xC5]
    }

    static func altbeacon(major: UInt16, minor: UInt16) -> [UInt8] {
        [0x02, 0x01, 0x06, 0x1B, 0xFF, 0x18, 0x01, 0xBE, 0xAC] + uuid
            + [UInt8(major >> 8), UInt8(major & 0xFF), UInt8(minor >> 8), UInt8(minor & 0xFF), 0xC4, 0x00]
    }

    static func legacy(_ datas: [[UInt8]], rssi: UInt8) -> [UInt8] {
        var parameters: [UInt8] = [0x02, UInt8(datas.count)]
        for data in datas {
            parameters += [0x03, 0x01, 0x0F, 0x0E, 0x0D, 0x0C, 0x0B, 0x0A, UInt8(data.count)] + data + [rssi]
        }
        return [0x3E, UInt8(parameters.count)] + parameters
    }

    static func extended(_ data: [UInt8], rssi: UInt8) -> [UInt8] {
        var parameters: [UInt8] = [
            0x0D, 0x01, 0x10, 0x00, 0x01, 0x0F, 0x0E, 0x0D, 0x0C, 0x0B, 0x0A, 0x01, 0x00, 0xFF, 0x7F, rssi,
        ]
        parameters += [0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, UInt8(data.count)] + data
        return [0x3E, UInt8(parameters.count)] + parameters
    }
}

func format(_ value: Double, _ decimals: Int) -> String {
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let rounded = (value * scale).rounded() / scale
    return "\(rounded)"
}

/// Starts `client` and waits (10 s at most) until it is connected and, with a filter, subscribed
/// to it at `qos`. Its later events are not needed: the bench's clients take their messages and
/// acknowledgements through callbacks, and a broker that keeps their session (the outage
/// benchmark's) keeps their subscriptions across its restart.
func connectBenchClient(_ client: MQTTClient, subscribing filter: String?, qos: Int32) async throws {
    try client.start()
    let ready = try await withThrowingTaskGroup(of: Bool.self) { group in
        group.addTask {
            for await event in client.events {
                switch event {
                case .connected(0):
                    guard let filter else { return true }
                    _ = try? client.subscribe(filter, qos: qos)
                case .subscribed: return true
                default: break
                }
            }
            return false
        }
        group.addTask {
            try await Task.sleep(for: .seconds(10))
            return false
        }
        let first = try await group.next() ?? false
        group.cancelAll()
        return first
    }
    guard ready else {
        throw RuntimeFailure("the bench's broker did not answer")
    }
}
