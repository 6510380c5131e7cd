import BeaconCore

/// `calibrate`: the RSSI of one beacon held at 1 m over a few seconds, whose median is its
/// measured power (`LocationBeaconPower.<id>`).
package struct Calibration: Sendable {
    package let seconds: Double
    package private(set) var samples: [Int8] = []
    package private(set) var first: Timestamp?
    package private(set) var last: Timestamp?

    package init(seconds: Double) {
        self.seconds = seconds
    }

    /// Adds a sighting; those after the first `seconds` (from the first sighting) are ignored.
    /// Returns `false` once the window is over.
    @discardableResult
    package mutating func add(rssi: Int8, at time: Timestamp) -> Bool {
        let start = first ?? time
        guard time.microseconds - start.microseconds <= Int64(seconds * 1_000_000) else { return false }
        first = start
        last = time
        samples.append(rssi)
        return true
    }

    /// The median RSSI, rounded to a whole dBm (halves away from zero); `nil` without samples.
    package var median: Int? {
        guard !samples.isEmpty else { return nil }
        let sorted = samples.sorted()
        let middle = sorted.count / 2
        if sorted.count % 2 == 1 { return Int(sorted[middle]) }
        return Int(((Double(sorted[middle - 1]) + Double(sorted[middle])) / 2).rounded())
    }

    /// Seconds from the first sample to the last.
    package var span: Double {
        guard let first, let last else { return 0 }
        return last.secondsSinceEpoch - first.secondsSinceEpoch
    }
}
