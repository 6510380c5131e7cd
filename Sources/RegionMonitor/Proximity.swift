/// A beacon's proximity class, ordered immediate < near < far < off (SPEC 1, 4).
public enum Proximity: String, Sendable, Hashable, CaseIterable, Comparable {
    case immediate, near, far, off

    public static func < (lhs: Proximity, rhs: Proximity) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}
