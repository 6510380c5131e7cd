import BeaconCore

/// `Fleet.*` and `Device.<id>` (docs/behaviour.md §15): devices whose observations arrive over MQTT, each
/// tracked like the daemon's own radio. `nil` in ``Configuration/fleet`` without a source.
public struct FleetSettings: Sendable, Hashable {
    /// Topic filters of the three sources; at least one is set.
    public var owntracks: String?
    public var theengs: String?
    public var forward: String?
    /// `Device.<id> = name[,userid]`, in file order.
    public var devices: [DeviceDeclaration] = []
    /// `Fleet.autoAdd`: unknown devices are added on their first message.
    public var autoAdd = true
    /// `Fleet.maxDevices`: devices tracked at most.
    public var maxDevices = 10_000
    /// `Fleet.maxAge`: an observation whose own time is older than this at its arrival is dropped;
    /// 0 checks nothing.
    public var maxAge: Double = 30
    /// `Fleet.shard = i/n`: this daemon's share of the fleet.
    public var shard = Shard(index: 0, count: 1)

    public init() {}
}

/// `Device.<id> = name[,userid]`.
public struct DeviceDeclaration: Sendable, Hashable {
    public var id: String
    public var name: String
    /// The userid of its outputs and topics (`B = MQTT.topic/<userid>`); the id when not given.
    public var userid: String?
    public var line: Int

    public init(id: String, name: String, userid: String? = nil, line: Int) {
        self.id = id
        self.name = name
        self.userid = userid
        self.line = line
    }
}

/// Which devices a daemon owns: device `d` belongs to shard FNV-1a-64(UTF-8 of `d`) mod `count`.
public struct Shard: Sendable, Hashable, CustomStringConvertible {
    public var index: Int
    public var count: Int

    public init(index: Int, count: Int) {
        self.index = index
        self.count = count
    }

    /// Whether `device` is this shard's.
    public func owns(_ device: String) -> Bool {
        count <= 1 || owner(of: device) == self
    }

    /// The shard of the same count that owns `device`.
    public func owner(of device: String) -> Shard {
        Shard(index: count <= 1 ? 0 : Int(FNV1a64.hash(device) % UInt64(count)), count: count)
    }

    public var description: String { "\(index)/\(count)" }
}

/// An MQTT topic filter (`owntracks/+/+`, `home/+/BTtoMQTT/#`), matched against topics.
public struct TopicFilter: Sendable, Hashable, CustomStringConvertible {
    public let levels: [Substring]

    /// A valid filter: levels split by `/`, `+` alone in a level, `#` alone and last.
    public init?(_ text: String) {
        guard !text.isEmpty, text.utf8.count <= 256 else { return nil }
        let levels = text.split(separator: "/", omittingEmptySubsequences: false)
        for (index, level) in levels.enumerated() {
            if level.contains("+"), level != "+" { return nil }
            if level.contains("#"), level != "#" || index != levels.count - 1 { return nil }
        }
        self.levels = levels
    }

    public var description: String { levels.joined(separator: "/") }

    /// The filter a daemon subscribes to: this one, and the topics below it (OwnTracks publishes
    /// transitions on `…/event` and ranging on `…/beacon`).
    public var withSubtopics: String { levels.last == "#" ? description : description + "/#" }

    /// What `topic` puts in the `+` levels, and its levels past the filter (under `#`, or below the
    /// filter's last level); `nil` when it does not match.
    public func match(_ topic: String) -> (wildcards: [String], rest: [String])? {
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
