import Foundation
import Testing

@testable import Floorplan

/// The position estimator on small floors (docs/behaviour.md §20).
struct PositionFilterTests {
    /// Two 4 × 4 m rooms side by side sharing a wall at x = 4, a scanner in each; with `door`, a
    /// 1 m door in the shared wall.
    static func twoRooms(door: Bool = false, scannerA: PlanPoint = PlanPoint(1, 2)) -> FloorMap {
        let a = [PlanPoint(0, 0), PlanPoint(4, 0), PlanPoint(4, 4), PlanPoint(0, 4)]
        let b = [PlanPoint(4, 0), PlanPoint(8, 0), PlanPoint(8, 4), PlanPoint(4, 4)]
        return FloorMap(
            FloorPlan(
                area: 0, rooms: [.init(zone: 0, polygon: a), .init(zone: 1, polygon: b)],
                scanners: [
                    .init(location: 0, point: scannerA, z: 1), .init(location: 1, point: PlanPoint(7, 2), z: 1),
                ],
                doors: door ? [PlanSegment(PlanPoint(4, 1.5), PlanPoint(4, 2.5))] : []))
    }

    /// What scanner `slot` reads of a tag at `point` on `map` with `radio`, without noise.
    static func level(_ map: FloorMap, _ radio: RadioModel, slot: Int, at point: PlanPoint) -> Double {
        let scanner = map.plan.scanners[slot].point
        return radio.level(
            distance: point.distance(to: scanner), walls: Double(map.walls(from: scanner, to: point)))
    }

    @Test func readingsThatFitAPointPutTheTagInItsRoom() {
        let map = Self.twoRooms()
        let building = Building(map)
        let radio = RadioModel(exponent: 2.5, wallLoss: 5)
        let settings = PositionSettings(floors: [0: map])
        var filter = PositionFilter(building: building)
        // By the shared wall on room A's side: nearer B's scanner (3.5 m) than A's (2.5 m)? No:
        // 3.5 m from A's scanner, 3.5 m from B's, and B's reading loses the wall.
        let tag = PlanPoint(3.5, 2)
        for second in 0..<10 {
            for slot in 0..<2 {
                filter.observe(
                    slot: slot, level: Self.level(map, radio, slot: slot, at: tag), at: Int64(second) * 1_000_000,
                    building: building, radio: radio, settings: settings)
            }
        }
        #expect(filter.rooms[0] > 0.8)
        let (point, error) = filter.estimate(building: building)
        #expect(point.distance(to: tag) < 1.5)
        #expect(error < 2)
    }

    /// A scanner that heard the tag and has gone quiet while the other hears it: unexplained
    /// where it would hear the tag at the audible level, explained where the tag is beyond it.
    @Test func aSilenceIsExplainedOnlyWhereTheScannerCouldNotHear() {
        let map = Self.twoRooms()
        let building = Building(map)
        let radio = RadioModel(exponent: 2.5, wallLoss: 5)
        let settings = PositionSettings(floors: [0: map])
        func filter(at tag: PlanPoint, silentFrom: Int) -> PositionFilter {
            var filter = PositionFilter(building: building)
            for second in 0..<30 {
                for slot in 0..<2 where slot == 1 || second < silentFrom {
                    filter.observe(
                        slot: slot, level: Self.level(map, radio, slot: slot, at: tag),
                        at: Int64(second) * 1_000_000, building: building, radio: radio, settings: settings)
                }
            }
            return filter
        }
        let now: Int64 = 29_000_000
        // By A's scanner (-5 dB there), A silent for 14 s: unexplained.
        let near = filter(at: PlanPoint(1.5, 2), silentFrom: 15)
        #expect(near.silenceUnexplained(within: 10, of: now, building: building, radio: radio, audible: -30))
        // Silent for 5 s only: not yet.
        #expect(
            !filter(at: PlanPoint(1.5, 2), silentFrom: 25).silenceUnexplained(
                within: 10, of: now, building: building, radio: radio, audible: -30))
        // Where A would read the tag at -25 dB through the wall, an audible level of -15 explains the silence.
        let far = filter(at: PlanPoint(7.5, 2), silentFrom: 15)
        #expect(far.silenceUnexplained(within: 10, of: now, building: building, radio: radio, audible: -30))
        #expect(!far.silenceUnexplained(within: 10, of: now, building: building, radio: radio, audible: -15))
        // A scanner that never heard the tag, or nobody heard lately: nothing to explain.
        #expect(
            !filter(at: PlanPoint(1.5, 2), silentFrom: 0).silenceUnexplained(
                within: 10, of: now, building: building, radio: radio, audible: -30))
        #expect(
            !near.silenceUnexplained(within: 10, of: now + 20_000_000, building: building, radio: radio, audible: -30))
        // Garbage windows and times never trap.
        #expect(!near.silenceUnexplained(within: .nan, of: .max, building: building, radio: radio, audible: -30))
        _ = near.silenceUnexplained(within: -.infinity, of: .min, building: building, radio: radio, audible: .nan)
    }

    @Test func aWallWithADoorIsCrossedOnlyThere() {
        let map = Self.twoRooms(door: true)
        let building = Building(map)
        var filter = PositionFilter(building: building)
        // All the probability in one cell of room A far from the door.
        let start = map.cell(at: PlanPoint(3.75, 0.25))!
        for index in filter.probability.indices { filter.probability[index] = index == start ? 1 : 0 }
        for _ in 0..<4 { filter.pass(map: map, from: 0) }
        // The cell just across the wall got nothing; the cell beside it in room A did.
        #expect(filter.probability[map.cell(at: PlanPoint(4.25, 0.25))!] == 0)
        #expect(filter.probability[map.cell(at: PlanPoint(3.25, 0.25))!] > 0)
        // Without doors rooms connect all along the shared edge.
        let open = Self.twoRooms()
        var spread = PositionFilter(building: Building(open))
        for index in spread.probability.indices { spread.probability[index] = index == start ? 1 : 0 }
        for _ in 0..<4 { spread.pass(map: open, from: 0) }
        #expect(spread.probability[open.cell(at: PlanPoint(4.25, 0.25))!] > 0)
        // Mass is kept.
        #expect(abs(filter.probability.reduce(0, +) - 1) < 1e-5)
    }

    @Test func garbageReadingsChangeNothing() {
        let map = Self.twoRooms()
        let building = Building(map)
        let settings = PositionSettings(floors: [0: map])
        var filter = PositionFilter(building: building)
        let before = filter.probability
        for level in [Double.nan, .infinity, -.infinity] {
            filter.observe(slot: 0, level: level, at: 0, building: building, radio: RadioModel(), settings: settings)
        }
        filter.observe(slot: 7, level: -10, at: 0, building: building, radio: RadioModel(), settings: settings)
        filter.observe(slot: -1, level: -10, at: 0, building: building, radio: RadioModel(), settings: settings)
        #expect(filter.probability == before)
        // Readings far outside any table and time that runs backwards or overflows are taken safely.
        filter.observe(slot: 0, level: 500, at: .max, building: building, radio: RadioModel(), settings: settings)
        filter.observe(slot: 1, level: -500, at: .min + 1, building: building, radio: RadioModel(), settings: settings)
        #expect(abs(filter.probability.reduce(0, +) - 1) < 1e-4)
        #expect(filter.probability.allSatisfy { $0.isFinite && $0 >= 0 })
    }

    @Test func theRadioIsLearnedFromScannerPairs() throws {
        let truth = RadioModel(bias: -2, exponent: 2.8, wallLoss: 4.5)
        var pairs: [RadioModel.Pair] = []
        for (distance, walls) in [(2.0, 0.0), (4.0, 1.0), (6.0, 0.0), (8.0, 2.0), (3.0, 1.0), (10.0, 1.0)] {
            pairs.append(.init(distance: distance, walls: walls, level: truth.level(distance: distance, walls: walls)))
        }
        let fitted = RadioModel.fit(pairs)
        #expect(fitted != nil)
        #expect(abs((fitted?.exponent ?? 0) - 2.8) < 0.05)
        #expect(abs((fitted?.wallLoss ?? 0) - 4.5) < 0.05)
        #expect(abs((fitted?.bias ?? 0) + 2) < 0.3)
        // Pairs all 5.5–7.5 m apart (a two-storey house's) say little of power and exponent apart:
        // the usual values decide, not a fit of 9 dB and 3.6 that explains them as well.
        let house = RadioModel(exponent: 2.5, wallLoss: 5, floorLoss: 13)
        let alike = [
            (6.0, 1.0, 0.0), (5.6, 0.0, 0.0), (3.0, 0.0, 1.0), (7.4, 1.0, 0.0), (5.5, 0.0, 0.0), (7.1, 1.0, 0.0),
        ]
        .enumerated().map { index, pair in
            RadioModel.Pair(
                distance: pair.0, walls: pair.1, floors: pair.2,
                level: house.level(distance: pair.0, walls: pair.1, floors: pair.2) + (index % 2 == 0 ? 0.5 : -0.5))
        }
        let usual = try #require(RadioModel.fit(alike))
        #expect(abs(usual.bias) < 1.5 && abs(usual.exponent - 2.5) < 0.3, "\(usual)")
        #expect(abs(usual.floorLoss - 13) < 2, "\(usual)")
        #expect(RadioModel.fit(Array(pairs.prefix(2))) == nil)
        // An open plan: every pair crosses one edge between zones, which weakens nothing. The
        // loss of those "walls" is learned (0), with the power at 1 m taken as 0.
        let open = RadioModel(exponent: 2.4, wallLoss: 0)
        let crossing = [2.0, 4.0, 6.0, 8.0].map {
            RadioModel.Pair(distance: $0, walls: 1, level: open.level(distance: $0, walls: 1))
        }
        let learned = try #require(RadioModel.fit(crossing))
        #expect(abs(learned.wallLoss) < 0.01 && abs(learned.exponent - 2.4) < 0.01)
        // Nonsense levels are held to the limits.
        let wild = pairs.map { RadioModel.Pair(distance: $0.distance, walls: $0.walls, level: $0.level * 40) }
        if let model = RadioModel.fit(wild) {
            #expect(RadioModel.exponents.contains(model.exponent))
            #expect(RadioModel.wallLosses.contains(model.wallLoss))
        }
    }

    /// The spread learned from scanner pairs: held to its limits, garbage ignored; it tunes a
    /// tag's contest only where a bench asks (``PositionSettings/learnsSpread``): by default a
    /// calm radio between fixed scanners says nothing of a carried tag's (docs/behaviour.md §20,
    /// "Real radio"); ESPresense reports' settings never take it.
    @Test func aLearnedSpreadTunesTheEstimatorOnlyWhenAsked() {
        var radio = RadioModel()
        var settings = PositionSettings()
        #expect(!settings.learnsSpread && settings.contestScale(for: radio) == 1)
        radio.learn(noise: .nan, shadowing: 1)
        #expect(radio.noise == nil && radio.steadiness == nil)
        radio.learn(noise: 500, shadowing: -3)
        #expect(radio.noise == RadioModel.spreads.upperBound && radio.shadowing == 0 && radio.steadiness == 0)
        radio.learn(noise: 2.5, shadowing: 0)
        #expect(settings.contestScale(for: radio) == 1)
        settings.learnsSpread = true
        #expect(settings.contestScale(for: radio) == 0 && settings.correlation(for: radio) == 0)
        radio.learn(noise: 2.1, shadowing: 2.1)
        #expect(radio.steadiness == 1 && settings.contestScale(for: radio) == 1)
        radio.learn(noise: 2, shadowing: 0.5)
        #expect(abs((radio.steadiness ?? 0) - 0.375) < 1e-9)
        #expect(abs(settings.contestScale(for: radio) - 0.140625) < 1e-9)
        let reports = PositionSettings.filteredReports(floors: [:])
        #expect(!reports.learnsSpread && reports.contestScale(for: radio) == 1)
    }

    /// Readings weighed with a smaller spread (``PositionSettings/sigma``) put more of the
    /// probability in the room they point at; the spread scanner pairs learned does not change a
    /// tag's weighing.
    @Test func aSharperSpreadIsMoreSure() {
        let map = Self.twoRooms()
        let building = Building(map)
        var learned = RadioModel(exponent: 2.5, wallLoss: 5)
        learned.learn(noise: 1, shadowing: 0)
        var sharpSettings = PositionSettings(floors: [0: map])
        sharpSettings.sigma = 2
        var wideSettings = sharpSettings
        wideSettings.sigma = 5
        var sharp = PositionFilter(building: building)
        var wide = PositionFilter(building: building)
        var paired = PositionFilter(building: building)
        let point = PlanPoint(3.5, 2)
        for second in 0..<2 {
            for slot in 0..<building.scannerSlot.count {
                let level = Self.level(map, learned, slot: slot, at: point)
                let at = Int64(second) * 1_000_000 + Int64(slot) * 300_000
                let plain = RadioModel(exponent: 2.5, wallLoss: 5)
                sharp.observe(
                    slot: slot, level: level, at: at, building: building, radio: plain, settings: sharpSettings)
                wide.observe(slot: slot, level: level, at: at, building: building, radio: plain, settings: wideSettings)
                paired.observe(
                    slot: slot, level: level, at: at, building: building, radio: learned, settings: wideSettings)
            }
        }
        #expect(sharp.rooms[0] > wide.rooms[0], "\(sharp.rooms) against \(wide.rooms)")
        #expect(paired.rooms == wide.rooms)
    }

    @Test func polygonsAreCheckedForShape() {
        let square = [PlanPoint(0, 0), PlanPoint(4, 0), PlanPoint(4, 4), PlanPoint(0, 4)]
        #expect(PlanPolygon.isSimple(square))
        #expect(PlanPolygon.isSimple(square + [PlanPoint(0, 0)]))
        #expect(!PlanPolygon.isSimple([PlanPoint(0, 0), PlanPoint(4, 4), PlanPoint(4, 0), PlanPoint(0, 4)]))
        #expect(PlanPolygon.area(square) == 16)
        let shifted = square.map { PlanPoint($0.x + 2, $0.y) }
        #expect(abs(PlanPolygon.overlap(square, shifted) - 8) < 0.2)
        let beside = square.map { PlanPoint($0.x + 4, $0.y) }
        #expect(PlanPolygon.overlap(square, beside) == 0)
    }
}
