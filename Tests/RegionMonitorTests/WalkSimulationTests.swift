import BeaconCore
import Foundation
import RegionMonitor
import Simulation
import Testing

/// `simulate`'s walks: deterministic for a seed, faithful to the model, plans checked.
@Suite struct WalkSimulationTests {
    static let hierarchy = MonitorHarness.hierarchy(["101=1,1,1", "102=1,1,2", "201=1,2,1", "301=2,3,1"])
    static let start = Timestamp(secondsSinceEpoch: 1_700_000_000)!

    static func plan(_ text: String) throws -> WalkPlan {
        try WalkPlan.parse(text, file: "walk.plan", hierarchy: hierarchy).get()
    }

    @Test func theSameSeedWalksTheSameWay() throws {
        let plan = try Self.plan("101 30 5\n00000000-0000-0000-0000-000000000001:2 20\n")
        var simulation = WalkSimulation()
        simulation.seed = 42
        let first = simulation.run(plan, through: Self.hierarchy, from: Self.start)
        let again = simulation.run(plan, through: Self.hierarchy, from: Self.start)
        #expect(first.sightings == again.sightings)
        simulation.seed = 43
        #expect(simulation.run(plan, through: Self.hierarchy, from: Self.start).sightings != first.sightings)
        #expect(first.visits.map(\.arrive) == [Self.start, Self.start.adding(seconds: 35)])
        #expect(first.visits.map(\.leave) == [Self.start.adding(seconds: 30), Self.start.adding(seconds: 55)])
    }

    @Test func withoutNoiseOrLossEveryAdvertisementArrivesAtTheModelsRSSI() throws {
        var simulation = WalkSimulation()
        simulation.sigma = 0
        simulation.loss = 0
        simulation.interval = 0.5
        let run = simulation.run(try Self.plan("101 10"), through: Self.hierarchy, from: Self.start)
        let byBeacon = Dictionary(grouping: run.sightings) { event -> UInt16 in
            guard case .advertisement(_, let advertisement) = event else { return 0 }
            return advertisement.beacon.minor
        }
        // Only Zone 1's beacons, 20 advertisements each in 10 s; 1 m is the measured power, 4 m is 12 dB less.
        #expect(byBeacon.keys.sorted() == [1, 2])
        #expect(byBeacon.values.allSatisfy { $0.count == 20 })
        let rssi = byBeacon.mapValues { events in
            Set(events.compactMap { if case .advertisement(_, let a) = $0 { a.rssi } else { nil } })
        }
        #expect(rssi == [1: [-59], 2: [-71]])
        let times = run.sightings.map(\.time)
        #expect(times == times.sorted())
    }

    @Test func lossAndShadowingAreWhatWasAskedFor() throws {
        var simulation = WalkSimulation()
        simulation.seed = 7
        let run = simulation.run(
            try Self.plan("00000000-0000-0000-0000-000000000001:1 5000"), through: Self.hierarchy, from: Self.start)
        // Two beacons at 2 m for 5000 s at 1 Hz: 10,000 advertisements, 20% lost.
        let received = Double(run.sightings.count) / 10_000
        #expect(abs(received - 0.8) < 0.02)
        let values = run.sightings.compactMap { if case .advertisement(_, let a) = $0 { Double(a.rssi) } else { nil } }
        let mean = values.reduce(0, +) / Double(values.count)
        let deviation = (values.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(values.count)).squareRoot()
        #expect(abs(mean - (-59 - 20 * log10(2.0))) < 0.3)
        #expect(abs(deviation - 4) < 0.3)
    }

    @Test(arguments: [
        ("", "has no stops"),
        ("101", "a stop is:"),
        ("999 10", "a stop is:"),
        ("101 ten", "a stop is:"),
        ("101 0", "stay must be more than 0"),
        ("101 -5", "a stop is:"),
        ("101 10 5 7", "a stop is:"),
    ])
    func badPlansNameTheirLine(_ text: String, _ message: String) {
        switch WalkPlan.parse("# a walk\n" + text, file: "walk.plan", hierarchy: Self.hierarchy) {
        case .success: Issue.record("'\(text)' was accepted")
        case .failure(let error):
            #expect(error.description.contains(message), "\(error)")
            if !text.isEmpty { #expect(error.line == 2) }
        }
    }

    @Test func garbagePlansNeverCrash() {
        var random = SeededGenerator(seed: 5)
        let alphabet = Array("0123456789 .-#\n\tabc:Kitchen".utf8)
        for _ in 0..<2000 {
            let bytes = (0..<Int.random(in: 0..<40, using: &random)).map { _ in alphabet.randomElement(using: &random)!
            }
            _ = WalkPlan.parse(String(decoding: bytes, as: UTF8.self), file: "fuzz", hierarchy: Self.hierarchy)
        }
    }
}
