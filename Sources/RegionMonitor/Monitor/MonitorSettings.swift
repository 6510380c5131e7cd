import BeaconCore
import Floorplan
import Foundation

/// How RSSI samples of the last `rssiWindow` seconds become one value (docs/behaviour.md §4).
package enum RSSIFilterKind: String, Sendable, Hashable, CaseIterable {
    case median
    /// Trimmed mean, AltBeacon style.
    case mean
    case kalman
    case none
}

/// The `Monitor.*` settings of docs/behaviour.md §2.2, with their defaults.
package struct MonitorSettings: Sendable, Hashable {
    /// HSYCO `userid`; `nil` means the host name, resolved at start.
    package var userid: String?
    /// HSYCO `session`; `nil` means random per start.
    package var session: String?
    /// HSYCO `address`; `nil` means the first non-loopback IP, resolved at start.
    package var address: String?
    package var source: SourceSpec = .adapter("hci0")
    package var maxRegions = 20
    /// Seconds of silence before a region exits and a beacon goes `off`, unless ``adaptiveExit``.
    package var exitTimeout: Double = 10
    /// `Monitor.exitTimeout = auto` (docs/behaviour.md §18): each region's silence comes from its beacons' own
    /// advertising rate and loss during the visit (``SilenceModel``).
    package var adaptiveExit = false
    /// `Monitor.exitConfidence`: with ``adaptiveExit``, the probability below which a silence
    /// while still inside is taken as having left.
    package var exitConfidence = 1e-6
    /// `Monitor.exitTimeoutMax`: with ``adaptiveExit``, the longest silence (also the restart
    /// grace and a device's Area hold).
    package var exitTimeoutMax: Double = 30
    /// `Tags.exitTimeoutMin`: with ``adaptiveExit``, the shortest silence that takes a tag heard by
    /// scanners away (docs/behaviour.md §20, "Real radio"): losses come in bursts every scanner
    /// shares (the tag's own advertising pauses, a body in the way).
    package var exitTimeoutMin: Double = 3
    package var enterRSSI: Int?
    package var mode: RangingMode = .background
    package var backgroundRanging: Double = 10
    package var rssiFilter: RSSIFilterKind = .median
    package var rssiWindow: Double = 5
    package var pathLossExponent: Double = 2.0
    package var immediate: Double = 0.5
    package var near: Double = 3.0
    package var hysteresis: Double = 0.15
    package var nearestMargin: Double = 5
    /// Day boundaries, daily caps and dwell days; `nil` means the system zone.
    package var timezone: TimeZone?
    package var lat: Double?
    package var lng: Double?
    /// Device identifier for URL templates; `nil` means /etc/machine-id, read at start.
    package var udid: String?
    /// `Monitor.maxPositionError` and `Monitor.geofenceHysteresis` (docs/behaviour.md §17).
    package var geofence = GeofenceSettings()
    /// `Monitor.position = gpsd:HOST:PORT`: where fixes come from besides traces and OwnTracks.
    package var position: GPSDEndpoint?
    /// A tag heard by fixed scanners (docs/behaviour.md §19): each sighting is of the scanner's location, at
    /// the tag's own measured power (the sighting's), not the location's.
    package var powerFromSighting = false
    /// `Tags.rooms = nearest`: the tag is in one room (Zone) at a time, chosen by this rule; `nil`
    /// for presence in every Zone sighted (5.1).
    package var rooms: RoomRule?
    /// `Tags.rooms = position` (docs/behaviour.md §20): on the floors with a plan, the room
    /// follows from the tag's position; ``rooms`` decides on floors without one.
    package var floorPlans: PositionSettings?
    /// Seconds between a node's reports of a still tag when the sightings are ESPresense nodes'
    /// filtered reports (the firmware's `skip_ms`, docs/espresense.md), sooner only while it moves:
    /// under the adaptive exit it is away after two periods and a second of silence, and its
    /// scanners' silence models count one report a period (a walk's quick reports would teach
    /// them an interval the still tag never keeps), docs/behaviour.md §18, §19. `nil`: every
    /// sighting counts.
    package var reportPeriod: Double?
    /// A phone or watch tracked as a tag (`irk:`): it may stop advertising for a while though it is
    /// there (iOS's transmit outages, 20–60 s at a time), so under the adaptive exit it is taken
    /// away only after `Monitor.exitTimeoutMax` of silence (docs/behaviour.md §18, §19).
    package var quietTransmitter = false

    package init() {}
}
