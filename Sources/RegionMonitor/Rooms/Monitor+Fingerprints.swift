import BeaconCore
import Floorplan
import Foundation

/// A building's fingerprints for one hierarchy (docs/behaviour.md §22): the model, each of its
/// rooms' Zone and each hierarchy beacon's scanner index in it. Made once per training and
/// configuration by the table of devices and shared by every tag.
package struct RoomFingerprints: Sendable {
    /// The training's version it was made from (``Fingerprints/version``).
    package let version: Int
    package let model: FingerprintModel
    /// By model room: its Zone index, -1 when the hierarchy has no such Zone.
    package let zones: [Int32]
    /// By hierarchy beacon: its scanner index in the model, -1 for none.
    let slots: [Int]
    /// Whether each Area has a trained room.
    let areas: Set<Int32>

    /// The model of `fingerprints` on `hierarchy`; `nil` without any trained room of it.
    package init?(_ fingerprints: Fingerprints, hierarchy: Hierarchy) {
        let (rooms, scanners, vectors) = fingerprints.vectors()
        let zones = rooms.map { name in Region(name).flatMap { hierarchy.zoneIndex(of: $0) }.map(Int32.init) ?? -1 }
        guard zones.contains(where: { $0 >= 0 }) else { return nil }
        version = fingerprints.version
        model = FingerprintModel(rooms: rooms.count, scanners: scanners.count, vectors: vectors)
        self.zones = zones
        var slots = Array(repeating: -1, count: hierarchy.beacons.count)
        for (slot, scanner) in scanners.enumerated() {
            if let index = hierarchy.index(ofLocation: scanner) { slots[index] = slot }
        }
        self.slots = slots
        areas = Set(zones.filter { $0 >= 0 }.map { hierarchy.areaOfZone[Int($0)] })
    }
}

/// A training session of a tag (docs/behaviour.md §22): the room, its end, and what it took.
package struct LearnSession: Sendable, Hashable {
    /// The room, a Zone index.
    package var zone: Int32
    package var started: Int64
    package var until: Int64
    package var samples: [FingerprintSample] = []
}

/// A session that ended, for the table of devices to take into the building's fingerprints.
package struct LearnedRoom: Sendable, Hashable {
    package var room: Region
    package var samples: [FingerprintSample]
}

/// The fingerprints' part of a tag's rooms (docs/behaviour.md §22): its readings of the last
/// window, its own offset against the training, a session running or just ended, and the
/// contest of a trained room the fingerprints name.
package struct PrintState: Sendable {
    /// The building's model, when trained.
    package var model: RoomFingerprints?
    /// The readings of the last ``Fingerprints/window``: beacon, level, instant; oldest first.
    var recent: [(beacon: Int32, level: Double, at: Int64)] = []
    /// How much louder (dB) this tag hears than the training, learned as it moves.
    package internal(set) var offset = 0.0
    package internal(set) var session: LearnSession?
    /// A session that ended, until the table takes it.
    var finished: LearnedRoom?
    /// Without a floor plan: the room the fingerprints name against the present one, and its sum.
    var challenger: Int32 = -2
    var score = 0.0
    var scoredAt: Int64 = .min

    package init() {}
}

/// A session's end: how many samples from how many scanners (the `learned` output).
package struct LearnedReport: Sendable, Hashable {
    package var room: Region
    package var name: String
    package var samples: Int
    package var scanners: Int
    /// Ended early by a stop.
    package var stopped: Bool

    package init(room: Region, name: String, samples: Int, scanners: Int, stopped: Bool) {
        (self.room, self.name, self.samples, self.scanners, self.stopped) = (room, name, samples, scanners, stopped)
    }
}

extension Monitor {
    /// The fingerprints' share of the evidence: a room's probability from the fingerprints is
    /// raised to this (a 5-s vector at every reading is not new evidence each time).
    static let printSharpness = 0.5
    /// A trained room is taken as the tag's (without a floor plan) only while the readings are
    /// like its training: a mean squared departure per scanner of at most this, in spreads.
    static let printMisfit = 4.0
    /// The learned offset moves this share of the way at each confident reading, and is at most
    /// this far from 0 (dB).
    static let offsetRate = 0.05
    /// Without a floor plan, the sum of (probability - 0.5) per second of readings a trained room
    /// named by the fingerprints needs to take the tag from another room: about four seconds of
    /// readings like its training (a walker between two rooms reads for a few seconds like a
    /// room between them).
    static let printContest = 2.0
    static let offsetLimit = 20.0

    /// The building's fingerprints (docs/behaviour.md §22), set by the table of devices.
    package var fingerprints: RoomFingerprints? {
        get { rooms.prints.model }
        set { rooms.prints.model = newValue }
    }

    /// The session running, if any.
    package var learning: LearnSession? { rooms.prints.session }

    /// Starts a session of `seconds` in Zone `zone` at `time`: every reading until its end is a
    /// sample of that room; the tag's room goes on as before.
    package mutating func startLearning(
        zone: Int32, seconds: Double, at time: Timestamp, into outputs: inout [MonitorOutput]
    ) {
        advance(to: time, into: &outputs)
        let length = Int64((min(max(seconds, 1), 3600) * 1_000_000).rounded())
        rooms.prints.session = LearnSession(zone: zone, started: timing.now, until: timing.now &+ length)
        timing.timers.schedule(.learnEnd, at: timing.now &+ length)
    }

    /// Ends the session now (a stop), with what it took.
    package mutating func stopLearning(at time: Timestamp, into outputs: inout [MonitorOutput]) {
        advance(to: time, into: &outputs)
        finishLearning(stopped: true, into: &outputs)
    }

    /// The session that ended, taken (the table puts it in the building's fingerprints).
    package mutating func takeLearned() -> LearnedRoom? {
        defer { rooms.prints.finished = nil }
        return rooms.prints.finished
    }

    /// The `learnEnd` deadline fired: the session ends if it is due.
    mutating func learnDeadlineFired(into outputs: inout [MonitorOutput]) {
        guard let session = rooms.prints.session, timing.now >= session.until else { return }
        finishLearning(stopped: false, into: &outputs)
    }

    /// Ends the running session: the `learned` output, and the samples for the table.
    mutating func finishLearning(stopped: Bool, into outputs: inout [MonitorOutput]) {
        guard let session = rooms.prints.session else { return }
        rooms.prints.session = nil
        let zone = hierarchy.zones[Int(session.zone)]
        rooms.prints.finished = LearnedRoom(room: zone.region, samples: session.samples)
        let scanners = Set(session.samples.map(\.scanner)).count
        outputs.append(
            .learned(
                Timestamp(microseconds: timing.now),
                LearnedReport(
                    room: zone.region, name: zone.name ?? zone.region.description, samples: session.samples.count,
                    scanners: scanners, stopped: stopped)))
    }

    /// Notes a reading of the scanner at `beacon`, `level` dB above the tag's power: the last
    /// window's readings, and a sample of the session's room while one runs.
    mutating func notePrint(_ beacon: Int32, level: Double) {
        guard level.isFinite else { return }
        let now = timing.now
        if let session = rooms.prints.session, now < session.until {
            rooms.prints.session?.samples.append(
                FingerprintSample(
                    room: hierarchy.zones[Int(session.zone)].region.description,
                    scanner: hierarchy.beacons[Int(beacon)].locationID, level: level, at: now))
        }
        guard rooms.prints.model != nil else { return }
        rooms.prints.recent.removeAll { entry in
            let (age, overflow) = now.subtractingReportingOverflow(entry.at)
            return overflow || age < 0 || age >= Fingerprints.window
        }
        rooms.prints.recent.append((beacon, level, now))
    }

    /// The tag's readings of the last window as the model's vector: each scanner's mean level,
    /// by scanner index.
    func printVector(_ prints: RoomFingerprints) -> [(slot: Int, level: Double)] {
        var sums: [Int: (Double, Int)] = [:]
        for entry in rooms.prints.recent {
            let slot = Int(entry.beacon) < prints.slots.count ? prints.slots[Int(entry.beacon)] : -1
            guard slot >= 0 else { continue }
            let (sum, count) = sums[slot] ?? (0, 0)
            sums[slot] = (sum + entry.level, count + 1)
        }
        return sums.keys.sorted().compactMap { key in sums[key].map { (slot: key, level: $0.0 / Double($0.1)) } }
    }

    /// What the fingerprints say of the tag's readings: each trained room's probability (by model
    /// room), how far each is from its training, and the offset that fits each; `nil` untrained
    /// or with no reading of a trained scanner. The tag's own offset moves towards the one that
    /// fits a room the fingerprints are sure of.
    mutating func classifyPrints() -> (probabilities: [Double], classification: FingerprintModel.Classification)? {
        guard let prints = rooms.prints.model else { return nil }
        let vector = printVector(prints)
        guard !vector.isEmpty else { return nil }
        let classification = prints.model.classify(vector, offset: rooms.prints.offset)
        let probabilities = classification.probabilities(sharpness: Self.printSharpness)
        if let best = classification.room, probabilities[best] >= 0.9,
            classification.misfit[best] <= Self.printMisfit
        {
            let target = min(max(classification.offsets[best], -Self.offsetLimit), Self.offsetLimit)
            rooms.prints.offset += (target - rooms.prints.offset) * Self.offsetRate
        }
        return (probabilities, classification)
    }

    /// Without a floor plan (§19 with §22): the trained room the readings are like, with its
    /// probability among the trained rooms; `nil` when none is (the nearest rule decides).
    mutating func printedRoom(area: Int32) -> (zone: Int32, probability: Double)? {
        guard let prints = rooms.prints.model, prints.areas.contains(area),
            let (probabilities, classification) = classifyPrints(), let best = classification.room,
            classification.misfit[best] <= Self.printMisfit, prints.zones[best] >= 0
        else { return nil }
        return (prints.zones[best], probabilities[best])
    }

    /// Without a floor plan: a reading the fingerprints place in a trained room. The tag enters
    /// it at once when in no room; from another room it moves when the fingerprints have named
    /// it, with a probability above a half, for about four seconds of its readings
    /// (``printContest``). Its room (and
    /// Area) is kept inside by the reading. Whether the reading was taken so.
    mutating func sightPrintedRoom(
        _ beacon: Int32, area: Int32, into outputs: inout [MonitorOutput]
    ) -> Bool {
        guard let (zone, probability) = printedRoom(area: area) else {
            rooms.prints.challenger = -2
            return rooms.zone < 0 && awaitsSecondScanner(area: area)
        }
        let current = rooms.zone
        if current < 0 {
            guard probability >= 0.6 else { return awaitsSecondScanner(area: area) }
            moveRoom(
                to: zone, area: hierarchy.areaOfZone[Int(zone)], scanner: beacon, probability: probability,
                previous: nil, into: &outputs)
            rooms.change?.byFingerprints = true
        } else if zone != current {
            let (elapsed, overflow) = timing.now.subtractingReportingOverflow(rooms.prints.scoredAt)
            let seconds =
                rooms.prints.scoredAt == .min || overflow || elapsed < 0 ? 1 : min(1, Double(elapsed) / 1_000_000)
            rooms.prints.scoredAt = timing.now
            if zone != rooms.prints.challenger {
                rooms.prints.challenger = zone
                rooms.prints.score = 0
            }
            rooms.prints.score = max(0, rooms.prints.score + (probability - 0.5) * seconds)
            if rooms.prints.score >= Self.printContest {
                rooms.prints.challenger = -2
                rooms.prints.score = 0
                moveRoom(
                    to: zone, area: hierarchy.areaOfZone[Int(zone)], scanner: beacon, probability: probability,
                    previous: nil, into: &outputs)
                rooms.change?.byFingerprints = true
            }
        } else {
            rooms.prints.challenger = -2
            rooms.prints.score = 0
            rooms.prints.scoredAt = timing.now
        }
        // The reading keeps the tag's room and its Area inside.
        let room = rooms.zone
        guard room >= 0 else { return true }
        let roomArea = hierarchy.areaOfZone[Int(room)]
        let anchor = hierarchy.zones[Int(room)].beacons[0]
        sightings.beacon[Int(anchor)] = timing.now
        sightings.zone[Int(room)] = timing.now
        sightings.area[Int(roomArea)] = timing.now
        enterAncestors(of: anchor, zone: room, area: roomArea, into: &outputs)
        applyPolicy(into: &outputs)
        return true
    }

    /// Whether a tag in no room of a trained Area waits for a second scanner before the nearest
    /// rule places it: one scanner's first reading says little of where it is, and the next
    /// readings come within a second or two. It waits ``firstWait`` at most.
    func awaitsSecondScanner(area: Int32) -> Bool {
        guard let prints = rooms.prints.model, prints.areas.contains(area), let first = rooms.prints.recent.first,
            rooms.prints.recent.allSatisfy({ $0.beacon == first.beacon })
        else { return false }
        let (span, overflow) = timing.now.subtractingReportingOverflow(first.at)
        return !overflow && span >= 0 && span < Self.firstWait
    }

    /// The longest a first reading in a trained Area waits for a second scanner (µs).
    static let firstWait: Int64 = 2_000_000

    /// With a floor plan (§20 with §22): the rooms' probabilities of `filter`, with the
    /// fingerprints' evidence when they name, with readings like its training, a trained room
    /// with no scanner of its own — the one thing the geometry cannot tell. Each trained room's
    /// share is then scaled by its probability from the fingerprints against the best one's
    /// (untrained rooms and the space outside rooms as they are), summing to the filter's total.
    /// Otherwise the filter's own: measured, fingerprints of rooms the scanners can tell made still
    /// tags by walls worse (docs/performance.md, "Learn this room").
    mutating func printedShares(_ filter: PositionFilter, building: Building) -> [Float] {
        guard let prints = rooms.prints.model, let (probabilities, classification) = classifyPrints(),
            let best = classification.room, classification.misfit[best] <= Self.printMisfit,
            prints.zones[best] >= 0, !hasScanner(prints.zones[best], building: building)
        else { return filter.rooms }
        var shares = filter.rooms
        let top = probabilities[best]
        guard top > 0 else { return shares }
        var changed = false
        for (room, zone) in prints.zones.enumerated() where zone >= 0 {
            guard let slot = building.roomSlot(ofZone: zone) else { continue }
            shares[slot] *= Float(probabilities[room] / top)
            changed = true
        }
        guard changed else { return shares }
        let before = filter.rooms.reduce(0, +) + filter.unroomed
        let after = shares.reduce(0, +) + filter.unroomed
        guard after > 0 else { return filter.rooms }
        let scale = before / after
        return shares.map { $0 * scale }
    }

    /// Whether Zone `zone` has a scanner of `building` at one of its locations.
    func hasScanner(_ zone: Int32, building: Building) -> Bool {
        hierarchy.zones[Int(zone)].beacons.contains { building.scannerSlot[$0] != nil }
    }
}
