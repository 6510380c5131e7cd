import BeaconCore
import Foundation

/// Someone carrying a tag on a ``Floor``: where they are at each instant.
package struct Mover: Sendable {
    /// From `time` on, the mover goes in a straight line towards the next keyframe's point (or
    /// stands, when the next is `nil`); a `nil` point is out of the building. `storey`: the storey
    /// it is on there; between two keyframes of different storeys it climbs (or goes down) the
    /// stairs, between them.
    package struct Keyframe: Sendable {
        package var time: Double
        package var point: Floor.Point?
        package var storey = 0.0
    }

    /// A stay in a room, from arriving in it to leaving it.
    package struct Stop: Sendable {
        package var room: Int
        package var arrive: Double
        package var leave: Double
    }

    package var keyframes: [Keyframe] = []
    package var stops: [Stop] = []
    /// When it left the building and when it came back.
    package var outings: [(leave: Double, back: Double)] = []
    /// A tag that never moves.
    package var stationary = false
    /// When it advertises nothing at all though it is there (a phone's transmit outage).
    package var quiet: [(start: Double, end: Double)] = []

    /// Whether it advertises at `time`.
    package func isQuiet(at time: Double) -> Bool {
        quiet.contains { $0.start <= time && time < $0.end }
    }

    /// Where the mover is at `time`, `nil` out of the building.
    package func position(at time: Double) -> Floor.Point? { place(at: time)?.point }

    /// Where the mover is at `time` and on which storey (between two on the stairs), `nil` out of
    /// the building.
    package func place(at time: Double) -> (point: Floor.Point, storey: Double)? {
        var low = 0
        var high = keyframes.count
        while low < high {
            let middle = (low + high) / 2
            if keyframes[middle].time <= time { low = middle + 1 } else { high = middle }
        }
        guard low > 0, let point = keyframes[low - 1].point else { return nil }
        let storey = keyframes[low - 1].storey
        guard low < keyframes.count, let next = keyframes[low].point else { return (point, storey) }
        let span = keyframes[low].time - keyframes[low - 1].time
        guard span > 0 else { return (point, storey) }
        let share = (time - keyframes[low - 1].time) / span
        return (
            Floor.Point(point.x + (next.x - point.x) * share, point.y + (next.y - point.y) * share),
            storey + (keyframes[low].storey - storey) * share
        )
    }

    /// Walks along `points` on storey `storey` from `start`; returns when it arrives.
    mutating func walk(_ points: [Floor.Point], from start: Double, speed: Double, storey: Int = 0) -> Double {
        var time = start
        for (from, to) in zip(points, points.dropFirst()) {
            time += from.distance(to: to) / speed
            keyframes.append(Keyframe(time: time, point: to, storey: Double(storey)))
        }
        return time
    }
}

/// How the radio between tags and scanners behaves: shadowing correlated in time, fast fading,
/// multipath bursts, and independent or bursty losses (docs/performance.md, "Rooms").
package struct Radio: Sendable {
    /// Log-normal shadowing of each tag–scanner path, dB, and how long it stays correlated, s.
    package var shadowing = 3.0
    package var shadowingTime = 10.0
    /// Independent noise of each reading, dB.
    package var fading = 2.0
    /// Multipath bursts of a path: how many a minute, how deep and how long.
    package var burstsPerMinute = 1.0
    package var burstDepth = 6.0...12.0
    package var burstLength = 1.0...4.0
    /// Instead of bursts, each reading is `multipathDepth` dB down with this probability.
    package var multipathShare: Double?
    package var multipathDepth = 6.0
    /// Advertisements a scanner misses, 0…1, and the mean run of misses (`nil`: independent).
    package var loss = 0.15
    package var lossRun: Double?
    /// Weaker than this is not heard, dBm.
    package var sensitivity = -95.0

    package init() {}
}

/// People with tags walking a ``Floor`` and tags left still in it, and what its scanners hear of
/// them: the room-quality benchmark's input (`scripts/bench rooms`). Seeded: the same settings give
/// the same reports.
package struct FloorSimulation: Sendable {
    /// One advertisement of `tag` heard by `scanner` at `rssi` (what its receiver reads, offset and
    /// noise included), `time` seconds from the start.
    package struct Heard: Sendable {
        package var time: Double
        package var tag: Int
        package var scanner: Int
        package var rssi: Double

        package init(time: Double, tag: Int, scanner: Int, rssi: Double) {
            (self.time, self.tag, self.scanner, self.rssi) = (time, tag, scanner, rssi)
        }
    }

    package var floor: Floor
    package var radio = Radio()
    /// Seconds between two advertisements of a tag.
    package var interval = 1.0
    package var duration = 3600.0
    package var walkers = 10
    package var stationary = 10
    package var seed: UInt64 = 1
    /// A tag's level at 1 m, dBm.
    package var power = -59.0
    /// How scanners hear each other (``heardBetweenScanners(firstTag:interval:)``): through paths
    /// shadowed as tags' are (people walk between them), steady ones (nobody does: the level
    /// ±0.5 dB), or not at all (scanners that do not advertise).
    package enum PairPaths: String, Sendable, CaseIterable {
        case shadowed, steady, absent
    }
    package var pairPaths = PairPaths.shadowed
    /// How much louder the tags are than ``power``, the power they claim, dB (a beacon's claim is
    /// often 5–15 dB off); the scanners still advertise at ``power``.
    package var tagOffset = 0.0
    /// Walking speed, m/s.
    package var speed = 1.2
    package var stay = 30.0...180.0
    /// Still phones that go quiet now and then (iOS's transmit outages, Bermuda #375): every 2 to
    /// 8 minutes nothing for a length drawn from ``outage``.
    package var quietPhones = 0
    package var outage = 20.0...29.0
    /// Seconds a walker walks about each room it arrives in before standing still (0: it stands at once).
    package var wander = 0.0
    /// The chance that a walker leaves the building after a stay, and for how long.
    package var leaving = 0.1
    package var outside = 60.0...300.0
    /// How long a walker who leaves stays within earshot outside the exit, seconds (on the landing,
    /// the steps, the street: issue 71's "leaving"): it walks 2 m out, stands for a length drawn
    /// from this, then walks off out of range; heard meanwhile through the outer wall and the
    /// closed door, ``outsideLoss`` dB. `nil`: silent from the exit on (the bench's rows before).
    package var heardOutside: ClosedRange<Double>?
    package var outsideLoss = 6.0

    package init(floor: Floor) { self.floor = floor }

    /// Every tag's mover: the walkers first, then the still tags.
    package func movers() -> [Mover] {
        var random = SeededGenerator(seed: seed &* 7919 &+ 17)
        var movers: [Mover] = []
        for _ in 0..<walkers { movers.append(walker(random: &random)) }
        for _ in 0..<stationary { movers.append(still(random: &random)) }
        for _ in 0..<quietPhones {
            var phone = still(random: &random)
            var time = Double.random(in: 60...240, using: &random)
            while time < duration {
                let length = Double.random(in: outage, using: &random)
                phone.quiet.append((time, time + length))
                time += length + Double.random(in: 120...480, using: &random)
            }
            movers.append(phone)
        }
        return movers
    }

    func spot(in room: Int, random: inout SeededGenerator) -> Floor.Point {
        Floor.place(in: floor.rooms[room].rect, margin: 0.3, random: &random)
    }

    func walker(random: inout SeededGenerator) -> Mover {
        var mover = Mover()
        var room = Int.random(in: 0..<floor.rooms.count, using: &random)
        var point = spot(in: room, random: &random)
        var time = 0.0
        mover.keyframes.append(Mover.Keyframe(time: 0, point: point, storey: Double(floor.rooms[room].storey)))
        while time < duration {
            let arrive = time
            let length = Double.random(in: stay, using: &random)
            // Walking about the room first (to a desk, a shelf, a colleague), then standing.
            while time < arrive + min(wander, length) {
                let next = spot(in: room, random: &random)
                time = mover.walk([point, next], from: time, speed: speed, storey: floor.rooms[room].storey)
                point = next
            }
            time = max(time, arrive + length)
            mover.keyframes.append(Mover.Keyframe(time: time, point: point, storey: Double(floor.rooms[room].storey)))
            mover.stops.append(Mover.Stop(room: room, arrive: arrive, leave: time))
            var from: Int? = room
            if Double.random(in: 0..<1, using: &random) < leaving {
                time = go(&mover, from: point, in: room, to: floor.exit, in: nil, at: time)
                let out = time
                if let heardOutside {
                    let landing = Floor.Point(floor.exit.x - 2, floor.exit.y)
                    time = mover.walk([floor.exit, landing], from: time, speed: speed)
                    time += Double.random(in: heardOutside, using: &random)
                    mover.keyframes.append(Mover.Keyframe(time: time, point: landing))
                    time = mover.walk([landing, Floor.Point(landing.x - 30, landing.y)], from: time, speed: speed)
                }
                let back = time + Double.random(in: outside, using: &random)
                mover.keyframes.append(Mover.Keyframe(time: time, point: nil))
                mover.outings.append((out, back))
                time = back
                point = floor.exit
                mover.keyframes.append(Mover.Keyframe(time: time, point: point))
                from = nil
            }
            var next = Int.random(in: 0..<floor.rooms.count, using: &random)
            while next == from { next = Int.random(in: 0..<floor.rooms.count, using: &random) }
            let target = spot(in: next, random: &random)
            time = go(&mover, from: point, in: from, to: target, in: next, at: time)
            (room, point) = (next, target)
        }
        return mover
    }

    /// Walks `mover` from `start` in room `from` to `end` in room `to` (`nil`: outside, by the exit
    /// of the ground storey) from `time`; returns when it arrives. On one storey by
    /// ``Floor/route(from:in:to:in:)``; to another by the stairs: to them on this storey, up or
    /// down them (``Floor/climb`` seconds a storey), and on from them on the other.
    func go(
        _ mover: inout Mover, from start: Floor.Point, in from: Int?, to end: Floor.Point, in to: Int?, at time: Double
    )
        -> Double
    {
        let here = from.map { floor.rooms[$0].storey } ?? 0
        let there = to.map { floor.rooms[$0].storey } ?? 0
        guard here != there, let stairs = floor.stairs else {
            return mover.walk(
                floor.route(from: start, in: from, to: end, in: to), from: time, speed: speed, storey: here)
        }
        var time = mover.walk(
            floor.route(from: start, in: from, to: stairs, in: floor.room(at: stairs, storey: here)), from: time,
            speed: speed, storey: here)
        let step = there > here ? 1 : -1
        for storey in stride(from: here + step, through: there, by: step) {
            time += floor.climb
            mover.keyframes.append(Mover.Keyframe(time: time, point: stairs, storey: Double(storey)))
        }
        return mover.walk(
            floor.route(from: stairs, in: floor.room(at: stairs, storey: there), to: end, in: to), from: time,
            speed: speed, storey: there)
    }

    /// A tag left by a wall or in a doorway of a room, 0.3 to 0.6 m inside it.
    func still(random: inout SeededGenerator) -> Mover {
        let room = Int.random(in: 0..<floor.rooms.count, using: &random)
        let rect = floor.rooms[room].rect
        let inset = Double.random(in: 0.3...0.6, using: &random)
        let along = Double.random(in: 0...1, using: &random)
        let point: Floor.Point
        if let door = floor.rooms[room].door, Bool.random(using: &random) {
            point = Floor.Point(door.x + Double.random(in: -0.4...0.4, using: &random), door.y + inset)
        } else {
            switch Int.random(in: 0..<4, using: &random) {
            case 0: point = Floor.Point(rect.x0 + inset, rect.y0 + along * (rect.y1 - rect.y0))
            case 1: point = Floor.Point(rect.x1 - inset, rect.y0 + along * (rect.y1 - rect.y0))
            case 2: point = Floor.Point(rect.x0 + along * (rect.x1 - rect.x0), rect.y0 + inset)
            default: point = Floor.Point(rect.x0 + along * (rect.x1 - rect.x0), rect.y1 - inset)
            }
        }
        let storey = floor.rooms[room].storey
        var mover = Mover(stationary: true)
        mover.keyframes = [Mover.Keyframe(time: 0, point: point, storey: Double(storey))]
        mover.stops = [Mover.Stop(room: floor.room(at: point, storey: storey) ?? room, arrive: 0, leave: duration)]
        return mover
    }

    /// A walker going along `points` and back for the whole run: at `speed` (m/s), or taking
    /// `segment` seconds over each leg whatever its length (the ESPresense companion's harness
    /// samples each leg alike: docs/companion-harness.md).
    package func shuttle(along points: [Floor.Point], speed: Double = 0.5, segment: Double? = nil) -> Mover {
        var mover = Mover()
        guard let first = points.first else { return mover }
        mover.keyframes.append(Mover.Keyframe(time: 0, point: first))
        var time = 0.0
        var forward = true
        while time < duration, points.count > 1 {
            let path = forward ? points : points.reversed()
            for (from, to) in zip(path, path.dropFirst()) {
                let legSpeed = segment.map { from.distance(to: to) / max($0, 1e-3) } ?? speed
                time = mover.walk([from, to], from: time, speed: max(legSpeed, 1e-3))
            }
            forward.toggle()
        }
        return mover
    }

    /// The state of one tag–scanner path.
    struct Path {
        var time = -Double.infinity
        var shadow = 0.0
        var burstUntil = -Double.infinity
        var burstDepth = 0.0
        var losing = false
    }

    /// Moves `path`'s shadowing on to `time` (log-normal, correlated over
    /// ``Radio/shadowingTime``); returns the seconds since it was last moved.
    @discardableResult
    func shadow(_ path: inout Path, to time: Double, random: inout SeededGenerator) -> Double {
        let elapsed = time - path.time
        path.time = time
        let keep = elapsed.isFinite ? exp(-max(0, elapsed) / radio.shadowingTime) : 0
        path.shadow =
            path.shadow * keep + (1 - keep * keep).squareRoot() * radio.shadowing * WalkSimulation.gaussian(&random)
        return elapsed
    }

    /// What a receiver reads of an advertisement whose mean level on `path` is `mean` at `time`,
    /// `elapsed` after the path's last: fading, multipath and Gilbert–Elliott losses (a lost
    /// advertisement starts a run of mean ``Radio/lossRun``) added; `nil` when lost or under the
    /// sensitivity.
    func receive(
        _ mean: Double, on path: inout Path, at time: Double, after elapsed: Double,
        losses: (start: Double, end: Double), random: inout SeededGenerator
    ) -> Double? {
        var level = mean + radio.fading * WalkSimulation.gaussian(&random)
        if let share = radio.multipathShare {
            if Double.random(in: 0..<1, using: &random) < share { level -= radio.multipathDepth }
        } else {
            if time >= path.burstUntil,
                Double.random(in: 0..<1, using: &random) < 1 - exp(-min(elapsed, 60) * radio.burstsPerMinute / 60)
            {
                path.burstUntil = time + Double.random(in: radio.burstLength, using: &random)
                path.burstDepth = Double.random(in: radio.burstDepth, using: &random)
            }
            if time < path.burstUntil { level -= path.burstDepth }
        }
        let draw = Double.random(in: 0..<1, using: &random)
        path.losing = path.losing ? draw >= losses.end : draw < losses.start
        guard !path.losing, level >= radio.sensitivity else { return nil }
        return level.rounded()
    }

    /// What the scanners hear of `movers`' tags, in time order (a tag's readings of one
    /// advertisement in scanner order).
    package func heard(_ movers: [Mover]) -> [Heard] {
        var random = SeededGenerator(seed: seed &* 104_729 &+ 3)
        var heard: [Heard] = []
        heard.reserveCapacity(Int(duration / interval) * movers.count * floor.scanners.count / 2)
        let lossEnd = radio.lossRun.map { 1 / max($0, 1) } ?? 1
        let lossStart = radio.lossRun.map { _ in radio.loss * lossEnd / max(1 - radio.loss, 1e-9) } ?? radio.loss
        for (tag, mover) in movers.enumerated() {
            var paths = [Path](repeating: Path(), count: floor.scanners.count)
            var time = Double.random(in: 0..<interval, using: &random)
            while time < duration {
                defer { time += interval + Double.random(in: 0..<0.01, using: &random) }
                guard let place = mover.place(at: time), !mover.isQuiet(at: time) else { continue }
                // Outside every room, west of the building (every floor's exit is on its west side).
                let outdoors =
                    heardOutside != nil && place.point.x < 0
                    && floor.room(at: place.point, storey: Int(place.storey.rounded())) == nil
                for scanner in floor.scanners.indices {
                    var path = paths[scanner]
                    defer { paths[scanner] = path }
                    let elapsed = shadow(&path, to: time, random: &random)
                    var mean =
                        floor.level(power + tagOffset, from: place.point, storey: place.storey, at: scanner)
                        + floor.scanners[scanner].offset + path.shadow
                    if outdoors { mean -= outsideLoss }
                    guard
                        let rssi = receive(
                            mean, on: &path, at: time, after: elapsed, losses: (lossStart, lossEnd), random: &random)
                    else { continue }
                    heard.append(Heard(time: time, tag: tag, scanner: scanner, rssi: rssi))
                }
            }
        }
        heard.sort { ($0.time, $0.tag, $0.scanner) < ($1.time, $1.tag, $1.scanner) }
        return heard
    }

    /// What the scanners hear of each other when each also advertises every `interval` seconds at
    /// the tags' power (ESPresense nodes do, docs/espresense.md): tag `firstTag + s` is scanner `s`.
    /// The path between two scanners is one both ways (the same shadowing, each direction its own
    /// noise, bursts and losses); each receiver adds its own offset. Its own random draws: the
    /// tags' readings are the same with or without it.
    package func heardBetweenScanners(firstTag: Int, interval: Double = 1) -> [Heard] {
        guard pairPaths != .absent else { return [] }
        var random = SeededGenerator(seed: seed &* 15_485_863 &+ 5)
        let count = floor.scanners.count
        var heard: [Heard] = []
        var shared = [Path](repeating: Path(), count: count * count)
        var paths = [Path](repeating: Path(), count: count * count)
        let lossEnd = radio.lossRun.map { 1 / max($0, 1) } ?? 1
        let lossStart = radio.lossRun.map { _ in radio.loss * lossEnd / max(1 - radio.loss, 1e-9) } ?? radio.loss
        // Every scanner's next advertisement; the earliest goes first, so a path shared both
        // ways moves forward in time.
        var next = (0..<count).map { _ in Double.random(in: 0..<interval, using: &random) }
        while let transmitter = next.indices.min(by: { next[$0] < next[$1] }), next[transmitter] < duration {
            let time = next[transmitter]
            next[transmitter] += interval + Double.random(in: 0..<0.01, using: &random)
            let point = floor.scanners[transmitter].at
            for receiver in 0..<count where receiver != transmitter {
                let pair = min(receiver, transmitter) * count + max(receiver, transmitter)
                shadow(&shared[pair], to: time, random: &random)
                if pairPaths == .steady {
                    let steady =
                        floor.level(
                            power, from: point, storey: Double(floor.storey(ofScanner: transmitter)), at: receiver)
                        + floor.scanners[receiver].offset + 0.5 * WalkSimulation.gaussian(&random)
                    if steady >= radio.sensitivity {
                        heard.append(
                            Heard(time: time, tag: firstTag + transmitter, scanner: receiver, rssi: steady.rounded()))
                    }
                    continue
                }
                var path = paths[receiver * count + transmitter]
                defer { paths[receiver * count + transmitter] = path }
                let elapsed = time - path.time
                path.time = time
                let mean =
                    floor.level(power, from: point, storey: Double(floor.storey(ofScanner: transmitter)), at: receiver)
                    + floor.scanners[receiver].offset
                    + shared[pair].shadow
                guard
                    let rssi = receive(
                        mean, on: &path, at: time, after: elapsed, losses: (lossStart, lossEnd), random: &random)
                else { continue }
                heard.append(Heard(time: time, tag: firstTag + transmitter, scanner: receiver, rssi: rssi))
            }
        }
        heard.sort { ($0.time, $0.tag, $0.scanner) < ($1.time, $1.tag, $1.scanner) }
        return heard
    }

    /// `heard` as trace lines of scanner reports (docs/behaviour.md §3.3, §19), starting at
    /// `start` (seconds since 1970); tags named `t1`, `t2`… as ``Floor/ini(tags:extra:)`` declares them.
    package func trace(_ heard: [Heard], start: Double = 1_700_000_000) -> String {
        var text = ""
        for reading in heard {
            let milliseconds = Int64(((start + reading.time) * 1000).rounded())
            let time = "\(milliseconds / 1000).\(String(milliseconds % 1000).leftPadded(to: 3))"
            text +=
                "{\"t\": \(time), \"scanner\": \"\(floor.scanners[reading.scanner].id)\", \"tag\": \"t\(reading.tag + 1)\", "
                + "\"rssi\": \(Int(reading.rssi)), \"power\": \(Int(power))}\n"
        }
        return text
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

extension Mover {
    /// A mover along `keyframes` written by the caller (the occupancy benchmark's people, who sit
    /// and walk on their own schedule).
    package init(along keyframes: [Keyframe], stationary: Bool = false) {
        self.init(keyframes: keyframes, stationary: stationary)
    }
}

extension Mover.Keyframe {
    /// At `point` (`nil`: out of the building) on the ground storey from `time`.
    package init(at time: Double, point: Floor.Point?) { self.init(time: time, point: point) }
}
