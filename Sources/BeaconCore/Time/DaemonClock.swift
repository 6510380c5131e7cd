/// The clock the shells read: the wall clock (outputs' times, schedules, local days) and, beside
/// it, a clock that only moves forward (how much time passed, whatever was done to the wall
/// clock). Every reading of the time outside the pure core goes through one of these, handed
/// down from the command that started the work: ``system`` in the daemon, a scripted one in
/// tests and in the benchmarks' virtual runs.
package struct DaemonClock: Sendable {
    /// The wall clock.
    package var now: @Sendable () -> Timestamp
    /// Time elapsed since an arbitrary origin, never going back.
    package var elapsed: @Sendable () -> Duration

    package init(now: @escaping @Sendable () -> Timestamp, elapsed: @escaping @Sendable () -> Duration) {
        self.now = now
        self.elapsed = elapsed
    }

    /// The machine's clocks. A wall clock outside the range a timestamp holds (year 1 or
    /// 10000) reads as the epoch.
    package static let system: DaemonClock = {
        let origin = ContinuousClock.now
        return DaemonClock(
            now: { Timestamp(.now) ?? Timestamp(microseconds: 0) }, elapsed: { ContinuousClock.now - origin })
    }()
}

/// Decodes the HCI events of a live source as they come, stamping each advertisement with its
/// arrival: the one loop body of every command that listens to a radio (`run`, `forward`,
/// `decode`, `calibrate`).
package struct LiveAdvertisements {
    package private(set) var decoder = AdvertisingReportDecoder()

    package init() {}

    /// Waits up to `timeout` for `source`'s next event (a readable `wake` ends the wait early),
    /// reads the time with `stamp` when it came (a ``DaemonClock``'s `now`, or a run's own clock)
    /// and hands each advertisement in it to `each` with that instant. Returns whether an event
    /// came.
    @discardableResult
    package mutating func next(
        from source: any HCIEventSource, timeout: Duration, wake: Int32?, stamp: () -> Timestamp,
        _ each: (Timestamp, Advertisement) throws -> Void
    ) throws -> Bool {
        guard let event = try source.nextEvent(timeout: timeout, wake: wake) else { return false }
        let time = stamp()
        try decoder.decode(event: event) { try each(time, $0) }
        return true
    }
}
