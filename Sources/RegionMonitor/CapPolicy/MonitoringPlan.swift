/// Which kind of regions the monitor watches under the cap (docs/behaviour.md §5.2, the HSYCO policy).
package enum MonitoringPlan: Sendable, Hashable, CustomStringConvertible {
    /// B ≤ N: every Beacon region.
    case beacons
    /// B > N, Z ≤ N: every Zone region.
    case zones
    /// Z > N: Areas while inside none, the Zones of the Area entered while inside one.
    /// `scanAssisted` when some candidate set exceeds the cap (more Areas than N, or an Area with
    /// more Zones than N), so the monitor keeps the N most recently sighted.
    case hierarchical(scanAssisted: Bool)

    /// The plan for a hierarchy under a cap of `maxRegions`.
    package init(_ hierarchy: Hierarchy, maxRegions: Int) {
        if hierarchy.beacons.count <= maxRegions {
            self = .beacons
        } else if hierarchy.zones.count <= maxRegions {
            self = .zones
        } else {
            let scanAssisted =
                hierarchy.areas.count > maxRegions
                || hierarchy.areas.contains { $0.zones.count > maxRegions }
            self = .hierarchical(scanAssisted: scanAssisted)
        }
    }

    package var description: String {
        switch self {
        case .beacons: "beacons: every Beacon region is monitored"
        case .zones: "zones: every Zone region is monitored"
        case .hierarchical(false): "areas then zones: Areas while outside, the Zones of the Area entered while inside"
        case .hierarchical(true):
            "areas then zones, scan-assisted: more candidates than the cap, so the most recently sighted are monitored"
        }
    }
}
