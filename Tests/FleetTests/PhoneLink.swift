import BeaconCore
import BeaconConfiguration
import Engine
import Fleet
import Foundation
import RegionMonitor
import TestSupport
import Testing

/// A fleet and OwnTracks phones (``SimulatedPhone``) talking as over MQTT, without a broker: what
/// the fleet sends to a phone's `…/cmd` reaches it, and what a phone publishes is parsed as the
/// daemon parses it (``FleetMessage/parse(source:filter:topic:payload:)``) and handed to the
/// fleet at the same instant. It also keeps what a state database would (records, classes,
/// presence), so that ``restart(at:)`` can rebuild the fleet from it.
struct PhoneLink {
    var fleet: Devices
    /// Seconds since the epoch of time 0.
    let start: Double
    var phones: [String: SimulatedPhone] = [:]
    /// Every command sent to each device's phone, in order.
    var commands: [String: [String]] = [:]
    var commandCount: Int { commands.values.map(\.count).reduce(0, +) }
    /// Every transition and monitored set, as `<device> <enter|exit> <region>` and
    /// `<device> monitoring <regions>`.
    var transcript: [String] = []
    var notices: [String] = []
    /// Every beacon a phone's ranging reported to the fleet (its `beacon` messages), with when.
    var ranged: [String: [(seconds: Double, beacon: BeaconID)]] = [:]
    /// What the state database would hold of each device.
    var records: [String: Devices.Record] = [:]
    var classes: [String: [String: Proximity]] = [:]
    let filter = TopicFilter("owntracks/+/+")!

    init(fleet: Devices, start: Double) {
        self.fleet = fleet
        self.start = start
    }

    /// The device id of a phone: `<user>-<device>` of its base topic.
    static func id(of phone: SimulatedPhone) -> String {
        phone.base.split(separator: "/").dropFirst().joined(separator: "-")
    }

    mutating func add(_ phone: SimulatedPhone) { phones[Self.id(of: phone)] = phone }

    func time(_ seconds: Double) -> Timestamp { Timestamp(secondsSinceEpoch: start + seconds)! }

    func monitored(_ device: String) -> [Region] { fleet.engine(device)?.monitor.monitoredRegions ?? [] }

    /// The phone publishes a location fix at `seconds`; returns the device's transitions.
    mutating func locate(_ device: String, at seconds: Double) throws -> [String] {
        let phone = try #require(phones[device])
        return try deliver([phone.location(now: start + seconds)], at: seconds, device: device)
    }

    /// The phone moves among `beacons` at `seconds`; returns the device's transitions.
    mutating func move(_ device: String, to beacons: [BeaconID: Double], at seconds: Double) throws -> [String] {
        var phone = try #require(phones[device])
        let published = phone.move(to: beacons, now: start + seconds)
        phones[device] = phone
        return try deliver(published, at: seconds, device: device)
    }

    /// Time passes to `seconds`, the fleet waking at each of its deadlines and the phones
    /// answering its commands there; returns every device's transitions.
    mutating func advance(to seconds: Double) throws -> [String] {
        let mark = transcript.count
        let end = time(seconds)
        var rounds = 0
        while true {
            rounds += 1
            try #require(rounds < 10_000, "the fleet's deadlines did not settle")
            let wake = fleet.nextWake.map { min($0, end) } ?? end
            let at = Double(wake.microseconds - time(0).microseconds) / 1_000_000
            var actions: [Devices.Action] = []
            fleet.advance(to: wake, into: &actions)
            _ = try deliver(try perform(actions, at: at), at: at, device: "")
            if wake >= end { break }
        }
        return transcript[mark...].filter { !$0.contains(" monitoring ") }
    }

    /// The daemon stops (its fleet keeps what it has) and starts again from what was kept;
    /// returns the transitions the start made.
    @discardableResult
    mutating func restart(at seconds: Double) throws -> [String] {
        var actions: [Devices.Action] = []
        fleet.close(into: &actions)
        try perform(actions, at: seconds)
        var kept: [String: Devices.Kept] = [:]
        for (id, record) in records {
            var state = KeptState()
            state.classes = classes[id] ?? [:]
            state.presence = record.presence
            kept[id] = Devices.Kept(
                state: state, source: record.source, commandTopic: record.commandTopic, waypoints: record.waypoints,
                legacy: record.legacy, ownWaypoints: record.ownWaypoints)
        }
        fleet = Devices(
            configuration: try #require(fleet.configuration),
            identity: MonitorIdentity(session: "s", address: "a", userid: "u"),
            kept: kept)
        actions = []
        fleet.start(at: time(seconds), into: &actions)
        let mark = transcript.count
        try perform(actions, at: seconds)
        return transcript[mark...].filter { !$0.contains(" monitoring ") }
    }

    /// Hands what phones published to the fleet, and the fleet's commands to the phones, until
    /// both are quiet; returns `device`'s transitions.
    mutating func deliver(_ published: [SimulatedPhone.Published], at seconds: Double, device: String) throws
        -> [String]
    {
        let mark = transcript.count
        var queue = published[...]
        var rounds = 0
        while let next = queue.popFirst() {
            rounds += 1
            try #require(rounds < 1000, "the phones and the fleet did not settle")
            let parsed = FleetMessage.parse(
                source: .owntracks, filter: filter, topic: next.topic, payload: Array(next.payload.utf8))
            guard case .success(let message?) = parsed else {
                Issue.record("the phone's \(next.payload) on \(next.topic) was not taken: \(parsed)")
                continue
            }
            for case .sighting(let advertisement, _) in message.observations.map(\.kind) {
                ranged[message.device, default: []].append((seconds, advertisement.beacon))
            }
            var actions: [Devices.Action] = []
            fleet.advance(to: Timestamp(microseconds: time(seconds).microseconds - 1), into: &actions)
            fleet.handle(message, at: time(seconds), into: &actions)
            queue += try perform(actions, at: seconds)
        }
        return transcript[mark...].filter { $0.hasPrefix(device + " ") && !$0.contains(" monitoring ") }
            .map { String($0.dropFirst(device.count + 1)) }
    }

    /// Carries out the fleet's actions; returns what the phones publish in answer.
    @discardableResult
    mutating func perform(_ actions: [Devices.Action], at seconds: Double) throws -> [SimulatedPhone.Published] {
        var published: [SimulatedPhone.Published] = []
        for action in actions {
            switch action {
            case .engine(let id, .output(.transition(_, let transition))):
                let device = id.description
                transcript.append("\(device) \(transition.direction.rawValue) \(transition.region)")
            case .engine(let id, .output(.monitoring(_, let change))):
                let device = id.description
                transcript.append("\(device) monitoring \(change.regions.map(\.description).joined(separator: ","))")
            case .engine(let id, .output(.location(_, let event))):
                let device = id.description
                classes[device, default: [:]][event.zone] = event.distance
            case .command(let id, let topic, let payload):
                let device = id.description
                commands[device, default: []].append(payload)
                guard var phone = phones[device] else { continue }
                #expect(topic == phone.base + "/cmd")
                published += phone.receive(topic: topic, payload: payload, now: start + seconds)
                phones[device] = phone
                #expect(phone.most <= SimulatedPhone.iOSLimit, "\(device) was asked for \(phone.most) regions")
            case .record(let id, var record):
                let device = id.description
                if record.presence == nil { record.presence = records[device]?.presence }
                records[device] = record
            case .notice(let id, let line):
                let device = id.description
                notices.append("\(device) \(line)")
            default:
                break
            }
        }
        return published
    }
}
