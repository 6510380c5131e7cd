/// FNV-1a, 64 bits: the hash that assigns devices to shards (`Fleet.shard`), simple enough for any
/// tool to compute the same way: start from 0xcbf29ce484222325; for each byte, XOR it in, then
/// multiply by 0x100000001b3 modulo 2^64.
package enum FNV1a64 {
    package static let offsetBasis: UInt64 = 0xcbf2_9ce4_8422_2325
    package static let prime: UInt64 = 0x0000_0100_0000_01b3

    package static func hash(_ bytes: some Sequence<UInt8>) -> UInt64 {
        var hash = offsetBasis
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* prime
        }
        return hash
    }

    /// The hash of `text`'s UTF-8.
    package static func hash(_ text: String) -> UInt64 { hash(text.utf8) }
}
