import BeaconCore
import Foundation

/// The building as configured: Areas, their Zones, their Beacons, with Location IDs and names.
///
/// Order is the configuration file's: beacons in file order, zones and areas in the order of
/// their first beacon. The monitor uses that order where the HSYCO policy needs one
/// ("never-sighted ones in file order").
package struct Hierarchy: Sendable {
    /// A configured beacon.
    package struct Beacon: Sendable, Hashable {
        /// The Location ID (`LocationBaseBeacon.<id>`), as HSYCO reports it.
        package var locationID: String
        package var id: BeaconID
        /// The `LocationBeaconPower` calibration, overriding the advertised measured power.
        package var power: Int8?
        package var name: String?

        package init(locationID: String, id: BeaconID, name: String? = nil, power: Int8? = nil) {
            self.locationID = locationID
            self.id = id
            self.name = name
            self.power = power
        }
    }

    package struct Zone: Sendable, Hashable {
        package var uuid: UUID
        package var major: UInt16
        package var name: String?
        /// Indices into ``Hierarchy/beacons``, in file order.
        package var beacons: [Int32]
        package var region: Region { .zone(uuid, major: major) }
    }

    package struct Area: Sendable, Hashable {
        package var uuid: UUID
        package var name: String?
        /// Indices into ``Hierarchy/zones``, in order of appearance.
        package var zones: [Int]
        package var region: Region { .area(uuid) }
    }

    package private(set) var beacons: [Beacon] = []
    package private(set) var zones: [Zone] = []
    package private(set) var areas: [Area] = []
    /// For each beacon, the index of its Zone in ``zones``.
    package private(set) var zoneOfBeacon: [Int32] = []
    /// For each zone, the index of its Area in ``areas``.
    package private(set) var areaOfZone: [Int32] = []
    private var beaconIndex = BeaconIndex([])
    /// Beacon positions sorted by Location ID, for ``index(ofLocation:)``.
    private var byLocation: [Int32] = []
    private var zoneIndex: [Region: Int] = [:]
    private var areaIndex: [UUID: Int] = [:]

    package init() {}

    /// Builds the hierarchy from beacons in file order; names of Areas and Zones by region.
    ///
    /// The caller has checked that Location IDs and beacon identities are unique.
    package init(beacons: [Beacon], areaNames: [UUID: String] = [:], zoneNames: [Region: String] = [:]) {
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
    package func index(of id: BeaconID) -> Int? { beaconIndex.find(id) { beacons[$0].id } }

    /// The index of the beacon with that Location ID.
    package func index(ofLocation locationID: String) -> Int? {
        var low = 0
        var high = byLocation.count
        while low < high {
            let middle = (low + high) / 2
            if beacons[Int(byLocation[middle])].locationID < locationID { low = middle + 1 } else { high = middle }
        }
        guard low < byLocation.count, beacons[Int(byLocation[low])].locationID == locationID else { return nil }
        return Int(byLocation[low])
    }

    package func zoneIndex(of region: Region) -> Int? { zoneIndex[region] }

    package func areaIndex(of uuid: UUID) -> Int? { areaIndex[uuid] }

    /// The display name of a region: its configured name, else `nil`.
    package func name(of region: Region) -> String? {
        switch region {
        case .area(let uuid): areaIndex[uuid].flatMap { areas[$0].name }
        case .zone: zoneIndex[region].flatMap { zones[$0].name }
        case .beacon(let id): index(of: id).flatMap { beacons[$0].name }
        }
    }
}
