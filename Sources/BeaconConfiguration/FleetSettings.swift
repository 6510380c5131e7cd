import BeaconCore

/// `Fleet.*` and `Device.<id>` (docs/behaviour.md §15): devices whose observations arrive over MQTT, each
/// tracked like the daemon's own radio. `nil` in ``Configuration/fleet`` without a source.
package struct FleetSettings: Sendable, Hashable {
    /// Topic filters of the three sources; at least one is set.
    package var owntracks: String?
    package var theengs: String?
    package var forward: String?
    /// `Device.<id> = name[,userid]`, in file order.
    package var devices: [DeviceDeclaration] = []
    /// `Fleet.autoAdd`: unknown devices are added on their first message.
    package var autoAdd = true
    /// `Fleet.maxDevices`: devices tracked at most.
    package var maxDevices = 10_000
    /// `Fleet.maxAge`: an observation whose own time is older than this at its arrival is dropped;
    /// 0 checks nothing.
    package var maxAge: Double = 30
    /// `Fleet.shard = i/n`: this daemon's share of the fleet.
    package var shard = Shard(index: 0, count: 1)

    package init() {}
}

/// `Device.<id> = name[,userid]`.
package struct DeviceDeclaration: Sendable, Hashable {
    package var id: String
    package var name: String
    /// The userid of its outputs and topics (`B = MQTT.topic/<userid>`); the id when not given.
    package var userid: String?
    package var line: Int

    package init(id: String, name: String, userid: String? = nil, line: Int) {
        self.id = id
        self.name = name
        self.userid = userid
        self.line = line
    }
}

/// Which devices a daemon owns: device `d` belongs to shard FNV-1a-64(UTF-8 of `d`) mod `count`.
package struct Shard: Sendable, Hashable, CustomStringConvertible {
    package var index: Int
    package var count: Int

    package init(index: Int, count: Int) {
        self.index = index
        self.count = count
    }

    /// Whether `device` is this shard's.
    package func owns(_ device: String) -> Bool {
        count <= 1 || owner(of: device) == self
    }

    /// The shard of the same count that owns `device`.
    package func owner(of device: String) -> Shard {
        Shard(index: count <= 1 ? 0 : Int(FNV1a64.hash(device) % UInt64(count)), count: count)
    }

    package var description: String { "\(index)/\(count)" }
}

/// An MQTT topic filter (`owntracks/+/+`, `home/+/BTtoMQTT/#`), matched against topics.
package struct TopicFilter: Sendable, Hashable, CustomStringConvertible {
    package let levels: [Substring]

    /// A valid filter: levels split by `/`, `+` alone in a level, `#` alone and last.
    package init?(_ text: String) {
        guard !text.isEmpty, text.utf8.count <= 256 else { return nil }
        let levels = text.split(separator: "/", omittingEmptySubsequences: false)
        for (index, level) in levels.enumerated() {
            if level.contains("+"), level != "+" { return nil }
            if level.contains("#"), level != "#" || index != levels.count - 1 { return nil }
        }
        self.levels = levels
    }

    package var description: String { levels.joined(separator: "/") }

    /// The filter a daemon subscribes to: this one, and the topics below it (OwnTracks publishes
    /// transitions on `…/event` and ranging on `…/beacon`).
    package var withSubtopics: String { levels.last == "#" ? description : description + "/#" }

    /// What `topic` puts in the `+` levels, and its levels past the filter (under `#`, or below the
    /// filter's last level); `nil` when it does not match.
    package func match(_ topic: String) -> (wildcards: [String], rest: [String])? {
        let parts = topic.split(separator: "/", omittingEmptySubsequences: false)
        var wildcards: [String] = []
        for (index, level) in levels.enumerated() {
            if level == "#" { return (wildcards, parts[index...].map(String.init)) }
            guard index < parts.count else { return nil }
            if level == "+" {
                wildcards.append(String(parts[index]))
            } else if level != parts[index] {
                return nil
            }
        }
        return (wildcards, parts[levels.count...].map(String.init))
    }
}
