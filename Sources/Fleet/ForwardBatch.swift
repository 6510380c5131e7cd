import BeaconCore

/// The lines a `beaconwatch forward` node has not yet published (docs/behaviour.md §15): sightings as trace
/// lines, sent together at most ``delay`` after the first of them, and always under the 64 KiB a
/// fleet daemon reads. Pure: instants in, payloads out.
package struct ForwardBatch: Sendable {
    /// How late a line may be published, at most, in microseconds.
    package static let delay: Int64 = 50_000
    /// The largest payload: well under ``FleetMessage/payloadLimit``.
    package static let sizeLimit = 60 << 10

    private var lines: [UInt8] = []
    /// When the first waiting line was added.
    package private(set) var firstAt: Int64?
    /// Lines waiting.
    package private(set) var count = 0

    package init() {}

    /// When the waiting lines are due, if any.
    package var due: Int64? { firstAt.map { $0 + Self.delay } }

    /// Adds `line` at `time` (microseconds); returns the payload to publish first when the line
    /// would not fit beside the waiting ones.
    package mutating func add(_ line: String, at time: Int64) -> String? {
        var full: String?
        if !lines.isEmpty, lines.count + line.utf8.count + 1 > Self.sizeLimit { full = take() }
        if firstAt == nil { firstAt = time }
        lines.append(contentsOf: line.utf8)
        lines.append(0x0A)
        count += 1
        return full
    }

    /// The waiting lines as one payload, if they are due at `time` (or `force`).
    package mutating func take(at time: Int64, force: Bool = false) -> String? {
        guard let due, force || time >= due else { return nil }
        return take()
    }

    private mutating func take() -> String? {
        guard !lines.isEmpty else { return nil }
        defer {
            lines.removeAll(keepingCapacity: true)
            firstAt = nil
            count = 0
        }
        return String(decoding: lines, as: UTF8.self)
    }
}
