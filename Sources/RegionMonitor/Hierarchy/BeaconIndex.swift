import BeaconCore

/// Finds a configured beacon's index from its identity: an open-addressing table of `Int32`
/// positions into the beacon list, at most half full.
///
/// Every sighting asks this, and a Swift `Dictionary<BeaconID, Int>` costs 28 bytes a bucket with
/// up to four buckets for three beacons (and twice that just past a power of two); this costs
/// 8–16 bytes a beacon and hashes the 20 identity bytes with three multiplications instead of SipHash.
/// Only configured beacons are ever inserted, so advertisements cannot lengthen its probe runs.
struct BeaconIndex: Sendable {
    private var slots: [Int32]
    private var mask: Int

    /// An index of `ids` (unique), each at its position.
    init(_ ids: some Collection<BeaconID>) {
        var capacity = 16
        while capacity < ids.count * 2 { capacity <<= 1 }
        slots = Array(repeating: -1, count: capacity)
        mask = capacity - 1
        for (position, id) in ids.enumerated() {
            var slot = Self.hash(id) & mask
            while slots[slot] >= 0 { slot = (slot + 1) & mask }
            slots[slot] = Int32(position)
        }
    }

    /// The position of `id`, checked against the list it was built from.
    func find(_ id: BeaconID, in ids: (Int) -> BeaconID) -> Int? {
        var slot = Self.hash(id) & mask
        while true {
            let position = slots[slot]
            if position < 0 { return nil }
            if ids(Int(position)) == id { return Int(position) }
            slot = (slot + 1) & mask
        }
    }

    /// The 16 UUID bytes and major/minor folded into 64 bits, then murmur3's finalizer, so that
    /// every input bit reaches the low bits the table uses.
    static func hash(_ id: BeaconID) -> Int {
        let (high, low) = withUnsafeBytes(of: id.uuid.uuid) { raw in
            (
                raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self),
                raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
            )
        }
        var mixed = high &* 0x9E37_79B9_7F4A_7C15 ^ low ^ (UInt64(id.major) << 16 | UInt64(id.minor))
        mixed ^= mixed >> 33
        mixed &*= 0xFF51_AFD7_ED55_8CCD
        mixed ^= mixed >> 33
        mixed &*= 0xC4CE_B9FE_1A85_EC53
        mixed ^= mixed >> 33
        return Int(truncatingIfNeeded: mixed)
    }
}
