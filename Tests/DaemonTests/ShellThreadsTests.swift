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

    /// On a scripted clock a timer runs when the clock passes its deadline and not before: a
    /// marker due just before it runs in the same look of the timers' thread, and it has not.
    @Test func aTimerOnAScriptedClockRunsOnlyOnceTheClockPassesItsDeadline() async throws {
        let scripted = ScriptedClock()
        let fired = Mutex<[String]>([])
        for (name, delay) in [("deadline", 10), ("marker", 9)] {
            scripted.timers.after(.seconds(delay)) {
                fired.withLock { $0.append(name) }
                Eventually.changed()
            }
        }
        scripted.advance(by: .seconds(9))
        try await Eventually.until("the marker") { fired.withLock { $0 } == ["marker"] }
        scripted.advance(by: .seconds(1))
        try await Eventually.until("the deadline") { fired.withLock { $0 } == ["marker", "deadline"] }
    }

    /// An async sleep (the services' backoffs, the web view's pauses) ends when the scripted
    /// clock has passed it, however long it is on the machine's clock. (Until an instant: the
    /// sleeping task may start after the clock has moved.)
    @Test func aSleepEndsWhenTheScriptedClockHasPassedIt() async throws {
        let scripted = ScriptedClock()
        let woke = Atomic<Bool>(false)
        let marker = Atomic<Bool>(false)
        async let sleeper: Void = {
            try await scripted.timers.sleep(until: .seconds(3600))
            woke.store(true, ordering: .sequentiallyConsistent)
            Eventually.changed()
        }()
        scripted.timers.at(.seconds(3599)) {
            marker.store(true, ordering: .sequentiallyConsistent)
            Eventually.changed()
        }
        scripted.advance(by: .seconds(3599))
        try await Eventually.until("the marker") { marker.load(ordering: .sequentiallyConsistent) }
        let early = woke.load(ordering: .sequentiallyConsistent)
        #expect(!early)
        scripted.advance(by: .seconds(1))
        try await sleeper
        let late = woke.load(ordering: .sequentiallyConsistent)
        #expect(late)
    }

    /// A cancelled sleep (a graceful shutdown) ends at once with `CancellationError`, the clock
    /// standing still.
    @Test func aCancelledSleepEndsAtOnce() async throws {
        let scripted = ScriptedClock()
        let outcome = await withTaskGroup(of: String.self) { group in
            group.addTask {
                do {
                    try await scripted.timers.sleep(for: .seconds(3600))
                    return "slept"
                } catch is CancellationError {
                    return "cancelled"
                } catch {
                    return "\(error)"
                }
            }
            group.cancelAll()
            return await group.next()
        }
        #expect(outcome == "cancelled")
        #expect(scripted.elapsed == .zero)
    }

    /// Cancelled timers do not stay in the queue until their deadline: a thousand hour-long
    /// timers set and cancelled leave at most the compaction's floor behind.
    @Test func cancelledTimersDoNotPileUp() {
        let scripted = ScriptedClock()
        for _ in 0..<1000 {
            let id = scripted.timers.after(.seconds(3600)) {}
            scripted.timers.cancel(id)
        }
        #expect(scripted.timers.queued <= 64, "\(scripted.timers.queued) entries kept")
    }

    /// A long wait woken by every change (the MQTT service waits an hour for a connection while
    /// each delivered event is a change) holds one timer in all, not one per wake-up: memory
    /// stays flat through an outage (issue 38).
    @Test func aLongWaitWokenTenThousandTimesHoldsOneTimer() async throws {
        let scripted = ScriptedClock()
        let awaitable = Awaitable(timers: scripted.timers)
        let count = Atomic<Int>(0)
        async let waited = awaitable.wait(within: .seconds(3600)) {
            count.load(ordering: .sequentiallyConsistent) >= 10_000
        }
        var most = 0
        for _ in 0..<10_000 {
            count.add(1, ordering: .sequentiallyConsistent)
            awaitable.changed()
            most = max(most, scripted.timers.queued)
            await Task.yield()
        }
        let held = await waited
        #expect(held)
        #expect(most <= 2, "\(most) timers queued at most")
        #expect(scripted.timers.pending == 0)
    }

    /// The wait's one timer ends it at its deadline on the scripted clock.
    @Test func aWaitEndsAtItsDeadline() async throws {
        let scripted = ScriptedClock()
        let awaitable = Awaitable(timers: scripted.timers)
        async let waited = awaitable.wait(within: .seconds(60)) { false }
        // The wait may start after the clock moved: move it until the wait has ended.
        let ended = Atomic<Bool>(false)
        async let moving: Void = {
            while !ended.load(ordering: .sequentiallyConsistent) {
                scripted.advance(by: .seconds(30))
                await Task.yield()
            }
        }()
        let held = await waited
        ended.store(true, ordering: .sequentiallyConsistent)
        await moving
        #expect(!held)
        #expect(scripted.elapsed >= .seconds(60))
    }
}
