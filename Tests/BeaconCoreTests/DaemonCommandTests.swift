import BeaconCore
import Testing

@Suite struct DaemonCommandTests {
    func parse(_ name: String, _ payload: String) -> Result<DaemonCommand, CommandError> {
        DaemonCommand.parse(name: name, payload: Array(payload.utf8))
    }

    @Test(arguments: [
        ("foreground", RangingMode.foreground), ("background", .background), (" background\n", .background),
    ])
    func modeTakesEitherWord(payload: String, mode: RangingMode) throws {
        #expect(try parse("mode", payload).get() == .mode(mode))
    }

    @Test func reloadTakesAnyPayload() throws {
        #expect(try parse("reload", "").get() == .reload)
        #expect(try parse("reload", "now please").get() == .reload)
    }

    @Test func alertTakesActionAndID() throws {
        #expect(try parse("alert", #"{"action": "done", "id": "17081"}"#).get() == .alert(.done, id: "17081"))
        #expect(
            try parse("alert", #"{"id": 17081, "action": "decline", "extra": [1]}"#).get()
                == .alert(.decline, id: "17081"))
    }

    /// `B/cmd/learn` (docs/behaviour.md §22): the JSON of a learn command with its `"device"`.
    @Test func learnTakesTheCommandWithItsDevice() throws {
        let payload = Array(#"{"device": "anna", "room": "Kitchen", "seconds": 30}"#.utf8)
        #expect(
            try DaemonCommand.parse(name: "learn", payload: payload).get()
                == .learn(LearnCommand(device: "anna", room: "Kitchen", action: .train(seconds: 30))))
        #expect(
            DaemonCommand.learn(LearnCommand(device: "anna", room: "", action: .stop)).description == "learn stop anna")
        guard
            case .failure(let error) = DaemonCommand.parse(name: "learn", payload: Array(#"{"room": "Kitchen"}"#.utf8))
        else {
            Issue.record("a learn without its device was taken")
            return
        }
        #expect(error.description.contains(#""device" is missing"#))
    }

    @Test func alertBecomesTheTraceCommandTheEngineTakes() throws {
        let command = try parse("alert", #"{"action": "decline", "id": "7"}"#).get()
        #expect(command.traceCommand == TraceCommand(name: "alert/decline", arguments: ["id": "7"]))
        #expect(DaemonCommand.mode(.foreground).traceCommand == nil)
        #expect(DaemonCommand.reload.traceCommand == nil)
        #expect("\(command)" == "alert decline 7")
    }

    @Test(arguments: [
        ("mode", "sideways", "foreground or background"),
        ("mode", "", "foreground or background"),
        ("alert", "", "not a JSON object"),
        ("alert", "[1,2]", "not a JSON object"),
        ("alert", #"{"action": "done"}"#, #""id" must be"#),
        ("alert", #"{"action": "done", "id": ""}"#, #""id" must be"#),
        ("alert", #"{"action": "done", "id": 1.5}"#, #""id" must be"#),
        ("alert", #"{"action": "done", "id": {"a": 1}}"#, #""id" must be"#),
        ("alert", #"{"action": "maybe", "id": "1"}"#, #""action" must be"#),
        ("alert", #"{"action": "done", "id": "1""#, "not a JSON object"),
        ("launch", "x", "no command \"launch\""),
        ("", "x", #"no command """#),
    ])
    func garbageIsRejectedWithAReason(name: String, payload: String, reason: String) {
        guard case .failure(let error) = parse(name, payload) else {
            Issue.record("accepted \(name) \(payload)")
            return
        }
        #expect(error.description.contains(reason), "\(error)")
        #expect(!error.description.contains("\n"))
    }

    @Test func nonUTF8AndOversizedPayloadsAreRejected() {
        guard case .failure(let bad) = DaemonCommand.parse(name: "mode", payload: [0x66, 0xff, 0xfe]) else {
            Issue.record("accepted invalid UTF-8")
            return
        }
        #expect(bad.description.contains("not UTF-8"))
        let long = [UInt8](repeating: 0x20, count: DaemonCommand.maximumPayload + 1)
        guard case .failure(let big) = DaemonCommand.parse(name: "reload", payload: long) else {
            Issue.record("accepted an oversized payload")
            return
        }
        #expect(big.description.contains("too long"))
    }

    @Test func fuzzedPayloadsNeverCrashAndOnlyWellFormedOnesPass() {
        var random = SeededGenerator(seed: 0xC0DE)
        let pieces = [
            "{", "}", "\"action\"", ":", "\"done\"", "\"decline\"", ",", "\"id\"", "\"17081\"", "17081", "[", "]",
            "null", "true", "\\u0000", "\u{FFFF}", " ", "\"", "1e999", "-0",
        ]
        var accepted = 0
        for round in 0..<20_000 {
            var bytes: [UInt8]
            if round % 3 == 2 {
                // A well-formed alert with one byte changed: some stay valid, most do not.
                bytes = Array(#"{"action": "done", "id": "17081"}"#.utf8)
                bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            } else if round % 3 == 0 {
                bytes = (0..<Int.random(in: 0...12, using: &random)).flatMap { _ in
                    Array(pieces.randomElement(using: &random)!.utf8)
                }
            } else {
                bytes = (0..<Int.random(in: 0...64, using: &random)).map { _ in
                    UInt8.random(in: 0...255, using: &random)
                }
            }
            let name = round % 3 == 2 ? "alert" : DaemonCommand.names.randomElement(using: &random)!
            switch DaemonCommand.parse(name: name, payload: bytes) {
            case .success(.alert(let action, let id)):
                accepted += 1
                #expect(!id.isEmpty && DaemonCommand.AlertAction.allCases.contains(action))
            case .success(.mode), .success(.reload):
                #expect(name != "alert")
            case .success(.learn):
                #expect(name == "learn")
            case .failure(let error):
                #expect(!error.description.isEmpty && !error.description.contains("\n"))
            }
        }
        #expect(accepted > 0)
    }

    @Test func aCommandNameWithControlCharactersIsShownSafely() {
        // Found by the fuzzer: a topic ending in a newline made a two-line log message.
        guard case .failure(let error) = DaemonCommand.parse(name: "$\nme\u{1B}[2Jdo", payload: []) else {
            Issue.record("a command name that is no command was taken")
            return
        }
        #expect(error.message.hasPrefix(#"no command "$\nme\u001b[2Jdo""#), "\(error)")
        #expect("a\rb\u{7F}c\u{85}d\té".printable == #"a\rb\u007fc\u0085d\té"#)
        #expect(String(repeating: "x", count: 70_000).excerpt == String(repeating: "x", count: 80) + "…")
    }
}
