import BeaconCore
import Foundation

/// The building as configured: Areas, their Zones, their Beacons, with Location IDs and names.
///
/// Order is the configuration file's: beacons in file order, zones and areas in the order of
/// their first beacon. The monitor uses that order where the HSYCO policy needs one
/// ("never-sighted ones in file order").
public struct Hierarchy: Sendable {
    /// A configured beacon.
    public struct Beacon: Sendable, Hashable {
        /// The Location ID (`LocationBaseBeacon.<id>`), as HSYCO reports it.
        public var locationID: String
        public var id: BeaconID
        /// The `LocationBeaconPower` calibration, overriding the advertised measured power.
        public var power: Int8?
        public var name: String?

        public init(locationID: String, id: BeaconID, name: String? = nil, power: Int8? = nil) {
            self.locationID = locationID
            self.id = id
            self.name = name
            self.power = power
        }
    }

    public struct Zone: Sendable, Hashable {
        public var uuid: UUID
        public var major: UInt16
        public var name: String?
        /// Indices into ``Hierarchy/beacons``, in file order.
        public var beacons: [Int32]
        public var region: Region { .zone(uuid, major: major) }
    }

    public struct Area: Sendable, Hashable {
        public var uuid: UUID
        public var name: String?
        /// Indices into ``Hierarchy/zones``, in order of appearance.
        public var zones: [Int]
        public var region: Region { .area(uuid) }
    }

    public private(set) var beacons: [Beacon] = []
    public private(set) var zones: [Zone] = []
    public private(set) var areas: [Area] = []
    /// For each beacon, the index of its Zone in ``zones``.
    public private(set) var zoneOfBeacon: [Int32] = []
    /// For each zone, the index of its Area in ``areas``.
    public private(set) var areaOfZone: [Int32] = []
    private var beaconIndex = BeaconIndex([])
    /// Beacon positions sorted by Location ID, for ``index(ofLocation:)``.
    private var byLocation: [Int32] = []
    private var zoneIndex: [Region: Int] = [:]
    private var areaIndex: [UUID: Int] = [:]

    public init() {}

    /// Builds the hierarchy from beacons in file order; names of Areas and Zones by region.
    ///
    /// The caller has checked that Location IDs and beacon identities are unique.
    public init(beacons: [Beacon], areaNames: [UUID: String] = [:], zoneNames: [Region: String] = [:]) {
        self.beacons.reserveCapacity(beacons.count)
        zoneOfBeacon.reserveCapacity(beacons.count)
        for beacon in beacons { add(beacon) }
        beaconIndex = BeaconIndex(beacons.lazy.map(\.id))
        byLocation = beacons.indices.map(Int32.init).sorted {
            beacons[Int($0)].locationID < beacons[Int($1)].locationID
        }
        for (uuid, name) in areaNames { if let index = areaIndex[uuid] { areas[index].name = name } }
        for (region, name) in zoneNames { if let index = zoneIndex[region] { zones[index].name = name } }
    }

    private mutating func add(_ beacon: Beacon) {
        let index = beacons.count
        beacons.append(beacon)
        let zoneRegion = Region.zone(beacon.id.uuid, major: beacon.id.major)
        if let zone = zoneIndex[zoneRegion] {
            zones[zone].beacons.append(Int32(index))
            zoneOfBeacon.append(Int32(zone))
        } else {
            zoneOfBeacon.append(Int32(zones.count))
            zoneIndex[zoneRegion] = zones.count
            let areaPosition: Int
            if let area = areaIndex[beacon.id.uuid] {
                areaPosition = area
            } else {
                areaPosition = areas.count
                areaIndex[beacon.id.uuid] = areaPosition
                areas.append(Area(uuid: beacon.id.uuid, name: nil, zones: []))
            }
            areas[areaPosition].zones.append(zones.count)
            areaOfZone.append(Int32(areaPosition))
            zones.append(Zone(uuid: beacon.id.uuid, major: beacon.id.major, name: nil, beacons: [Int32(index)]))
        }
    }

    /// The index of a configured beacon, or `nil` for one that is not configured.
    public func index(of id: BeaconID) -> Int? { beaconIndex.find(id) { beacons[$0].id } }

    /// The index of the beacon with that Location ID.
    public func index(ofLocation locationID: String) -> Int? {
        var low = 0
        var high = byLocation.count
        while low < high {
            let middle = (low + high) / 2
            if beacons[Int(byLocation[middle])].locationID < locationID { low = middle + 1 } else { high = middle }
        }
        guard low < byLocation.count, beacons[Int(byLocation[low])].locationID == locationID else { return nil }
        return Int(byLocation[low])
    }

    public func zoneIndex(of region: Region) -> Int? { zoneIndex[region] }

    public func areaIndex(of uuid: UUID) -> Int? { areaIndex[uuid] }

    /// The display name of a region: its configured name, else `nil`.
    public func name(of region: Region) -> String? {
        switch region {
        case .area(let uuid): areaIndex[uuid].flatMap { areas[$0].name }
        case .zone: zoneIndex[region].flatMap { zones[$0].name }
        case .beacon(let id): index(of: id).flatMap { beacons[$0].name }
        }
    }
}
