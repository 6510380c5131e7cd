/// A beacon's proximity class, ordered immediate < near < far < off (docs/behaviour.md §1, §4).
package enum Proximity: String, Sendable, Hashable, CaseIterable, Comparable {
    case immediate, near, far, off

    private var rank: Int {
        switch self {
        case .immediate: 0
        case .near: 1
        case .far: 2
        case .off: 3
        }
    }

    package static func < (lhs: Proximity, rhs: Proximity) -> Bool { lhs.rank < rhs.rank }
}
