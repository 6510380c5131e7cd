/// The beacon layout an advertisement was decoded from.
package enum BeaconFormat: String, Sendable, Hashable {
    case ibeacon
    case altbeacon
}

/// One decoded beacon advertisement, as the radio delivered it (no time: HCI events carry none).
package struct Advertisement: Hashable, Sendable {
    package var format: BeaconFormat
    package var beacon: BeaconID
    /// Measured power: the advertised RSSI at 1 m, in dBm.
    package var power: Int8
    /// Received signal strength, in dBm.
    package var rssi: Int8
    /// The advertiser's address; `nil` when the source does not say (a trace sighting line).
    package var address: BluetoothAddress?

    package init(format: BeaconFormat, beacon: BeaconID, power: Int8, rssi: Int8, address: BluetoothAddress?) {
        self.format = format
        self.beacon = beacon
        self.power = power
        self.rssi = rssi
        self.address = address
    }
}
