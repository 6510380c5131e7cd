/// What the decoder saw, so that a user can tell "no beacons here" from "garbage on the wire".
package struct DecodeStatistics: Hashable, Sendable {
    /// HCI events given to the decoder.
    package var events = 0
    /// Events that were not LE advertising reports (command completes, other LE subevents).
    package var otherEvents = 0
    /// Advertising reports found in the events.
    package var reports = 0
    /// Reports that decoded to an iBeacon or AltBeacon advertisement.
    package var beacons = 0
    /// Well-formed reports that carry no beacon layout.
    package var notBeacons = 0
    /// Reports dropped because the controller gave RSSI 127 ("not available").
    package var rssiUnavailable = 0
    /// Extended reports whose data was incomplete or truncated (docs/behaviour.md §3.2: complete data only).
    package var incomplete = 0
    /// Events or reports whose bytes did not parse: lengths running past the end, truncation.
    package var malformed = 0

    package init() {}

    package static func += (lhs: inout DecodeStatistics, rhs: DecodeStatistics) {
        lhs.events += rhs.events
        lhs.otherEvents += rhs.otherEvents
        lhs.reports += rhs.reports
        lhs.beacons += rhs.beacons
        lhs.notBeacons += rhs.notBeacons
        lhs.rssiUnavailable += rhs.rssiUnavailable
        lhs.incomplete += rhs.incomplete
        lhs.malformed += rhs.malformed
    }

    /// One line for logs and the end of `decode`.
    package var summary: String {
        "\(events) events, \(reports) reports, \(beacons) beacons, \(notBeacons) not beacons, "
            + "\(rssiUnavailable) without RSSI, \(incomplete) incomplete, \(malformed) malformed, "
            + "\(otherEvents) other events"
    }
}
