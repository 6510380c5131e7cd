/// A monitor's cap-policy part (docs/behaviour.md §5.2): the regions monitored now, at which
/// level and under which Area, and whether something happened that may change the policy's
/// decision. Only the policy (`Monitor+Policy`) changes the set; a transition or a sighted
/// candidate marks it to be looked at again.
struct MonitoringState: Sendable {
    /// The level of the monitored set.
    var mode: MonitoringChange.Mode = .beacons
    /// Under the hierarchical plan, the Area whose Zones are monitored; `nil` for the Areas.
    var area: Int32?
    /// The monitored regions, sorted.
    var regions: [RegionRef] = []
    /// Something that may change the policy's decision happened: a transition, a sighted candidate.
    var dirty = false
    /// The candidate region of the latest sighting, for the scan-assisted replacement.
    var candidate: RegionRef?
}
