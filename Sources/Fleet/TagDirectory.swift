import BeaconCore
import BeaconConfiguration
import Crypto
import CryptoExtras
import Foundation
import RegionMonitor

/// Which tag a scanner's report is of (docs/behaviour.md §19): by `Tag.<id>` id, by identity (an
/// iBeacon, an address, an ESPresense id), by a private address its IRK resolves, or, with
/// `Tags.autoAdd = ibeacon`, any iBeacon that is not a hierarchy beacon (named by its identity).
/// A hierarchy beacon is never a tag.
package struct TagDirectory: Sendable {
    /// A tag a report resolved to: its device id, and its declaration when it has one.
    package struct Tag: Sendable, Hashable {
        package var id: String
        package var declaration: TagDeclaration?
        package var identity: TagIdentity
    }

    private let byID: [String: TagDeclaration]
    private let byIdentity: [TagIdentity: TagDeclaration]
    private let keys: [(key: SymmetricKey, tag: TagDeclaration)]
    private let hierarchy: Hierarchy
    private let autoAdd: ScannerSettings.AutoAdd

    package init(_ settings: ScannerSettings, hierarchy: Hierarchy) {
        byID = Dictionary(settings.tags.map { ($0.id, $0) }) { first, _ in first }
        byIdentity = Dictionary(settings.tags.map { ($0.identity, $0) }) { first, _ in first }
        keys = settings.tags.compactMap { tag in
            guard case .irk(let key) = tag.identity else { return nil }
            return (SymmetricKey(data: key), tag)
        }
        self.hierarchy = hierarchy
        autoAdd = settings.autoAdd
    }

    /// The declaration of tag `id`, if it was declared.
    package func declaration(_ id: String) -> TagDeclaration? { byID[id] }

    /// The tag `report` is of; `nil` when it is none of ours.
    package func resolve(_ report: ScannerReport) -> Tag? {
        if let declared = byID[report.tag] {
            return Tag(id: declared.id, declaration: declared, identity: declared.identity)
        }
        let identity = Self.identity(report.tag)
        if case .ibeacon(let beacon) = identity, hierarchy.index(of: beacon) != nil { return nil }
        if let declared = byIdentity[identity] {
            return Tag(id: declared.id, declaration: declared, identity: declared.identity)
        }
        var addresses: [BluetoothAddress] = []
        if case .mac(let address) = identity { addresses.append(address) }
        if let address = report.address { addresses.append(address) }
        for address in addresses {
            if let declared = byIdentity[.mac(address)] {
                return Tag(id: declared.id, declaration: declared, identity: declared.identity)
            }
            if let declared = owner(of: address) {
                return Tag(id: declared.id, declaration: declared, identity: declared.identity)
            }
        }
        if autoAdd == .ibeacon, case .ibeacon = identity {
            return Tag(id: identity.description, declaration: nil, identity: identity)
        }
        return nil
    }

    /// The identity a source names a tag by: a `Tag.<id>` identity as written, else ESPresense's
    /// forms (docs/espresense.md): `iBeacon:<uuid>-<major>-<minor>`, `irk:<hex>`, a bare or
    /// `known:` address of 12 hex digits; any other text is an ESPresense id.
    package static func identity(_ text: String) -> TagIdentity {
        if let parsed = TagIdentity(text) { return parsed }
        let lower = text.lowercased()
        if lower.hasPrefix("ibeacon:") {
            let rest = text.dropFirst("ibeacon:".count)
            // ESPresense: the UUID (36 characters), then -major-minor.
            if rest.count > 37, let uuid = UUID(uuidString: String(rest.prefix(36))) {
                let numbers = rest.dropFirst(37).split(separator: "-", omittingEmptySubsequences: false)
                if rest.dropFirst(36).first == "-", numbers.count == 2, let major = UInt16(numbers[0]),
                    let minor = UInt16(numbers[1])
                {
                    return .ibeacon(BeaconID(uuid: uuid, major: major, minor: minor))
                }
            }
        }
        let hex = lower.hasPrefix("known:") ? String(lower.dropFirst(6)) : lower
        if hex.utf8.count == 12, let bytes = Hex.decode(hex), bytes.count == 6 {
            return .mac(BluetoothAddress(value: bytes.reduce(0) { $0 << 8 | UInt64($1) }))
        }
        return .espresense(text)
    }

    /// The declared tag whose IRK resolves `address`, when it is a resolvable private address.
    func owner(of address: BluetoothAddress) -> TagDeclaration? {
        guard !keys.isEmpty, IRK.isResolvable(address) else { return nil }
        return keys.first { IRK.resolves(address, key: $0.key) }?.tag
    }
}

/// Resolvable private addresses (Bluetooth Core Specification, Vol 6, Part B, 1.3.2.2, and Vol 3,
/// Part H, 2.2.2): the address's top 24 bits are `prand` (its two top bits 01), its low 24 bits
/// `hash = ah(IRK, prand)`, where `ah(k, r)` is the low 24 bits of AES-128 of `r` padded to 128 bits
/// with zeros, under key `k`. Keys and blocks are most significant byte first, as written.
package enum IRK {
    /// Whether `address` is a resolvable private address (its two top bits 01).
    package static func isResolvable(_ address: BluetoothAddress) -> Bool { address.value >> 46 == 0b01 }

    /// `ah(key, prand)`: 24 bits.
    package static func hash(_ key: SymmetricKey, prand: UInt32) -> UInt32? {
        var block = [UInt8](repeating: 0, count: 16)
        block[13] = UInt8(truncatingIfNeeded: prand >> 16)
        block[14] = UInt8(truncatingIfNeeded: prand >> 8)
        block[15] = UInt8(truncatingIfNeeded: prand)
        guard (try? AES.permute(&block, key: key)) != nil else { return nil }
        return UInt32(block[13]) << 16 | UInt32(block[14]) << 8 | UInt32(block[15])
    }

    /// Whether `key` made `address`.
    package static func resolves(_ address: BluetoothAddress, key: SymmetricKey) -> Bool {
        let prand = UInt32(truncatingIfNeeded: address.value >> 24) & 0xFF_FFFF
        let hash = UInt32(truncatingIfNeeded: address.value) & 0xFF_FFFF
        return Self.hash(key, prand: prand) == hash
    }

    /// A resolvable private address of `key` for `prand` (its two top bits forced to 01).
    package static func address(key: SymmetricKey, prand: UInt32) -> BluetoothAddress? {
        let random = prand & 0x3F_FFFF | 0x40_0000
        guard let hash = hash(key, prand: random) else { return nil }
        return BluetoothAddress(value: UInt64(random) << 24 | UInt64(hash))
    }
}

/// What the daemon knows of a placed scanner's health (docs/behaviour.md §19): when it last reported
/// anything, how many reports, and whether it said it is offline.
package struct ScannerHealth: Sendable, Hashable {
    package var lastReport: Timestamp?
    package var reports = 0
    /// Its own last word (ESPresense's `offline` on `rooms/<id>/status`); a report clears it.
    package var saysOffline = false

    package init() {}

    mutating func heard(at time: Timestamp) {
        lastReport = time
        reports &+= 1
        saysOffline = false
    }

    /// The last report re-expressed `delta` microseconds later: the wall clock was stepped.
    mutating func shiftClock(by delta: Int64) {
        lastReport = lastReport?.adding(microseconds: delta)
    }

    /// Online at `now`: it did not say it is offline, and reported within `silence` seconds (a
    /// scanner that never reported is offline).
    package func isOnline(at now: Timestamp, silence: Double) -> Bool {
        guard !saysOffline, let lastReport else { return false }
        return Double(now.microseconds &- lastReport.microseconds) / 1_000_000 <= silence
    }
}
