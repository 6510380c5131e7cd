/// The beacon layout an advertisement was decoded from.
public enum BeaconFormat: String, Sendable, Hashable {
    case ibeacon
    case altbeacon
}

/// One decoded beacon advertisement, as the radio delivered it (no time: HCI events carry none).
public struct Advertisement: Hashable, Sendable {
    public var format: BeaconFormat
    public var beacon: BeaconID
    /// Measured power: the advertised RSSI at 1 m, in dBm.
    public var power: Int8
    /// Received signal strength, in dBm.
    public var rssi: Int8
    /// The advertiser's address; `nil` when the source does not say (a trace sighting line).
    public var address: BluetoothAddress?

    public init(format: BeaconFormat, beacon: BeaconID, power: Int8, rssi: Int8, address: BluetoothAddress?) {
        self.format = format
        self.beacon = beacon
        self.power = power
        self.rssi = rssi
        self.address = address
    }
}
