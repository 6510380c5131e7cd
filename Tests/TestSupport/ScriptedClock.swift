import BeaconCore
import Synchronization
import Syscalls

/// A ``DaemonClock`` a test moves by hand, with the ``ShellTimers`` that run on it: nothing
/// falls due until the test says time passed.
package final class ScriptedClock: Sendable {
    /// The clock, for whatever reads the time.
    package let clock: DaemonClock
    /// Timers on ``clock``: closures and sleeps fall due as ``advance(by:)`` moves it.
    package let timers: ShellTimers

    package init() {
        let box = Box()
        clock = DaemonClock(
            now: { Timestamp(microseconds: box.reading.withLock { $0.wall }) },
            elapsed: { box.reading.withLock { $0.elapsed } })
        timers = ShellTimers(clock: clock)
        self.box = box
    }

    private final class Box: Sendable {
        let reading = Mutex<(wall: Int64, elapsed: Duration)>((1_700_000_000_000_000, .zero))
    }

    private let box: Box

    /// Time on the clock that only moves forward.
    package var elapsed: Duration { box.reading.withLock { $0.elapsed } }

    /// `duration` passes on both clocks; the timers look at once.
    package func advance(by duration: Duration) {
        box.reading.withLock {
            $0.elapsed += duration
            $0.wall &+= duration.microseconds
        }
        timers.clockMoved()
    }
}
