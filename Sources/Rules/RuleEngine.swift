import BeaconCore
import Foundation
import RegionMonitor

/// The `Rules.*` settings the engine works by (docs/behaviour.md §2.4), with `Monitor.timezone` and the
/// template values.
package struct RuleSettings: Sendable, Hashable {
    /// 0 = unlimited.
    package var maxNotificationsPerDay = 0
    package var autoServerNotify = true
    package var autoUserNotify = true
    /// Seconds for a `notify_server` call.
    package var serverTimeout: Double = 5
    /// `Script.server` is set: with `autoServerNotify` off, its exit status decides.
    package var serverScript = false
    /// Where days begin, for the daily cap.
    package var timeZone: TimeZone = .gmt
    package var values = TemplateValues()

    package init() {}
}

/// The Ubudu rule engine (docs/behaviour.md §7.2–§7.6): a state machine fed the monitor's outputs, driven by
/// the caller's clock, doing no I/O.
///
/// It sees each rule region's transitions (or, for a rule with `maximum_proximity`, the enter and
/// exit of the region's qualified presence), holds each event in the rule's latch, counts
/// accepted events per rule and per group, checks the conditions in order and emits `rule`,
/// `server` and `notification` outputs. What needs the outside world (an HTTP call, a
/// `Script.server` run) is an ``Action`` for the shell, whose ``ServerAnswer`` comes back through
/// ``answer(_:to:at:into:)``; evaluations after it wait, so outputs stay in order.
package struct RuleEngine: Sendable {
    /// Something the shell does for the engine, then answers with ``answer(_:to:at:into:)``.
    package enum Action: Sendable, Hashable {
        /// GET `url` within `timeout` seconds; answer with ``ServerAnswer/reply(status:body:)``,
        /// or ``ServerAnswer/failed(_:)`` for a timeout, a refused connection, a reply too large.
        case fetch(call: Int, url: String, timeout: Double)
        /// Run `Script.server` on `output` (the `server` output); answer ``ServerAnswer/enable``
        /// for exit status 0, else ``ServerAnswer/declined(_:)``.
        case runServerScript(call: Int, output: MonitorOutput)
    }

    /// A rule by its place in the document: region index, rule index (file order).
    struct RuleRef: Hashable, Comparable {
        var region: Int
        var rule: Int

        static func < (lhs: RuleRef, rhs: RuleRef) -> Bool { (lhs.region, lhs.rule) < (rhs.region, rhs.rule) }

        /// File order as one number: the order of latches expiring at one instant.
        var rank: UInt64 { UInt64(UInt32(truncatingIfNeeded: region)) << 32 | UInt64(UInt32(truncatingIfNeeded: rule)) }
    }

    /// An event held in a rule's latch until `due`.
    struct Latch: Hashable {
        var direction: Transition.Direction
        /// The transition it came from: a group counts one transition once.
        var cause: Int
        var due: Timestamp
    }

    /// An accepted event of a rule's trigger, counted and checked, waiting for its outputs.
    struct Evaluation: Hashable {
        var ref: RuleRef
        var count: Int
        var groupCount: Int?
        var reason: RuleReason?
    }

    package let regions: [RuleRegion]
    package let settings: RuleSettings
    /// The rule regions attached to each configured region, in file order.
    let attached: [Region: [Int]]
    /// The rule region of each geofence, by id (docs/behaviour.md §17).
    let fences: [String: Int]
    /// Each group's limits per trigger, written down: a change restarts the group's count.
    let groupFingerprints: [GroupKey: String]
    /// Whether any rule has `maximum_proximity` (and so looks at classes).
    package let proximityRules: Bool

    /// Counters and the day's notifications, as they are now.
    package private(set) var state: RuleState
    private var changes = RuleState()
    private var inside: Set<Region> = []
    private var classes: [BeaconID: Proximity] = [:]
    private var qualified: Set<RuleRef> = []
    private(set) var latches: [RuleRef: Latch] = [:]
    /// The latches' expiries, earliest first, rules of one instant in file order; an entry whose
    /// rule's latch is gone or due at another instant is stale and skipped.
    private var expiries = DeadlineQueue<RuleRef>()
    private var counted: [GroupKey: Int] = [:]
    private var cause = 0
    private var queue: [Evaluation] = []
    private var awaiting: Int?
    private var calls = 0
    private var actions: [Action] = []

    /// An engine for `regions` on `hierarchy`, from a kept `state`.
    package init(
        regions: [RuleRegion], hierarchy: Hierarchy, settings: RuleSettings, restored state: RuleState = .init()
    ) {
        self.regions = regions
        self.settings = settings
        self.state = state
        var attached: [Region: [Int]] = [:]
        var fences: [String: Int] = [:]
        var limits: [GroupKey: [String]] = [:]
        for (index, region) in regions.enumerated() {
            if let target = region.attachment(in: hierarchy) { attached[target, default: []].append(index) }
            if let geofence = region.geofence, fences[geofence.id] == nil { fences[geofence.id] = index }
            guard let group = region.group else { continue }
            for rule in region.rules {
                limits[GroupKey(group: group, trigger: rule.trigger), default: []].append(
                    Self.fingerprint(rule.minGroupEvents, rule.maxGroupEvents))
            }
        }
        self.attached = attached
        self.fences = fences
        groupFingerprints = limits.mapValues { $0.joined(separator: ",") }
        proximityRules = regions.contains { $0.rules.contains { $0.maximumProximity != nil } }
    }

    /// The triggers of a region's presence (a transition), and of a Zone's occupancy
    /// (docs/behaviour.md §23): what starts and what ends it.
    static let presenceTriggers = (enter: "on_entry", exit: "on_exit")
    static let occupancyTriggers = (enter: "occupied", exit: "vacant")

    static func fingerprint(_ minimum: Int, _ maximum: Int?) -> String {
        "\(minimum)-\(maximum.map(String.init) ?? "any")"
    }

    /// The earliest latch to expire (kept, as every sighting asks).
    package private(set) var nextDeadline: Timestamp?

    /// Every latch's expiry moved by `delta` microseconds: the wall clock was stepped, and no time
    /// passed (``Monitor/shiftClock(by:)``).
    package mutating func shiftClock(by delta: Int64) {
        guard delta != 0, !latches.isEmpty else { return }
        latches = latches.mapValues { latch in
            var moved = latch
            moved.due = latch.due.adding(microseconds: delta)
            return moved
        }
        expiries = DeadlineQueue()
        for (ref, latch) in latches { expiries.schedule(ref, at: latch.due.microseconds, rank: ref.rank) }
        settleDeadline()
    }

    /// Sets or clears rule `ref`'s latch, keeping ``nextDeadline``.
    private mutating func setLatch(_ latch: Latch?, for ref: RuleRef) {
        latches[ref] = latch
        if let latch { expiries.schedule(ref, at: latch.due.microseconds, rank: ref.rank) }
        settleDeadline()
    }

    /// Drops stale entries from the head of ``expiries`` and reads ``nextDeadline`` from it.
    private mutating func settleDeadline() {
        let latches = latches
        nextDeadline = expiries.earliestCurrent { due, ref in latches[ref]?.due.microseconds == due }
            .map(Timestamp.init(microseconds:))
    }

    /// Whether an evaluation waits for an ``Action``'s answer.
    package var isWaiting: Bool { awaiting != nil }

    /// Whether ``takeActions()`` or ``takeChanges()`` has anything: a step asks before taking.
    package var hasPendingWork: Bool { !actions.isEmpty || !changes.isEmpty }

    /// The actions asked for since the last call.
    package mutating func takeActions() -> [Action] {
        defer { actions.removeAll() }
        return actions
    }

    /// What changed in ``state`` since the last call: to be kept with the outputs of the step.
    package mutating func takeChanges() -> RuleState {
        defer { changes = RuleState() }
        return changes
    }

    /// Sees one output of the monitor (its transitions), at its own time.
    package mutating func observe(_ output: MonitorOutput, into outputs: inout [MonitorOutput]) {
        switch output {
        case .transition(let time, let transition):
            cause += 1
            if transition.direction == .enter {
                inside.insert(transition.region)
            } else {
                inside.remove(transition.region)
            }
            for index in attached[transition.region] ?? [] {
                for (rule, definition) in regions[index].rules.enumerated() {
                    let ref = RuleRef(region: index, rule: rule)
                    if let limit = definition.maximumProximity {
                        requalify(ref, limit: limit, target: transition.region, at: time, into: &outputs)
                    } else {
                        hold(transition.direction, for: ref, at: time, into: &outputs)
                    }
                }
            }
        case .occupancy(let time, let change):
            // A Zone's (or Area's) occupancy flipped (docs/behaviour.md §23): `occupied` and
            // `vacant` rules, latched as transitions are; a count change is no event.
            guard change.flipped, let indices = attached[change.region] else { return }
            cause += 1
            for index in indices {
                for rule in regions[index].rules.indices {
                    hold(
                        change.occupied ? .enter : .exit, for: RuleRef(region: index, rule: rule), at: time,
                        occupancy: true, into: &outputs)
                }
            }
        case .geofence(let time, let transition):
            // A geofence has no beacons: `maximum_proximity` does not apply to its rules.
            guard let index = fences[transition.id] else { return }
            cause += 1
            for rule in regions[index].rules.indices {
                hold(transition.direction, for: RuleRef(region: index, rule: rule), at: time, into: &outputs)
            }
        default:
            break
        }
    }

    /// Sees a beacon's computed class change: the qualified presence of `maximum_proximity`
    /// rules follows it, in either ranging mode (docs/behaviour.md §7.2).
    package mutating func observe(_ change: ProximityChange, into outputs: inout [MonitorOutput]) {
        guard proximityRules else { return }
        cause += 1
        let beacon = change.beacon
        classes[beacon] = change.proximity == .off ? nil : change.proximity
        for target in [Region.beacon(beacon), .zone(beacon.uuid, major: beacon.major), .area(beacon.uuid)] {
            for index in attached[target] ?? [] {
                for (rule, definition) in regions[index].rules.enumerated() {
                    guard let limit = definition.maximumProximity else { continue }
                    requalify(
                        RuleRef(region: index, rule: rule), limit: limit, target: target, at: change.time,
                        into: &outputs)
                }
            }
        }
    }

    /// Expires the latches due at or before `time`, in time order, then rules in file order.
    package mutating func advance(to time: Timestamp, into outputs: inout [MonitorOutput]) {
        while let (due, ref) = expiries.first, due <= time.microseconds, let latch = latches[ref] {
            setLatch(nil, for: ref)
            accept(latch.direction, for: ref, cause: latch.cause, at: latch.due)
            drain(at: latch.due, into: &outputs)
        }
    }

    /// The answer to action `call`: the waiting evaluation goes on, then those behind it.
    package mutating func answer(
        _ answer: ServerAnswer, to call: Int, at time: Timestamp, into outputs: inout [MonitorOutput]
    ) {
        guard awaiting == call, let head = queue.first else { return }
        awaiting = nil
        queue.removeFirst()
        let rule = regions[head.ref.region].rules[head.ref.rule]
        switch answer {
        case .enable: finish(head, action: rule.action, at: time, into: &outputs)
        case .notify(let action): finish(head, action: action, at: time, into: &outputs)
        case .disable: outputs.append(.rule(time, evaluation(head, reason: .serverDisabled)))
        case .failed(let why): outputs.append(.rule(time, evaluation(head, reason: .serverError, detail: why)))
        case .declined(let why): outputs.append(.rule(time, evaluation(head, reason: .declined, detail: why)))
        }
        drain(at: time, into: &outputs)
    }

    /// The qualified presence of a `maximum_proximity` rule: its region inside and its closest
    /// beacon at most `limit`.
    private mutating func requalify(
        _ ref: RuleRef, limit: Proximity, target: Region, at time: Timestamp, into outputs: inout [MonitorOutput]
    ) {
        let now = qualifies(target: target, limit: limit)
        guard now != qualified.contains(ref) else { return }
        if now { qualified.insert(ref) } else { qualified.remove(ref) }
        hold(now ? .enter : .exit, for: ref, at: time, into: &outputs)
    }

    private func qualifies(target: Region, limit: Proximity) -> Bool {
        guard inside.contains(target) else { return false }
        var closest: Proximity?
        for (beacon, value) in classes where target.contains(beacon) { closest = min(closest ?? value, value) }
        return closest.map { $0 <= limit } ?? false
    }

    /// An event of a rule's region: into the latch, or accepted at once with latch 0. A pending
    /// event is discarded by the next one.
    private mutating func hold(
        _ direction: Transition.Direction, for ref: RuleRef, at time: Timestamp, occupancy: Bool = false,
        into outputs: inout [MonitorOutput]
    ) {
        let rule = regions[ref.region].rules[ref.rule]
        let triggers = occupancy ? Self.occupancyTriggers : Self.presenceTriggers
        guard rule.trigger == triggers.enter || rule.trigger == triggers.exit else { return }
        if rule.latchTime == 0 {
            if latches[ref] != nil { setLatch(nil, for: ref) }
            accept(direction, for: ref, cause: cause, at: time)
            drain(at: time, into: &outputs)
        } else {
            setLatch(
                Latch(direction: direction, cause: cause, due: time.adding(seconds: Double(rule.latchTime))), for: ref)
        }
    }

    /// An accepted event: counted and checked when it is of the rule's trigger.
    private mutating func accept(_ direction: Transition.Direction, for ref: RuleRef, cause: Int, at time: Timestamp) {
        let region = regions[ref.region]
        let rule = region.rules[ref.rule]
        let triggers =
            Self.occupancyTriggers.enter == rule.trigger || Self.occupancyTriggers.exit == rule.trigger
            ? Self.occupancyTriggers : Self.presenceTriggers
        guard rule.trigger == (direction == .enter ? triggers.enter : triggers.exit) else { return }
        let key = RuleKey(region: region.countKey, rule: rule.id)
        let count = bump(&state.rules[key], fingerprint: Self.fingerprint(rule.minEvents, rule.maxEvents))
        changes.rules[key] = state.rules[key]
        var groupCount: Int?
        if let group = region.group {
            let key = GroupKey(group: group, trigger: rule.trigger)
            let fingerprint = groupFingerprints[key] ?? ""
            if counted[key] == cause, let counter = state.groups[key], counter.fingerprint == fingerprint {
                groupCount = counter.count
            } else {
                groupCount = bump(&state.groups[key], fingerprint: fingerprint)
                counted[key] = cause
                changes.groups[key] = state.groups[key]
            }
        }
        let reason = firstFailure(region, rule, count: count, groupCount: groupCount, at: time)
        queue.append(Evaluation(ref: ref, count: count, groupCount: groupCount, reason: reason))
    }

    private func bump(_ counter: inout RuleCounter?, fingerprint: String) -> Int {
        if counter?.fingerprint != fingerprint { counter = RuleCounter(count: 0, fingerprint: fingerprint) }
        counter!.count += 1
        return counter!.count
    }

    /// The conditions of docs/behaviour.md §7.4, in order.
    private func firstFailure(_ region: RuleRegion, _ rule: Rule, count: Int, groupCount: Int?, at time: Timestamp)
        -> RuleReason?
    {
        let cap = settings.maxNotificationsPerDay
        if cap > 0, notificationsToday(at: time).count >= cap { return .dailyCap }
        if let start = region.start, time < start { return .beforeStart }
        if let end = region.end, time > end { return .afterEnd }
        if !region.schedule.isOpen(at: time, in: region.timeZone ?? .gmt) { return .scheduleClosed }
        if count < rule.minEvents { return .minEvents }
        if let maximum = rule.maxEvents, count > maximum { return .maxEvents }
        if let groupCount {
            if groupCount < rule.minGroupEvents { return .minGroupEvents }
            if let maximum = rule.maxGroupEvents, groupCount > maximum { return .maxGroupEvents }
        }
        return nil
    }

    /// The day's notification count at `time`: zero on a new local day.
    func notificationsToday(at time: Timestamp) -> DayCount {
        let date = LocalDay(containing: time, in: settings.timeZone).date.description
        if let day = state.day, day.date == date { return day }
        return DayCount(date: date, count: 0)
    }

    /// Emits the outputs of the evaluations in the queue, until one waits for an answer.
    private mutating func drain(at time: Timestamp, into outputs: inout [MonitorOutput]) {
        while awaiting == nil, let head = queue.first {
            let region = regions[head.ref.region]
            let rule = region.rules[head.ref.rule]
            if let reason = head.reason {
                queue.removeFirst()
                outputs.append(.rule(time, evaluation(head, reason: reason)))
                continue
            }
            if let template = rule.notifyServer {
                let url = URLTemplate(template).expanded(id: region.id, values: settings.values)
                if settings.autoServerNotify {
                    guard url.hasPrefix("http://") || url.hasPrefix("https://") else {
                        queue.removeFirst()
                        outputs.append(
                            .rule(
                                time, evaluation(head, reason: .serverError, detail: "only http and https are called")))
                        continue
                    }
                    calls += 1
                    awaiting = calls
                    actions.append(.fetch(call: calls, url: url, timeout: settings.serverTimeout))
                    return
                }
                var server = ServerNotice(region: region.id, rule: rule.id, url: url)
                server.geofence = region.geofence != nil
                let notice = MonitorOutput.server(time, server)
                outputs.append(notice)
                if settings.serverScript {
                    calls += 1
                    awaiting = calls
                    actions.append(.runServerScript(call: calls, output: notice))
                    return
                }
            }
            queue.removeFirst()
            finish(head, action: rule.action, at: time, into: &outputs)
        }
    }

    /// The rule fired: docs/behaviour.md §7.6.
    private mutating func finish(
        _ head: Evaluation, action: RuleAction, at time: Timestamp, into outputs: inout [MonitorOutput]
    ) {
        let region = regions[head.ref.region]
        let rule = region.rules[head.ref.rule]
        outputs.append(.rule(time, evaluation(head, reason: nil)))
        guard let body = action.alertBody, !body.isEmpty else { return }
        var day = notificationsToday(at: time)
        day.count += 1
        state.day = day
        changes.day = day
        let cap = settings.maxNotificationsPerDay
        guard cap == 0 || day.count <= cap else { return }
        let url = action.openURL.map { URLTemplate($0).expanded(id: region.id, values: settings.values) }
        var notification = UserNotification(
            region: region.id, rule: rule.id, title: region.name, body: body, payload: action.payload, url: url,
            pbk: url == nil ? action.openPBK : nil, delivery: settings.autoUserNotify ? .automatic : .application)
        notification.geofence = region.geofence != nil
        outputs.append(.notification(time, notification))
    }

    private func evaluation(_ head: Evaluation, reason: RuleReason?, detail: String? = nil) -> RuleEvaluation {
        let region = regions[head.ref.region]
        let rule = region.rules[head.ref.rule]
        var evaluation = RuleEvaluation(
            region: region.id, rule: rule.id, trigger: rule.trigger, fired: reason == nil, reason: reason,
            detail: detail, count: head.count, groupCount: head.groupCount)
        evaluation.geofence = region.geofence != nil
        return evaluation
    }

    /// Numbers this engine's actions after `previous`'s, so that an answer still on its way to an
    /// engine that was replaced (a reload) is not taken for one of this engine's.
    package mutating func numberActions(after previous: RuleEngine?) {
        calls = max(calls, previous?.calls ?? 0)
    }

    /// Takes the regions inside (after a reload, carried over by the monitor without
    /// transitions) and the classes `previous` had seen, so that rules see the next transition as
    /// the monitor does; qualified presence is set quietly from them.
    package mutating func assumePresence(inside regions: Set<Region>, classesOf previous: RuleEngine?) {
        inside = regions
        if let previous {
            classes = previous.classes
            cause = previous.cause
        }
        qualified = []
        for (target, indices) in attached {
            for index in indices {
                for (rule, definition) in self.regions[index].rules.enumerated() {
                    guard let limit = definition.maximumProximity else { continue }
                    if qualifies(target: target, limit: limit) { qualified.insert(RuleRef(region: index, rule: rule)) }
                }
            }
        }
    }

    /// The engine on a new rules document (a refreshed URL source), going on from this one: the
    /// counts, the regions the user is in and the beacons' classes carry over; events held in
    /// latches or waiting for a server are dropped. Qualified presence is taken as it is, without
    /// events.
    package func replacingRegions(with regions: [RuleRegion], hierarchy: Hierarchy) -> RuleEngine {
        var next = RuleEngine(regions: regions, hierarchy: hierarchy, settings: settings, restored: state)
        next.assumePresence(inside: inside, classesOf: self)
        next.calls = calls
        return next
    }
}

/// An event held in a rule's latch (docs/behaviour.md §7.3), read for a person.
package struct PendingLatch: Sendable, Hashable {
    package var region: String
    package var rule: String
    package var direction: Transition.Direction
    /// When it is accepted, unless the opposite event comes first.
    package var due: Timestamp

    package init(region: String, rule: String, direction: Transition.Direction, due: Timestamp) {
        self.region = region
        self.rule = rule
        self.direction = direction
        self.due = due
    }
}

extension RuleEngine {
    /// The events held in latches now, soonest first.
    package var pendingLatches: [PendingLatch] {
        latches.sorted { ($0.value.due, $0.key) < ($1.value.due, $1.key) }.map { ref, latch in
            PendingLatch(
                region: regions[ref.region].id, rule: regions[ref.region].rules[ref.rule].id,
                direction: latch.direction, due: latch.due)
        }
    }
}

extension RuleEngine {
    /// Notifications sent on the local day (`Monitor.timezone`) of `time`.
    package func notificationCount(at time: Timestamp) -> Int { notificationsToday(at: time).count }
}
