import Logging
import BeaconCore
import BeaconConfiguration
import Engine
import Fleet
import Foundation
import Persistence
import RegionMonitor
import Rules
import Syscalls

/// Drives an ``Engine`` from a live HCI event source on a clock: the loop of `run --source hciN`.
///
/// Between events it waits in the source until the engine's next timer, so exits fire on time
/// with no advertisement at all; the control's orders wake the wait. A daemon with no radio of its
/// own (`Monitor.source = none`) has no source: it waits on the control alone. The clock is
/// injected: the real one in the daemon, a scripted one in tests.
package struct LiveRun {
    package var configuration: Configuration
    /// The wall clock: outputs' times, schedules, dwell days.
    package var now: () -> Timestamp
    /// A clock that only moves forward, at the pace of time (suspended time included): how much
    /// time passed between two readings of ``now``, whatever was done to the wall clock.
    package var elapsed: () -> Duration
    /// The regions of `Rules.source` (``RulesSource``); `nil` without one.
    package var rules: [RuleRegion]?
    /// Carries out the rules' server calls and `Script.server` runs, each on a thread of its own;
    /// the answer comes back through the control, so sightings go on meanwhile.
    package var hook: ServerHook
    /// Where what the devices refuse (undeclared, over the cap, stale) is counted and said.
    package var refusals: Refusals

    /// The longest wait with no timer due: long, since nothing needs the loop meanwhile (the
    /// wall clock is read again when it wakes).
    static let longestWait = Duration.seconds(60)

    /// A wall clock reading that differs from the elapsed time since the last one by more than
    /// this was stepped (NTP slews by far less).
    static let stepThreshold: Int64 = 2_000_000

    /// A run on `now` and `elapsed` (the machine's ``DaemonClock/system`` unless given).
    package init(
        configuration: Configuration, now: @escaping () -> Timestamp = DaemonClock.system.now,
        elapsed: (() -> Duration)? = nil
    ) {
        self.configuration = configuration
        self.now = now
        self.elapsed = elapsed ?? DaemonClock.system.elapsed
        hook = ServerHook(configuration: configuration, logger: .silent)
        refusals = Refusals(maxDevices: configuration.fleet?.maxDevices ?? 0, maxAge: configuration.fleet?.maxAge ?? 30)
    }

    /// Runs until `shouldStop` (checked after each wait) or `control` says so (which wakes it), carrying
    /// out `control`'s orders as they come. Outputs are kept in `store` before they are handed to
    /// `output`; `beforeWaiting` runs whenever the loop is about to wait (flush what was written).
    package func run(
        source: HCIEventSource?,
        store: StateStore,
        output: (MonitorOutput) throws -> Void,
        sinks: [any OutputSink] = [],
        control: EngineControl? = nil,
        shouldStop: () -> Bool = { false },
        beforeWaiting: () -> Void = {},
        logger: Logger = .silent
    ) throws {
        let engine = try Engine.resuming(configuration, from: store, rules: rules)
        try withoutActuallyEscaping(output) { output in
            // With a control, server calls run beside the loop and their answers come back as orders.
            var requests = EngineDriver.Requests.inline(hook)
            if let control {
                requests = .background(hook) { device, answer, call in
                    control.post(.answer(device: device, answer, call: call))
                }
            }
            // Every fleet device of an earlier run goes on from its kept state.
            let kept = configuration.fleet == nil && configuration.scanners == nil ? [:] : try store.keptFleet()
            var devices = Devices(
                own: engine, configuration: configuration, rules: rules, ruleSettings: .resolve(configuration),
                kept: kept)
            // The scanners' calibration goes on from what was kept (a cluster ships it too:
            // docs/behaviour.md §21.3).
            if configuration.scanners != nil {
                devices.resumeCalibration(from: try store.keptCalibration())
                devices.resumeFingerprints(try store.keptFingerprints())
            }
            var driver = EngineDriver(devices: devices, store: store, sinks: sinks, requests: requests, output: output)
            driver.logger = logger
            driver.elapsed = elapsed
            var radio = LiveAdvertisements()
            var last = (wall: now(), elapsed: elapsed())
            // The wall clock, with a step since the last reading taken out of the engine's
            // instants first: a step is not time passing.
            func clock() -> Timestamp {
                let reading = (wall: now(), elapsed: elapsed())
                let passed = (reading.elapsed - last.elapsed).microseconds
                let expected = last.wall.microseconds.addingReportingOverflow(passed).partialValue
                let (step, overflow) = reading.wall.microseconds.subtractingReportingOverflow(expected)
                last = reading
                if !overflow, step.magnitude > Self.stepThreshold.magnitude {
                    driver.shiftClock(by: step)
                    logger.warning(
                        Logger.Message(
                            stringLiteral:
                                "the wall clock stepped by \(String(format: "%+.1f", Double(step) / 1_000_000)) s; "
                                + "visits, silences and timers keep their lengths"))
                }
                return max(reading.wall, driver.engine.now)
            }
            try driver.start(at: last.wall)
            if let shift = driver.devices.keptShift {
                logger.warning(
                    Logger.Message(
                        stringLiteral:
                            "the state kept at the last stop is \(String(format: "%.1f", Double(-shift) / 1_000_000)) s ahead "
                            + "of the wall clock (it was set back while the daemon was stopped); the kept visits, "
                            + "silences and timers are moved back with it"))
            }
            try driver.commit()
            // The run is built: a scan enabled only now has no report wait for it (each is
            // stamped when read, docs/live-radio.md).
            try source?.start()
            while !shouldStop(), control?.isStopping != true {
                let current = clock()
                try driver.advance(to: current)
                // An order someone waits on (the web API's learn) is answered once committed.
                var answers: [(reply: @Sendable (EngineControl.Answer) -> Void, answer: EngineControl.Answer)] = []
                for posted in control?.take() ?? [] {
                    let refusal = try driver.handle(posted.order, at: current)
                    if let reply = posted.reply {
                        answers.append((reply, refusal.map(EngineControl.Answer.refused) ?? .taken))
                    } else if let refusal, let device = posted.order.device ?? refusal.learnProblem.map({ _ in "" }),
                        let line = refusals.refused(refusal, device: device)
                    {
                        logger.warning("\(line)")
                    }
                }
                try driver.commit()
                for (reply, answer) in answers { reply(answer) }
                // Outputs that waited for the broker (a cluster's active), once it holds their steps.
                if driver.isHolding { try driver.release() }
                control?.answerQueries(driver)
                // Until the engine's next timer (a long while when none): a command, an answer or
                // a stop wakes the wait at once.
                var wait = Self.longestWait
                if let due = driver.nextWake {
                    let (until, overflow) = due.microseconds.subtractingReportingOverflow(current.microseconds)
                    wait = min(wait, .microseconds(overflow ? (until < 0 ? Int64.max : 0) : max(0, until)))
                }
                // Steps that could not be written are tried again without waiting for input.
                if driver.failing != nil { wait = min(wait, EngineDriver.retryInterval) }
                beforeWaiting()
                // Each advertisement on the clock as read when it came: `clock()` never goes back
                // but by a step it has just taken out of the engine, so a step noticed here puts
                // the advertisement on the new clock (with the loop's `current`, it would be stamped
                // on the old one and hold every output and timer there until the wall caught up).
                if let source {
                    let heard = try radio.next(
                        from: source, timeout: wait, wake: control?.wakeDescriptor, stamp: clock
                    ) { time, advertisement in try driver.handle(.daemon(.advertisement(advertisement)), at: time) }
                    if heard { try driver.commit() }
                } else if let wake = control?.wakeDescriptor {
                    // No radio of its own (`Monitor.source = none`, docs/behaviour.md §15): the
                    // wait ends at the engine's next timer or when the control wakes it (a fleet
                    // message, a command, a stop).
                    _ = try Syscall.waitReadable([wake], timeout: wait)
                } else {
                    Syscall.sleep(wait)
                }
            }
            try driver.finish()
        }
    }
}
