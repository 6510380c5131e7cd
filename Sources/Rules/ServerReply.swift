import BeaconCore
import JSONText

/// What a rule shows the user: `notify_user` (its alert body and payload), `open_url`, `open_pbk`.
package struct RuleAction: Sendable, Hashable {
    package var alertBody: String?
    package var payload: JSONValue?
    package var openURL: String?
    package var openPBK: String?

    package init(alertBody: String? = nil, payload: JSONValue? = nil, openURL: String? = nil, openPBK: String? = nil) {
        self.alertBody = alertBody
        self.payload = payload
        self.openURL = openURL
        self.openPBK = openPBK
    }

    /// Reads `notify_user`, `open_url` and `open_pbk` of an object: `notify_user` is plain text
    /// (the body), a string holding JSON `{"alertBody": …, "payload": {…}}`, or that object itself.
    init(ubudu object: JSONValue) {
        var body = object["notify_user"]?.text
        var payload: JSONValue?
        var embedded: JSONValue?
        if case .object? = object["notify_user"] {
            embedded = object["notify_user"]
        } else if let text = body, text.hasPrefix("{"), let parsed = JSONValue.parse(Array(text.utf8)),
            case .object = parsed
        {
            embedded = parsed
        }
        if let embedded {
            body = embedded["alertBody"]?.text
            payload = embedded["payload"].flatMap { $0.isNothing ? nil : $0 }
        }
        self.init(
            alertBody: body, payload: payload, openURL: object["open_url"]?.text, openPBK: object["open_pbk"]?.text)
    }
}

/// The answer to a rule's server hook (docs/behaviour.md §7.5), from an HTTP reply or `Script.server`.
package enum ServerAnswer: Sendable, Hashable {
    /// Go on with the rule's own action.
    case enable
    /// Go on with the server's action in place of the rule's.
    case notify(RuleAction)
    /// Stop: `server_disabled`.
    case disable
    /// Stop: `server_error`, saying what went wrong.
    case failed(String)
    /// Stop: `declined` (`Script.server` said no), saying how.
    case declined(String)

    /// Replies larger than this are errors.
    package static let replyLimit = 65_536

    /// Reads an HTTP reply: a 2xx status, at most 64 KiB of JSON with `"version": "2"` and a
    /// `decision` of `enable`, `disable` or `notify` (with `notify_user`, `open_url`, `open_pbk`).
    /// Anything else is ``failed(_:)``, naming what was wrong.
    package static func reply(status: Int, body: [UInt8]) -> ServerAnswer {
        guard (200..<300).contains(status) else { return .failed("HTTP status \(status)") }
        guard body.count <= replyLimit else { return .failed("reply over 64 KiB") }
        guard let reply = JSONValue.parse(body), case .object = reply else {
            return .failed("reply is not a JSON object")
        }
        guard reply["version"]?.argument == "2" else {
            return .failed("reply is not version \"2\" (got \(reply["version"]?.jsonText ?? "none"))")
        }
        switch reply["decision"]?.argument {
        case "enable": return .enable
        case "disable": return .disable
        case "notify": return .notify(RuleAction(ubudu: reply))
        default:
            return .failed(
                "reply's decision must be enable, disable or notify (got \(reply["decision"]?.jsonText ?? "none"))")
        }
    }
}
