import BeaconCore
import Foundation
import RegionMonitor

/// A presence sensor's message (docs/behaviour.md §23): the kind in the first byte (modulo 3),
/// the field path up to the first NUL (none: `occupancy`), then the payload as received.
///
/// The payload is read as its kind says, then given to an ``OccupancyMonitor`` whose one Zone the
/// sensor watches: a count is a count of people, garbage changes nothing and is said once in one
/// clean line, a reading that says someone is there makes the Zone occupied at once with the
/// count the rule gives, anything else leaves it to be announced vacant after `vacantAfter`, and
/// once the sensor has been silent past its `silence` the Zone is vacant and the sensor `null`.
enum SensorTarget {
    static let zone = Region.zone(UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)), major: 1)
    static let hierarchy: Hierarchy = {
        guard case .zone(let uuid, let major) = zone else { return Hierarchy() }
        return Hierarchy(beacons: [.init(locationID: "1", id: BeaconID(uuid: uuid, major: major, minor: 1))])
    }()
    static let start = Timestamp(microseconds: 1_700_000_000_000_000)

    static func run(_ bytes: [UInt8]) {
        guard let first = bytes.first else { return }
        let kind = SensorKind.allCases[Int(first) % SensorKind.allCases.count]
        let rest = bytes.dropFirst()
        var field: String?
        var payload = Array(rest)
        if let nul = rest.firstIndex(of: 0) {
            let path = String(decoding: rest[..<nul], as: UTF8.self)
            // The configuration refuses a path that is not one (``SensorPayload/isValidPath(_:)``).
            field = SensorPayload.isValidPath(path) ? path : nil
            payload = Array(rest[rest.index(after: nul)...])
        }
        // A silence, so that every reading runs out (presence and count sensors have none by default).
        let sensor = SensorDefinition(
            id: "s", topic: "t", kind: kind, zone: zone, field: field, silence: SensorDefinition.defaultSilence)
        let parsed = SensorPayload.parse(payload, kind: kind, path: sensor.path)
        var people: Int?
        switch parsed {
        case .reading(.count(let count)):
            precondition(kind == .count && (0...SensorPayload.maximumCount).contains(count), "count \(count)")
            people = count > 0 ? count : nil
        case .reading(.detected(let detected)):
            precondition(kind != .count, "a count sensor read as detected")
            people = detected ? 1 : nil
        case .garbage(let why):
            Message.check(why)
        case .reading(.unknown), .heartbeat:
            break
        }

        var monitor = OccupancyMonitor(
            settings: OccupancySettings(sensors: [sensor]), hierarchy: hierarchy)
        var outputs: [MonitorOutput] = []
        monitor.start(at: start, into: &outputs)
        precondition(outputs.isEmpty, "a Zone with nothing in it announced at the start")
        let notice = monitor.sensor("s", payload: payload, at: start.adding(seconds: 1), into: &outputs)
        if case .garbage = parsed {
            guard let notice else { preconditionFailure("garbage not said") }
            Message.check(notice)
            precondition(
                monitor.sensor("s", payload: payload, at: start.adding(seconds: 2), into: &outputs) == nil,
                "one kind of garbage said twice")
        } else {
            precondition(notice == nil, "a reading said as garbage: \(notice ?? "")")
        }
        if let people {
            guard outputs.count == 1, case .occupancy(let time, let change) = outputs[0] else {
                preconditionFailure("\(outputs.count) outputs for a reading of someone")
            }
            precondition(time == start.adding(seconds: 1) && change.occupied && change.count == people)
        } else {
            precondition(outputs.isEmpty, "a reading of nobody announced before vacantAfter")
        }
        monitor.advance(to: start.adding(seconds: 7200), into: &outputs)
        var last: Timestamp?
        for output in outputs {
            guard case .occupancy(let time, let change) = output else { preconditionFailure("\(output.type)") }
            precondition(last.map { $0 <= time } ?? true, "outputs out of time order")
            precondition(change.count >= 0 && (change.occupied || change.count == 0), "count \(change.count)")
            last = time
        }
        guard case .occupancy(_, let final)? = outputs.last else { preconditionFailure("never announced") }
        let shown: SensorShown = if case .garbage = parsed { .none } else { .offline }
        precondition(!final.occupied && final.sensors == ["s": shown], "not vacant after the sensor's silence")
        precondition(monitor.nextDeadline == nil, "a deadline left after everything ran out")
    }
}
