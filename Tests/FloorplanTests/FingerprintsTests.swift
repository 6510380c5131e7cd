import Floorplan
import Testing

/// The building's fingerprints and the model made of them (docs/behaviour.md §22).
@Suite struct FingerprintsTests {
    /// `seconds` of readings of room `room`, each scanner of `levels` once a second, wobbling by
    /// a fixed ±2 dB pattern.
    static func samples(_ room: String, _ levels: [String: Double], from start: Int64 = 0, seconds: Int = 30)
        -> [FingerprintSample]
    {
        let wobble = [0.0, 1.5, -2, 0.5, -1, 2, -1.5]
        var samples: [FingerprintSample] = []
        for second in 0..<seconds {
            for (index, (scanner, level)) in levels.sorted(by: { $0.key < $1.key }).enumerated() {
                samples.append(
                    FingerprintSample(
                        room: room, scanner: scanner, level: level + wobble[(second * 3 + index) % wobble.count],
                        at: start + Int64(second) * 1_000_000 + Int64(index) * 100_000))
            }
        }
        return samples
    }

    static let kitchen = ["a": -5.0, "b": -20]
    static let office = ["a": -20.0, "b": -6]
    static let bath = ["a": -12.0, "b": -18]

    static func trained() -> Fingerprints {
        var prints = Fingerprints()
        prints.replace(room: "K", with: samples("K", kitchen), device: "phone", at: 30)
        prints.replace(room: "O", with: samples("O", office), device: "phone", at: 60)
        prints.replace(room: "B", with: samples("B", bath), device: "phone", at: 90)
        return prints
    }

    /// A vector every second of each room's samples, each scanner's mean over 5 s.
    @Test func vectorsAreFiveSecondMeansEverySecond() throws {
        var prints = Fingerprints()
        prints.replace(room: "K", with: Self.samples("K", ["a": -5], seconds: 10), device: "p", at: 0)
        let (rooms, scanners, vectors) = prints.vectors()
        #expect(rooms == ["K"] && scanners == ["a"])
        #expect(vectors.count == 6, "\(vectors.count)")
        let first = try #require(vectors.first)
        #expect(first.levels.count == 1)
        // -5 + the mean of the first five seconds' wobbles (0, 0.5, -1.5, -2, 2): -5.2.
        #expect(abs(first.levels[0].level - -5.2) < 1e-9, "\(first.levels)")
    }

    /// Retraining replaces, forgetting forgets (`*` every room), each change a new version;
    /// readings that are no number are not kept.
    @Test func replaceAndForget() {
        var prints = Self.trained()
        let version = prints.version
        prints.replace(room: "K", with: Self.samples("K", Self.kitchen, seconds: 5), device: "tag", at: 100)
        #expect(prints.rooms["K"]?.samples.count == 10 && prints.rooms["K"]?.device == "tag")
        #expect(prints.version > version)
        #expect(prints.forget(room: "O") && !prints.forget(room: "O"))
        #expect(prints.rooms.keys.sorted() == ["B", "K"])
        prints.replace(
            room: "K", with: [FingerprintSample(room: "K", scanner: "a", level: .nan, at: 0)], device: "t", at: 1)
        #expect(prints.rooms["K"] == nil)
        #expect(prints.forget(room: "*") && prints.isEmpty && !prints.forget(room: "*"))
    }

    /// Each room is told from the others; a tag 4 dB quieter too (its offset fits); a vector like
    /// none of them fits none.
    @Test func theModelTellsTheRoomsApart() throws {
        let (_, _, vectors) = Self.trained().vectors()
        let model = FingerprintModel(rooms: 3, scanners: 2, vectors: vectors)
        // Rooms sorted: B, K, O; scanners a, b.
        func room(_ a: Double, _ b: Double, offset: Double = 0) -> Int? {
            model.classify([(0, a), (1, b)], offset: offset).room
        }
        #expect(room(-5, -20) == 1)
        #expect(room(-20, -6) == 2)
        #expect(room(-12, -18) == 0)
        #expect(room(-9, -24) == 1, "4 dB quieter in the kitchen")
        #expect(room(-16, -22) == 0, "4 dB quieter in the bathroom")
        let odd = model.classify([(0, -30), (1, -30)], offset: 0)
        let best = try #require(odd.room)
        #expect(odd.misfit[best] > 4, "\(odd.misfit)")
        let probabilities = model.classify([(0, -5), (1, -20)], offset: 0).probabilities()
        #expect(abs(probabilities.reduce(0, +) - 1) < 1e-9 && probabilities[1] > 0.9, "\(probabilities)")
        #expect(model.classify([], offset: 0).room == nil)
    }

    /// The status says, per room, samples, scanners, who trained it and when, the held-out
    /// accuracy, which rooms it is confused with, and too few samples.
    @Test func theStatusCrossValidates() throws {
        var prints = Self.trained()
        // A second room trained just like the bathroom: the two are confused.
        prints.replace(
            room: "T", with: Self.samples("T", ["a": -11.5, "b": -18], from: 500_000), device: "phone", at: 120)
        prints.replace(room: "S", with: Self.samples("S", ["a": -30, "b": -30], seconds: 4), device: "phone", at: 130)
        let status = Dictionary(uniqueKeysWithValues: prints.status().map { ($0.room, $0) })
        let kitchen = try #require(status["K"])
        #expect(kitchen.samples == 60 && kitchen.scanners == 2 && kitchen.device == "phone" && kitchen.trainedAt == 30)
        #expect(kitchen.accuracy == 1 && kitchen.confusedWith.isEmpty && !kitchen.tooFew)
        let bath = try #require(status["B"])
        #expect((bath.accuracy ?? 1) < 0.8, "\(bath)")
        #expect(bath.confusedWith.first?.room == "T", "\(bath.confusedWith)")
        #expect(status["S"]?.tooFew == true)
        // One room alone: nothing to hold out against.
        var one = Fingerprints()
        one.replace(room: "K", with: Self.samples("K", Self.kitchen), device: "p", at: 0)
        #expect(one.status().first?.accuracy == nil)
    }

    /// Garbage in the samples (out of order, duplicate instants, one scanner's readings only)
    /// gives a model and a status, never a crash.
    @Test func garbageSamplesStillGiveAModel() {
        var prints = Fingerprints()
        let odd = [
            FingerprintSample(room: "K", scanner: "a", level: -200, at: .max),
            FingerprintSample(room: "K", scanner: "a", level: 40, at: .min),
            FingerprintSample(room: "K", scanner: "b", level: -5, at: 0),
            FingerprintSample(room: "K", scanner: "b", level: -5, at: 0),
        ]
        prints.replace(room: "K", with: odd, device: "p", at: 0)
        prints.replace(room: "O", with: Self.samples("O", Self.office, seconds: 2), device: "p", at: 0)
        // Samples a day apart (a database's garbage): an hour of vectors at most, not a day's.
        prints.replace(
            room: "D",
            with: [
                FingerprintSample(room: "D", scanner: "a", level: -5, at: 0),
                FingerprintSample(room: "D", scanner: "a", level: -5, at: 86_400_000_000),
            ], device: "p", at: 0)
        #expect(prints.vectors().vectors.count { $0.room == 0 } <= 3600)
        let status = prints.status()
        #expect(status.count == 3 && status.allSatisfy(\.tooFew))
        let (_, scanners, vectors) = prints.vectors()
        let model = FingerprintModel(rooms: 2, scanners: scanners.count, vectors: vectors)
        #expect(model.classify([(0, .infinity)], offset: 0).scores.count == 2)
    }
}
