/// `Monitor.exitTimeout = auto` (docs/behaviour.md §18): the silence a region or a beacon is allowed, from its
/// beacons' ``SilenceModel``s. With a fixed exitTimeout every function here gives it unchanged.
extension Monitor {
    /// Microseconds of silence after which `ref` is no longer inside, as its beacons say now
    /// (those heard within exitTimeoutMax before its last sighting: the others were last heard on
    /// another visit).
    ///
    /// A tag's regions (``MonitorSettings/rooms``) all wait on every scanner of their Area, each
    /// path with its own losses: its scanners' reports hold its room and Area, whichever heard it
    /// (docs/behaviour.md §19); `own` asks for a scanner's own silence (when it goes `off`).
    func silenceLimit(_ ref: RegionRef, after sighting: Int64? = nil, own: Bool = false) -> Int64 {
        guard exitConfidence != nil else { return exitTimeout }
        let limit = adaptiveSilenceLimit(ref, after: sighting, own: own)
        guard settings.rooms != nil, !own else { return limit }
        // A tag heard by scanners: never a silence shorter than Tags.exitTimeoutMin (§20).
        let floor = Int64((max(0, min(settings.exitTimeoutMin, 86_400)) * 1_000_000).rounded())
        return max(limit, min(floor, exitTimeout))
    }

    /// ``silenceLimit(_:after:own:)`` as the beacons' models give it, before the tags' floor.
    private func adaptiveSilenceLimit(_ ref: RegionRef, after sighting: Int64?, own: Bool) -> Int64 {
        guard let confidence = exitConfidence else { return exitTimeout }
        if settings.rooms != nil, !own {
            let area: Int32
            switch ref.level {
            case .area: area = ref.index
            case .zone: area = hierarchy.areaOfZone[Int(ref.index)]
            case .beacon: area = hierarchy.areaOfZone[Int(hierarchy.zoneOfBeacon[Int(ref.index)])]
            }
            // A phone's silence may be its own outage: one as long as the maximum is waited out,
            // with the time before it that the last report or advertisement may lie (a node's
            // report period, else a second).
            if settings.quietTransmitter {
                return exitTimeout &+ Int64(((settings.reportPeriod ?? 1) * 1_000_000).rounded())
            }
            if let period = settings.reportPeriod {
                // A node reports a still tag once per period, sooner only while it moves: the silence
                // of two periods and a second, a boundary missed by every node, is away. The
                // silence models cannot say more of such reports: counted in full they learn the
                // interval of a walk's quick reports, which a still tag never keeps (it was taken
                // away between bursts), and one a period they see no runs of losses and believe in
                // long ones (every tag was held for the maximum).
                return min(exitTimeout, Int64((period * 2 + 1) * 1_000_000))
            }
            let after = sighting ?? last(ref)
            let paths = silenceLimit(RegionRef(.area, area), after: after, own: true)
            // Every path silent because the tag itself went quiet for a while, as it did before:
            // once its runs of silence are enough to be counted (before, the model's belief that
            // losses come in long runs would hold every tag for the maximum).
            guard let figures = silences.transmitter.figures,
                figures.losses.lostThenHeard >= SilenceModel.Losses.plainRuns
            else { return paths }
            let quiet = SilenceModel.timeout(
                after: after, beacons: CollectionOfOne(silences.transmitter), confidence: confidence,
                maximum: exitTimeout, pooled: true,
                fixed: (Int64((settings.exitTimeout * 1_000_000).rounded()), confidence * Self.fixedSlack))
            return max(paths, quiet)
        }
        let last = sighting ?? last(ref)
        let (earliest, overflow) = last.subtractingReportingOverflow(exitTimeout)
        let since = overflow ? Int64.min : earliest
        // Closures over the models alone: over `self` they would copy the whole monitor.
        let models = silences.beacons
        let heard = { (beacon: Int32) in (models[Int(beacon)].last ?? .min) >= since }
        let model = { (beacon: Int32) in models[Int(beacon)] }
        // A tag's scanners each lose its advertisements on their own path (docs/behaviour.md §19).
        let pooled = settings.rooms == nil
        // Never slower than the fixed default where a silence that long is improbable (§18).
        let fixed = (
            limit: Int64((settings.exitTimeout * 1_000_000).rounded()), confidence: confidence * Self.fixedSlack
        )
        switch ref.level {
        case .beacon:
            return SilenceModel.timeout(
                after: last, beacons: CollectionOfOne(ref.index).lazy.filter(heard).map(model), confidence: confidence,
                maximum: exitTimeout, pooled: pooled, fixed: fixed)
        case .zone:
            return SilenceModel.timeout(
                after: last, beacons: hierarchy.zones[Int(ref.index)].beacons.lazy.filter(heard).map(model),
                confidence: confidence, maximum: exitTimeout, pooled: pooled, fixed: fixed)
        case .area:
            let zones = hierarchy.zones
            let beacons = hierarchy.areas[Int(ref.index)].zones.lazy.flatMap { zones[$0].beacons }
            return SilenceModel.timeout(
                after: last, beacons: beacons.filter(heard).map(model), confidence: confidence, maximum: exitTimeout,
                pooled: pooled, fixed: fixed)
        }
    }

    /// How much looser than `Monitor.exitConfidence` a silence of the fixed `Monitor.exitTimeout`
    /// (10 s by default) may be for `auto` to wait no longer than it (`scripts/bench quality`: a
    /// looser one, or the estimates without their margins, let spurious exits through on channels
    /// that lose in runs).
    static let fixedSlack = 100.0

    /// Sightings of a tag closer than this (µs) are one advertisement heard by several scanners.
    static let sameAdvertisement: Int64 = 50_000

    /// Where `ref`'s limit is kept in ``limits``.
    func limitSlot(_ ref: RegionRef) -> Int {
        switch ref.level {
        case .area: Int(ref.index)
        case .zone: hierarchy.areas.count + Int(ref.index)
        case .beacon: hierarchy.areas.count + hierarchy.zones.count + Int(ref.index)
        }
    }

    /// The silence limit of `ref` as worked out less than a second ago, or now.
    func currentLimit(_ ref: RegionRef) -> Int64 {
        guard exitConfidence != nil else { return exitTimeout }
        let cached = silences.limits[limitSlot(ref)]
        return isFresh(cached.at) ? cached.limit : silenceLimit(ref)
    }

    /// A limit worked out at `time` is still used now (`.min`: never worked out).
    func isFresh(_ time: Int64) -> Bool {
        time != .min && time <= timing.now && timing.now - time < Self.limitLifetime
    }

    /// How long a worked-out limit is used to keep a region inside (whether it exits is always
    /// decided on a fresh one: ``refreshLimits(_:force:)``).
    static let limitLifetime: Int64 = 1_000_000

    /// Works out again the limits ``exitDeadline(_:)`` uses for `ref`: when more than a second
    /// old, or with `force` unless worked out at this instant.
    mutating func refreshLimits(_ ref: RegionRef, force: Bool = false) {
        guard exitConfidence != nil else { return }
        var region: RegionRef? = ref
        while let current = region {
            let slot = limitSlot(current)
            if !isFresh(silences.limits[slot].at) || (force && silences.limits[slot].at != timing.now) {
                // Worked out before the write: inside it, reading `self` would copy the monitor.
                let limit = silenceLimit(current)
                silences.limits[slot] = (timing.now, limit)
            }
            region = current.level == .beacon ? parent(of: current) : nil
        }
    }

    /// When `ref` stops being inside by the sightings, `nil` if never sighted: its last sighting
    /// plus its limit; under `auto`, for a beacon, the earlier of its own and its Zone's (all the
    /// beacons of a Zone silent for longer than they allow together means the walker left it,
    /// however long one beacon alone would wait).
    func exitDeadline(_ ref: RegionRef) -> Int64? {
        let last = last(ref)
        guard last != Self.never else { return nil }
        var due = last + currentLimit(ref)
        // By an exit door, a silence is the tag leaving (docs/behaviour.md §20).
        if let quick = exitDoorSilence { due = min(due, last &+ quick) }
        guard ref.level == .beacon, let zoneDue = zoneDeadline(of: ref.index) else { return due }
        return min(due, zoneDue)
    }

    /// Under `auto`, when the Zone of `beacon` stops being inside by its beacons together, `nil`
    /// with a fixed timeout or a Zone never sighted.
    func zoneDeadline(of beacon: Int32) -> Int64? {
        guard exitConfidence != nil, let zone = parent(of: RegionRef(.beacon, beacon)) else { return nil }
        let sighted = last(zone)
        return sighted == Self.never ? nil : sighted + currentLimit(zone)
    }

    /// Microseconds of silence after which `beacon` goes `off`: its own model alone (its limit as
    /// a region, worked out at most once a second).
    mutating func offLimit(_ beacon: Int32) -> Int64 {
        guard exitConfidence != nil else { return exitTimeout }
        let ref = RegionRef(.beacon, beacon)
        let slot = limitSlot(ref)
        if !isFresh(silences.limits[slot].at) {
            let limit = silenceLimit(ref, after: sightings.any[Int(beacon)], own: true)
            silences.limits[slot] = (timing.now, limit)
        }
        return silences.limits[slot].limit
    }

    /// When `beacon` goes `off` unless sighted again: its last sighting plus its own limit; under
    /// `auto` no later than its Zone's beacons together allow (as its exit). The deadline is not
    /// looked at again before it comes: the exit of its region turns it `off` at once when the
    /// estimate has shortened since (``turnOffWithExit(_:)``).
    mutating func offDeadline(_ beacon: Int32) -> Int64 {
        let due = sightings.any[Int(beacon)] + offLimit(beacon)
        return zoneDeadline(of: beacon).map { min(due, $0) } ?? due
    }

    /// When to look at an exit deadline `due` again: then, or under `auto` within a second from
    /// now, since more sightings shorten the silence a region's beacons allow (from the maximum
    /// to seconds as a visit's first gaps come). A deadline looked at too early is armed again.
    func nextLook(_ due: Int64) -> Int64 {
        exitConfidence == nil ? due : min(due, timing.now + 1_000_000)
    }
}
