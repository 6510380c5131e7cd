/// `Monitor.exitTimeout = auto` (SPEC 18): the silence a region or a beacon is allowed, from its
/// beacons' ``SilenceModel``s. With a fixed exitTimeout every function here gives it unchanged.
extension Monitor {
    /// Microseconds of silence after which `ref` is no longer inside, as its beacons say now
    /// (those heard within exitTimeoutMax before its last sighting: the others were last heard on
    /// another visit).
    func silenceLimit(_ ref: RegionRef) -> Int64 {
        guard let confidence = exitConfidence else { return exitTimeout }
        let last = last(ref)
        let since = last - exitTimeout
        // Closures over the models alone: over `self` they would copy the whole monitor.
        let models = silence
        let heard = { (beacon: Int32) in (models[Int(beacon)].last ?? .min) >= since }
        let model = { (beacon: Int32) in models[Int(beacon)] }
        switch ref.level {
        case .beacon:
            return SilenceModel.timeout(
                after: last, beacons: CollectionOfOne(ref.index).lazy.filter(heard).map(model), confidence: confidence,
                maximum: exitTimeout)
        case .zone:
            return SilenceModel.timeout(
                after: last, beacons: hierarchy.zones[Int(ref.index)].beacons.lazy.filter(heard).map(model),
                confidence: confidence, maximum: exitTimeout)
        case .area:
            let zones = hierarchy.zones
            let beacons = hierarchy.areas[Int(ref.index)].zones.lazy.flatMap { zones[$0].beacons }
            return SilenceModel.timeout(
                after: last, beacons: beacons.filter(heard).map(model), confidence: confidence, maximum: exitTimeout)
        }
    }

    /// The silence limit of `ref` as worked out less than a second ago, or now.
    func currentLimit(_ ref: RegionRef) -> Int64 {
        guard exitConfidence != nil else { return exitTimeout }
        if let cached = limits[ref], cached.at <= now, now - cached.at < Self.limitLifetime { return cached.limit }
        return silenceLimit(ref)
    }

    static let limitLifetime: Int64 = 1_000_000

    /// Works out again the limits ``exitDeadline(_:)`` uses for `ref` when more than a second old.
    mutating func refreshLimits(_ ref: RegionRef) {
        guard exitConfidence != nil else { return }
        for region in [ref] + (ref.level == .beacon ? [parent(of: ref)!] : []) {
            if let cached = limits[region], cached.at <= now, now - cached.at < Self.limitLifetime { continue }
            limits[region] = (now, silenceLimit(region))
        }
    }

    /// When `ref` stops being inside by the sightings, `nil` if never sighted: its last sighting
    /// plus its limit; under `auto`, for a beacon, the earlier of its own and its Zone's (all the
    /// beacons of a Zone silent for longer than they allow together means the walker left it,
    /// however long one beacon alone would wait).
    func exitDeadline(_ ref: RegionRef) -> Int64? {
        let last = last(ref)
        guard last != Self.never else { return nil }
        let due = last + currentLimit(ref)
        guard exitConfidence != nil, ref.level == .beacon, let zone = parent(of: ref) else { return due }
        let sighted = self.last(zone)
        return sighted == Self.never ? due : min(due, sighted + currentLimit(zone))
    }

    /// Microseconds of silence after which `beacon` goes `off`: its own model alone.
    func offLimit(_ beacon: Int32) -> Int64 {
        guard let confidence = exitConfidence else { return exitTimeout }
        return SilenceModel.timeout(
            after: sightedAt[Int(beacon)], beacons: CollectionOfOne(silence[Int(beacon)]), confidence: confidence,
            maximum: exitTimeout)
    }

    /// When to look at a deadline `due` again: then, or under `auto` within a second from now,
    /// since more sightings may shorten it (the first estimate replaces the maximum, a loss rate
    /// settles). A deadline looked at too early is armed again.
    func nextLook(_ due: Int64) -> Int64 {
        exitConfidence == nil ? due : min(due, now + 1_000_000)
    }

}
