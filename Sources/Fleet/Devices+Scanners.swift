import BeaconCore
import BeaconConfiguration
import Engine
import Floorplan
import RegionMonitor
import Rules

/// Fixed scanners' reports (docs/behaviour.md §19): a tag's sighting, a scanner heard by another
/// (the calibration and, on a floor plan, the radio, §20), and what a scanner says of itself.
extension Devices {
    /// With `Monitor.scanner`, what the own radio hears of an iBeacon that is not a hierarchy
    /// beacon is that scanner's report of it (docs/behaviour.md §19); a hierarchy beacon stays the own radio's.
    func ownReport(_ advertisement: Advertisement) -> ScannerReport? {
        guard let ownScanner, own.monitor.hierarchy.index(of: advertisement.beacon) == nil else { return nil }
        return ScannerReports.report(advertisement, scanner: ownScanner)
    }

    /// "Scanner S heard tag T at RSSI r" at `arrival` (docs/behaviour.md §19): for T's engine, a sighting of the
    /// location where S sits, at r plus S's offset, with T's measured power (the report's, else
    /// -59). The tag is added on its first report. Returns why nothing happened, if so.
    @discardableResult
    mutating func handle(_ report: ScannerReport, at arrival: Timestamp, into actions: inout [Action])
        -> Refusal?
    {
        guard let configuration, let scanners = configuration.scanners, let tags else { return nil }
        guard let scanner = scanners.scanner(report.scanner) else { return .unplacedScanner(report.scanner) }
        self.scanners[scanner.id, default: ScannerHealth()].heard(at: arrival)
        // Another scanner heard: a reading for the calibration, never a tag.
        if let transmitter = transmitter(of: report, settings: scanners) {
            let power = Double(report.power ?? TraceParser.defaultPower)
            let (fits, settles) = (calibration?.fits, calibration?.settles)
            calibration?.heard(
                receiver: scanner.id, transmitter: transmitter, level: report.rssi + scanner.rssiOffset - power)
            if calibration?.fits != fits, !configuration.floors.isEmpty { learnRadio(configuration) }
            if let calibration, calibration.settles != settles {
                actions.append(.calibration(calibration.settledLevels))
            }
            return nil
        }
        guard let tag = tags.resolve(report), !tag.id.isEmpty else { return .unknownTag }
        guard settings.shard.owns(tag.id) else { return .otherShard }
        // Every device's timers due before the report fire first (5.1: one at its instant after it).
        wake(upTo: arrival.microseconds - 1, into: &actions)
        if index[.fleet(tag.id)] == nil {
            guard fleetCount < settings.maxDevices else { return .tooManyDevices }
            let declaration =
                declared[tag.id] ?? DeviceDeclaration(id: tag.id, name: tag.declaration?.name ?? tag.id, line: 0)
            add(
                tag.id, Device(declaration: declaration, source: .scanners), state: KeptState(), isNew: true,
                at: arrival, into: &actions)
        }
        guard let position = index[.fleet(tag.id)] else { return nil }
        let rssi = (report.rssi + scanner.rssiOffset + (calibration?.correction(scanner.id) ?? 0)).rounded()
        // The tag's own power: its iBeacon's or the node's `rssi@1m`, as the report says, else -59.
        let power = report.power ?? TraceParser.defaultPower
        let advertisement = Advertisement(
            format: .ibeacon, beacon: scanner.beacon, power: power, rssi: Int8(max(-128, min(126, rssi))),
            address: report.address)
        known[position].sightedSinceRecord = true
        if !configuration.floors.isEmpty { engines[position].setRadio(radio) }
        engines[position].setFingerprints(fingerprintModel)
        engines[position].handle(.advertisement(advertisement), at: arrival, into: &scratch)
        finish(position, into: &actions)
        return nil
    }

    /// The radio fitted to what the scanners on a floor plan hear of each other at their known
    /// distances through their known walls (docs/behaviour.md §20); the defaults until three pairs
    /// are heard both ways.
    mutating func learnRadio(_ configuration: Configuration) {
        guard let calibration, let scanners = configuration.scanners else { return }
        var points: [String: (area: Int32, map: FloorMap, point: PlanPoint, z: Double)] = [:]
        for (area, map) in configuration.floors.sorted(by: { $0.key < $1.key }) {
            for placed in map.plan.scanners {
                let locationID = configuration.hierarchy.beacons[Int(placed.location)].locationID
                guard let scanner = scanners.scanners.first(where: { $0.locationID == locationID }) else { continue }
                points[scanner.id] = (area, map, placed.point, placed.z)
            }
        }
        var pairs: [RadioModel.Pair] = []
        for pair in calibration.pairs {
            // Two scanners of one building: on one floor through its walls, else through its floors.
            guard let a = points[pair.a], let b = points[pair.b], let building = configuration.buildings[a.area],
                configuration.buildings[b.area] === building
            else { continue }
            let flat = a.point.distance(to: b.point)
            let distance = (flat * flat + (a.z - b.z) * (a.z - b.z)).squareRoot()
            let walls = a.area == b.area ? Double(a.map.walls(from: a.point, to: b.point)) : 0
            pairs.append(
                RadioModel.Pair(
                    distance: distance, walls: walls, floors: Double(building.floors(between: a.z, and: b.z)),
                    level: pair.level))
        }
        radio = RadioModel.fit(pairs) ?? RadioModel()
        if let noise = calibration.noise { radio.learn(noise: noise.reading, shadowing: noise.shadowing) }
    }

    /// The scanner a report is of, when it is of a placed scanner: ESPresense's `node:<id>`, or a
    /// scanner's `Scanner.<id>.address`.
    func transmitter(of report: ScannerReport, settings: ScannerSettings) -> String? {
        if report.tag.hasPrefix("node:"), let id = settings.scanner(String(report.tag.dropFirst(5)))?.id {
            return id
        }
        guard !scannerAddresses.isEmpty else { return nil }
        if let address = report.address, let id = scannerAddresses[address] { return id }
        if case .mac(let address) = TagDirectory.identity(report.tag) { return scannerAddresses[address] }
        return nil
    }

    /// The calibration of `settings` (what `old` heard kept) and the scanners by address.
    static func calibration(
        for settings: ScannerSettings?, from old: ScannerCalibration?
    ) -> (ScannerCalibration?, [BluetoothAddress: String]) {
        guard let settings else { return (nil, [:]) }
        let addresses = Dictionary(
            settings.scanners.compactMap { scanner in scanner.address.map { ($0, scanner.id) } },
            uniquingKeysWith: { first, _ in first })
        guard settings.calibrate == .auto, settings.scanners.count > 1 else { return (nil, addresses) }
        let ids = settings.scanners.map(\.id)
        let anchored = Set(settings.scanners.filter(\.hasOffset).map(\.id))
        return (
            old?.reconfigured(scanners: ids, anchored: anchored)
                ?? ScannerCalibration(scanners: ids, anchored: anchored), addresses
        )
    }

    /// Goes on with the calibration's levels an earlier run kept (a restart, or a cluster's new
    /// active: docs/behaviour.md §21); the floors' radio is learned again from them.
    package mutating func resumeCalibration(from levels: [ScannerLevel]) {
        guard !levels.isEmpty, let configuration, calibration != nil else { return }
        calibration?.resume(from: levels)
        if !configuration.floors.isEmpty { learnRadio(configuration) }
    }

    /// What scanner `id` says of itself (ESPresense's retained `rooms/<id>/status`): `online` or
    /// `offline`. A scanner no `LocationScanner` places is ignored.
    mutating func scannerStatus(_ id: String, online: Bool) {
        guard scanners[id] != nil else { return }
        scanners[id]?.saysOffline = !online
    }
}
