import BeaconCore
import BlueZ
import Testing

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
        var said: [String] = []
        let scanner = try LiveScanner(
            adapter: "hci1",
            say: { said.append($0) },
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
            said == [
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
                adapter: "hci0", say: { _ in }, open: { _ in adapter }, uptime: { timeline.now },
                sleep: { timeline.now += $0 })
        }
        #expect(adapter.closed)
    }
}
