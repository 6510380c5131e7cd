import BeaconCore
import BeaconConfiguration
import RegionMonitor

/// Where a device's sightings come from: which `Fleet.*` filter its messages matched
/// (docs/behaviour.md §15); fixed scanners, for a tag whatever reported it (docs/behaviour.md §19);
/// or the daemon's own radio (`Monitor.source`), which runs on the daemon's clock.
package enum FleetSource: String, Sendable, Hashable, CaseIterable {
    case owntracks, theengs, forward
    case scanners
    /// The daemon's own radio or file (``DeviceID/own``): no message names it.
    case radio
}

/// One thing a device reported, as the engine of that device takes it.
package struct FleetObservation: Sendable, Hashable {
    package enum Kind: Sendable, Hashable {
        /// A beacon heard (Theengs, `forward`, OwnTracks ranging with the phone's own class).
        case sighting(Advertisement, phoneProximity: Proximity?)
        /// An HCI event of a `forward` node, decoded by the device's engine.
        case hci([UInt8])
        /// The phone's own monitoring (OwnTracks `transition`, `t: "b"`): matched to a region by
        /// its `rid`, else its `desc`, by the fleet (the names are the hierarchy's).
        case transition(PhoneTransition)
        /// The phone's waypoints (OwnTracks `_type: waypoints`): its own regions count against
        /// the iOS limit (docs/behaviour.md §15.1).
        case waypoints([PhoneWaypoint])
        /// The phone's user made or changed a region (OwnTracks `_type: waypoint`).
        case waypointChanged
        case position(Position)
        /// The phone went away (OwnTracks `lwt`).
        case offline
    }

    /// When the device made it (OwnTracks `created_at`, else `tst` of a location or transition; a
    /// trace line's `t`), when it says: the age check (`Fleet.maxAge`).
    package var time: Timestamp?
    package var kind: Kind

    package init(time: Timestamp?, kind: Kind) {
        self.time = time
        self.kind = kind
    }
}

/// A fleet message, parsed: whose it is and what it says.
package struct FleetMessage: Sendable, Hashable {
    package var source: FleetSource
    package var device: String
    package var observations: [FleetObservation]
    /// Where commands for the device go (an OwnTracks phone's `owntracks/<user>/<device>/cmd`).
    package var commandTopic: String?

    package init(source: FleetSource, device: String, observations: [FleetObservation], commandTopic: String? = nil) {
        self.source = source
        self.device = device
        self.observations = observations
        self.commandTopic = commandTopic
    }

    /// The largest payload read; anything longer is refused unread.
    package static let payloadLimit = 64 << 10

    /// Parses a message on `topic` that matched `filter` of `source`. `nil`: a message that is not
    /// for beaconwatch (an OwnTracks card, a Theengs report of another kind of device, our own
    /// `setWaypoints` command), ignored without a word. A failure names what was wrong.
    package static func parse(
        source: FleetSource, filter: TopicFilter, topic: String, payload: some Collection<UInt8>
    ) -> Result<FleetMessage?, FleetError> {
        guard let (wildcards, rest) = filter.match(topic) else { return .success(nil) }
        guard payload.count <= payloadLimit else {
            return .failure(FleetError(topic: topic, "a payload of \(payload.count) bytes is over 64 KiB"))
        }
        let device: String
        var commandTopic: String?
        switch source {
        case .owntracks:
            guard wildcards.count >= 2 else { return .success(nil) }
            device = wildcards[0] + "-" + wildcards[1]
            let base = topic.split(separator: "/", omittingEmptySubsequences: false).prefix(filter.levels.count)
            commandTopic = base.joined(separator: "/") + "/cmd"
        case .theengs, .forward:
            guard let first = wildcards.first else { return .success(nil) }
            device = first
        case .scanners, .radio:
            // Scanners' reports are ``ScannerReport``s, for ``Devices/handle(_:at:into:)``; the
            // own radio's sightings are the daemon's input.
            return .success(nil)
        }
        guard DeviceDeclaration.isValidID(device) else {
            return .failure(
                FleetError(
                    topic: topic,
                    "device id '\(device.excerpt)' from the topic is not 1 to 64 letters, digits, '-', '_' or '.'"))
        }
        let parsed: Result<[FleetObservation]?, FleetError>
        switch source {
        case .owntracks: parsed = OwnTracks.parse(rest: rest, payload: payload, topic: topic)
        case .theengs: parsed = Theengs.parse(payload, topic: topic)
        case .forward: parsed = Forward.parse(payload, topic: topic)
        case .scanners, .radio: return .success(nil)
        }
        return parsed.map { observations in
            observations.map {
                FleetMessage(source: source, device: device, observations: $0, commandTopic: commandTopic)
            }
        }
    }
}

/// Why a fleet message was ignored: one line naming the topic and the reason.
package struct FleetError: Error, Sendable, Hashable, CustomStringConvertible {
    package var topic: String
    package var reason: String

    package init(topic: String, _ reason: String) {
        self.topic = topic
        self.reason = reason
    }

    package var description: String { "ignored a message on \(topic.excerpt): \(reason.printable)" }
}
