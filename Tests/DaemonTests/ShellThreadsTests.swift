import Foundation
import Synchronization
import Syscalls
import TestSupport
import Testing

/// The shells' threads (docs/architecture.md, "Threads"): the bounded pool that script runs and
/// server calls share, and the one timer thread.
@Suite struct ShellThreadsTests {
    /// Ten blocking jobs on a pool of three: three run at once, never more, and every job runs
    /// once the gate opens.
    @Test func aPoolRunsAtMostItsWidthAtOnceAndEveryJobInTheEnd() async throws {
        let pool = WorkerPool(width: 3, name: "test pool")
        let gate = try Wakeup()
        let counts = Mutex((running: 0, most: 0, done: 0))
        for _ in 0..<10 {
            pool.submit {
                counts.withLock {
                    $0.running += 1
                    $0.most = max($0.most, $0.running)
                }
                Eventually.changed()
                _ = try? Syscall.waitReadable([gate.descriptor], timeout: .seconds(120))
                counts.withLock {
                    $0.running -= 1
                    $0.done += 1
                }
                Eventually.changed()
            }
        }
        try await Eventually.until("three jobs running") { counts.withLock { $0.running } == 3 }
        #expect(pool.waiting == 7)
        gate.signal()
        try await Eventually.until("every job done") { counts.withLock { $0.done } == 10 }
        #expect(counts.withLock { $0.most } == 3)
    }

    /// Timers run in the order of their deadlines, whatever the order they were set in, and none
    /// before its delay.
    @Test func timersRunInDeadlineOrderAndNeverEarly() async throws {
        let fired = Mutex<[(Int, Duration)]>([])
        let start = ContinuousClock.now
        for delay in [300, 100, 200] {
            ShellTimers.shared.after(.milliseconds(delay)) {
                fired.withLock { $0.append((delay, ContinuousClock.now - start)) }
                Eventually.changed()
            }
        }
        try await Eventually.until("three timers") { fired.withLock { $0.count } == 3 }
        let order = fired.withLock { $0 }
        #expect(order.map(\.0) == [100, 200, 300])
        #expect(order.allSatisfy { delay, after in after >= .milliseconds(delay) }, "\(order)")
    }
}
