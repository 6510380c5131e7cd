import Cluster
import Testing

/// The election (docs/behaviour.md §21) against a broker as MQTT has it: one retained record on the leader
/// topic, every publish delivered to every connected subscriber in the order the broker took
/// them, a will that clears the record when a connection dies.
@Suite struct ClusterElectionTests {
    static let settle: Int64 = 500_000

    /// A broker and its daemons on a virtual clock (microseconds).
    struct Broker {
        var retained: LeaderRecord?
        var daemons: [ClusterElection]
        var now: Int64 = 0
        /// What the leader topic or the beat topic delivers.
        enum Message {
            case reading(LeaderRecord.Reading)
            case beat(LeaderRecord)
        }
        /// Messages on their way to each daemon, in order.
        var inbox: [[Message]]
        /// Daemons whose network is silent: nothing they publish arrives, nothing reaches them,
        /// and the broker has not noticed yet.
        var silent: Set<Int> = []
        var log: [String] = []

        init(_ members: [String]) {
            daemons = members.map { ClusterElection(member: $0, settle: ClusterElectionTests.settle) }
            inbox = members.map { _ in [] }
        }

        /// Daemon `i` connects and subscribes: the retained record, if any, is on its way.
        mutating func connect(_ i: Int) {
            daemons[i].connected(at: now)
            if let retained { inbox[i].append(.reading(.record(retained))) }
        }

        /// Daemon `i`'s connection dies: its will clears the record.
        mutating func kill(_ i: Int) {
            daemons[i].disconnected()
            inbox[i] = []
            retained = nil
            for j in daemons.indices where daemons[j].connected { inbox[j].append(.reading(.none)) }
        }

        /// Daemon `i`'s network is cut: the broker fires its will; the daemon notices too.
        mutating func cut(_ i: Int) { kill(i) }

        mutating func publish(_ record: LeaderRecord) {
            retained = record
            for j in daemons.indices where daemons[j].connected && !silent.contains(j) {
                inbox[j].append(.reading(.record(record)))
            }
        }

        mutating func perform(_ actions: [ClusterElection.Action], of i: Int) {
            for action in actions {
                if silent.contains(i) {
                    // Nothing it sends arrives; it still changes its own mind.
                    if case .role(let role) = action { log.append("\(daemons[i].member) \(role)") }
                    if case .reconnect = action { log.append("\(daemons[i].member) reconnects") }
                    continue
                }
                switch action {
                case .reconnect:
                    log.append("\(daemons[i].member) reconnects")
                    connect(i)
                case .beat(let record):
                    for j in daemons.indices where daemons[j].connected && !silent.contains(j) {
                        inbox[j].append(.beat(record))
                    }
                case .publish(let record): publish(record)
                case .role(let role): log.append("\(daemons[i].member) \(role)")
                case .unreadable: log.append("\(daemons[i].member) unreadable")
                }
            }
        }

        /// Delivers everything waiting, one message at a time round the daemons.
        mutating func deliver() {
            while let i = inbox.indices.first(where: { !inbox[$0].isEmpty }) {
                switch inbox[i].removeFirst() {
                case .reading(let reading): perform(daemons[i].received(reading, at: now), of: i)
                case .beat(let record): daemons[i].beat(record, at: now)
                }
            }
        }

        /// Runs the clock on by `seconds` in 10 ms steps, delivering as it goes.
        mutating func run(_ seconds: Double) {
            let end = now + Int64(seconds * 1_000_000)
            deliver()
            while now < end {
                now += 10_000
                for i in daemons.indices { perform(daemons[i].advance(to: now), of: i) }
                deliver()
            }
        }

        var actives: [String] { daemons.filter(\.isActive).map(\.member) }
    }

    @Test func aDaemonAloneClaimsTheFirstEpochAndIsActiveWhenTheBrokerEchoesIt() {
        var broker = Broker(["a"])
        broker.connect(0)
        broker.run(0.9)
        #expect(broker.actives.isEmpty, "a standby waits twice the settle before it claims")
        broker.run(0.2)
        #expect(broker.actives == ["a"])
        #expect(broker.retained == LeaderRecord(epoch: 1, member: "a"))
        #expect(broker.log == ["a claiming", "a active"])
    }

    @Test func aDaemonThatHearsALeaderStaysStandbyAndNeverClaims() {
        var broker = Broker(["a", "b"])
        broker.connect(0)
        broker.run(2)
        broker.connect(1)
        broker.run(10)
        #expect(broker.actives == ["a"])
        #expect(broker.daemons[1].role == .standby)
        #expect(broker.retained == LeaderRecord(epoch: 1, member: "a"))
    }

    /// Two daemons starting at once both claim epoch 1; whichever claim the broker takes last,
    /// the smaller id ends active, and the other is never active once the claims have crossed.
    @Test(arguments: [["a", "b"], ["b", "a"]])
    func twoStartingAtOnceEndWithTheSmallerIDActive(order: [String]) {
        var broker = Broker(order)
        broker.connect(0)
        broker.connect(1)
        broker.run(5)
        #expect(broker.actives == ["a"])
        #expect(broker.retained == LeaderRecord(epoch: 1, member: "a"))
        let b = broker.daemons.firstIndex { $0.member == "b" }!
        #expect(broker.daemons[b].role == .standby)
        // The same end, run again: decided the same way every time.
        var again = Broker(order)
        again.connect(0)
        again.connect(1)
        again.run(5)
        #expect(again.log == broker.log)
    }

    @Test func theActivesWillHandsTheClusterToTheStandbyWithTheNextEpoch() {
        var broker = Broker(["a", "b"])
        broker.connect(0)
        broker.run(2)
        broker.connect(1)
        broker.run(2)
        broker.kill(0)
        broker.run(0.9)
        #expect(broker.actives.isEmpty)
        broker.run(0.2)
        #expect(broker.actives == ["b"])
        #expect(broker.retained == LeaderRecord(epoch: 2, member: "b"))
        // The old active back: it hears the new leader and stays a standby.
        broker.connect(0)
        broker.run(5)
        #expect(broker.actives == ["b"])
        #expect(broker.daemons[0].role == .standby)
    }

    /// A network cut: the active is not active while cut off, and when it comes back it hears
    /// the one that took over and steps down without having published its old record again.
    @Test func anActiveCutOffStepsDownWhenItHearsTheNewLeader() {
        var broker = Broker(["a", "b"])
        broker.connect(0)
        broker.connect(1)
        broker.run(2)
        broker.cut(0)
        #expect(broker.daemons[0].role == .active && !broker.daemons[0].isActive)
        broker.run(2)
        #expect(broker.actives == ["b"])
        broker.connect(0)
        broker.run(0.2)
        #expect(broker.actives == ["b"])
        #expect(broker.daemons[0].role == .standby)
        #expect(broker.retained == LeaderRecord(epoch: 2, member: "b"))
    }

    /// A broker restarted without persistence has no record: the active publishes its own again
    /// before the standby would claim, and stays the active at the same epoch.
    /// The active's machine goes silent (its cable pulled, the broker not yet aware): the
    /// standby, hearing no beat for 1.5 keepalives (6 settles, 3 s), claims the next epoch.
    @Test func aSilentActiveIsGivenUpAfterOneAndAHalfKeepalives() {
        var broker = Broker(["a", "b"])
        broker.connect(0)
        broker.run(2)
        broker.connect(1)
        // The beats keep the standby a standby however long.
        broker.run(20)
        #expect(broker.actives == ["a"] && broker.daemons[1].role == .standby)
        broker.silent = [0]
        broker.run(2.9)
        #expect(broker.daemons[1].role == .standby, "the silence is not yet 1.5 keepalives")
        #expect(broker.daemons[0].isActive)
        broker.run(0.2)
        #expect(broker.daemons[1].isActive)
        #expect(broker.retained == LeaderRecord(epoch: 2, member: "b"))
        // The old active heard nothing of itself as long: it stepped down at the same moment.
        #expect(broker.daemons[0].role == .standby && !broker.daemons[0].isActive)
        #expect(broker.log.suffix(4).contains("a standby") && broker.log.contains("a reconnects"))
        // Its network back, it connects again and hears the later epoch: a standby it stays.
        broker.silent = []
        broker.connect(0)
        broker.run(5)
        #expect(broker.actives == ["b"] && broker.daemons[0].leader == LeaderRecord(epoch: 2, member: "b"))
    }

    @Test func anActiveBeatsEveryHalfKeepalive() {
        var election = ClusterElection(member: "a", settle: Self.settle)
        election.connected(at: 0)
        _ = election.advance(to: 1_000_000)
        _ = election.received(.record(LeaderRecord(epoch: 1, member: "a")), at: 1_000_000)
        #expect(election.isActive && election.deadline == 2_000_000)
        #expect(election.advance(to: 1_999_999).isEmpty)
        #expect(election.advance(to: 2_000_000) == [.beat(LeaderRecord(epoch: 1, member: "a"))])
        #expect(election.deadline == 3_000_000)
        // A standby hearing a beat of another than the leader takes it for no sign.
        var standby = ClusterElection(member: "b", settle: Self.settle)
        standby.connected(at: 0)
        _ = standby.received(.record(LeaderRecord(epoch: 1, member: "a")), at: 0)
        standby.beat(LeaderRecord(epoch: 1, member: "c"), at: 2_000_000)
        #expect(standby.deadline == 3_000_000)
        standby.beat(LeaderRecord(epoch: 1, member: "a"), at: 2_000_000)
        #expect(standby.deadline == 5_000_000)
    }

    /// An active that heard none of its beats back steps down and keeps its record as a standby:
    /// that record back makes it the active again at the same epoch; another's record withdraws
    /// it (its late echo is no win); with no record it waits and claims as any standby does.
    @Test func anActiveCutOffKeepsItsRecordOnlyToKnowItBack() {
        let a1 = LeaderRecord(epoch: 1, member: "a")
        var election = ClusterElection(member: "a", settle: Self.settle)
        election.connected(at: 0)
        #expect(election.advance(to: 1_000_000) == [.role(.claiming), .publish(a1)])
        #expect(election.received(.record(a1), at: 1_000_000) == [.role(.active)])
        #expect(election.advance(to: 2_000_000) == [.beat(a1)])
        #expect(election.advance(to: 3_000_000) == [.beat(a1)])
        #expect(election.advance(to: 4_000_000) == [.role(.standby), .reconnect])
        #expect(!election.connected && election.mine == a1 && election.deadline == nil)

        var back = election
        back.connected(at: 5_000_000)
        #expect(back.received(.record(a1), at: 5_000_000) == [.role(.active)])
        #expect(back.isActive && back.mine == a1 && back.deadline == 6_000_000)

        var overtaken = election
        overtaken.connected(at: 5_000_000)
        #expect(overtaken.received(.record(LeaderRecord(epoch: 2, member: "b")), at: 5_000_000).isEmpty)
        #expect(overtaken.mine == nil)
        #expect(overtaken.received(.record(a1), at: 5_100_000).isEmpty)
        #expect(overtaken.role == .standby)

        var empty = election
        empty.connected(at: 5_000_000)
        #expect(empty.deadline == 6_000_000, "a standby's wait, twice the settle")
        #expect(empty.advance(to: 5_500_000).isEmpty)
        #expect(empty.advance(to: 6_000_000) == [.role(.claiming), .publish(LeaderRecord(epoch: 2, member: "a"))])
    }

    @Test func aBrokerThatLostTheRecordKeepsTheSameActive() {
        var broker = Broker(["a", "b"])
        broker.connect(0)
        broker.run(2)
        broker.connect(1)
        broker.run(2)
        broker.daemons[0].disconnected()
        broker.daemons[1].disconnected()
        broker.retained = nil
        broker.connect(1)
        broker.connect(0)
        broker.run(5)
        #expect(broker.actives == ["a"])
        #expect(broker.retained == LeaderRecord(epoch: 1, member: "a"))
        #expect(!broker.log.contains("b claiming"))
    }

    /// A daemon restarted before its will fired finds its own record and goes on as the active.
    @Test func aRestartedActiveFindsItsOwnRecordAndGoesOn() {
        var broker = Broker(["a"])
        broker.retained = LeaderRecord(epoch: 7, member: "a")
        broker.connect(0)
        broker.run(0.1)
        #expect(broker.actives == ["a"])
        #expect(broker.retained == LeaderRecord(epoch: 7, member: "a"))
    }

    @Test func garbageOnTheLeaderTopicIsSaidAndCountsAsNone() {
        var election = ClusterElection(member: "a", settle: Self.settle)
        election.connected(at: 0)
        #expect(election.received(.unreadable, at: 0) == [.unreadable])
        #expect(election.advance(to: 2 * Self.settle).contains(.publish(LeaderRecord(epoch: 1, member: "a"))))
    }

    @Test func aRecordReadsBackAndGarbageIsNeverARecord() {
        #expect(LeaderRecord.read(Array("3 node-1.b_2".utf8)) == .record(LeaderRecord(epoch: 3, member: "node-1.b_2")))
        #expect(LeaderRecord.read([UInt8]()) == .none)
        for garbage in [
            "3", "x a", "3 a b", "-1 a", "3 ", " a", "18446744073709551616 a", "3 a/b", "3 \u{e9}",
            String(repeating: "9", count: 200), "3 " + String(repeating: "a", count: 65),
        ] {
            #expect(LeaderRecord.read(Array(garbage.utf8)) == .unreadable, "\(garbage)")
        }
        #expect(LeaderRecord.read([0xFF, 0x20, 0x61]) == .unreadable)
        // Random bytes never trap, and read as a record only when they are one.
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<2000 {
            var bytes: [UInt8] = []
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            for shift in 0..<Int(state % 24) { bytes.append(UInt8(truncatingIfNeeded: state >> UInt64(shift * 2))) }
            if case .record(let record) = LeaderRecord.read(bytes) {
                #expect(LeaderRecord.read(Array(record.description.utf8)) == .record(record))
            }
        }
        #expect(LeaderRecord(epoch: 2, member: "b").beats(LeaderRecord(epoch: 1, member: "a")))
        #expect(LeaderRecord(epoch: 1, member: "a").beats(LeaderRecord(epoch: 1, member: "b")))
        #expect(!LeaderRecord(epoch: 1, member: "a").beats(LeaderRecord(epoch: 1, member: "a")))
    }
}
