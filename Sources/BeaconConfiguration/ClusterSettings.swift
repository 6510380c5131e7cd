import Cluster

/// `Cluster.*` (docs/behaviour.md §21, docs/deployment.md): the daemons of one building that elect
/// one active through the broker. Without `Cluster.name` a daemon runs alone.
package struct ClusterSettings: Sendable, Hashable, CustomStringConvertible {
    /// The same on every daemon of the cluster: the topics under `MQTT.topic/_cluster/<name>/`.
    package var name: String
    /// Seconds without a sign of the active before a standby takes over (`Cluster.keepalive`).
    package var keepalive: Int
    /// This daemon's id in the election: its `MQTT.clientId`, which differs between daemons
    /// (two connections with one client id throw each other off the broker).
    package var member: String

    package static let defaultKeepalive = 2

    package init(name: String, keepalive: Int = Self.defaultKeepalive, member: String) {
        self.name = name
        self.keepalive = keepalive
        self.member = member
    }

    package var description: String { "\(name), member \(member), keepalive \(keepalive) s" }
}
