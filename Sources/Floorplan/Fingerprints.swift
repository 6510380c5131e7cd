import Foundation

/// One labelled reading of training (docs/behaviour.md §22): while a tag stood in `room` (a Zone's
/// region, `UUID:major`), the scanner at Location ID `scanner` heard it `level` dB above its
/// measured power (the scanner's offset added), at `at` (µs).
package struct FingerprintSample: Sendable, Hashable {
    package var room: String
    package var scanner: String
    package var level: Double
    package var at: Int64

    package init(room: String, scanner: String, level: Double, at: Int64) {
        (self.room, self.scanner, self.level, self.at) = (room, scanner, level, at)
    }
}

/// A building's training (docs/behaviour.md §22): each room's samples from its last session, who
/// trained it and when. It belongs to the building, not to a tag: one phone's training serves
/// every tag. A value: the table of devices holds it, the state database keeps it, and each tag's
/// monitor reads a ``FingerprintModel`` made from it.
package struct Fingerprints: Sendable, Hashable {
    /// One room's training.
    package struct Room: Sendable, Hashable {
        /// In time order.
        package var samples: [FingerprintSample]
        /// The tag that trained it.
        package var device: String
        /// When its session ended (µs).
        package var trainedAt: Int64

        package init(samples: [FingerprintSample], device: String, trainedAt: Int64) {
            (self.samples, self.device, self.trainedAt) = (samples, device, trainedAt)
        }

        /// The scanners that heard it, sorted.
        package var scanners: [String] { Array(Set(samples.map(\.scanner))).sorted() }
    }

    /// By room (a Zone's region).
    package private(set) var rooms: [String: Room] = [:]
    /// Counts every change: a monitor's model is made again when it differs.
    package private(set) var version = 0

    package init() {}

    /// A building trained with `rooms`.
    package init(rooms: [String: Room]) {
        self.rooms = rooms.filter { !$0.value.samples.isEmpty }
        version = self.rooms.isEmpty ? 0 : 1
    }

    package var isEmpty: Bool { rooms.isEmpty }

    /// Room `room`'s training replaced by `samples` (retraining replaces; none: the room is
    /// forgotten).
    package mutating func replace(room: String, with samples: [FingerprintSample], device: String, at time: Int64) {
        let ordered = samples.filter(\.level.isFinite).sorted { ($0.at, $0.scanner) < ($1.at, $1.scanner) }
        rooms[room] = ordered.isEmpty ? nil : Room(samples: ordered, device: device, trainedAt: time)
        version &+= 1
    }

    /// Forgets room `room`'s training, every room's for `*`. Whether anything was forgotten.
    @discardableResult
    package mutating func forget(room: String) -> Bool {
        if room == "*" {
            guard !rooms.isEmpty else { return false }
            rooms = [:]
        } else {
            guard rooms.removeValue(forKey: room) != nil else { return false }
        }
        version &+= 1
        return true
    }

    /// Every sample, by room then time (what the state database keeps).
    package var samples: [FingerprintSample] {
        rooms.keys.sorted().flatMap { rooms[$0]?.samples ?? [] }
    }

    // MARK: - Vectors

    /// A training vector: each scanner's mean level over ``window`` (µs), those that heard the
    /// tag in it.
    package struct Vector: Sendable, Hashable {
        package var room: Int
        package var start: Int64
        /// By scanner index of the model, its mean level; only those heard.
        package var levels: [(slot: Int, level: Double)]

        package static func == (a: Vector, b: Vector) -> Bool {
            a.room == b.room && a.start == b.start && a.levels.elementsEqual(b.levels) { $0 == $1 }
        }
        package func hash(into hasher: inout Hasher) {
            hasher.combine(room)
            hasher.combine(start)
        }
    }

    /// The span one vector averages, µs: at classification, the tag's readings of the last 5 s.
    package static let window: Int64 = 5_000_000
    /// Training vectors start every second.
    static let step: Int64 = 1_000_000
    /// The most vectors a room gives: an hour of them (a session is ten minutes at most).
    static let mostVectors = 3600

    /// Each room's vectors (a window every second from its first sample), with the rooms and the
    /// scanners they are numbered by (both sorted).
    package func vectors() -> (rooms: [String], scanners: [String], vectors: [Vector]) {
        let names = rooms.keys.sorted()
        let scanners = Array(Set(rooms.values.flatMap { $0.samples.map(\.scanner) })).sorted()
        let slot = Dictionary(uniqueKeysWithValues: scanners.enumerated().map { ($1, $0) })
        var vectors: [Vector] = []
        for (index, name) in names.enumerated() {
            guard let samples = rooms[name]?.samples, let first = samples.first?.at, let last = samples.last?.at
            else { continue }
            // A session shorter than a window gives one vector; longer ones a window a second, at
            // most ``mostVectors`` (times read back from a database may be anything).
            let (span, overflow) = last.subtractingReportingOverflow(first)
            let count =
                overflow || span > Self.window &* Int64(Self.mostVectors)
                ? Self.mostVectors : span < Self.window ? 1 : Int((span - Self.window) / Self.step) + 2
            var from = 0
            for k in 0..<min(count, Self.mostVectors) {
                let start = first &+ Int64(k) &* Self.step
                while from < samples.count, samples[from].at < start { from += 1 }
                var sums = [Int: (Double, Int)]()
                var cursor = from
                while cursor < samples.count, samples[cursor].at < start &+ Self.window {
                    if let s = slot[samples[cursor].scanner] {
                        let (sum, count) = sums[s] ?? (0, 0)
                        sums[s] = (sum + samples[cursor].level, count + 1)
                    }
                    cursor += 1
                }
                let levels = sums.keys.sorted().compactMap { key in
                    sums[key].map { (slot: key, level: $0.0 / Double($0.1)) }
                }
                if !levels.isEmpty { vectors.append(Vector(room: index, start: start, levels: levels)) }
            }
        }
        return (names, scanners, vectors)
    }

    // MARK: - How well each room is known

    /// What the daemon knows of one room (docs/behaviour.md §22): its samples and scanners, when
    /// and by whom it was trained, and the share of its held-out vectors placed in it by the rest
    /// of the training (`nil` with too few), with the rooms they were placed in instead.
    package struct Status: Sendable, Hashable {
        package var room: String
        package var samples: Int
        package var scanners: Int
        package var device: String
        package var trainedAt: Int64
        /// Cross-validated: held-out vectors placed in this room, 0–1.
        package var accuracy: Double?
        /// Where its held-out vectors went instead: room, share, most first.
        package var confusedWith: [(room: String, share: Double)]
        /// Too few samples to trust: say so, and train longer.
        package var tooFew: Bool

        package static func == (a: Status, b: Status) -> Bool {
            a.room == b.room && a.samples == b.samples && a.scanners == b.scanners && a.device == b.device
                && a.trainedAt == b.trainedAt && a.accuracy == b.accuracy && a.tooFew == b.tooFew
                && a.confusedWith.elementsEqual(b.confusedWith) { $0 == $1 }
        }
        package func hash(into hasher: inout Hasher) { hasher.combine(room) }
    }

    /// Fewer samples, or fewer vectors, than these: too few to trust (about 20 s of a 1 Hz tag).
    package static let fewestSamples = 20
    package static let fewestVectors = 10
    /// The cross-validation's folds: each room's vectors in this many spans of time.
    static let folds = 5

    /// Each room's status, by room; the accuracy cross-validated over ``folds`` spans of time of
    /// every room (a span held out, the model made from the rest: vectors next in time are alike,
    /// so holding out single vectors would flatter it).
    package func status() -> [Status] {
        let (names, scanners, vectors) = self.vectors()
        var right = Array(repeating: 0, count: names.count)
        var total = Array(repeating: 0, count: names.count)
        var placed = Array(repeating: [Int: Int](), count: names.count)
        if names.count > 1 {
            var byRoom = Array(repeating: [Vector](), count: names.count)
            for vector in vectors { byRoom[vector.room].append(vector) }
            func fold(_ vector: Vector) -> Int {
                let mine = byRoom[vector.room]
                let index = mine.firstIndex { $0.start == vector.start } ?? 0
                return index * Self.folds / max(1, mine.count)
            }
            let folds = vectors.map(fold)
            for held in 0..<Self.folds {
                let training = zip(vectors, folds).filter { $0.1 != held }.map(\.0)
                let model = FingerprintModel(rooms: names.count, scanners: scanners.count, vectors: training)
                for (vector, index) in zip(vectors, folds) where index == held {
                    guard let room = model.classify(vector.levels, offset: 0).room else { continue }
                    total[vector.room] += 1
                    if room == vector.room {
                        right[vector.room] += 1
                    } else {
                        placed[vector.room][room, default: 0] += 1
                    }
                }
            }
        }
        return names.enumerated().map { index, name in
            let room = rooms[name] ?? Room(samples: [], device: "", trainedAt: 0)
            let count = vectors.count { $0.room == index }
            let tooFew = room.samples.count < Self.fewestSamples || count < Self.fewestVectors
            let confused = placed[index].sorted { ($1.value, $0.key) < ($0.value, $1.key) }.map {
                (room: names[$0.key], share: Double($0.value) / Double(max(1, total[index])))
            }
            return Status(
                room: name, samples: room.samples.count, scanners: room.scanners.count, device: room.device,
                trainedAt: room.trainedAt,
                accuracy: total[index] > 0 ? Double(right[index]) / Double(total[index]) : nil,
                confusedWith: confused, tooFew: tooFew)
        }
    }
}

/// Rooms learned from training vectors (docs/behaviour.md §22; docs/architecture.md says why
/// this classifier): per room and scanner, the mean and spread of the scanner's 5-s mean level
/// and the share of the room's vectors it heard. A reading vector's likelihood in a room allows
/// the tag an offset of its own (a tag that hears 4 dB quieter than the phone that trained is not
/// in another room): the offset that fits the room best, drawn towards the tag's learned one.
package struct FingerprintModel: Sendable, Hashable {
    package let rooms: Int
    package let scanners: Int
    /// By `room * scanners + scanner`.
    package let mean: [Double]
    package let sigma: [Double]
    package let heard: [Double]

    /// The least spread of a scanner's level in a room, dB: a test reading is one 5-s mean, and
    /// some rooms' training is a still tag.
    static let leastSigma = 2.5
    /// The share of a room's vectors a scanner is taken to hear at least and at most: never
    /// certain either way.
    static let leastShare = 0.05
    /// How far a tag's offset is expected to stray from its learned one, dB.
    package static let offsetSpread = 3.0
    /// A level heard where training never heard that scanner: as likely as any within this
    /// spread, dB.
    static let unheardSpread = 10.0

    /// The model of `vectors` of `rooms` rooms over `scanners` scanners.
    package init(rooms: Int, scanners: Int, vectors: [Fingerprints.Vector]) {
        self.rooms = rooms
        self.scanners = scanners
        let cells = rooms * scanners
        var sum = Array(repeating: 0.0, count: cells)
        var squares = Array(repeating: 0.0, count: cells)
        var count = Array(repeating: 0, count: cells)
        var vectorsOf = Array(repeating: 0, count: rooms)
        for vector in vectors where vector.room < rooms {
            vectorsOf[vector.room] += 1
            for (slot, level) in vector.levels where slot < scanners {
                let cell = vector.room * scanners + slot
                sum[cell] += level
                squares[cell] += level * level
                count[cell] += 1
            }
        }
        var mean = Array(repeating: 0.0, count: cells)
        var sigma = Array(repeating: Self.leastSigma, count: cells)
        var heard = Array(repeating: 0.0, count: cells)
        for cell in 0..<cells where count[cell] > 0 {
            let n = Double(count[cell])
            mean[cell] = sum[cell] / n
            let variance = max(0, squares[cell] / n - mean[cell] * mean[cell])
            sigma[cell] = max(Self.leastSigma, variance.squareRoot())
            heard[cell] = n / Double(max(1, vectorsOf[cell / scanners]))
        }
        (self.mean, self.sigma, self.heard) = (mean, sigma, heard)
    }

    /// The rooms' log-likelihoods of `levels` (a scanner index and its mean level, each heard
    /// scanner once), the best room (`nil` when there is none) and the offset that fits it,
    /// for a tag whose learned offset is `offset`.
    package func classify(_ levels: [(slot: Int, level: Double)], offset: Double) -> Classification {
        var scores = Array(repeating: -Double.infinity, count: rooms)
        var offsets = Array(repeating: offset, count: rooms)
        var misfit = Array(repeating: 0.0, count: rooms)
        guard !levels.isEmpty else { return Classification(scores: scores, offsets: offsets, misfit: misfit) }
        let prior = 1 / (Self.offsetSpread * Self.offsetSpread)
        let lowShare = log(Self.leastShare)
        let unheard = lowShare - log(Self.unheardSpread)
        for room in 0..<rooms {
            let base = room * scanners
            // The offset that fits best: each heard scanner's departure weighed by its precision,
            // with the learned offset as one more reading of spread offsetSpread.
            var (weighted, weights) = (offset * prior, prior)
            for (slot, level) in levels where slot < scanners && heard[base + slot] > 0 {
                let precision = 1 / (sigma[base + slot] * sigma[base + slot])
                weighted += (level - mean[base + slot]) * precision
                weights += precision
            }
            let own = weighted / weights
            let stray = (own - offset) * (own - offset) * prior
            var score = -0.5 * stray
            // The offset's stray from the learned one counts as one more departure.
            var squares = stray
            var index = 0
            for slot in 0..<scanners {
                let cell = base + slot
                let share = min(max(heard[cell], Self.leastShare), 1 - Self.leastShare)
                while index < levels.count, levels[index].slot < slot { index += 1 }
                if index < levels.count, levels[index].slot == slot {
                    if heard[cell] > 0 {
                        let z = (levels[index].level - mean[cell] - own) / sigma[cell]
                        score += log(share) - log(sigma[cell]) - 0.5 * z * z
                        squares += z * z
                    } else {
                        score += unheard
                        squares += 9
                    }
                } else {
                    score += log(1 - share)
                }
            }
            scores[room] = score
            offsets[room] = own
            misfit[room] = squares / Double(levels.count)
        }
        return Classification(scores: scores, offsets: offsets, misfit: misfit)
    }

    /// What ``classify(_:offset:)`` found.
    package struct Classification: Sendable, Hashable {
        /// Each room's log-likelihood.
        package var scores: [Double]
        /// The tag's offset that fits each room best, dB.
        package var offsets: [Double]
        /// Each room's mean squared departure per heard scanner (the offset's from the learned
        /// one among them), in spreads: about 1 where the readings are like the room's training,
        /// far more where they are not.
        package var misfit: [Double]

        /// The likeliest room (the first of equals), `nil` for none.
        package var room: Int? {
            var best: Int?
            for index in scores.indices where scores[index] > -.infinity {
                if best.map({ scores[index] > scores[$0] }) ?? true { best = index }
            }
            return best
        }

        /// The rooms' probabilities, each score raised to `sharpness` (a 5-s vector is not
        /// independent of the last one): summing to 1; empty without a room.
        package func probabilities(sharpness: Double = 1) -> [Double] {
            guard let best = room else { return [] }
            let top = scores[best]
            let weights = scores.map { $0 > -.infinity ? exp(sharpness * ($0 - top)) : 0 }
            let total = weights.reduce(0, +)
            return weights.map { $0 / total }
        }
    }
}
