extension Duration {
    /// The duration in seconds, as a `Double` (for rates and for people).
    package var inSeconds: Double { Double(components.seconds) + Double(components.attoseconds) * 1e-18 }

    /// The duration in whole microseconds, saturating: the unit of every instant in the core.
    package var microseconds: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000)
        guard !overflow else { return seconds < 0 ? .min : .max }
        let (sum, carry) = whole.addingReportingOverflow(attoseconds / 1_000_000_000_000)
        return carry ? (seconds < 0 ? .min : .max) : sum
    }
}
