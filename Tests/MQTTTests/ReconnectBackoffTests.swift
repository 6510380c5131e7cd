import Syscalls
import Testing

/// docs/behaviour.md §10.1: after a failed attempt to reach the broker, wait 1 s, doubling to 60 s.
@Suite struct ReconnectBackoffTests {
    @Test func waitsOneSecondDoublingToSixty() {
        var backoff = ReconnectBackoff()
        let waits = (0..<9).map { _ in backoff.next() }
        #expect(waits == [1, 2, 4, 8, 16, 32, 60, 60, 60].map { Duration.seconds($0) })
    }

    @Test func anAcceptedConnectionStartsTheNextOutageFromOneSecond() {
        var backoff = ReconnectBackoff()
        for _ in 0..<5 { _ = backoff.next() }
        backoff.reset()
        #expect(backoff.next() == .seconds(1))
        #expect(backoff.next() == .seconds(2))
    }
}
