import Foundation
import BeaconConfiguration
import BeaconCore
import Fleet
import Testing

/// `Scanners.calibrate = auto` (docs/behaviour.md §19): receivers' offsets from what the scanners
/// hear of each other.
@Suite struct ScannerCalibrationTests {
    /// What `receiver` reads of `transmitter` when the path between them loses `loss` dB and the
    /// receiver reads `offsets[receiver]` high; the `index`th reading, with ±1.5 dB of noise and one
    /// reading in ten 12 dB down (a multipath burst).
    static func reading(_ index: Int, receiver: String, loss: Double, offsets: [String: Double]) -> Double {
        let noise = [0, 1.5, -1.5, 0.5, -0.5, 1, -1, 0, 1.5, -12][index % 10]
        return -loss + (offsets[receiver] ?? 0) + noise
    }

    /// Feeds `rounds` readings of every pair in `losses` both ways.
    static func feed(
        _ calibration: inout ScannerCalibration, losses: [(String, String, Double)], offsets: [String: Double],
        rounds: Int = 200
    ) {
        for index in 0..<rounds {
            for (a, b, loss) in losses {
                calibration.heard(
                    receiver: a, transmitter: b, level: reading(index, receiver: a, loss: loss, offsets: offsets))
                calibration.heard(
                    receiver: b, transmitter: a, level: reading(index, receiver: b, loss: loss, offsets: offsets))
            }
        }
    }

    /// Walls of any loss between them, three receivers reading 3 dB high, 2 dB low and true are
    /// corrected by -3, +2 and 0 less their mean: each pair's difference of the two ways is theirs
    /// alone.
    @Test func offsetsComeFromThePairsHeardBothWays() {
        var calibration = ScannerCalibration(scanners: ["a", "b", "c"])
        let offsets = ["a": 3.0, "b": -2.0, "c": 0.0]
        Self.feed(&calibration, losses: [("a", "b", 12), ("b", "c", 25), ("a", "c", 17)], offsets: offsets)
        let mean = (-3.0 + 2.0 + 0.0) / 3
        #expect(abs(calibration.correction("a") - (-3 - mean)) < 0.2, "\(calibration.corrections)")
        #expect(abs(calibration.correction("b") - (2 - mean)) < 0.2, "\(calibration.corrections)")
        #expect(abs(calibration.correction("c") - (0 - mean)) < 0.2, "\(calibration.corrections)")
        #expect(calibration.corrections.map(\.pairs) == [2, 2, 2])
    }

    /// A scanner given its own `rssiOffset` keeps it: the others are fitted to it, and it learns
    /// nothing.
    @Test func aScannerGivenAnOffsetAnchorsTheOthers() {
        var calibration = ScannerCalibration(scanners: ["a", "b", "c"], anchored: ["c"])
        Self.feed(
            &calibration, losses: [("a", "b", 12), ("b", "c", 20)], offsets: ["a": 3.0, "b": -2.0, "c": 0.0])
        #expect(calibration.correction("c") == 0)
        #expect(abs(calibration.correction("a") - -3) < 0.2 && abs(calibration.correction("b") - 2) < 0.2)
        #expect(calibration.corrections.map(\.id) == ["a", "b"])
    }

    /// Nothing is learned from a pair heard one way only, heard too weakly either way (near a
    /// receiver's sensitivity the weaker one reads high), or heard fewer than five times.
    @Test func aPairHeardOneWayWeaklyOrBarelyTeachesNothing() {
        var calibration = ScannerCalibration(scanners: ["a", "b", "c", "d"])
        for _ in 0..<100 { calibration.heard(receiver: "a", transmitter: "b", level: -10) }
        for _ in 0..<100 {
            calibration.heard(receiver: "b", transmitter: "c", level: -31)
            calibration.heard(receiver: "c", transmitter: "b", level: -20)
        }
        for _ in 0..<4 {
            calibration.heard(receiver: "c", transmitter: "d", level: -10)
            calibration.heard(receiver: "d", transmitter: "c", level: -20)
        }
        for id in ["a", "b", "c", "d"] { #expect(calibration.correction(id) == 0, "\(id)") }
        #expect(calibration.corrections.isEmpty)
    }

    /// Readings of unknown scanners, of a scanner by itself, or that are not numbers of a radio
    /// change nothing; a correction never goes past 20 dB.
    @Test func garbageChangesNothingAndCorrectionsAreBounded() {
        var calibration = ScannerCalibration(scanners: ["a", "b"])
        for level in [Double.nan, .infinity, -.infinity, 1e308, -1e308, 201] {
            for _ in 0..<40 { calibration.heard(receiver: "a", transmitter: "b", level: level) }
        }
        for _ in 0..<40 {
            calibration.heard(receiver: "a", transmitter: "a", level: 0)
            calibration.heard(receiver: "x", transmitter: "b", level: 0)
            calibration.heard(receiver: "b", transmitter: "y", level: 0)
        }
        #expect(calibration.corrections.isEmpty && calibration.correction("a") == 0)
        #expect(calibration.correction("x") == 0)
        for _ in 0..<40 {
            calibration.heard(receiver: "a", transmitter: "b", level: 0)
            calibration.heard(receiver: "b", transmitter: "a", level: -29)
        }
        // A difference of 29 dB halves to 14.5 each way; anchored, the other takes all of it, up to 20.
        #expect(abs(calibration.correction("a") - -14.5) < 0.01 && abs(calibration.correction("b") - 14.5) < 0.01)
        var anchored = calibration.reconfigured(scanners: ["a", "b"], anchored: ["b"])
        anchored.heard(receiver: "a", transmitter: "b", level: 0)
        #expect(anchored.correction("a") == -20 && anchored.correction("b") == 0)
    }

    /// A reload keeps what was heard between scanners still placed, and forgets a removed one.
    @Test func aReloadKeepsWhatScannersStillPlacedHeard() {
        var calibration = ScannerCalibration(scanners: ["a", "b", "c"])
        Self.feed(&calibration, losses: [("a", "b", 12), ("b", "c", 12)], offsets: ["a": 4.0, "b": 0, "c": 0])
        let reloaded = calibration.reconfigured(scanners: ["b", "a", "d"], anchored: [])
        #expect(abs(reloaded.correction("a") - -2) < 0.2 && abs(reloaded.correction("b") - 2) < 0.2)
        #expect(reloaded.correction("c") == 0 && reloaded.correction("d") == 0)
    }

    /// A restart (or a cluster's next active, docs/behaviour.md §21) goes on from the settled levels kept: the
    /// same corrections at once, before any scanner is heard again. Kept levels that are not
    /// numbers, out of range, of a scanner with itself or of scanners no longer placed are ignored.
    @Test func aRestartGoesOnFromTheSettledLevels() {
        var calibration = ScannerCalibration(scanners: ["a", "b", "c"])
        Self.feed(&calibration, losses: [("a", "b", 12), ("b", "c", 25), ("a", "c", 17)], offsets: ["a": 3, "b": -2])
        let levels = calibration.settledLevels
        #expect(levels.count == 6)
        var resumed = ScannerCalibration(scanners: ["a", "b", "c"])
        #expect(resumed.correction("a") == 0)
        resumed.resume(from: levels)
        for id in ["a", "b", "c"] { #expect(abs(resumed.correction(id) - calibration.correction(id)) < 0.001) }
        var garbage = ScannerCalibration(scanners: ["a", "b"])
        garbage.resume(from: [
            ScannerLevel(receiver: "a", transmitter: "b", level: .nan),
            ScannerLevel(receiver: "b", transmitter: "a", level: 1e9),
            ScannerLevel(receiver: "a", transmitter: "a", level: -10),
            ScannerLevel(receiver: "x", transmitter: "b", level: -10),
        ])
        #expect(garbage.settledLevels.isEmpty && garbage.correction("a") == 0 && garbage.correction("b") == 0)
    }

    // MARK: - In the device table

    /// A scanner heard by another, as ESPresense's `node:<id>` or by its `Scanner.<id>.address`,
    /// is no tag: it teaches the calibration, and a tag's later readings are corrected by it.
    @Test func scannersHeardByEachOtherCorrectTheTagsReadings() throws {
        var table = try TagTests.table("Scanner.hall.address = 02:00:00:00:00:02\n")
        var actions: [Devices.Action] = []
        table.start(at: TagTests.time(0), into: &actions)
        // The kitchen's receiver reads 6 dB higher than the hall's.
        for second in 1...40 {
            let time = TagTests.time(Double(second))
            let fromKitchen = ScannerReport(scanner: "hall", tag: "node:kitchen", rssi: -75, power: -59)
            let fromHall = ScannerReport(
                scanner: "kitchen", tag: "02:00:00:00:00:02", rssi: -69, power: -59,
                address: BluetoothAddress("02:00:00:00:00:02"))
            #expect(table.handle(fromKitchen, at: time, into: &actions) == nil)
            #expect(table.handle(fromHall, at: time, into: &actions) == nil)
        }
        #expect(table.fleet.isEmpty)
        #expect(table.calibration?.correction("kitchen") == -3 && table.calibration?.correction("hall") == 3)
        // Settled levels are handed on to be kept; a table that resumes from them corrects alike.
        let kept = actions.compactMap { action -> [ScannerLevel]? in
            if case .calibration(let levels) = action { return levels } else { return nil }
        }.last
        #expect(kept?.count == 2)
        var restarted = try TagTests.table("Scanner.hall.address = 02:00:00:00:00:02\n")
        restarted.resumeCalibration(from: kept ?? [])
        #expect(restarted.calibration?.correction("kitchen") == -3 && restarted.calibration?.correction("hall") == 3)
        #expect(table.calibration?.correction("office") == 0)
        table.handle(
            ScannerReport(scanner: "kitchen", tag: "badge-1", rssi: -60), at: TagTests.time(41), into: &actions)
        #expect(table.engine("badge-1")?.monitor.roomChange?.evidence == -4)

        var off = try TagTests.table("Scanners.calibrate = off\n")
        off.start(at: TagTests.time(0), into: &actions)
        for second in 1...40 {
            off.handle(
                ScannerReport(scanner: "hall", tag: "node:kitchen", rssi: -75), at: TagTests.time(Double(second)),
                into: &actions)
        }
        #expect(off.calibration == nil && off.fleet.isEmpty)
        off.handle(ScannerReport(scanner: "kitchen", tag: "badge-1", rssi: -60), at: TagTests.time(41), into: &actions)
        #expect(off.engine("badge-1")?.monitor.roomChange?.evidence == -1)
    }

    /// Gaussian draws of spread `sigma` (Box–Muller), seeded.
    static func gaussian(_ random: inout SeededGenerator, sigma: Double) -> Double {
        let u = Double.random(in: Double.ulpOfOne..<1, using: &random)
        let v = Double.random(in: 0..<1, using: &random)
        return sigma * (-2 * log(u)).squareRoot() * cos(2 * .pi * v)
    }

    /// The spread of readings between scanners (docs/behaviour.md §20): independent noise of 2 dB
    /// reads as about 2 dB of noise and no shadowing; the same noise on a level that wanders by
    /// 4 dB over a minute reads as shadowing beside it; nothing is said before a window is full.
    @Test func theSpreadOfReadingsIsToldFromTheirShadowing() throws {
        var random = SeededGenerator(seed: 20)
        var independent = ScannerCalibration(scanners: ["a", "b", "c"])
        var shadowed = ScannerCalibration(scanners: ["a", "b", "c"])
        for index in 0..<400 {
            let wander = 4 * sin(Double(index) / 60 * 2 * .pi)
            for (a, b) in [("a", "b"), ("b", "a"), ("a", "c"), ("c", "a"), ("b", "c"), ("c", "b")] {
                if index == ScannerCalibration.window - 2 { #expect(independent.noise == nil) }
                independent.heard(receiver: a, transmitter: b, level: -20 + Self.gaussian(&random, sigma: 2))
                shadowed.heard(receiver: a, transmitter: b, level: -20 + wander + Self.gaussian(&random, sigma: 2))
            }
        }
        let still = try #require(independent.noise)
        #expect(abs(still.reading - 2) < 0.4 && still.shadowing < 0.8, "\(still)")
        let moving = try #require(shadowed.noise)
        #expect(abs(moving.reading - 2) < 0.5 && moving.shadowing > 1.5, "\(moving)")
        // Readings out of range are not readings: nothing changes.
        var garbage = independent
        for level in [Double.nan, .infinity, -.infinity, 1e9, -1e9] {
            garbage.heard(receiver: "a", transmitter: "b", level: level)
        }
        #expect(garbage == independent)
    }
}
