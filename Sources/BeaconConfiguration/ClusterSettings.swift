import Cluster

/// `Cluster.*` (docs/behaviour.md §21, docs/deployment.md): the daemons of one building that elect
/// one active through the broker. Without `Cluster.name` a daemon runs alone.
public struct ClusterSettings: Sendable, Hashable, CustomStringConvertible {
    /// The same on every daemon of the cluster: the topics under `MQTT.topic/_cluster/<name>/`.
    public var name: String
    /// Seconds without a sign of the active before a standby takes over (`Cluster.keepalive`).
    public var keepalive: Int
    /// This daemon's id in the election: its `MQTT.clientId`, which differs between daemons
    /// (two connections with one client id throw each other off the broker).
    public var member: String

    public static let defaultKeepalive = 2

    public init(name: String, keepalive: Int = Self.defaultKeepalive, member: String) {
        self.name = name
        self.keepalive = keepalive
        self.member = member
    }

    public var description: String { "\(name), member \(member), keepalive \(keepalive) s" }
}
