import BeaconCore
import Floorplan
import Foundation

/// How RSSI samples of the last `rssiWindow` seconds become one value (docs/behaviour.md §4).
public enum RSSIFilterKind: String, Sendable, Hashable, CaseIterable {
    case median
    /// Trimmed mean, AltBeacon style.
    case mean
    case kalman
    case none
}

/// The `Monitor.*` settings of docs/behaviour.md §2.2, with their defaults.
public struct MonitorSettings: Sendable, Hashable {
    /// HSYCO `userid`; `nil` means the host name, resolved at start.
    public var userid: String?
    /// HSYCO `session`; `nil` means random per start.
    public var session: String?
    /// HSYCO `address`; `nil` means the first non-loopback IP, resolved at start.
    public var address: String?
    public var source: SourceSpec = .adapter("hci0")
    public var maxRegions = 20
    /// Seconds of silence before a region exits and a beacon goes `off`, unless ``adaptiveExit``.
    public var exitTimeout: Double = 10
    /// `Monitor.exitTimeout = auto` (docs/behaviour.md §18): each region's silence comes from its beacons' own
    /// advertising rate and loss during the visit (``SilenceModel``).
    public var adaptiveExit = false
    /// `Monitor.exitConfidence`: with ``adaptiveExit``, the probability below which a silence
    /// while still inside is taken as having left.
    public var exitConfidence = 1e-6
    /// `Monitor.exitTimeoutMax`: with ``adaptiveExit``, the longest silence (also the restart
    /// grace and a device's Area hold).
    public var exitTimeoutMax: Double = 30
    public var enterRSSI: Int?
    public var mode: RangingMode = .background
    public var backgroundRanging: Double = 10
    public var rssiFilter: RSSIFilterKind = .median
    public var rssiWindow: Double = 5
    public var pathLossExponent: Double = 2.0
    public var immediate: Double = 0.5
    public var near: Double = 3.0
    public var hysteresis: Double = 0.15
    public var nearestMargin: Double = 5
    /// Day boundaries, daily caps and dwell days; `nil` means the system zone.
    public var timezone: TimeZone?
    public var lat: Double?
    public var lng: Double?
    /// Device identifier for URL templates; `nil` means /etc/machine-id, read at start.
    public var udid: String?
    /// `Monitor.maxPositionError` and `Monitor.geofenceHysteresis` (docs/behaviour.md §17).
    public var geofence = GeofenceSettings()
    /// `Monitor.position = gpsd:HOST:PORT`: where fixes come from besides traces and OwnTracks.
    public var position: GPSDEndpoint?
    /// A tag heard by fixed scanners (docs/behaviour.md §19): each sighting is of the scanner's location, at
    /// the tag's own measured power (the sighting's), not the location's.
    public var powerFromSighting = false
    /// `Tags.rooms = nearest`: the tag is in one room (Zone) at a time, chosen by this rule; `nil`
    /// for presence in every Zone sighted (5.1).
    public var rooms: RoomRule?
    /// `Tags.rooms = position` (docs/behaviour.md §20): on the floors with a plan, the room
    /// follows from the tag's position; ``rooms`` decides on floors without one.
    public var floorPlans: PositionSettings?
    /// Seconds between a node's reports of a still tag when the sightings are ESPresense nodes'
    /// filtered reports (the firmware's `skip_ms`, docs/espresense.md), sooner only while it moves:
    /// under the adaptive exit it is away after two periods and a second of silence, and its
    /// scanners' silence models count one report a period (a walk's quick reports would teach
    /// them an interval the still tag never keeps), docs/behaviour.md §18, §19. `nil`: every
    /// sighting counts.
    public var reportPeriod: Double?
    /// A phone or watch tracked as a tag (`irk:`): it may stop advertising for a while though it is
    /// there (iOS's transmit outages, 20–60 s at a time), so under the adaptive exit it is taken
    /// away only after `Monitor.exitTimeoutMax` of silence (docs/behaviour.md §18, §19).
    public var quietTransmitter = false

    public init() {}
}
