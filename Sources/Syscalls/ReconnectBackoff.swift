/// How long to wait before the next attempt to reach a server (the broker, docs/behaviour.md §10.1; gpsd,
/// docs/behaviour.md §17): 1 s, doubling to 60 s, and 1 s again once the server has accepted a connection.
///
/// libmosquitto's own thread cannot do this: its exponential setting waits delay × n² (1, 4, 9,
/// 16 … s), which left a restarted broker unvisited for up to a minute.
package struct ReconnectBackoff: Sendable, Hashable {
    package static let first = Duration.seconds(1)
    package static let limit = Duration.seconds(60)
    private var delay = Self.first

    package init() {}

    /// The wait before the next attempt; each call doubles the one after, up to ``limit``.
    package mutating func next() -> Duration {
        defer { delay = min(delay * 2, Self.limit) }
        return delay
    }

    /// The broker accepted a connection: the next outage starts again from ``first``.
    package mutating func reset() { delay = Self.first }
}
