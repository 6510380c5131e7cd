import BeaconConfiguration
import BeaconCore
import Engine
import Floorplan
import RegionMonitor

/// "Learn this room" (docs/behaviour.md §22): training sessions of tags, and the building's
/// fingerprints that every tag's room is decided with.
extension Devices {
    /// The most samples a session keeps (ten minutes of a tag advertising ten times a second
    /// to five scanners is 30,000): beyond, readings are not taken.
    package static let mostSamples = 30_000

    /// A learn command at `time` (the daemon's clock): a session starts or stops, or rooms are
    /// forgotten. Returns the one line that says why it was refused (nothing changed), if so.
    @discardableResult
    package mutating func learn(_ command: LearnCommand, at time: Timestamp, into actions: inout [Action]) -> String? {
        guard let configuration, configuration.scanners != nil else {
            return "learn: this daemon has no scanners (LocationScanner), so no tags to train rooms with"
        }
        wake(upTo: time.microseconds - 1, into: &actions)
        switch command.action {
        case .forget:
            var room = "*"
            if command.room != "*" {
                guard let zone = zone(named: command.room, in: configuration) else {
                    return unknownRoom(command.room, configuration: configuration)
                }
                room = zone.description
            }
            guard fingerprints.forget(room: room) else {
                return room == "*"
                    ? "learn: no room is trained; nothing to forget"
                    : "learn: \(roomName(room, in: configuration)) is not trained; nothing to forget"
            }
            actions.append(.fingerprints(room: room, nil))
            refreshFingerprints()
            return nil
        case .stop:
            guard let position = index[.fleet(command.device)] else { return unknownDevice(command.device) }
            guard engines[position].monitor.learning != nil else {
                return "learn: \(Self.quoted(command.device)) has no session running; nothing to stop"
            }
            handle(.stopLearning, for: .fleet(command.device), at: time, into: &actions)
            return nil
        case .train(let seconds):
            guard LearnCommand.seconds.contains(seconds) else {
                return "learn: a session of \(seconds) s; give 5 to 600 seconds"
            }
            guard let zone = zone(named: command.room, in: configuration) else {
                return unknownRoom(command.room, configuration: configuration)
            }
            guard let position = index[.fleet(command.device)] else {
                // A declared tag not heard yet: a session of it would take nothing.
                let declaredTag = configuration.scanners?.tags.contains { $0.id == command.device } == true
                guard declaredTag, settings.shard.owns(command.device) else { return unknownDevice(command.device) }
                return "learn: \(Self.quoted(command.device)) has not been heard by any scanner yet, so a session "
                    + "would take nothing; bring the tag into the room, check that a scanner hears it (its page "
                    + "/devices/\(command.device.excerpt)), and try again"
            }
            guard known[position].source == .scanners else {
                return "learn: \(Self.quoted(command.device)) is not a tag heard by scanners; train with a Tag.<id>"
            }
            if let running = engines[position].monitor.learning {
                let zone = engines[position].monitor.hierarchy.zones[Int(running.zone)]
                let (left, _) = running.until.subtractingReportingOverflow(time.microseconds)
                return "learn: \(Self.quoted(command.device)) is training \(zone.name ?? zone.region.description) "
                    + "already (\(Self.seconds(left)) s left); wait for its end, or stop its session first"
            }
            handle(.learn(zone, seconds: seconds), for: .fleet(command.device), at: time, into: &actions)
            return nil
        }
    }

    /// The Zone `name` names: its region (`UUID:major`), or its `LocationZoneName` (case, spaces,
    /// `-` and `_` ignored).
    func zone(named name: String, in configuration: Configuration) -> Region? {
        let hierarchy = configuration.hierarchy
        if let region = Region(name), case .zone = region, hierarchy.zoneIndex(of: region) != nil { return region }
        let key = CompanionFloorplan.matchKey(name)
        return hierarchy.zones.first { zone in zone.name.map(CompanionFloorplan.matchKey) == key }?.region
    }

    func unknownRoom(_ name: String, configuration: Configuration) -> String {
        let names = configuration.hierarchy.zones.prefix(5).map { $0.name ?? $0.region.description }
        return "learn: no room \(Self.quoted(name)); name a Zone (LocationZoneName) or its UUID:major, such as "
            + names.map { Self.quoted($0) }.joined(separator: ", ")
    }

    func unknownDevice(_ id: String) -> String {
        "learn: no tag \(Self.quoted(id)); name a Tag.<id> (or a tag heard since the start)"
    }

    static func quoted(_ text: String) -> String { "\"\(text.excerpt)\"" }

    /// Whole seconds, rounded up, of `microseconds` (none below 0).
    static func seconds(_ microseconds: Int64) -> Int64 {
        max(0, microseconds / 1_000_000 + (microseconds % 1_000_000 > 0 ? 1 : 0))
    }

    /// A room (`UUID:major`) as a person reads it: its Zone's `LocationZoneName`, else the region.
    func roomName(_ room: String, in configuration: Configuration) -> String {
        let zone = Region(room).flatMap { configuration.hierarchy.zoneIndex(of: $0) }.map {
            configuration.hierarchy.zones[$0]
        }
        return zone?.name ?? room
    }

    /// A session of the device at `position` that ended: its room's fingerprints replaced by it,
    /// kept, and every tag's model made again. A session that took no sample changes nothing: a
    /// tag that was not heard must not erase the room's training.
    mutating func takeLearned(_ position: Int, into actions: inout [Action]) {
        guard let learned = engines[position].takeLearned(), let id = ids[position].fleetID else { return }
        let room = learned.room.description
        let samples = Array(learned.samples.filter(\.level.isFinite).prefix(Self.mostSamples))
        guard !samples.isEmpty else { return }
        let now = engines[position].now.microseconds
        fingerprints.replace(room: room, with: samples, device: id, at: now)
        actions.append(.fingerprints(room: room, fingerprints.rooms[room]))
        refreshFingerprints()
    }

    /// The model every tag reads, made again from the fingerprints on the configuration's
    /// hierarchy.
    mutating func refreshFingerprints() {
        guard let configuration, !fingerprints.isEmpty else {
            fingerprintModel = nil
            return
        }
        fingerprintModel = RoomFingerprints(fingerprints, hierarchy: configuration.hierarchy)
    }

    /// Goes on with the fingerprints an earlier run kept (a restart, or a cluster's new active:
    /// docs/behaviour.md §21, §22).
    package mutating func resumeFingerprints(_ kept: Fingerprints) {
        fingerprints = kept
        refreshFingerprints()
    }

    /// What the daemon knows of each trained room (docs/behaviour.md §22): `learn --status`,
    /// `/api/v1/fingerprints`, the web view.
    package var fingerprintStatus: [Fingerprints.Status] { fingerprints.status() }

    /// The sessions running: tag, room, start and end (µs) and samples so far.
    package var learningSessions: [(device: String, room: Region, started: Int64, until: Int64, samples: Int)] {
        ids.indices.compactMap { position in
            guard let id = ids[position].fleetID, let session = engines[position].monitor.learning else { return nil }
            let room = engines[position].monitor.hierarchy.zones[Int(session.zone)].region
            return (id, room, session.started, session.until, session.samples.count)
        }
    }
}
