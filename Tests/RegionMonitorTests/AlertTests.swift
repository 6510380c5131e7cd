import BeaconCore
import Foundation
import RegionMonitor
import Testing

/// docs/behaviour.md §9.1: the Connecthings alert strategies.
@Suite struct AlertTests {
    /// The Connecthings example: two beacons, range near, strategy `=`, action popup.
    static let definitions = [
        AlertDefinition(locationID: "17081", range: .near, strategy: .equal, action: "popup", title: "Welcome"),
        AlertDefinition(locationID: "17082", range: .near, strategy: .equal, action: "popup", title: "Coffee"),
    ]

    struct Walk {
        var alerts = AlertConsumer(definitions: AlertTests.definitions, resetAfter: 60)
        var outputs: [MonitorOutput] = []
        private var taken = 0

        static func time(_ seconds: Double) -> Timestamp { Timestamp(secondsSinceEpoch: 1_700_000_000 + seconds)! }

        mutating func hear(_ id: String, _ value: Proximity, meters: Double? = nil, at seconds: Double) {
            let change = ProximityChange(
                time: Self.time(seconds), beacon: BeaconID(uuid: UUID(), major: 1, minor: UInt16(id)!),
                locationID: id, proximity: value, meters: value == .off ? nil : meters ?? 1)
            alerts.advance(to: Self.time(seconds), into: &outputs)
            alerts.observe(change, into: &outputs)
        }

        mutating func command(_ action: String, _ id: String, at seconds: Double) -> Bool {
            alerts.command(action, id: id, at: Self.time(seconds), into: &outputs)
        }

        mutating func advance(to seconds: Double) { alerts.advance(to: Self.time(seconds), into: &outputs) }

        /// New `alert` outputs as `show 17081`.
        mutating func said() -> [String] {
            defer { taken = outputs.count }
            return outputs[taken...].compactMap {
                guard case .alert(_, let change) = $0 else { return nil }
                return "\(change.action.rawValue) \(change.locationID)"
            }
        }

        var statuses: [String] { AlertTests.definitions.map { alerts.statuses[$0.locationID]!.rawValue } }
    }

    @Test func theConnecthingsExampleStepByStep() {
        var walk = Walk()
        // Approach: both far, nothing to offer.
        walk.hear("17081", .far, at: 0)
        walk.hear("17082", .far, at: 0)
        #expect(walk.said().isEmpty)
        #expect(walk.statuses == ["waiting", "waiting"])

        // Both near: the closer one is shown; the other waits.
        walk.hear("17082", .near, meters: 2.5, at: 5)
        #expect(walk.said() == ["show 17082"])
        walk.hear("17081", .near, meters: 1.2, at: 6)
        #expect(walk.said().isEmpty, "one alert at a time")
        #expect(walk.statuses == ["waiting", "inProgress"])

        // Decline: the next ready one is offered.
        let declined = walk.command("decline", "17082", at: 10)
        #expect(declined)
        #expect(walk.said() == ["show 17081"])
        #expect(walk.statuses == ["inProgress", "done"])

        // Done: nothing is left to offer.
        let ended = walk.command("done", "17081", at: 15)
        #expect(ended)
        #expect(walk.said().isEmpty)
        #expect(walk.statuses == ["done", "done"])
        let endedAgain = walk.command("done", "17081", at: 16)
        #expect(!endedAgain, "not in progress any more")

        // Walking away and back within 60 s: nothing again.
        walk.hear("17081", .far, at: 20)
        walk.hear("17082", .off, at: 21)
        walk.hear("17081", .near, at: 50)
        #expect(walk.said().isEmpty)

        // Away for 60 s: back to waiting, and offered again on return.
        walk.hear("17081", .far, at: 55)
        walk.advance(to: 114.999)
        #expect(walk.statuses == ["done", "waiting"], "17082 left at 21: reset at 81")
        walk.advance(to: 115)
        #expect(walk.statuses == ["waiting", "waiting"])
        walk.hear("17081", .near, at: 120)
        #expect(walk.said() == ["show 17081"])
    }

    @Test func anInProgressAlertThatStopsQualifyingIsRemovedAndTheNextOffered() {
        var walk = Walk()
        walk.hear("17081", .near, meters: 1, at: 0)
        walk.hear("17082", .near, meters: 2, at: 1)
        #expect(walk.said() == ["show 17081"])
        walk.hear("17081", .immediate, at: 2)  // `=` near: no longer holds
        #expect(walk.said() == ["remove 17081", "show 17082"])
        walk.hear("17082", .off, at: 3)  // lost
        #expect(walk.said() == ["remove 17082"])
        #expect(walk.statuses == ["done", "done"])
        #expect(walk.alerts.nextDeadline == Walk.time(62))
    }

    @Test func theClosestReadyBeaconIsOfferedNext() {
        let three =
            Self.definitions + [
                AlertDefinition(locationID: "17083", range: .far, strategy: .atMost, action: "open", title: nil)
            ]
        var walk = Walk()
        walk.alerts = AlertConsumer(definitions: three, resetAfter: 60)
        walk.hear("17083", .far, meters: 5, at: 0)
        #expect(walk.said() == ["show 17083"])
        walk.hear("17082", .near, meters: 2.0, at: 1)
        walk.hear("17081", .near, meters: 1.1, at: 2)
        let ended = walk.command("done", "17083", at: 3)
        #expect(ended)
        // Both near: the smaller distance wins; then the other.
        #expect(walk.said() == ["show 17081"])
        let declined = walk.command("decline", "17081", at: 4)
        #expect(declined)
        #expect(walk.said() == ["show 17082"])
    }

    @Test func strategiesHoldForTheirClasses() {
        func holds(_ strategy: AlertDefinition.Strategy, _ range: Proximity) -> [Proximity] {
            let definition = AlertDefinition(
                locationID: "1", range: range, strategy: strategy, action: "popup", title: nil)
            return Proximity.allCases.filter(definition.holds(at:))
        }
        #expect(holds(.equal, .near) == [.near])
        #expect(holds(.atMost, .near) == [.immediate, .near])
        #expect(holds(.atLeast, .near) == [.near, .far])
        #expect(holds(.atLeast, .far) == [.far])
        #expect(holds(.atMost, .far) == [.immediate, .near, .far])
    }

    @Test func recordsSurviveARestartAndAnAlertInProgressComesBackDone() {
        var walk = Walk()
        walk.hear("17081", .near, at: 0)
        #expect(walk.said() == ["show 17081"])
        let changes = walk.alerts.takeChanges()
        #expect(changes["17081"] == AlertRecord(status: .inProgress))
        #expect(walk.alerts.takeChanges().isEmpty)
        let restarted = AlertConsumer(
            definitions: Self.definitions, resetAfter: 60,
            restored: [
                "17081": AlertRecord(status: .inProgress), "17082": AlertRecord(status: .done, resetAt: Walk.time(9)),
            ])
        #expect(restarted.statuses == ["17081": .done, "17082": .done])
        #expect(restarted.nextDeadline == Walk.time(9))
    }

    @Test func unknownCommandsAndIDsAreNotTaken() {
        var walk = Walk()
        walk.hear("17081", .near, at: 0)
        let snoozed = walk.command("snooze", "17081", at: 1)
        #expect(!snoozed)
        let unknownID = walk.command("done", "99999", at: 1)
        #expect(!unknownID)
        let notInProgress = walk.command("done", "17082", at: 1)
        #expect(!notInProgress)
        #expect(walk.statuses == ["inProgress", "waiting"])
    }
}
