import Foundation
import Simulation
import TestSupport
import Testing

/// Recorded radio as the measure (docs/behaviour.md §20 "Real radio", docs/performance.md "Real
/// radio"): the TETAM tracks (Tests/real-data/tetam, CC0) through `replay` with a floor plan,
/// scored against the cameras' truth beside the rules users run on the same receptions.
@Suite(.serialized) struct RealRadioTests {
    static let site: RecordedSite? = try? RecordedSite(
        folder: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("real-data/tetam"))

    /// Every track through `replay` with `ini`, the beacon claiming `power`: the pooled score.
    static func replayed(_ site: RecordedSite, ini: String, power: Int = -59) async throws -> TrackScore {
        let folder = try scratchFolder("real-radio")
        try ini.write(to: folder.appendingPathComponent("site.ini"), atomically: true, encoding: .utf8)
        var pooled = TrackScore()
        for (index, track) in site.tracks.enumerated() {
            try site.trace(track, power: power).write(
                to: folder.appendingPathComponent("trace.jsonl"), atomically: true, encoding: .utf8)
            let run = try await DecodeCommandTests.beaconwatch(
                ["replay", "--config", "site.ini", "trace:trace.jsonl", "--state", "state-\(power)-\(index).sqlite"],
                in: folder)
            #expect(run.status == 0, "\(run.stderr)")
            pooled.add(TrackScore(track: track, timeline: site.timeline(fromReplay: run.stdout)))
        }
        return pooled
    }

    static func pooled(_ site: RecordedSite, _ rule: (RecordedTrack) -> Timeline) -> TrackScore {
        var pooled = TrackScore()
        for track in site.tracks { pooled.add(TrackScore(track: track, timeline: rule(track))) }
        return pooled
    }

    /// The six shared tracks: the open plan puts the beacon in the right quadrant more often than
    /// the strongest sensor over 2 s and section 19's nearest rule on the same reports, hands over
    /// within seconds, never takes it out of the Area while reports come, and places it about as
    /// well (docs/performance.md "Real radio": 85.4 % against 80.5 %).
    @Test func recordedTracksThroughReplayWithAFloorPlan() async throws {
        let site = try #require(Self.site, "Tests/real-data/tetam is missing")
        #expect(site.tracks.count == 6 && site.sensors.count == 12)
        let plan = try await Self.replayed(site, ini: site.ini(walls: "none"))
        let nearest = try await Self.replayed(site, ini: site.ini(floorPlan: false))
        let strongest = Self.pooled(site) { site.strongest($0) }
        let oracle = Self.pooled(site) { site.oracle($0) }
        #expect(plan.samples == strongest.samples && plan.samples > 3000)
        #expect(plan.rightShare > nearest.rightShare + 0.1, "plan \(plan.rightShare), nearest \(nearest.rightShare)")
        #expect(plan.rightShare > 0.8, "\(plan.rightShare)")
        #expect(
            (TrackScore.percentile(plan.handovers, 0.5) ?? 99) <= 3,
            "hand-over p50 \(TrackScore.percentile(plan.handovers, 0.5) ?? -1)")
        #expect(plan.areaExits == 0)
        #expect((TrackScore.percentile(plan.errors, 0.5) ?? 99) < 4, "\(TrackScore.percentile(plan.errors, 0.5) ?? -1)")
        #expect(oracle.rightShare > 0.95)
        #expect(plan.rightShare >= strongest.rightShare, "plan \(plan.rightShare), strongest \(strongest.rightShare)")
    }

    /// The beacon's claimed power is a claim: told 15 dB too much, the same tracks are placed
    /// within a point of the right claim's share (the tag's power at 1 m is left free).
    @Test func aClaimFifteenDecibelsOffPlacesTheTagAlike() async throws {
        let site = try #require(Self.site, "Tests/real-data/tetam is missing")
        let right = try await Self.replayed(site, ini: site.ini(walls: "none"), power: -59)
        let off = try await Self.replayed(site, ini: site.ini(walls: "none"), power: -44)
        #expect(abs(right.rightShare - off.rightShare) <= 0.01, "right \(right.rightShare), off \(off.rightShare)")
    }
}
