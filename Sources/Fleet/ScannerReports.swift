import BeaconCore
import BeaconConfiguration
import JSONText

/// Fixed scanners' MQTT messages to ``ScannerReport``s (docs/behaviour.md §19; docs/espresense.md says
/// what ESPresense publishes and where its code decides it).
package enum ScannerReports {
    /// The largest payload read, as for the fleet's (``FleetMessage/payloadLimit``).
    package static let payloadLimit = FleetMessage.payloadLimit

    /// The reports of a message on `topic` that matched `filter` of `source`. `nil`: not a report
    /// (an ESPresense query answer one level deeper, a gateway's report of a device with neither
    /// an iBeacon nor an address); a failure names what was wrong.
    package static func parse(
        source: ScannerSource, filter: TopicFilter, topic: String, payload: some Collection<UInt8>
    ) -> Result<[ScannerReport]?, FleetError> {
        guard let (wildcards, rest) = filter.match(topic) else { return .success(nil) }
        guard payload.count <= payloadLimit else {
            return .failure(FleetError(topic: topic, "a payload of \(payload.count) bytes is over 64 KiB"))
        }
        switch source {
        case .espresense:
            // espresense/devices/<device id>/<room>; a fifth level is a query's answer (battery…).
            guard wildcards.count >= 2, rest.isEmpty else { return .success(nil) }
            return espresense(payload, tag: wildcards[0], scanner: wildcards[1], topic: topic)
        case .theengs:
            guard let scanner = wildcards.first else { return .success(nil) }
            return theengs(payload, scanner: scanner, topic: topic)
        case .forward:
            guard let scanner = wildcards.first else { return .success(nil) }
            return forward(payload, scanner: scanner, topic: topic)
        }
    }

    /// `scanner`'s report of an iBeacon it heard: the tag named by its identity.
    package static func report(_ advertisement: Advertisement, scanner: String) -> ScannerReport {
        ScannerReport(
            scanner: scanner, tag: TagIdentity.ibeacon(advertisement.beacon).description,
            rssi: Double(advertisement.rssi), power: advertisement.power, address: advertisement.address)
    }

    static func checkedScanner(_ scanner: String, topic: String) -> FleetError? {
        ScannerReport.isValidName(scanner)
            ? nil
            : FleetError(
                topic: topic, "scanner id '\(scanner.excerpt)' from the topic is not 1 to 128 printable characters")
    }

    /// An ESPresense node's report (`BleFingerprint::fill`): `rssi` its filtered estimate (may be
    /// fractional), `rssi@1m` the tag's measured power, `mac` its current address (12 hex digits).
    static func espresense(_ payload: some Collection<UInt8>, tag: String, scanner: String, topic: String) -> Result<
        [ScannerReport]?, FleetError
    > {
        if let error = checkedScanner(scanner, topic: topic) { return .failure(error) }
        guard ScannerReport.isValidName(tag) else {
            return .failure(
                FleetError(
                    topic: topic, "device id '\(tag.excerpt)' from the topic is not 1 to 128 printable characters"))
        }
        guard case .object(let fields)? = JSONValue.parse(payload) else {
            return .failure(
                FleetError(topic: topic, "not a JSON object; an ESPresense node sends {\"id\": …, \"rssi\": …}"))
        }
        guard let rssi = fields["rssi"]?.number(in: -128...126) else {
            return .failure(FleetError(topic: topic, "\"rssi\" must be dBm from -128 to 126"))
        }
        var power: Int8?
        if let value = fields["rssi@1m"], value != .null {
            guard let given = value.number(in: -128...20) else {
                return .failure(FleetError(topic: topic, "\"rssi@1m\" must be dBm from -128 to 20"))
            }
            power = Int8(given.rounded())
        }
        var address: BluetoothAddress?
        if let value = fields["mac"], value != .null {
            guard let text = value.string, text.utf8.count == 12, let bytes = Hex.decode(text) else {
                return .failure(FleetError(topic: topic, "\"mac\" must be 12 hex digits"))
            }
            address = BluetoothAddress(value: bytes.reduce(0) { $0 << 8 | UInt64($1) })
        }
        return .success([
            ScannerReport(scanner: scanner, tag: tag, rssi: rssi, power: power, address: address, via: .espresense)
        ])
    }

    /// A Theengs gateway's report placed as a scanner: an iBeacon by its identity, anything else by
    /// its address (`id`).
    static func theengs(_ payload: some Collection<UInt8>, scanner: String, topic: String) -> Result<
        [ScannerReport]?, FleetError
    > {
        if let error = checkedScanner(scanner, topic: topic) { return .failure(error) }
        switch Theengs.parse(payload, topic: topic) {
        case .failure(let error):
            return .failure(error)
        case .success(let observations?):
            return .success(
                observations.compactMap { observation in
                    guard case .sighting(let advertisement, _) = observation.kind else { return nil }
                    return report(advertisement, scanner: scanner)
                })
        case .success(nil):
            // Not an iBeacon: by its address, when it has one and an RSSI.
            guard case .object(let fields)? = JSONValue.parse(payload),
                let address = fields["id"]?.string.flatMap(BluetoothAddress.init)
            else { return .success(nil) }
            guard let rssi = fields["rssi"]?.number(in: -128...126) else {
                return .failure(FleetError(topic: topic, "\"rssi\" must be dBm from -128 to 126"))
            }
            return .success([ScannerReport(scanner: scanner, tag: "mac:\(address)", rssi: rssi, address: address)])
        }
    }

    /// A `beaconwatch forward` node placed as a scanner: its trace lines' sightings (with the
    /// advertiser's address) and HCI events, decoded.
    static func forward(_ payload: some Collection<UInt8>, scanner: String, topic: String) -> Result<
        [ScannerReport]?, FleetError
    > {
        if let error = checkedScanner(scanner, topic: topic) { return .failure(error) }
        switch Forward.parse(payload, topic: topic) {
        case .failure(let error):
            return .failure(error)
        case .success(let observations):
            var reports: [ScannerReport] = []
            func add(_ advertisement: Advertisement) { reports.append(report(advertisement, scanner: scanner)) }
            for observation in observations ?? [] {
                switch observation.kind {
                case .sighting(let advertisement, _): add(advertisement)
                case .hci(let event):
                    var decoder = AdvertisingReportDecoder()
                    decoder.decode(event: event) { add($0) }
                default: continue
                }
            }
            return .success(reports)
        }
    }
}
