import BeaconCore
import Rules
import TestSupport
import Testing

/// docs/behaviour.md §7.5's replies and 7.7's URL templates.
@Suite struct ServerReplyTests {
    static func answer(_ json: String, status: Int = 200) -> ServerAnswer {
        ServerAnswer.reply(status: status, body: Array(json.utf8))
    }

    @Test func versionTwoDecisionsAreRead() {
        #expect(Self.answer(#"{"version": "2", "decision": "enable"}"#) == .enable)
        #expect(Self.answer(#"{"version": 2, "decision": "disable"}"#) == .disable)
        #expect(
            Self.answer(#"{"version": "2", "decision": "notify", "notify_user": "New", "open_url": "http://u.test"}"#)
                == .notify(RuleAction(alertBody: "New", openURL: "http://u.test")))
        #expect(
            Self.answer(
                #"{"version": "2", "decision": "notify", "notify_user": {"alertBody": "B", "payload": {"a": true}}, "open_pbk": "p"}"#
            )
                == .notify(RuleAction(alertBody: "B", payload: .object(["a": .bool(true)]), openPBK: "p")))
    }

    @Test func everythingElseIsAServerError() {
        let cases: [(ServerAnswer, String)] = [
            (Self.answer(#"{"version": "2", "decision": "enable"}"#, status: 500), "HTTP status 500"),
            (Self.answer(#"{"version": "2", "decision": "enable"}"#, status: 302), "HTTP status 302"),
            (Self.answer("<html>oops</html>"), "reply is not a JSON object"),
            (Self.answer(#"["version", "2"]"#), "reply is not a JSON object"),
            (Self.answer(#"{"version": "1", "decision": "enable"}"#), #"reply is not version "2" (got "1")"#),
            (Self.answer(#"{"decision": "enable"}"#), #"reply is not version "2" (got none)"#),
            (
                Self.answer(#"{"version": "2", "decision": "maybe"}"#),
                "reply's decision must be enable, disable or notify (got \"maybe\")"
            ),
            (ServerAnswer.reply(status: 200, body: Array(repeating: 32, count: 65_537)), "reply over 64 KiB"),
        ]
        for (answer, why) in cases { #expect(answer == .failed(why)) }
    }

    @Test func garbageRepliesNeverCrash() {
        var random = SeededGenerator(seed: 7)
        let seeds = [Array(#"{"version": "2", "decision": "notify", "notify_user": "{\"alertBody\": 1}"}"#.utf8)]
        for _ in 0..<2000 {
            var bytes = seeds[0]
            for _ in 0..<Int.random(in: 1...6, using: &random) {
                let index = Int.random(in: 0..<bytes.count, using: &random)
                bytes[index] = UInt8.random(in: 0...255, using: &random)
            }
            switch ServerAnswer.reply(status: 200, body: bytes) {
            case .enable, .disable, .notify, .failed: break
            case .declined: Issue.record("an HTTP reply is never a script's no")
            }
        }
    }

    @Test func templatesReplaceEveryOccurrencePercentEncoded() {
        let values = TemplateValues(namespace: "a b&c", udid: "é/1", lat: "-45.5", lng: "9")
        let url = URLTemplate("http://h.test/{id}/{namespace}?u={udid}&again={id}&lat={lat}&lng={lng}&x={unknown}&{")
            .expanded(id: "1 2", values: values)
        #expect(url == "http://h.test/1%202/a%20b%26c?u=%C3%A9%2F1&again=1%202&lat=-45.5&lng=9&x={unknown}&{")
        #expect(URLTemplate("").expanded(id: "1", values: values) == "")
        #expect(URLTemplate("{id}{id}}").expanded(id: "~_.-", values: values) == "~_.-~_.-}")
    }
}
