/// The HSYCO monitoring policy under the region cap (docs/behaviour.md §5.2), as pure decisions: the plan for
/// the hierarchy, and which candidates to keep when there are more than the cap.
///
/// Recency is by the last sighting of any of a candidate's beacons; the never-sighted count as
/// least recent, and among equals the earlier in file order is kept. ``Monitor`` asks and applies.
package struct MonitoringPolicy: Sendable, Hashable {
    /// Which kind of regions are monitored.
    package let plan: MonitoringPlan
    /// `Monitor.maxRegions`, at least 1.
    package let cap: Int

    package init(_ hierarchy: Hierarchy, maxRegions: Int) {
        plan = MonitoringPlan(hierarchy, maxRegions: maxRegions)
        cap = max(maxRegions, 1)
    }

    /// Whether a candidate last sighted at `lhs` (file position `lhsIndex`) is less recent than
    /// one last sighted at `rhs` (position `rhsIndex`).
    package static func isLessRecent(_ lhs: Int64, _ lhsIndex: Int32, than rhs: Int64, _ rhsIndex: Int32) -> Bool {
        lhs != rhs ? lhs < rhs : lhsIndex > rhsIndex
    }

    /// The candidates to monitor, each with its last sighting: all when they fit, else the `cap`
    /// most recently sighted.
    func select(_ candidates: [(ref: RegionRef, last: Int64)]) -> [RegionRef] {
        guard candidates.count > cap else { return candidates.map(\.ref) }
        return candidates.sorted { Self.isLessRecent($1.last, $1.ref.index, than: $0.last, $0.ref.index) }
            .prefix(cap).map(\.ref)
    }

    /// The monitored set once `newcomer` (a region just sighted, not monitored) joins `monitored`:
    /// the least recently sighted one makes room when the set is full.
    func admit(_ newcomer: RegionRef, to monitored: [RegionRef], lastSighting: (RegionRef) -> Int64) -> [RegionRef] {
        var regions = monitored
        if regions.count >= cap,
            let oldest = regions.indices.min(by: {
                Self.isLessRecent(
                    lastSighting(regions[$0]), regions[$0].index, than: lastSighting(regions[$1]), regions[$1].index)
            })
        {
            regions.remove(at: oldest)
        }
        regions.append(newcomer)
        return regions
    }
}
