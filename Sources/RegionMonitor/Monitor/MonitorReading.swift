import BeaconCore

/// What a monitor knows now, read for a person (the web view, docs/behaviour.md §16): the monitored set, the
/// regions inside, and every beacon that is ranged or was last reported as not `off`.
package struct MonitorReading: Sendable, Hashable {
    /// One beacon's ranging now.
    package struct Beacon: Sendable, Hashable {
        package var locationID: String
        /// The class computed from its filtered RSSI (what rules and alerts see).
        package var computed: Proximity
        /// The class last reported in a `location` output.
        package var reported: Proximity
        /// Filtered RSSI, dBm; `nil` while `off`.
        package var rssi: Double?
        /// Estimated distance, metres; `nil` while `off`.
        package var meters: Double?
        /// The last sighting's RSSI before the filter, dBm, and when it was; `nil` while `off`.
        package var raw: Double?
        package var heard: Timestamp?

        package init(
            locationID: String, computed: Proximity, reported: Proximity, rssi: Double?, meters: Double?,
            raw: Double? = nil, heard: Timestamp? = nil
        ) {
            self.locationID = locationID
            self.computed = computed
            self.reported = reported
            self.rssi = rssi
            self.meters = meters
            self.raw = raw
            self.heard = heard
        }
    }

    /// A region inside, and since when (its current visit).
    package struct Presence: Sendable, Hashable {
        package var region: Region
        package var since: Timestamp

        package init(region: Region, since: Timestamp) {
            self.region = region
            self.since = since
        }
    }

    package var time: Timestamp
    /// What the monitored set holds: Beacons, Zones, or Areas (then the Zones of one Area).
    package var mode: MonitoringChange.Mode
    /// The monitored regions, at most `Monitor.maxRegions`.
    package var monitored: [Region]
    /// Every region inside now: Areas, Zones and Beacons, in hierarchy order.
    package var inside: [Presence]
    /// Ranged or last reported not `off`, in hierarchy order.
    package var beacons: [Beacon]
    /// The nearest beacon's Location ID.
    package var nearest: String?
    package var ranging: RangingMode
    /// A tag's room and why it last changed (docs/behaviour.md §19), under `Tags.rooms = nearest`.
    package var room: Region?
    package var roomChange: RoomChange?
    /// Where a tag is on a floor with a plan (docs/behaviour.md §20), `nil` without one.
    package var position: PositionReading?
    /// The device's own cap: `Monitor.maxRegions` less its monitored waypoints (§15.1).
    package var maxRegions = 20

    /// A tag's position now, and the probability of the rooms around it.
    package struct PositionReading: Sendable, Hashable {
        package var area: Region
        package var x: Double
        package var y: Double
        /// One standard deviation of the distance from the estimate, metres.
        package var error: Double
        /// The most probable rooms first (at most five with any chance), then the share outside
        /// every room (`room` `nil`).
        package var rooms: [RoomOdds]

        package struct RoomOdds: Sendable, Hashable {
            package var room: Region?
            package var probability: Double

            package init(room: Region?, probability: Double) {
                self.room = room
                self.probability = probability
            }
        }

        package init(area: Region, x: Double, y: Double, error: Double, rooms: [RoomOdds]) {
            (self.area, self.x, self.y, self.error, self.rooms) = (area, x, y, error, rooms)
        }
    }

    package init(
        time: Timestamp, mode: MonitoringChange.Mode, monitored: [Region], inside: [Presence], beacons: [Beacon],
        nearest: String?, ranging: RangingMode, room: Region? = nil, roomChange: RoomChange? = nil,
        position: PositionReading? = nil
    ) {
        self.position = position
        self.room = room
        self.roomChange = roomChange
        self.time = time
        self.mode = mode
        self.monitored = monitored
        self.inside = inside
        self.beacons = beacons
        self.nearest = nearest
        self.ranging = ranging
    }
}

extension Monitor {
    /// The monitor now, read without changing it (cost: the regions inside and the beacons
    /// watched, never the whole hierarchy).
    package var reading: MonitorReading {
        let inside = tracked.filter(\.value.inside).sorted { $0.key < $1.key }.map {
            MonitorReading.Presence(region: region($0.key), since: Timestamp(microseconds: $0.value.enteredAt))
        }
        var beacons: [MonitorReading.Beacon] = []
        beacons.reserveCapacity(classes.watchList.count)
        for index in classes.watchList.sorted() {
            let beacon = Int(index)
            let slot = Int(classes.slot[beacon])
            let ranged = slot >= 0 && classes.proximity[beacon] != .off
            beacons.append(
                MonitorReading.Beacon(
                    locationID: hierarchy.beacons[beacon].locationID, computed: classes.proximity[beacon],
                    reported: classes.reported[beacon], rssi: ranged ? classes.pool[slot].rssi : nil,
                    meters: ranged ? classes.pool[slot].meters : nil,
                    raw: ranged ? Double(classes.pool[slot].raw) : nil,
                    heard: ranged ? Timestamp(microseconds: sightings.any[beacon]) : nil))
        }
        var reading = MonitorReading(
            time: clock, mode: monitoring.mode, monitored: monitoredRegions, inside: inside, beacons: beacons,
            nearest: nearestState.beacon >= 0 ? hierarchy.beacons[Int(nearestState.beacon)].locationID : nil,
            ranging: mode,
            room: settings.rooms == nil
                ? nil : currentRoom.flatMap { room in inside.contains { $0.region == room } ? room : nil },
            roomChange: settings.rooms == nil ? nil : roomChange, position: positionReading)
        reading.maxRegions = settings.maxRegions
        return reading
    }

    /// The tag's position and room probabilities (§20), `nil` off a floor plan.
    var positionReading: MonitorReading.PositionReading? {
        guard let (area, point, error) = estimatedPosition else { return nil }
        let odds = roomProbabilities
        var rooms = odds.filter { $0.room != nil && $0.probability >= 0.005 }.prefix(5).map {
            MonitorReading.PositionReading.RoomOdds(room: $0.room, probability: $0.probability)
        }
        if let outside = odds.last, outside.room == nil {
            rooms.append(.init(room: nil, probability: outside.probability))
        }
        return MonitorReading.PositionReading(
            area: area, x: Self.rounded(point.x), y: Self.rounded(point.y), error: Self.rounded(error), rooms: rooms)
    }
}
