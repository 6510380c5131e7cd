import BeaconCore
import JSONText
import Testing

/// The learn command's payload (docs/behaviour.md §22): what it asks, and one line for garbage.
@Suite struct LearnCommandTests {
    @Test func theThreeActionsParse() throws {
        #expect(
            try LearnCommand.parse(text: #"{"device": "badge", "room": "Kitchen", "seconds": 90}"#).get()
                == LearnCommand(device: "badge", room: "Kitchen", action: .train(seconds: 90)))
        #expect(
            try LearnCommand.parse(text: #"{"room": "Kitchen"}"#, device: "badge").get()
                == LearnCommand(device: "badge", room: "Kitchen", action: .train(seconds: 60)))
        #expect(
            try LearnCommand.parse(text: #"{"stop": true}"#, device: "badge").get()
                == LearnCommand(device: "badge", room: "", action: .stop))
        #expect(
            try LearnCommand.parse(text: #"{"room": "*", "forget": true}"#).get()
                == LearnCommand(device: "", room: "*", action: .forget))
        #expect(
            try LearnCommand.parse(text: #"{"device": 17, "room": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1"}"#).get()
                .device == "17")
    }

    @Test func garbageIsOneLineNamingTheFix() {
        let cases: [(String, String?, String)] = [
            ("not json", nil, "not a JSON object"),
            (#"[1, 2]"#, nil, "not a JSON object"),
            (#"{"room": "Kitchen"}"#, nil, "\"device\" is missing"),
            (#"{"device": "badge"}"#, nil, "\"room\" is missing"),
            (#"{"device": "badge", "room": ""}"#, nil, "\"room\" must be"),
            (#"{"device": "badge", "room": 3}"#, nil, "\"room\" must be"),
            (#"{"device": "badge", "room": "Kitchen", "seconds": 4}"#, nil, "give 5 to 600"),
            (#"{"device": "badge", "room": "Kitchen", "seconds": 601}"#, nil, "give 5 to 600"),
            (#"{"device": "badge", "room": "Kitchen", "seconds": "60"}"#, nil, "a number from 5 to 600"),
            (#"{"device": "badge", "room": "Kitchen", "seconds": 1e999}"#, nil, "seconds"),
            (#"{"device": "badge", "room": "*"}"#, nil, "only to forget"),
            (#"{"device": "badge", "stop": true, "forget": true, "room": "x"}"#, nil, "not both"),
            (#"{"stop": "yes", "device": "badge"}"#, nil, "true or false"),
            (#"{"stop": true}"#, nil, "needs the \"device\""),
            (#"{"device": "", "room": "Kitchen"}"#, nil, "\"device\" must be"),
            (#"{"device": "other", "room": "Kitchen"}"#, "badge", "is not the device of the path"),
            (#"{"room": "Kitchen", "forget": true, "seconds": 60}"#, nil, "not both"),
        ]
        for (text, device, expected) in cases {
            switch LearnCommand.parse(text: text, device: device) {
            case .success(let command): Issue.record("\(text) was taken: \(command)")
            case .failure(let error):
                #expect(error.message.contains(expected), "\(text): \(error.message)")
                #expect(!error.message.contains("\n"))
            }
        }
    }

    /// A trace line carries it (`{"t", "learn": {…}}`); a bad one is an error naming the line's fault.
    @Test func aTraceLineCarriesIt() throws {
        var parser = TraceParser()
        let line = #"{"t": 1700000000, "learn": {"device": "badge", "room": "Kitchen", "seconds": 30}}"#
        let parsed = try #require(try parser.parse(Array(line.utf8)[...], number: 1).get())
        #expect(parsed.1 == .learn(LearnCommand(device: "badge", room: "Kitchen", action: .train(seconds: 30))))
        let bad = #"{"t": 1700000000, "learn": {"device": "badge", "room": "Kitchen", "seconds": 1000}}"#
        guard case .failure(let error) = parser.parse(Array(bad.utf8)[...], number: 2) else {
            Issue.record("a session of 1000 s was taken")
            return
        }
        #expect(error.message.contains("give 5 to 600"))
        let notObject = #"{"t": 1700000000, "learn": "Kitchen"}"#
        guard case .failure = parser.parse(Array(notObject.utf8)[...], number: 3) else {
            Issue.record("a learn line without an object was taken")
            return
        }
    }
}
