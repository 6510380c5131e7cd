/// One daemon's part in its cluster's election (docs/behaviour.md §21), as a value state machine:
/// what the broker says (the cluster connection up or down, the retained leader record) and the
/// clock in; the role and what to publish out. No I/O and no clock of its own: the shell feeds it.
///
/// The rules, the same on every daemon, so that a cluster ends with one active whatever order
/// things happen in:
/// - After connecting, a daemon waits ``settle`` for the retained record. A record of another
///   member makes it a standby; its own record (it was active before a restart) makes it active.
/// - With no record, an active daemon (reconnecting) publishes its own again after ``settle``; a
///   standby claims one epoch above the highest it has seen after twice that, so an active that
///   is still there is heard before a standby claims (a broker restart that lost the record does
///   not hand the cluster over).
/// - A claim is active once the broker echoes it back. Two claims at once: the later epoch wins,
///   and at the same epoch the smaller member id (``LeaderRecord/beats(_:)``); the winner
///   publishes its record again, the loser steps down and never takes its own echo for a win.
/// - The active's will clears the record when its connection dies; the standbys then claim.
/// - The active beats every ``beatEvery`` (twice the settle, half a keepalive); a standby that
///   hears neither a beat nor a record of the leader for ``silenceLimit`` (1.5 keepalives) takes
///   it for gone and claims, as when the record is cleared: a machine whose network went silent
///   is given up before the broker's keepalive (at least 5 s with libmosquitto) notices it.
/// - The active hears its own beats back; one that hears none for ``silenceLimit`` is cut off,
///   and a standby is taking over at that moment: it steps down (no output of its own past
///   that) and reconnects, to find out who leads (its own record back: it is the active again).
package struct ClusterElection: Sendable {
    /// The name of a ``State``: what the shell is told (``Action/role(_:)``) and asks.
    package enum Role: Sendable, Hashable {
        case standby
        /// Published its claim, waiting for the broker's echo.
        case claiming
        case active
    }

    /// The role, with what this daemon holds in it.
    package enum State: Sendable, Hashable {
        /// Not leading. `cutOff`: the record it was the active with when it found itself cut off,
        /// kept until it hears another member's record (which withdraws it): its own record back
        /// makes it the active again, but a standby neither publishes it again when the topic
        /// holds none nor holds it against another's claim.
        case standby(cutOff: LeaderRecord?)
        /// Published its claim, waiting for the broker's echo.
        case claiming(LeaderRecord)
        /// The active, with its record, when it beats next and when it last heard itself through
        /// the broker (its record, or its beat, back); both `nil` after a disconnect, until it
        /// hears its record (or, for the echo, its beat) back.
        case active(LeaderRecord, beatAt: Int64?, echoAt: Int64?)

        package var role: Role {
            switch self {
            case .standby: .standby
            case .claiming: .claiming
            case .active: .active
            }
        }
    }

    /// What the shell does.
    package enum Action: Sendable, Hashable {
        /// Publish `record` on the leader topic, retained, QoS 1.
        case publish(LeaderRecord)
        /// The role changed to this.
        case role(Role)
        /// The leader topic held something that is not a record: say it (it counts as none).
        case unreadable
        /// Publish the active's beat (its record), not retained, QoS 0.
        case beat(LeaderRecord)
        /// Drop the connection and connect again (the active found itself cut off).
        case reconnect
    }

    /// This daemon's member id.
    package let member: String
    /// Microseconds to wait for the retained record after connecting, or for an active's record
    /// after the record was cleared.
    package let settle: Int64
    package private(set) var state = State.standby(cutOff: nil)
    package private(set) var connected = false
    /// The leader record as last heard since the connection came up (`nil`: none, or none yet).
    package private(set) var leader: LeaderRecord?
    /// When to claim (or publish the active's record again) unless a record is heard first.
    package private(set) var claimAt: Int64?
    /// The last sign of another member's leadership (its record or its beat): a standby that
    /// hears none for ``silenceLimit`` claims.
    package private(set) var heardAt: Int64?
    /// The highest epoch heard.
    private var highest: UInt64 = 0
    /// Records of this member it gave up in this run: their echoes are not wins.
    private var withdrawn: Set<LeaderRecord> = []

    package init(member: String, settle: Int64) {
        self.member = member
        self.settle = settle
    }

    /// The name of ``state``.
    package var role: Role { state.role }

    /// This daemon's record: its claim, the active's, or the one a standby was cut off with.
    package var mine: LeaderRecord? {
        switch state {
        case .standby(let cutOff): cutOff
        case .claiming(let record), .active(let record, _, _): record
        }
    }

    /// This daemon's record while it claims or is active: what it publishes again when the topic
    /// holds none, and what it holds against another's claim (`nil` for a standby).
    private var held: LeaderRecord? {
        switch state {
        case .standby: nil
        case .claiming(let record), .active(let record, _, _): record
        }
    }

    /// When the active beats next.
    package var beatAt: Int64? {
        guard case .active(_, let beatAt, _) = state else { return nil }
        return beatAt
    }

    /// When the active last heard itself through the broker (its record, or its beat, back).
    package var echoAt: Int64? {
        guard case .active(_, _, let echoAt) = state else { return nil }
        return echoAt
    }

    /// Microseconds between the active's beats: twice the settle (half a keepalive).
    package var beatEvery: Int64 { settle &* 2 }
    /// Microseconds without a sign of the leader after which a standby claims: 1.5 keepalives.
    package var silenceLimit: Int64 { settle &* 6 }

    /// The next time the machine has something to do unless something is heard first.
    package var deadline: Int64? {
        [
            claimAt, beatAt, heardAt.map { $0 &+ silenceLimit }, echoAt.map { $0 &+ silenceLimit },
        ].compactMap { $0 }.min()
    }

    /// Whether this daemon takes the inputs and publishes outputs now.
    package var isActive: Bool { role == .active && connected }

    /// The cluster connection is up (subscribed to the leader topic): the retained record, if
    /// there is one, comes next.
    package mutating func connected(at now: Int64) {
        connected = true
        leader = nil
        heardAt = nil
        claimAt = now &+ wait
    }

    /// The cluster connection is down: nothing is decided until it is back. An active daemon
    /// stays active, not publishing (``isActive`` is false), until it hears whether another took
    /// over meanwhile.
    package mutating func disconnected() {
        connected = false
        claimAt = nil
        heardAt = nil
        if case .active(let record, _, _) = state { state = .active(record, beatAt: nil, echoAt: nil) }
    }

    /// The leader's beat (its record), at `now`: a sign it is there (the active's own, back:
    /// its connection works).
    package mutating func beat(_ record: LeaderRecord, at now: Int64) {
        guard connected else { return }
        if case .active(let mine, let beatAt, _) = state, record == mine {
            state = .active(mine, beatAt: beatAt, echoAt: now)
            return
        }
        guard record.member != member, record == leader else { return }
        heardAt = now
    }

    /// What the leader topic holds now, at `now`.
    package mutating func received(_ reading: LeaderRecord.Reading, at now: Int64) -> [Action] {
        guard connected else { return [] }
        switch reading {
        case .none:
            return cleared(at: now, said: [])
        case .unreadable:
            return cleared(at: now, said: [.unreadable])
        case .record(let record):
            leader = record
            highest = max(highest, record.epoch)
            claimAt = nil
            if record.member == member {
                heardAt = nil
                if withdrawn.contains(record) { return [] }
                if let mine, mine.beats(record) { return [.publish(mine)] }
                // Its claim echoed, its record from before a restart, or the one it was cut off
                // with: it is the active (an active already beating keeps its schedule).
                return become(.active(record, beatAt: beatAt ?? (now &+ beatEvery), echoAt: now))
            }
            if let held, held.beats(record) { return [.publish(held)] }
            if let mine { withdrawn.insert(mine) }
            heardAt = now
            return become(.standby(cutOff: nil))
        }
    }

    /// The record was cleared (the active's will), or never there.
    private mutating func cleared(at now: Int64, said: [Action]) -> [Action] {
        leader = nil
        heardAt = nil
        if let held {
            claimAt = nil
            return said + [.publish(held)]
        }
        claimAt = now &+ wait
        return said
    }

    /// How long to wait before claiming: an active (or claiming) daemon `settle`, a standby twice that.
    private var wait: Int64 { role == .standby ? settle &* 2 : settle }

    /// The clock reached `now`: a claim, or the active's record again, when nothing was heard.
    package mutating func advance(to now: Int64) -> [Action] {
        guard connected else { return [] }
        if case .active(let mine, _, let echo?) = state, echo &+ silenceLimit <= now {
            // Cut off: a standby hearing no beat claims now. Out of the way, then find out.
            disconnected()
            return become(.standby(cutOff: mine)) + [.reconnect]
        }
        var beat: [Action] = []
        if case .active(let mine, let due?, let echo) = state, due <= now {
            state = .active(mine, beatAt: now &+ beatEvery, echoAt: echo)
            beat = [.beat(mine)]
        }
        if role == .standby, leader != nil, let heard = heardAt, heard &+ silenceLimit <= now {
            // The leader fell silent (its machine's network, most likely): claim as if its
            // record had been cleared, and at once (the silence was the wait).
            leader = nil
            heardAt = nil
            return claim(at: now)
        }
        guard let due = claimAt, due <= now, leader == nil else { return beat }
        if let held {
            // Reconnected with no record there (a broker that lost it), or a claim not echoed yet.
            claimAt = now &+ settle
            return beat + [.publish(held)]
        }
        return beat + claim(at: now)
    }

    /// Claims the epoch after the highest heard.
    private mutating func claim(at now: Int64) -> [Action] {
        let claim = LeaderRecord(epoch: highest &+ 1, member: member)
        claimAt = now &+ settle
        return become(.claiming(claim)) + [.publish(claim)]
    }

    /// Goes to `next`; tells the shell when that changes the role.
    private mutating func become(_ next: State) -> [Action] {
        let was = role
        state = next
        return was == next.role ? [] : [.role(next.role)]
    }
}
