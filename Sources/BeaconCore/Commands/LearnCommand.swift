import JSONText

/// "Learn this room" (docs/behaviour.md §22): start a training session of a tag in a room, stop
/// it early, or forget a room's fingerprints. The same command from every door: `beaconwatch
/// learn`, `POST /api/v1/devices/<id>/learn`, `B/cmd/learn` and a trace line's `"learn"` object.
///
/// Pure: ``parse(_:device:)`` checks what can be checked without the daemon's state (the shape,
/// the seconds' range) and says in one line what is wrong; the room, the device and a second
/// session are checked by the table of devices.
package struct LearnCommand: Sendable, Hashable, CustomStringConvertible {
    /// What the command asks.
    package enum Action: Sendable, Hashable {
        /// A session of that many seconds (5–600).
        case train(seconds: Double)
        /// Ends the tag's running session now (it keeps what it took).
        case stop
        /// Forgets the room's fingerprints (every room's for `*`).
        case forget
    }

    /// The tag (a `Tag.<id>` id, or an auto-added tag's identity); empty for a forget of no tag.
    package var device: String
    /// A Zone's name or its region (`UUID:major`), or `*` with ``Action/forget``.
    package var room: String
    package var action: Action

    /// The seconds a session takes when the command names none.
    package static let defaultSeconds = 60.0
    /// The shortest and longest session.
    package static let seconds = 5.0...600.0

    package init(device: String, room: String, action: Action) {
        (self.device, self.room, self.action) = (device, room, action)
    }

    /// How to say it, for errors.
    static let usage =
        #"send {"room": "<Zone name or UUID:major>", "seconds": 60}, {"stop": true} or {"room": "<room or *>", "forget": true}"#

    /// The command in `fields` (a JSON object); `device` names the tag when the object does not
    /// (the HTTP path's id). A `"device"` in the object wins over none given, and must match one
    /// given.
    package static func parse(_ fields: [String: JSONValue], device: String? = nil) -> Result<
        LearnCommand, CommandError
    > {
        var tag = device
        if let value = fields["device"] {
            guard let named = value.identifier else {
                return .failure(CommandError("learn: \"device\" must be a tag's id such as \"badge\"; \(usage)"))
            }
            if let device, device != named {
                return .failure(
                    CommandError("learn: \"device\" \(quoted(named)) is not the device of the path \(quoted(device))"))
            }
            tag = named
        }
        let stop = fields["stop"] == .bool(true)
        let forget = fields["forget"] == .bool(true)
        for key in ["stop", "forget"] {
            if let value = fields[key], value != .bool(true), value != .bool(false) {
                return .failure(CommandError("learn: \"\(key)\" must be true or false; \(usage)"))
            }
        }
        if stop && forget {
            return .failure(CommandError("learn: give \"stop\" or \"forget\", not both; \(usage)"))
        }
        var room = ""
        if let value = fields["room"] {
            guard case .string(let text) = value, !text.isEmpty, text.count <= 128 else {
                return .failure(CommandError("learn: \"room\" must be a Zone's name or UUID:major; \(usage)"))
            }
            room = text
        }
        if stop {
            guard let tag, !tag.isEmpty else {
                return .failure(CommandError("learn: \"stop\" needs the \"device\" whose session to end; \(usage)"))
            }
            return .success(LearnCommand(device: tag, room: room, action: .stop))
        }
        guard !room.isEmpty else {
            return .failure(CommandError("learn: \"room\" is missing; \(usage)"))
        }
        if forget {
            if fields["seconds"] != nil {
                return .failure(CommandError("learn: give \"seconds\" or \"forget\", not both; \(usage)"))
            }
            return .success(LearnCommand(device: tag ?? "", room: room, action: .forget))
        }
        guard room != "*" else {
            return .failure(CommandError("learn: \"*\" names every room only to forget them; name one room to train"))
        }
        guard let tag, !tag.isEmpty else {
            return .failure(
                CommandError("learn: \"device\" is missing: name the tag that stands in the room; \(usage)"))
        }
        var seconds = defaultSeconds
        if let value = fields["seconds"] {
            guard case .number(let number) = value, number.isFinite else {
                return .failure(CommandError("learn: \"seconds\" must be a number from 5 to 600; \(usage)"))
            }
            guard Self.seconds.contains(number) else {
                return .failure(
                    CommandError("learn: \"seconds\" is \(JSONValue.number(number).jsonText); give 5 to 600"))
            }
            seconds = number
        }
        return .success(LearnCommand(device: tag, room: room, action: .train(seconds: seconds)))
    }

    /// `parse` of a message's text (`B/cmd/learn`, an HTTP body): a JSON object.
    package static func parse(text: String, device: String? = nil) -> Result<LearnCommand, CommandError> {
        guard let fields = JSONValue.object(text.utf8) else {
            return .failure(CommandError("learn: the payload is not a JSON object; \(usage)"))
        }
        return parse(fields, device: device)
    }

    /// `learn badge Kitchen 60 s`, `learn stop badge`, `learn forget Kitchen`: for the log.
    package var description: String {
        switch action {
        case .train(let seconds): "learn \(device) in \(room) for \(JSONValue.number(seconds).jsonText) s"
        case .stop: "learn stop \(device)"
        case .forget: "learn forget \(room)"
        }
    }

    static func quoted(_ text: String) -> String { "\"\(text.excerpt)\"" }
}
