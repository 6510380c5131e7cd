/// What scanner `receiver` hears of scanner `transmitter`, settled: dB above the transmitter's
/// measured power (`Fleet.ScannerCalibration`, docs/behaviour.md §19):
/// what the calibration learns from and a state database keeps.
public struct ScannerLevel: Sendable, Hashable {
    public var receiver: String
    public var transmitter: String
    public var level: Double

    public init(receiver: String, transmitter: String, level: Double) {
        self.receiver = receiver
        self.transmitter = transmitter
        self.level = level
    }
}
