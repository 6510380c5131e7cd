import BeaconCore
import BlueZ
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The live scanner over scripted adapters and a scripted clock: set-up, a removal, the retries
/// every 3 s, the return, and the stop.
@Suite struct LiveScannerTests {
    final class Timeline {
        var now = Duration.zero
    }

    /// Answers every command with Command Complete (success), then plays its script.
    final class ScriptedAdapter: HCITransport {
        let timeline: Timeline
        var script: [Result<[UInt8], BluetoothUnavailable>]
        var answers: [[UInt8]] = []
        var sent: [HCICommand] = []
        var closed = false

        init(_ timeline: Timeline, script: [Result<[UInt8], BluetoothUnavailable>]) {
            self.timeline = timeline
            self.script = script
        }

        func send(_ command: HCICommand) throws(BluetoothUnavailable) {
            sent.append(command)
            answers.append([0x0E, 0x04, 0x01, UInt8(command.opcode & 0xFF), UInt8(command.opcode >> 8), 0x00])
        }

        func nextEvent(timeout: Duration, wake: Int32?) throws(BluetoothUnavailable) -> [UInt8]? {
            if !answers.isEmpty { return answers.removeFirst() }
            guard !script.isEmpty else {
                timeline.now += timeout
                return nil
            }
            timeline.now += .milliseconds(100)
            return try script.removeFirst().get()
        }

        func close() { closed = true }
    }

    static let report: [UInt8] = [0x3E, 0x03, 0x02, 0x00, 0x00]

    @Test func aRemovedAdapterIsSaidOnceRetriedEveryThreeSecondsAndScannedAgainWhenBack() throws {
        let timeline = Timeline()
        let first = ScriptedAdapter(timeline, script: [.success(Self.report), .failure(.adapterRemoved("hci1"))])
        let second = ScriptedAdapter(timeline, script: [.success(Self.report + [1])])
        var opens: [Result<HCITransport, BluetoothUnavailable>] = [
            .success(first), .failure(.noSuchAdapter("hci1")), .failure(.noSuchAdapter("hci1")), .success(second),
        ]
        var attempts: [Duration] = []
        let log = LogCapture()
        let scanner = try LiveScanner(
            adapter: "hci1",
            logger: log.logger,
            open: { _ in
                attempts.append(timeline.now)
                return try opens.removeFirst().get()
            },
            uptime: { timeline.now },
            sleep: { timeline.now += $0 }
        )
        #expect(scanner.mode == .legacy)
        #expect(try scanner.nextEvent(timeout: .seconds(1)) == Self.report)
        #expect(try scanner.nextEvent(timeout: .seconds(1)) == nil)  // removed
        let removedAt = timeline.now
        #expect(first.closed)
        var next: [UInt8]?
        for _ in 0..<40 where next == nil { next = try scanner.nextEvent(timeout: .seconds(1)) }
        #expect(next == Self.report + [1])
        #expect(
            log.lines.withLock { $0.map(\.1) } == [
                BluetoothUnavailable.adapterRemoved("hci1").description,
                "Bluetooth adapter hci1 is back; scanning again",
            ])
        #expect(attempts.count == 4)
        #expect(
            Array(attempts.dropFirst()) == [removedAt + .seconds(3), removedAt + .seconds(6), removedAt + .seconds(9)])
        #expect(second.sent.map(\.name) == ["LE Set Scan Parameters", "LE Set Scan Enable"])
        scanner.stop()
        #expect(second.sent.last == .setScanEnable(false))
        #expect(second.closed)
    }

    /// `scanning: false` opens the adapter (a missing one throws at once) and sends nothing;
    /// `start()` enables the scan once and says so, and a second `start()` does nothing.
    @Test func aScannerMadeNotToScanEnablesItsScanOnlyWhenStarted() throws {
        let timeline = Timeline()
        let adapter = ScriptedAdapter(timeline, script: [.success(Self.report)])
        let log = LogCapture()
        let scanner = try LiveScanner(
            adapter: "hci2", logger: log.logger, scanning: false, open: { _ in adapter }, uptime: { timeline.now },
            sleep: { timeline.now += $0 })
        #expect(adapter.sent.isEmpty && scanner.mode == nil)
        try scanner.start()
        #expect(adapter.sent.map(\.name) == ["LE Set Scan Parameters", "LE Set Scan Enable"])
        #expect(scanner.mode == .legacy)
        #expect(log.lines.withLock { $0.map(\.1) } == ["scanning"])
        try scanner.start()
        #expect(adapter.sent.count == 2 && log.lines.withLock { $0.count } == 1)
        #expect(try scanner.nextEvent(timeout: .seconds(1)) == Self.report)
        #expect(throws: BluetoothUnavailable.self) {
            _ = try LiveScanner(
                adapter: "hci3", logger: log.logger, scanning: false,
                open: { _ throws(BluetoothUnavailable) in throw .noSuchAdapter("hci3") }, uptime: { timeline.now })
        }
    }

    @Test func aFailedSetUpClosesTheAdapterAndThrows() {
        let timeline = Timeline()
        final class Refusing: HCITransport {
            var closed = false
            var answer: [UInt8]?
            func send(_ command: HCICommand) throws(BluetoothUnavailable) {
                answer = [0x0E, 0x04, 0x01, UInt8(command.opcode & 0xFF), UInt8(command.opcode >> 8), 0x12]
            }
            func nextEvent(timeout: Duration, wake: Int32?) throws(BluetoothUnavailable) -> [UInt8]? {
                defer { answer = nil }
                return answer
            }
            func close() { closed = true }
        }
        let adapter = Refusing()
        #expect(throws: ScanSetupFailure.self) {
            _ = try LiveScanner(
                adapter: "hci0", logger: LogCapture().logger, open: { _ in adapter }, uptime: { timeline.now },
                sleep: { timeline.now += $0 })
        }
        #expect(adapter.closed)
    }
}

/// The H4 line's own words, where opening fails before any controller is met.
@Suite struct H4LineTests {
    @Test func aLineThatCannotBeOpenedSaysWhyInOneLine() throws {
        // A port nothing listens on: bind one, learn its number, close it.
        let refused = try #require(Radio("h4tcp:127.0.0.1:\(try Self.closedPort())"))
        let cases: [(Radio, String)] = [
            (refused, "Connection refused; start the controller's bridge"),
            (.uart(device: "/nonexistent/ttyACM9", baud: 1_000_000), "No such file or directory; check the device"),
            (.uart(device: "/dev/null", baud: 115_200), "is not a serial line"),
            (.h4tcp(host: "no-such-host.invalid", port: 9), "cannot find host no-such-host.invalid"),
        ]
        for (radio, words) in cases {
            do {
                _ = try H4Line(radio: radio)
                Issue.record("\(radio) opened")
            } catch {
                #expect(error.description.contains(words), "\(error)")
                #expect(!error.description.contains("\n"))
            }
        }
    }

    @Test func aLostLineIsSaidOnceAndOpenedAgain() throws {
        let timeline = LiveScannerTests.Timeline()
        let lost = BluetoothUnavailable.lineLost("h4tcp:127.0.0.1:9001", reason: "closed the line")
        let first = LiveScannerTests.ScriptedAdapter(timeline, script: [.failure(lost)])
        let second = LiveScannerTests.ScriptedAdapter(timeline, script: [.success(LiveScannerTests.report)])
        var opens: [HCITransport] = [first, second]
        let log = LogCapture()
        let scanner = try LiveScanner(
            adapter: "h4tcp:127.0.0.1:9001", logger: log.logger, open: { _ in opens.removeFirst() },
            uptime: { timeline.now }, sleep: { timeline.now += $0 })
        var next: [UInt8]?
        for _ in 0..<10 where next == nil { next = try scanner.nextEvent(timeout: .seconds(1)) }
        #expect(next == LiveScannerTests.report)
        #expect(
            log.lines.withLock { $0.map(\.1) } == [
                "the controller on h4tcp:127.0.0.1:9001 closed the line; opening it again every 3 s",
                "Bluetooth adapter h4tcp:127.0.0.1:9001 is back; scanning again",
            ])
    }

    static func closedPort() throws -> UInt16 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return UInt16(bigEndian: address.sin_port)
    }
}
