import BeaconCore
import Foundation
import RegionMonitor
import Testing

/// docs/behaviour.md §5.2 as it runs: the first monitored set at each edge of the cap, the hierarchical switch,
/// and the scan-assisted replacement, with the causal order of docs/behaviour.md §5.3 and 10.
@Suite struct MonitoringPolicyTests {
    static let monitoring: Set<String> = ["monitoring", "enter", "exit"]

    struct Edge: Sendable, CustomStringConvertible {
        var description: String
        var beacons: [String]
        var cap: Int
        var first: String
    }

    static let edges: [Edge] = [
        Edge(
            description: "B = N", beacons: ["1=1,1,1", "2=1,1,2", "3=1,2,1"], cap: 3,
            first: "0.000 monitoring beacons - [A1:1:1 A1:1:2 A1:2:1]"),
        Edge(
            description: "B = N + 1, Z = N", beacons: ["1=1,1,1", "2=1,1,2", "3=1,2,1"], cap: 2,
            first: "0.000 monitoring zones - [A1:1 A1:2]"),
        Edge(
            description: "Z = N + 1", beacons: ["1=1,1,1", "2=1,2,1", "3=2,1,1"], cap: 2,
            first: "0.000 monitoring areas - [A1 A2]"),
        Edge(
            description: "more areas than N", beacons: ["1=1,1,1", "2=2,1,1", "3=3,1,1"], cap: 2,
            first: "0.000 monitoring areas - [A1 A2]"),
        Edge(
            description: "cap 1", beacons: ["1=1,1,1", "2=1,2,1"], cap: 1,
            first: "0.000 monitoring areas - [A1]"),
    ]

    @Test(arguments: edges)
    func theFirstMonitoredSetFollowsThePlan(_ edge: Edge) {
        var run = MonitorHarness(edge.beacons) { $0.maxRegions = edge.cap }
        run.start(at: 0)
        #expect(run.take() == [edge.first])
    }

    @Test func hierarchicalSwitchesToTheZonesOfTheEnteredAreaAndBack() {
        var run = MonitorHarness(["11=1,1,1", "12=1,2,1", "21=2,1,1", "22=2,2,1"]) { $0.maxRegions = 3 }
        run.see("11", at: 0)
        run.see("12", at: 5)
        run.see("21", at: 8)  // another Area while inside A1: not monitored, but remembered
        run.advance(to: 15)
        #expect(
            run.take(Self.monitoring) == [
                "0.000 monitoring areas - [A1 A2]",
                "0.000 enter A1 area monitored",
                "0.000 monitoring zones A1 [A1:1 A1:2]",
                "0.000 enter A1:1 zone monitored",
                "5.000 enter A1:2 zone monitored",
                "10.000 exit A1:1 zone monitored dwell 10.0",
                // The last Zone of A1 leaves: exit Zone, exit Area (derived), then the switch, and A2,
                // sighted 7 s ago, is determined inside at once.
                "15.000 exit A1:2 zone monitored dwell 10.0",
                "15.000 exit A1 area derived dwell 15.0",
                "15.000 monitoring areas - [A1 A2]",
                "15.000 enter A2 area monitored",
                "15.000 monitoring zones A2 [A2:1 A2:2]",
                "15.000 enter A2:1 zone monitored",
            ])
        run.drain()
        #expect(
            run.take(Self.monitoring) == [
                "18.000 exit A2:1 zone monitored dwell 3.0",
                "18.000 exit A2 area derived dwell 3.0",
                "18.000 monitoring areas - [A1 A2]",
            ])
    }

    @Test func twoAreasFoundInsideAtOnceEnterOnlyTheMostRecentlySighted() {
        var run = MonitorHarness(["11=1,1,1", "12=1,2,1", "21=2,1,1", "22=2,2,1", "31=3,1,1", "32=3,2,1"]) {
            $0.maxRegions = 3
        }
        run.see("11", at: 0)
        run.see("21", at: 4.5)
        run.see("31", at: 6)
        _ = run.take()
        run.advance(to: 10)
        #expect(
            run.take(Self.monitoring) == [
                "10.000 exit A1:1 zone monitored dwell 10.0",
                "10.000 exit A1 area derived dwell 10.0",
                "10.000 monitoring areas - [A1 A2 A3]",
                "10.000 enter A3 area monitored",
                "10.000 monitoring zones A3 [A3:1 A3:2]",
                "10.000 enter A3:1 zone monitored",
            ])
    }

    @Test func moreAreasThanTheCapReplaceTheLeastRecentAtTheSighting() {
        var run = MonitorHarness(["11=1,1,1", "12=1,2,1", "21=2,1,1", "22=2,2,1", "31=3,1,1", "32=3,2,1"]) {
            $0.maxRegions = 2
        }
        run.start(at: 0)
        run.see("31", at: 1)
        run.drain()
        #expect(
            run.take(Self.monitoring) == [
                "0.000 monitoring areas - [A1 A2]",
                // Never-sighted areas keep file order, so A2 (the later) makes room for A3.
                "1.000 monitoring areas - [A1 A3]",
                "1.000 enter A3 area monitored",
                "1.000 monitoring zones A3 [A3:1 A3:2]",
                "1.000 enter A3:1 zone monitored",
                "11.000 exit A3:1 zone monitored dwell 10.0",
                "11.000 exit A3 area derived dwell 10.0",
                "11.000 monitoring areas - [A1 A3]",
            ])
    }

    @Test func anAreaWithMoreZonesThanTheCapKeepsTheMostRecentlySightedZones() {
        var run = MonitorHarness(["11=1,1,1", "12=1,2,1", "13=1,3,1", "21=2,1,1"]) { $0.maxRegions = 2 }
        run.see("13", at: 0)
        run.see("12", at: 2)
        run.see("11", at: 4)
        run.drain()
        #expect(
            run.take(Self.monitoring) == [
                "0.000 monitoring areas - [A1 A2]",
                "0.000 enter A1 area monitored",
                "0.000 monitoring zones A1 [A1:1 A1:3]",
                "0.000 enter A1:3 zone monitored",
                "2.000 monitoring zones A1 [A1:2 A1:3]",
                "2.000 enter A1:2 zone monitored",
                // A1:3, the least recent, is dropped while inside: no exit of its own (docs/behaviour.md §5.2).
                "4.000 monitoring zones A1 [A1:1 A1:2]",
                "4.000 enter A1:1 zone monitored",
                "12.000 exit A1:2 zone monitored dwell 10.0",
                "14.000 exit A1:1 zone monitored dwell 10.0",
                "14.000 exit A1 area derived dwell 14.0",
                "14.000 monitoring areas - [A1 A2]",
            ])
    }

    @Test func aSightingInAnotherAreaWhileInsideChangesNothingUntilTheSwitchBack() {
        var run = MonitorHarness(["11=1,1,1", "12=1,2,1", "21=2,1,1", "22=2,2,1"]) { $0.maxRegions = 3 }
        run.see("11", at: 0)
        _ = run.take()
        run.see("22", at: 1)
        #expect(run.take(Self.monitoring) == [])
        run.advance(to: 10)
        #expect(
            run.take(Self.monitoring) == [
                "10.000 exit A1:1 zone monitored dwell 10.0",
                "10.000 exit A1 area derived dwell 10.0",
                "10.000 monitoring areas - [A1 A2]",
                "10.000 enter A2 area monitored",
                "10.000 monitoring zones A2 [A2:1 A2:2]",
                "10.000 enter A2:2 zone monitored",
            ])
    }

    @Test func theAreaEnterAndExitAlternateOverALongRandomWalk() {
        var random = SeededGenerator(seed: 7)
        var specs: [String] = []
        for area in 1...4 { for zone in 1...6 { specs.append("\(area)\(zone)=\(area),\(zone),1") } }
        var run = MonitorHarness(specs) { $0.maxRegions = 3 }
        var time = 0.0
        for _ in 0..<5_000 {
            time += Double.random(in: 0.05...4, using: &random)
            run.see(specs.randomElement(using: &random)!.components(separatedBy: "=")[0], at: time)
        }
        run.drain()
        var inside: [String: Bool] = [:]
        var monitoredCount = 0
        for line in run.take() {
            let words = line.split(separator: " ").map(String.init)
            if words[1] == "monitoring" {
                monitoredCount = line.split(separator: "[")[1].split(separator: " ").count
                #expect(monitoredCount <= 3)
            }
            guard words[1] == "enter" || words[1] == "exit" else { continue }
            let entering = words[1] == "enter"
            guard words[3] == "area" else { continue }
            #expect(inside[words[2], default: false] != entering, "\(line)")
            inside[words[2]] = entering
        }
        #expect(inside.count == 4)
        #expect(inside.values.allSatisfy { !$0 })
    }

    /// The policy alone: the plan and the cap it decides with, and its recency order (the
    /// never-sighted least recent, ties kept in file order).
    @Test func thePolicyDecidesThePlanAndOrdersCandidatesByTheirLastSighting() {
        let hierarchy = MonitorHarness.hierarchy(["1=1,1,1", "2=1,2,1", "3=2,1,1"])
        #expect(MonitoringPolicy(hierarchy, maxRegions: 3).plan == .beacons)
        #expect(MonitoringPolicy(hierarchy, maxRegions: 2).plan == .hierarchical(scanAssisted: false))
        #expect(MonitoringPolicy(hierarchy, maxRegions: 0).cap == 1)
        let never = Int64.min
        #expect(MonitoringPolicy.isLessRecent(never, 0, than: 5, 1))
        #expect(MonitoringPolicy.isLessRecent(4, 0, than: 5, 1))
        #expect(!MonitoringPolicy.isLessRecent(5, 0, than: 5, 1))  // a tie keeps the earlier in file order
        #expect(MonitoringPolicy.isLessRecent(5, 1, than: 5, 0))
    }
}
