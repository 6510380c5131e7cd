import Foundation
import JSONText

/// A command to the running daemon: a message on `B/cmd/<name>` (docs/behaviour.md §10.1).
///
/// Pure: ``parse(name:payload:)`` validates a message's bytes and says in one line what is wrong
/// with garbage; the shell logs that and carries on.
package enum DaemonCommand: Sendable, Hashable, CustomStringConvertible {
    /// `B/cmd/mode`: `foreground` or `background` ranging.
    case mode(RangingMode)
    /// `B/cmd/reload`: re-read the configuration (any payload).
    case reload
    /// `B/cmd/alert`: `{"action": "done"|"decline", "id": "17081"}`.
    case alert(AlertAction, id: String)
    /// `B/cmd/learn`: train, stop or forget a room (docs/behaviour.md §22), the JSON of
    /// ``LearnCommand`` with `"device"`.
    case learn(LearnCommand)

    /// What a user may do with an offered alert (docs/behaviour.md §9.1).
    package enum AlertAction: String, Sendable, Hashable, CaseIterable {
        case done, decline
    }

    /// The longest payload taken; anything longer is not a command.
    package static let maximumPayload = 4096

    /// The command names, as they follow `B/cmd/`.
    package static let names = ["mode", "reload", "alert", "learn"]

    /// Parses the message on `B/cmd/<name>` carrying `payload`.
    package static func parse(name: String, payload: some Collection<UInt8>) -> Result<DaemonCommand, CommandError> {
        guard names.contains(name) else {
            // The name is the end of a topic: anything, control characters included, shown safely.
            return .failure(
                CommandError("no command \(quoted(name)); send to cmd/mode, cmd/reload, cmd/alert or cmd/learn"))
        }
        guard payload.count <= maximumPayload else {
            return .failure(
                CommandError("\(name): a payload of \(payload.count) bytes is too long (at most \(maximumPayload))"))
        }
        guard let text = String(validating: payload, as: UTF8.self) else {
            return .failure(CommandError("\(name): the payload is not UTF-8 text"))
        }
        switch name {
        case "mode":
            let word = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard let mode = RangingMode(rawValue: word) else {
                return .failure(CommandError("mode: \(quoted(word)) is not a mode; send foreground or background"))
            }
            return .success(.mode(mode))
        case "reload":
            return .success(.reload)
        case "learn":
            return LearnCommand.parse(text: text).map(DaemonCommand.learn)
        default:
            return alert(text)
        }
    }

    static func alert(_ text: String) -> Result<DaemonCommand, CommandError> {
        let usage = #"send {"action": "done" or "decline", "id": "<location id>"}"#
        guard let fields = JSONValue.object(text.utf8) else {
            return .failure(CommandError("alert: the payload is not a JSON object; \(usage)"))
        }
        guard case .string(let word)? = fields["action"], let action = AlertAction(rawValue: word) else {
            return .failure(CommandError("alert: \"action\" must be \"done\" or \"decline\"; \(usage)"))
        }
        guard let id = fields["id"].flatMap(\.identifier) else {
            return .failure(CommandError("alert: \"id\" must be a location ID such as \"17081\"; \(usage)"))
        }
        return .success(.alert(action, id: id))
    }

    /// The same command as a trace states it (`{"command": "alert/done", "id": "17081"}`), which
    /// is how the engine takes it; `nil` for the commands the shell handles itself.
    package var traceCommand: TraceCommand? {
        switch self {
        case .alert(let action, let id): TraceCommand(name: "alert/\(action.rawValue)", arguments: ["id": id])
        case .mode, .reload, .learn: nil
        }
    }

    /// `mode foreground`, `reload`, `alert done 17081`: for the log.
    package var description: String {
        switch self {
        case .mode(let mode): "mode \(mode.rawValue)"
        case .reload: "reload"
        case .alert(let action, let id): "alert \(action.rawValue) \(id)"
        case .learn(let command): command.description
        }
    }

    static func quoted(_ text: String) -> String { "\"\(text.excerpt)\"" }
}

/// Why a command message was ignored, in one line.
package struct CommandError: Error, Sendable, Hashable, CustomStringConvertible {
    package var message: String
    package init(_ message: String) { self.message = message }
    /// The message, control characters escaped (messages quote input through `excerpt`).
    package var description: String { message.printable }
}

extension JSONValue {
    /// A non-empty string, or a whole number written as one (IDs are sometimes sent as numbers).
    var identifier: String? {
        switch self {
        case .string(let text): text.isEmpty || text.count > 64 ? nil : text
        case .number(let value): value.rounded() == value && value >= 0 && value < 1e15 ? String(Int64(value)) : nil
        case .null, .bool, .array, .object: nil
        }
    }
}
