/// Hexadecimal digits indexed by nibble, for the writers of JSON text and of the hex forms
/// built on them (`BeaconCore`'s `Hex`).
package enum HexDigits {
    package static let lower: [UInt8] = Array("0123456789abcdef".utf8)
    package static let upper: [UInt8] = Array("0123456789ABCDEF".utf8)
}
