/// What scanner `receiver` hears of scanner `transmitter`, settled: dB above the transmitter's
/// measured power (`Fleet.ScannerCalibration`, docs/behaviour.md §19):
/// what the calibration learns from and a state database keeps.
package struct ScannerLevel: Sendable, Hashable {
    package var receiver: String
    package var transmitter: String
    package var level: Double

    package init(receiver: String, transmitter: String, level: Double) {
        self.receiver = receiver
        self.transmitter = transmitter
        self.level = level
    }
}
