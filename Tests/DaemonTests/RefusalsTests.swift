import Daemon
import Testing

/// Garbage on the fleet's topics is said at most 10 times a minute, on the daemon's clock that
/// only moves forward (docs/fleet.md, "What the daemon says"); the next minute's first line
/// counts what was not.
@Suite struct RefusalsTests {
    @Test func garbageIsSaidTenTimesAMinuteAndTheRestCounted() {
        let refusals = Refusals()
        let first = (0..<13).map { refusals.garbage("bad \($0)", at: .seconds(30) + .milliseconds($0)) }
        #expect(first.prefix(10).map { $0 ?? "nothing" } == (0..<10).map { "bad \($0)" })
        #expect(first.dropFirst(10).allSatisfy { $0 == nil })
        // 59.9 s after the window opened: still the same minute.
        #expect(refusals.garbage("late", at: .milliseconds(89_900)) == nil)
        #expect(
            refusals.garbage("next", at: .seconds(90))
                == "(4 more fleet messages were ignored in the last minute) next")
        #expect(refusals.garbageCount == 15)
    }
}
