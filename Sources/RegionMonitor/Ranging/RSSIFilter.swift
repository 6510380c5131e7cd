import BeaconCore

/// One beacon's RSSI filter over the samples of the last `Monitor.rssiWindow` seconds (docs/behaviour.md §4).
///
/// `median` and `mean` keep the window's samples (at most ``capacity``, the newest) and a sorted
/// copy of their values, so each sample costs a binary search and a short move, not a sort.
/// RSSI arrives in whole dB, so `median` is the grouped median: when the middle of the window is a
/// run of equal values it is placed within that value's 1 dB bin by how many samples lie below
/// (a window of -69, -68, -68 gives -68.25); otherwise it is the ordinary median. Without this the
/// median jumps in whole steps and a beacon on a boundary flaps ten times as often.
/// `mean` is the AltBeacon running average: the lowest and highest tenth dropped, the rest
/// averaged. `kalman` is a one-dimensional Kalman filter whose process noise grows with the time
/// between samples so that it follows a change in about one window. `none` is the last sample.
package struct RSSIFilter: Sendable {
    /// The most samples a window keeps; a beacon advertising faster than 12.8 Hz over a 5 s window
    /// is filtered over its newest 64 samples.
    package static let capacity = 64
    /// Measurement noise of the Kalman filter, dB²: indoor RSSI scatters by about 4 dB.
    static let kalmanMeasurementNoise = 16.0

    package let kind: RSSIFilterKind
    /// The window, in microseconds.
    let window: Int64
    private var times: [Int64] = []
    private var values: [Int8] = []
    private var sorted: [Int8] = []
    private var estimate = 0.0
    private var covariance = 0.0
    private var lastTime: Int64 = 0

    package init(kind: RSSIFilterKind, windowSeconds: Double) {
        self.kind = kind
        self.window = Int64((windowSeconds * 1_000_000).rounded())
    }

    /// Every sample's time moved by `delta`.
    mutating func shiftClock(by delta: Int64) {
        for index in times.indices { times[index] = times[index].shifted(by: delta) }
        lastTime = lastTime.shifted(by: delta)
    }

    /// Adds a sample taken at `time` (not earlier than the previous one) and returns the filtered RSSI.
    package mutating func add(_ rssi: Int8, at time: Timestamp) -> Double {
        let now = time.microseconds
        switch kind {
        case .none:
            estimate = Double(rssi)
            covariance = 1
            lastTime = now
            return estimate
        case .kalman:
            let measurement = Double(rssi)
            let noise = Self.kalmanMeasurementNoise
            if covariance == 0 {
                estimate = measurement
                covariance = noise
            } else {
                let elapsed = Double(max(now - lastTime, 0)) / Double(max(window, 1))
                let predicted = covariance + noise * elapsed * elapsed
                let gain = predicted / (predicted + noise)
                estimate += gain * (measurement - estimate)
                covariance = (1 - gain) * predicted
            }
            lastTime = now
            return estimate
        case .median, .mean:
            evict(before: now - window)
            if times.count == Self.capacity { removeOldest(1) }
            times.append(now)
            values.append(rssi)
            sorted.insert(rssi, at: insertionIndex(of: rssi))
            return kind == .median ? median : trimmedMean
        }
    }

    /// Forgets every sample (the beacon went `off`), keeping the storage for the next visit.
    package mutating func reset() {
        times.removeAll(keepingCapacity: true)
        values.removeAll(keepingCapacity: true)
        sorted.removeAll(keepingCapacity: true)
        estimate = 0
        covariance = 0
        lastTime = 0
    }

    private var median: Double {
        let count = sorted.count
        let middle = count / 2
        if count % 2 == 0, sorted[middle - 1] != sorted[middle] {
            return (Double(sorted[middle - 1]) + Double(sorted[middle])) / 2
        }
        let value = sorted[middle]
        let below = insertionIndex(of: value)
        var equal = 1
        while middle + equal < count, sorted[middle + equal] == value { equal += 1 }
        equal += middle - below
        return Double(value) - 0.5 + (Double(count) / 2 - Double(below)) / Double(equal)
    }

    private var trimmedMean: Double {
        let trim = sorted.count / 10
        var sum = 0
        for index in trim..<(sorted.count - trim) { sum += Int(sorted[index]) }
        return Double(sum) / Double(sorted.count - 2 * trim)
    }

    private mutating func evict(before oldest: Int64) {
        var count = 0
        while count < times.count, times[count] <= oldest { count += 1 }
        if count > 0 { removeOldest(count) }
    }

    private mutating func removeOldest(_ count: Int) {
        for value in values[0..<count] {
            sorted.remove(at: insertionIndex(of: value))
        }
        times.removeFirst(count)
        values.removeFirst(count)
    }

    /// The first index whose value is not below `value`.
    private func insertionIndex(of value: Int8) -> Int {
        var low = 0
        var high = sorted.count
        while low < high {
            let mid = (low + high) / 2
            if sorted[mid] < value { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
