import BeaconCore
import RegionMonitor
import Testing

@Suite struct CalibrationTests {
    @Test func theMedianOfAnOddAndAnEvenCount() {
        var calibration = Calibration(seconds: 10)
        #expect(calibration.median == nil)
        for (second, rssi) in [-60, -70, -62].enumerated() {
            calibration.add(rssi: Int8(rssi), at: MonitorHarness.time(Double(second)))
        }
        #expect(calibration.median == -62)
        calibration.add(rssi: -59, at: MonitorHarness.time(3))
        #expect(calibration.median == -61)  // -61.0
        calibration.add(rssi: -58, at: MonitorHarness.time(4))
        calibration.add(rssi: -63, at: MonitorHarness.time(5))
        #expect(calibration.median == -61)  // (-62 + -60) / 2
        calibration.add(rssi: -64, at: MonitorHarness.time(6))
        #expect(calibration.median == -62)
        calibration.add(rssi: -57, at: MonitorHarness.time(7))
        #expect(calibration.median == -61)  // (-62 + -60) / 2 again
        calibration.add(rssi: -61, at: MonitorHarness.time(8))
        calibration.add(rssi: -59, at: MonitorHarness.time(9))
        #expect(calibration.median == -61)  // (-61 + -60) / 2 = -60.5, halves away from zero
    }

    @Test func theWindowStartsAtTheFirstSighting() {
        var calibration = Calibration(seconds: 2)
        let first = calibration.add(rssi: -60, at: MonitorHarness.time(5))
        let atTheEnd = calibration.add(rssi: -60, at: MonitorHarness.time(7))
        let past = calibration.add(rssi: -90, at: MonitorHarness.time(7.001))
        #expect(first && atTheEnd && !past)
        #expect(calibration.samples.count == 2)
        #expect(calibration.span == 2)
    }
}
