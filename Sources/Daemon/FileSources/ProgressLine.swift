/// The one line a long command (`replay`, `decode`, `simulate`) keeps up to date on a terminal:
/// `replay office.btsnoop: 12.0 of 48.0 MB (25%)`, redrawn in place.
///
/// Pure: the caller says how long the work has run. Nothing shows for the first ``delay``
/// seconds, so short inputs print no line at all, and then at most every ``interval``.
package struct ProgressLine: Sendable {
    /// What is counted: bytes of a file (shown in MB) or things, named.
    package enum Unit: Sendable, Hashable {
        case bytes
        case items(String)
    }

    package var label: String
    package var unit: Unit
    /// Seconds of work before the line first shows.
    package var delay = 2.0
    /// Seconds between two redraws.
    package var interval = 0.25
    /// Whether the line is on the screen (and must be cleared before other output).
    package private(set) var isShown = false
    private var drawnAt: Double?

    package init(label: String, unit: Unit) {
        self.label = label
        self.unit = unit
    }

    /// The text to write now, starting with a carriage return and ending by erasing the rest of
    /// the line, or `nil` when nothing is due. `total` is `nil` when unknown (a pipe).
    package mutating func update(done: Int, total: Int?, elapsed: Double) -> String? {
        guard elapsed >= delay else { return nil }
        if let drawnAt, elapsed - drawnAt < interval { return nil }
        drawnAt = elapsed
        isShown = true
        return "\r" + text(done: done, total: total) + Self.eraseToEnd
    }

    /// The text that takes the line off the screen, or `nil` when it is not shown.
    package mutating func clear() -> String? {
        guard isShown else { return nil }
        isShown = false
        drawnAt = nil
        return "\r" + Self.eraseToEnd
    }

    /// The line's words, without the control characters.
    package func text(done: Int, total: Int?) -> String {
        guard let total, total > 0 else {
            return "\(label): \(number(done)) \(noun)" + (unit == .bytes ? " read" : "")
        }
        let percent = Int((Double(min(max(done, 0), total)) * 100 / Double(total)).rounded(.down))
        return "\(label): \(number(done)) of \(number(total)) \(noun) (\(percent)%)"
    }

    private var noun: String {
        switch unit {
        case .bytes: "MB"
        case .items(let noun): noun
        }
    }

    private func number(_ count: Int) -> String {
        guard case .bytes = unit else { return "\(count)" }
        let tenths = Int((Double(max(count, 0)) / 100_000).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }

    private static let eraseToEnd = "\u{1B}[K"
}
