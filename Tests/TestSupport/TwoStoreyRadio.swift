import BeaconCore
import Foundation

/// The radio of the two-storey house the floor tests use (docs/floorplans.md "Several floors,
/// stairs and exit doors"): floors 3 m apart, a wall at x = 4 with a door at y 1.5–2.5.
package enum TwoStoreyRadio {
    /// What a scanner at `scanner` (x, y, z) reads of a tag at `x`, `y` on floor `floor` (0 or 1, a
    /// metre above it): -59 dBm at 1 m, exponent 2.5, 6 dB a wall (x = 4 outside the door), 12 dB
    /// through the floor, and `noise` dB of seeded noise (a sum of three uniforms), rounded.
    package static func rssi(
        scanner: (x: Double, y: Double, z: Double), x: Double, y: Double, floor: Int, noise: Double,
        random: inout SeededGenerator
    ) -> Double {
        let z = Double(floor) * 3 + 1
        let distance =
            ((x - scanner.x) * (x - scanner.x) + (y - scanner.y) * (y - scanner.y)
            + (z - scanner.z) * (z - scanner.z)).squareRoot()
        let crossesWall = (x - 4) * (scanner.x - 4) < 0
        let atDoor =
            crossesWall
            && {
                let t = (4 - x) / (scanner.x - x)
                let yAt = y + (scanner.y - y) * t
                return yAt >= 1.5 && yAt <= 2.5
            }()
        let otherFloor = (scanner.z > 3) != (z > 3)
        var level = -59 - 25 * log10(max(0.25, distance))
        if crossesWall && !atDoor && !otherFloor { level -= 6 }
        if otherFloor { level -= 12 }
        var sum = 0.0
        for _ in 0..<3 { sum += Double.random(in: -1...1, using: &random) }
        return (level + sum * noise).rounded()
    }
}
