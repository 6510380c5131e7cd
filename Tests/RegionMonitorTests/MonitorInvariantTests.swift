import BeaconCore
import Foundation
import RegionMonitor
import Testing

/// Random buildings, caps, settings and sighting streams: whatever happens, the outputs keep the
/// promises of docs/behaviour.md §5 and 6.
@Suite struct MonitorInvariantTests {
    @Test(arguments: 1...40)
    func randomRunsKeepEveryPromise(_ seed: Int) {
        var random = SeededGenerator(seed: UInt64(seed))
        let areas = Int.random(in: 1...4, using: &random)
        var specs: [String] = []
        for area in 1...areas {
            for zone in 1...Int.random(in: 1...5, using: &random) {
                for minor in 1...Int.random(in: 1...3, using: &random) {
                    specs.append("\(specs.count + 1)=\(area),\(zone),\(minor)")
                }
            }
        }
        let cap = Int.random(in: 1...6, using: &random)
        var run = MonitorHarness(specs) {
            $0.maxRegions = cap
            $0.mode = Bool.random(using: &random) ? .foreground : .background
            $0.exitTimeout = Double.random(in: 2...12, using: &random)
            $0.rssiFilter = RSSIFilterKind.allCases.randomElement(using: &random)!
            $0.enterRSSI = Bool.random(using: &random) ? -80 : nil
        }
        var time = 0.0
        for _ in 0..<3000 {
            time += Double.random(in: 0...3, using: &random) * Double.random(in: 0...1, using: &random)
            switch Int.random(in: 0..<100, using: &random) {
            case 0: run.setMode(Bool.random(using: &random) ? .foreground : .background, at: time)
            case 1: run.advance(to: time)
            default:
                let id = specs.randomElement(using: &random)!.split(separator: "=")[0]
                run.see(String(id), at: time, rssi: Int8.random(in: -95 ... -40, using: &random))
            }
        }
        run.drain()
        #expect(run.monitor.nextDeadline == nil)
        #expect(run.monitor.currentArea == nil && run.monitor.currentZone == nil)

        var last = Timestamp(microseconds: .min)
        var areaInside: [Region: Bool] = [:]
        var reported: [String: Proximity] = [:]
        var nearest: String?
        for output in run.outputs {
            #expect(output.time >= last, "outputs go back in time")
            last = output.time
            switch output {
            case .monitoring(_, let change):
                #expect(change.regions.count <= cap)
                #expect(Set(change.regions).count == change.regions.count)
                #expect(Set(change.regions.map(\.kind)).count <= 1)
            case .transition(_, let transition):
                if let dwell = transition.dwell { #expect(dwell >= 0) }
                guard transition.region.kind == .area else { continue }
                let entering = transition.direction == .enter
                #expect(areaInside[transition.region, default: false] != entering)
                areaInside[transition.region] = entering
            case .location(_, let event):
                #expect(reported[event.zone, default: .off] != event.distance, "a repeated class")
                #expect((event.distance == .off) == (event.meters == nil))
                reported[event.zone] = event.distance
            case .nearest(_, let change):
                #expect(change.locationID != nearest, "a nearest that did not change")
                nearest = change.locationID
            case .rule, .server, .notification, .alert, .geofence, .position, .learned, .occupancy:
                Issue.record("the monitor alone says nothing of rules, alerts, geofences, positions and occupancy")
            }
        }
        #expect(areaInside.values.allSatisfy { !$0 }, "an Area left inside at the end")
        #expect(reported.values.allSatisfy { $0 == .off }, "a beacon not off at the end")
        #expect(nearest == nil, "a nearest beacon when none is heard")
    }
}
