import BeaconCore

/// `LocationAlert.<id> = range,strategy[,action[,title]]` (docs/behaviour.md §9.1).
package struct AlertDefinition: Sendable, Hashable {
    package enum Strategy: String, Sendable, Hashable, CaseIterable {
        /// Exactly that class.
        case equal = "="
        /// That class or closer.
        case atMost = "<="
        /// That class or farther, but not off.
        case atLeast = ">="
    }

    package var locationID: String
    package var range: Proximity
    package var strategy: Strategy
    package var action: String
    package var title: String?

    package init(locationID: String, range: Proximity, strategy: Strategy, action: String, title: String?) {
        self.locationID = locationID
        self.range = range
        self.strategy = strategy
        self.action = action
        self.title = title
    }

    /// Whether a beacon at `value` meets the alert's condition.
    package func holds(at value: Proximity) -> Bool {
        switch strategy {
        case .equal: value == range
        case .atMost: value <= range && value != .off
        case .atLeast: value >= range && value != .off
        }
    }
}

/// An alerted beacon's action status (docs/behaviour.md §9.1).
package enum AlertStatus: String, Sendable, Hashable {
    case waiting, inProgress, done
}

/// What an alerted beacon keeps across restarts: its status, and when a `done` one returns to
/// `waiting`.
package struct AlertRecord: Sendable, Hashable {
    package var status: AlertStatus
    package var resetAt: Timestamp?

    package init(status: AlertStatus, resetAt: Timestamp? = nil) {
        self.status = status
        self.resetAt = resetAt
    }
}

/// An `alert` output: an alert offered (`show`) or taken back (`remove`).
package struct AlertChange: Sendable, Hashable {
    package enum Action: String, Sendable, Hashable {
        case show, remove
    }

    package var action: Action
    package var locationID: String
    package var title: String?
    /// The definition's action (`popup` when not given).
    package var alertAction: String

    package init(action: Action, locationID: String, title: String?, alertAction: String) {
        self.action = action
        self.locationID = locationID
        self.title = title
        self.alertAction = alertAction
    }
}

/// The Connecthings alert strategies (docs/behaviour.md §9.1) as a state machine fed the computed classes
/// (``ProximityChange``), the app's `done` and `decline`, and the clock; no I/O.
///
/// One alert is in progress at a time. When none is, the closest ready beacon (condition holding,
/// status `waiting`) is offered: closest class first, then the smaller distance, then file order.
/// `decline` offers the next; `done` ends it. An in-progress beacon that is lost or stops meeting
/// its condition is removed and becomes `done`. A `done` beacon returns to `waiting`
/// `Alert.resetAfter` seconds after its condition stopped holding (if it holds again meanwhile,
/// the wait starts over when it next stops).
package struct AlertConsumer: Sendable {
    package let definitions: [AlertDefinition]
    package let resetAfter: Double
    private let index: [String: Int]
    private var storage: [AlertRecord]
    private var classes: [Proximity]
    private var meters: [Double?]
    private var inProgress: Int?
    private var changed: Set<Int> = []
    /// The resets of `done` alerts, earliest first; an entry whose alert's ``AlertRecord/resetAt``
    /// is another instant (or none) is stale and skipped.
    private var resets = DeadlineQueue<Int>()

    /// The earliest reset of a `done` alert.
    package private(set) var nextDeadline: Timestamp?

    /// Alerts for `definitions`, from kept records (by Location ID; an in-progress one was
    /// shown before the stop and is kept as `done`).
    package init(definitions: [AlertDefinition], resetAfter: Double, restored: [String: AlertRecord] = [:]) {
        self.definitions = definitions
        self.resetAfter = resetAfter
        var index: [String: Int] = [:]
        for (position, definition) in definitions.enumerated() { index[definition.locationID] = position }
        self.index = index
        storage = definitions.map { definition in
            guard var record = restored[definition.locationID] else { return AlertRecord(status: .waiting) }
            if record.status == .inProgress { record.status = .done }
            return record
        }
        classes = Array(repeating: .off, count: definitions.count)
        meters = Array(repeating: nil, count: definitions.count)
        for (position, record) in storage.enumerated() {
            if let reset = record.resetAt { resets.schedule(position, at: reset.microseconds) }
        }
        updateDeadline()
    }

    /// Each alerted beacon's record, by Location ID.
    package var records: [String: AlertRecord] {
        Dictionary(uniqueKeysWithValues: zip(definitions.map(\.locationID), storage))
    }

    /// Each alerted beacon's status, by Location ID.
    package var statuses: [String: AlertStatus] {
        Dictionary(uniqueKeysWithValues: zip(definitions.map(\.locationID), storage.map(\.status)))
    }

    /// Whether ``takeChanges()`` has anything.
    package var hasChanges: Bool { !changed.isEmpty }

    /// The records changed since the last call, by Location ID: to keep with the step's outputs.
    package mutating func takeChanges() -> [String: AlertRecord] {
        guard !changed.isEmpty else { return [:] }
        defer { changed.removeAll() }
        return Dictionary(uniqueKeysWithValues: changed.map { (definitions[$0].locationID, storage[$0]) })
    }

    /// Sees a beacon's computed class change (docs/behaviour.md §9.1: in either ranging mode).
    package mutating func observe(_ change: ProximityChange, into outputs: inout [MonitorOutput]) {
        guard let position = index[change.locationID] else { return }
        let time = change.time
        let held = definitions[position].holds(at: classes[position])
        classes[position] = change.proximity
        meters[position] = change.meters
        let holds = definitions[position].holds(at: change.proximity)
        if held && !holds {
            if inProgress == position {
                inProgress = nil
                outputs.append(.alert(time, self.change(position, .remove)))
                storage[position].status = .done
            }
            if storage[position].status == .done { setReset(position, time.adding(seconds: resetAfter)) }
            changed.insert(position)
        } else if holds && !held, storage[position].resetAt != nil {
            setReset(position, nil)
            changed.insert(position)
        }
        updateDeadline()
        offer(at: time, into: &outputs)
    }

    /// The app's answer to the alert in progress: `done` ends it, `decline` ends it and offers the
    /// next. A command for an alert that is not in progress changes nothing; returns whether it
    /// was taken.
    @discardableResult
    package mutating func command(_ action: String, id: String, at time: Timestamp, into outputs: inout [MonitorOutput])
        -> Bool
    {
        advance(to: time, into: &outputs)
        guard action == "done" || action == "decline", let position = index[id], inProgress == position else {
            return false
        }
        inProgress = nil
        storage[position].status = .done
        if !definitions[position].holds(at: classes[position]) { setReset(position, time.adding(seconds: resetAfter)) }
        changed.insert(position)
        updateDeadline()
        offer(at: time, into: &outputs)
        return true
    }

    /// Returns `done` alerts to `waiting` when their reset falls due.
    package mutating func advance(to time: Timestamp, into outputs: inout [MonitorOutput]) {
        guard let due = nextDeadline, due <= time else { return }
        while let (reset, position) = resets.popDue(atOrBefore: time.microseconds) {
            guard storage[position].resetAt?.microseconds == reset else { continue }
            storage[position] = AlertRecord(status: .waiting)
            changed.insert(position)
        }
        updateDeadline()
        offer(at: time, into: &outputs)
    }

    private mutating func offer(at time: Timestamp, into outputs: inout [MonitorOutput]) {
        guard inProgress == nil else { return }
        var best: Int?
        for position in definitions.indices
        where storage[position].status == .waiting && definitions[position].holds(at: classes[position]) {
            guard let current = best else {
                best = position
                continue
            }
            let closer =
                classes[position] < classes[current]
                || (classes[position] == classes[current]
                    && (meters[position] ?? .infinity) < (meters[current] ?? .infinity))
            if closer { best = position }
        }
        guard let best else { return }
        inProgress = best
        storage[best].status = .inProgress
        changed.insert(best)
        outputs.append(.alert(time, change(best, .show)))
    }

    private func change(_ position: Int, _ action: AlertChange.Action) -> AlertChange {
        let definition = definitions[position]
        return AlertChange(
            action: action, locationID: definition.locationID, title: definition.title,
            alertAction: definition.action)
    }

    /// Every `done` alert's reset moved by `delta` microseconds (the wall clock was stepped, and
    /// no time passed); the moved records are changes to keep.
    package mutating func shiftClock(by delta: Int64) {
        guard delta != 0 else { return }
        resets = DeadlineQueue()
        for position in storage.indices {
            guard let reset = storage[position].resetAt else { continue }
            setReset(position, reset.adding(microseconds: delta))
            changed.insert(position)
        }
        updateDeadline()
    }

    /// Sets or clears alert `position`'s reset, scheduling it.
    private mutating func setReset(_ position: Int, _ reset: Timestamp?) {
        storage[position].resetAt = reset
        if let reset { resets.schedule(position, at: reset.microseconds) }
    }

    /// Drops stale resets from the head of the queue and reads ``nextDeadline`` from it.
    private mutating func updateDeadline() {
        let storage = storage
        nextDeadline = resets.earliestCurrent { due, position in storage[position].resetAt?.microseconds == due }
            .map(Timestamp.init(microseconds:))
    }
}
