import Foundation

/// How a tag's room is chosen among the Zones whose scanners hear it (docs/behaviour.md §19,
/// `Tags.rooms = nearest`), measured against the rules peers use by `scripts/bench rooms`
/// (docs/performance.md "Rooms").
///
/// - Each scanner's *level* of the tag (dB above the tag's measured power, with the scanner's
///   offset) rises fast and falls slowly: a reading above the level moves it ``rise`` of the way,
///   one below ``fall`` of the way. A person walking up to a scanner is seen in a reading or two;
///   a multipath dip or a weak outlier barely moves it.
/// - A room's evidence is its best scanner's level, less ``staleness`` dB for each second its last
///   report is older than ``grace`` (or, under an adaptive exit, than the silence that scanner's
///   own path makes plausible, ``graceConfidence``); a report older than ``fresh`` seconds is none (the present
///   room's, three times that): a room whose scanner fell silent gives way gradually.
/// - A tag in no room enters at once the room of the first scanner that hears it.
/// - Later the best other room takes over when its evidence leads the present room's by
///   ``margin`` dB, or when its lead, less ``drift`` dB, summed over the reports of the two rooms'
///   scanners reaches ``threshold`` dB (a clear lead wins in a few readings, a doorway's back and
///   forth never adds up), or when the present room has no evidence left while another has.
/// - It leaves its room and its Area when no scanner of that Area has heard it for the exit
///   timeout.
///
/// Everything counts readings, not seconds (but for the ageing of a silent scanner): a live run
/// takes a burst of reports at one instant where a trace spreads them, and both decide alike. A
/// reading stands for the tag's advertising interval, at most a second (``perSecond``), once the
/// adaptive exit has learned it from the scanner's sightings at distinct instants
/// (``Monitor/readingWeight(_:)``): a tag advertising ten times a second is judged per second.
package struct RoomRule: Sendable, Hashable, CustomStringConvertible {
    /// dB by which another room's evidence wins at once.
    package var margin: Double
    /// dB of lead that count for nothing in the sum.
    package var drift: Double
    /// dB of lead, above ``drift``, summed over reports, by which another room wins.
    package var threshold: Double
    /// Seconds after which a scanner's last report of the tag is no evidence.
    package var fresh: Double
    /// How far a reading moves a scanner's level towards itself, rising and falling (0…1].
    package var rise: Double
    package var fall: Double
    /// Seconds a scanner's level holds after its last report, and dB it loses for each second
    /// after that.
    package var grace = 3.0
    package var staleness = 1.0
    /// Under an adaptive exit, a scanner's level also holds for the silence its own path makes
    /// plausible at this confidence, up to ``fresh`` (`nil`: ``grace`` alone): a path that loses
    /// advertisements in runs does not give a still tag's room away at every run (`scripts/bench
    /// rooms`, bursty losses: 29 flaps an hour of still tags before, 18 after).
    package var graceConfidence: Double? = 1e-3
    /// Whether a reading counts for the tag's advertising interval (at most a second) rather
    /// than as one whole reading: levels and contests then move per second of the tag's time, so
    /// a tag advertising ten times a second is judged as steadily as a 1 Hz one (`scripts/bench
    /// rooms`: 62 flaps an hour of still 10 Hz tags before, 3 after). Off for node reports, each
    /// already a filtered estimate.
    package var perSecond = true

    package init(
        margin: Double = 12, drift: Double = 4, threshold: Double = 12, fresh: Double = 10, rise: Double = 0.7,
        fall: Double = 0.25
    ) {
        (self.margin, self.drift, self.threshold, self.fresh, self.rise, self.fall) =
            (margin, drift, threshold, fresh, rise, fall)
    }

    /// For ESPresense nodes' reports, each already the median of the node's last 15 s and sent
    /// every few seconds: taken as they are on the way up, half way down, and a lead adds up in
    /// fewer reports (measured by `scripts/bench rooms`, docs/performance.md).
    package static let filteredReports: RoomRule = {
        var rule = RoomRule(margin: 10, drift: 3, threshold: 8, rise: 1, fall: 0.5)
        rule.perSecond = false
        return rule
    }()

    package var description: String {
        "a reading moves a scanner's level \(Self.text(rise)) of the way up, \(Self.text(fall)) of the way down; a "
            + "room's evidence is its best scanner's level, less \(Self.text(staleness)) dB a second after \(Self.text(grace)) s "
            + "of silence; a tag moves to another room when that room leads by \(Self.text(margin)) dB, or when its "
            + "lead less \(Self.text(drift)) dB adds up to \(Self.text(threshold)) dB over the two rooms' reports, or when "
            + "its present room has no evidence left; a report older than \(Self.text(fresh)) s never wins"
            + (perSecond
                ? "; under an adaptive exit a reading counts for the tag's advertising interval, at most 1 s" : "")
            + (graceConfidence.map {
                "; under an adaptive exit a scanner's level also holds for the silence its path makes plausible at "
                    + "\(Self.text($0)), up to \(Self.text(fresh)) s"
            } ?? "")
    }

    /// A scanner's level after `reading` (dB above the tag's power); `level` is `-infinity` when
    /// never heard.
    /// `weight`: the share of a second of the tag's advertising the reading stands for
    /// (``Monitor/readingWeight(_:)``, at most 1): ten readings of a tag advertising ten times a
    /// second, each of weight 0.1, move the level as far as one reading of weight 1.
    package func level(_ level: Double, reading: Double, weight: Double = 1) -> Double {
        guard level > -.infinity else { return reading }
        let step = reading > level ? rise : fall
        return level + (reading - level) * (weight >= 1 ? step : 1 - pow(1 - step, weight))
    }

    /// The contest between a tag's present room and the best other one.
    package struct Contest: Sendable, Hashable {
        /// The challenging Zone (an index), -1 for none.
        var zone: Int32 = -1
        /// dB of lead above the drift, summed over reports.
        var score = 0.0
    }

    /// Whether `zone`, leading the present room by `lead` dB (`nil`: the present room has no
    /// evidence), takes over after a report; `counts`: the report is of one of the two rooms'
    /// scanners, so it adds to the sum. Updates `contest`.
    func wins(_ zone: Int32, lead: Double?, counts: Bool, weight: Double = 1, contest: inout Contest) -> Bool {
        if contest.zone != zone { contest = Contest(zone: zone, score: 0) }
        guard let lead else { return true }
        if lead >= margin { return true }
        if counts { contest.score = max(0, contest.score + (lead - drift) * weight) }
        return contest.score >= threshold
    }

    static func text(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}
