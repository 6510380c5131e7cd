import RegionMonitor
import BeaconCore
import Floorplan
import Foundation

/// Fixed scanners and the tags they hear (docs/behaviour.md §19): `LocationScanner.<Location ID>`,
/// `Scanner.<id>.rssiOffset`, `Scanners.*`, `Monitor.scanner`, `Tag.<id>`, `Tags.*`. `nil` in
/// ``Configuration/scanners`` when none of them is set.
package struct ScannerSettings: Sendable, Hashable {
    /// A scanner placed at a location of the hierarchy.
    package struct Scanner: Sendable, Hashable {
        package var id: String
        /// The `LocationBaseBeacon` entry it sits at: its Zone is the scanner's room.
        package var locationID: String
        package var beacon: BeaconID
        /// `Scanner.<id>.rssiOffset`, added to every RSSI it reports.
        package var rssiOffset: Double
        /// Whether `rssiOffset` was given: under `Scanners.calibrate = auto` such a scanner keeps it
        /// and the others are learned against it (``ScannerSettings/Calibrate``).
        package var hasOffset = false
        /// `Scanner.<id>.address`: the Bluetooth address the scanner advertises from, by which
        /// other scanners' reports of it are known (`Scanners.calibrate = auto`).
        package var address: BluetoothAddress?
        package var line: Int

        package init(id: String, locationID: String, beacon: BeaconID, rssiOffset: Double = 0, line: Int) {
            self.id = id
            self.locationID = locationID
            self.beacon = beacon
            self.rssiOffset = rssiOffset
            self.line = line
        }
    }

    /// Which tags are tracked without a `Tag.<id>` line (`Tags.autoAdd`).
    package enum AutoAdd: String, Sendable, Hashable, CaseIterable {
        case none
        case ibeacon
    }

    /// `Scanners.calibrate`: whether receivers' offsets are learned from what the scanners hear of
    /// each other (`auto`, the default; docs/behaviour.md §19) or only given by
    /// `Scanner.<id>.rssiOffset` (`off`).
    package enum Calibrate: String, Sendable, Hashable, CaseIterable {
        case auto
        case off
    }

    /// `Tags.rooms`: a tag in at most one Zone (`nearest`: by which scanner hears it best;
    /// `position`: by where it is on a floor plan, docs/behaviour.md §20), or in every Zone whose
    /// scanners hear it (`heard`).
    package enum Rooms: String, Sendable, Hashable, CaseIterable {
        case nearest
        case heard
        case position
    }

    /// Scanners in file order of their `LocationScanner` lines.
    package var scanners: [Scanner] = []
    /// Topic filters of the report sources.
    package var espresense: String?
    package var theengs: String?
    package var forward: String?
    /// `Monitor.scanner`: the scanner id of the daemon's own radio.
    package var own: String?
    /// `Scanners.silence`: a scanner with no report for this long is offline.
    package var silence: Double = 60
    package var calibrate = Calibrate.auto
    /// `Tag.<id>` in file order.
    package var tags: [TagDeclaration] = []
    package var autoAdd = AutoAdd.none
    /// `nil` until given: `position` where a floor has a plan, else `nearest`.
    package var rooms: Rooms?
    /// The room choice in force: ``rooms``, else `position` with a floor plan and `nearest` without.
    package var effectiveRooms: Rooms { rooms ?? (hasFloors ? .position : .nearest) }
    /// Whether some floor has a plan (set once the floor plan is loaded).
    package var hasFloors = false
    /// `Tags.exitTimeout`: seconds of silence after which a tag leaves its room and Area, `nil`
    /// for `auto` (the default: §18 on the tag's own advertisements as its scanners hear them,
    /// with `Monitor.exitConfidence` and `Monitor.exitTimeoutMax`). `Monitor.exitTimeout` is the
    /// own radio's and the phones'.
    package var exitTimeout: Double?
    /// `Tags.exitTimeoutMin` (default 3): under `auto`, the shortest silence that takes a tag away
    /// (docs/behaviour.md §20, "Real radio").
    package var exitTimeoutMin: Double = 3
    /// The rule of `Tags.rooms = nearest` when set (not a key: the room benchmark tries others);
    /// `nil`: ``effectiveRoomRule``.
    package var roomRule: RoomRule?
    /// The position estimator's figures under `Tags.rooms = position` when set (not keys: the room
    /// benchmark tries others); its floors and `Rooms.minConfidence` are the configuration's.
    package var positionTuning: PositionSettings?

    /// Whether every report is an ESPresense node's filtered estimate (no other scanner source):
    /// then a tag's readings are not filtered again, and its room follows ``RoomRule/filteredReports``.
    package var reportsAreFiltered: Bool { espresense != nil && theengs == nil && forward == nil && own == nil }

    /// The room rule the daemon uses, printed by `check`.
    /// Seconds between an ESPresense node's reports of a still tag: the firmware's default
    /// `skip_ms` (include/defaults.h `DEFAULT_SKIP_MS`, docs/espresense.md).
    package static let espresenseReportPeriod = 5.0

    package var effectiveRoomRule: RoomRule { roomRule ?? (reportsAreFiltered ? .filteredReports : RoomRule()) }

    package init() {}

    /// The scanner named `id`.
    package func scanner(_ id: String) -> Scanner? { scanners.first { $0.id == id } }

    /// The topic filters of the sources, with the key that set each.
    package var sources: [(key: String, filter: String)] {
        [("Scanners.espresense", espresense), ("Scanners.theengs", theengs), ("Scanners.forward", forward)]
            .compactMap { key, filter in filter.map { (key, $0) } }
    }
}

/// `Tag.<id> = <identity>[, name[, userid]]`.
package struct TagDeclaration: Sendable, Hashable {
    package var id: String
    package var identity: TagIdentity
    package var name: String?
    /// The userid of its outputs and topics; the id when not given.
    package var userid: String?
    package var line: Int

    package init(id: String, identity: TagIdentity, name: String? = nil, userid: String? = nil, line: Int) {
        self.id = id
        self.identity = identity
        self.name = name
        self.userid = userid
        self.line = line
    }
}

/// What a tag is known by (docs/behaviour.md §19): its iBeacon, its public or static address, the
/// key that resolves its private addresses, or the id an ESPresense node gives it.
package enum TagIdentity: Sendable, Hashable, CustomStringConvertible {
    case ibeacon(BeaconID)
    case mac(BluetoothAddress)
    /// An Identity Resolving Key, 16 bytes most significant first as written.
    case irk([UInt8])
    case espresense(String)

    /// Parses `ibeacon:UUID:major:minor`, `mac:AA:BB:CC:DD:EE:FF`, `irk:<32 hex digits>` or
    /// `espresense:<id>` (the scheme in either case).
    package init?(_ text: String) {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let scheme = text[..<colon].lowercased()
        let rest = String(text[text.index(after: colon)...])
        switch scheme {
        case "ibeacon":
            let parts = rest.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 3, let uuid = UUID(uuidString: String(parts[0])), let major = UInt16(parts[1]),
                let minor = UInt16(parts[2])
            else { return nil }
            self = .ibeacon(BeaconID(uuid: uuid, major: major, minor: minor))
        case "mac":
            guard let address = BluetoothAddress(rest) else { return nil }
            self = .mac(address)
        case "irk":
            guard rest.utf8.count == 32, let bytes = Hex.decode(rest), bytes.count == 16 else { return nil }
            self = .irk(bytes)
        case "espresense":
            guard (1...128).contains(rest.utf8.count),
                rest.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F })
            else { return nil }
            self = .espresense(rest)
        default:
            return nil
        }
    }

    /// The text form, as `Tag.<id>` takes it (UUIDs and addresses upper-case, keys lower-case hex).
    package var description: String {
        switch self {
        case .ibeacon(let beacon): "ibeacon:\(beacon.uuid.uuidString):\(beacon.major):\(beacon.minor)"
        case .mac(let address): "mac:\(address)"
        case .irk(let key): "irk:" + key.map { String(format: "%02x", $0) }.joined()
        case .espresense(let id): "espresense:\(id)"
        }
    }
}
