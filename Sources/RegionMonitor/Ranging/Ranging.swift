import Foundation

/// Distance and proximity class from a filtered RSSI (docs/behaviour.md §4).
package struct Ranging: Sendable, Hashable {
    package var pathLossExponent: Double
    /// Metres; closer is `immediate`.
    package var immediate: Double
    /// Metres; closer is `near`, farther `far`.
    package var near: Double
    /// The relative margin a distance must cross a boundary by to change class.
    package var hysteresis: Double

    package init(pathLossExponent: Double = 2, immediate: Double = 0.5, near: Double = 3, hysteresis: Double = 0.15) {
        self.pathLossExponent = pathLossExponent
        self.immediate = immediate
        self.near = near
        self.hysteresis = hysteresis
    }

    package init(_ settings: MonitorSettings) {
        self.init(
            pathLossExponent: settings.pathLossExponent,
            immediate: settings.immediate,
            near: settings.near,
            hysteresis: settings.hysteresis
        )
    }

    /// The log-distance model: `d = 10 ^ ((power − rssi) / (10 · n))`, in metres.
    package func distance(rssi: Double, power: Double) -> Double {
        pow(10, (power - rssi) / (10 * pathLossExponent))
    }

    /// The class for `distance`, given the class held now (`off` for none: no hysteresis then).
    ///
    /// A boundary is moved away from the side the beacon is on by the relative margin, so that with
    /// the defaults near → far happens at 3.45 m and far → near at 2.55 m.
    package func proximity(distance: Double, current: Proximity) -> Proximity {
        guard current != .off else {
            return distance < immediate ? .immediate : distance < near ? .near : .far
        }
        let immediateBoundary = immediate * (current == .immediate ? 1 + hysteresis : 1 - hysteresis)
        let nearBoundary = near * (current == .far ? 1 - hysteresis : 1 + hysteresis)
        return distance < immediateBoundary ? .immediate : distance < nearBoundary ? .near : .far
    }
}
