import BeaconConfiguration
import BeaconCore
import Fleet
import Foundation
import RegionMonitor

/// A fixed scanner's message (docs/behaviour.md §19): the first byte picks the source (ESPresense, Theengs,
/// forward), then the topic up to the first NUL, then the payload. Each report is then resolved
/// to a tag as the table of devices does (identities, ESPresense ids, IRKs).
enum ScannerTarget {
    static let filters: [(ScannerSource, TopicFilter?)] = [
        (.espresense, TopicFilter("espresense/devices/+/+")), (.theengs, TopicFilter("home/+/BTtoMQTT/#")),
        (.forward, TopicFilter("beaconwatch/+/sightings")),
    ]

    /// Tags of every kind, one of them an IRK, on a hierarchy of one beacon (never a tag).
    static let directory: TagDirectory = {
        var settings = ScannerSettings()
        settings.autoAdd = .ibeacon
        let identities = [
            "ibeacon:FDA50693-A4E2-4FB1-AFCF-C6EB07647825:7:1", "mac:4A:1B:2C:3D:4E:5F",
            "irk:ec0234a357c8ad05341010a60a397d9b", "espresense:apple:1005:9-26",
        ]
        settings.tags = identities.enumerated().compactMap { index, text in
            TagIdentity(text).map { TagDeclaration(id: "tag-\(index)", identity: $0, line: index + 1) }
        }
        precondition(settings.tags.count == identities.count, "a fuzz target's own tag does not parse")
        return TagDirectory(
            settings, hierarchy: Hierarchy(beacons: [Hierarchy.Beacon(locationID: "1", id: hierarchyBeacon)]))
    }()

    /// The one beacon of the target's hierarchy: never a tag.
    static let hierarchyBeacon: BeaconID = {
        guard let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0") else {
            preconditionFailure("a fuzz target's own UUID does not parse")
        }
        return BeaconID(uuid: uuid, major: 1, minor: 1)
    }()

    static func run(_ bytes: [UInt8]) {
        guard let (pick, topic, payload) = MessageBytes.split(bytes) else { return }
        let (source, filter) = filters[pick % filters.count]
        guard let filter else { preconditionFailure("a fuzz target's own filter does not parse") }
        switch ScannerReports.parse(source: source, filter: filter, topic: topic, payload: payload) {
        case .failure(let error):
            Message.check(error.description)
        case .success(let reports?):
            for report in reports {
                precondition(ScannerReport.isValidName(report.scanner), "scanner \(report.scanner.debugDescription)")
                precondition(ScannerReport.isValidName(report.tag), "tag \(report.tag.debugDescription)")
                precondition((-128...126).contains(report.rssi), "RSSI \(report.rssi)")
                if let tag = directory.resolve(report) {
                    precondition(!tag.id.isEmpty, "an empty tag id")
                    if case .ibeacon(let beacon) = tag.identity {
                        precondition(beacon != hierarchyBeacon, "the hierarchy beacon as a tag")
                    }
                }
            }
        case .success(nil):
            break
        }
    }
}
