import BeaconCore
import BeaconConfiguration
import Daemon
import Engine
import Foundation
import JSONText
import Logging
import Persistence
import RegionMonitor
import Rules
import TestSupport
import Testing

/// The rules in a run: the server hook against a real HTTP server on loopback, `Script.server`,
/// counts kept across restarts, URL sources and their kept copy.
@Suite(.serialized) struct RuleRunTests {
    static let uuid = "566C5595-6EC7-4F08-909F-C954BDCA6CD3"

    /// One rule on zone 42, firing on every entry, calling `server` when given.
    static func rules(server: String? = nil, extra: String = "") -> String {
        let hook = server.map { #", "notify_server": "\#($0)""# } ?? ""
        return #"""
            {"u_beacons": [{"id": "1", "name": "Shop", "proximity_uid": "\#(uuid)", "major": 42, "minor": "",
              "timezone": {"zone": "Europe/Paris"}, "rules_actions": [{"id": "11",
              "rule": {"trigger": "on_entry", "latch_time": 0\#(extra)},
              "action": {"notify_user": "Rule text", "open_url": "http://shop.test/{id}"\#(hook)}}]}],
             "valid_until": "2099-01-01T00:00:00Z"}
            """#
    }

    static func configuration(rulesSource: String, extra: String = "", in folder: URL) throws -> Configuration {
        let text = """
            LocationBaseBeacon.4201 = \(uuid),42,1
            Monitor.userid = bob
            Monitor.session = s
            Monitor.address = 192.0.2.1
            Monitor.exitTimeout = 5
            Monitor.udid = dev-1
            Monitor.timezone = Europe/Paris
            Rules.source = \(rulesSource)
            Rules.serverTimeout = 1
            \(extra)
            """
        return try Configuration.load(Array(text.utf8), path: folder.appendingPathComponent("hsyco.ini").path).get()
    }

    /// Entries into zone 42 at these seconds after 2013-11-04T09:00Z (a Monday morning).
    static func trace(visits: [Double]) -> String {
        visits.map {
            #"{"t": \#(1_383_555_600 + $0), "uuid": "\#(uuid)", "major": 42, "minor": 1, "rssi": -60}"#
        }.joined(separator: "\n") + "\n"
    }

    /// Runs `trace` with `configuration`'s rules on the state at `state`; the outputs.
    static func run(
        _ configuration: Configuration, trace: String, state: String, in folder: URL, logger: Logger = .silent
    ) throws -> [MonitorOutput] {
        let path = folder.appendingPathComponent("trace-\(UUID().uuidString).jsonl")
        try trace.write(to: path, atomically: true, encoding: .utf8)
        let store = try StateStore(path: state)
        var job = FileRun(configuration: configuration, source: .trace(path: path.path))
        job.rules = try RulesSource(configuration: configuration)
            .load(store: store, now: Timestamp(.now)!, logger: logger)?
            .regions
        var outputs: [MonitorOutput] = []
        try job.run(store: store, output: { outputs.append($0) }, logger: .silent)
        return outputs
    }

    static func evaluations(_ outputs: [MonitorOutput]) -> [RuleEvaluation] {
        outputs.compactMap { if case .rule(_, let evaluation) = $0 { evaluation } else { nil } }
    }

    static func notifications(_ outputs: [MonitorOutput]) -> [UserNotification] {
        outputs.compactMap { if case .notification(_, let notification) = $0 { notification } else { nil } }
    }

    /// One entry, its rule calling `url`: what the rule said.
    static func hooked(_ url: String, in folder: URL) throws -> [MonitorOutput] {
        let rules = folder.appendingPathComponent("rules-\(UUID().uuidString).json")
        try Self.rules(server: url).write(to: rules, atomically: true, encoding: .utf8)
        let configuration = try configuration(rulesSource: rules.path, in: folder)
        return try run(
            configuration, trace: trace(visits: [0]), state: folder.appendingPathComponent("s-\(UUID()).sqlite").path,
            in: folder)
    }

    /// docs/behaviour.md §7.2: a `maximum_proximity` rule goes by the computed class in either mode. In
    /// `background` mode the beacon turns immediate 20 s after the entry, long after the
    /// ranging window closed, so nothing reports it; the rule qualifies there and then.
    @Test func anImmediateBeaconOutsideAnyRangingWindowQualifiesAMaximumProximityRule() throws {
        let folder = try scratchFolder("rules-background")
        let rules = folder.appendingPathComponent("rules.json")
        try Self.rules(extra: #", "maximum_proximity": "0""#).write(to: rules, atomically: true, encoding: .utf8)
        let configuration = try Self.configuration(rulesSource: rules.path, in: folder)
        #expect(configuration.monitor.mode == .background)
        // Far (-80 dBm) for 20 s, then immediate (-40 dBm), one sighting a second.
        let lines = (0..<40).map { second in
            #"{"t": \#(1_383_555_600 + second), "uuid": "\#(Self.uuid)", "major": 42, "minor": 1, "rssi": \#(second < 20 ? -80 : -40)}"#
        }
        let outputs = try Self.run(
            configuration, trace: lines.joined(separator: "\n") + "\n",
            state: folder.appendingPathComponent("s.sqlite").path,
            in: folder)
        let fired = outputs.compactMap { output -> Timestamp? in
            guard case .rule(let time, let evaluation) = output, evaluation.fired else { return nil }
            return time
        }
        let start = 1_383_555_600.0
        #expect(fired.count == 1)
        let seconds = try #require(fired.first).secondsSinceEpoch - start
        #expect(seconds >= 20 && seconds < 25, "fired at \(seconds) s")
        // Nothing reported the immediate class: the window of the entry had closed.
        let reported = outputs.compactMap { output -> Proximity? in
            guard case .location(let time, let event) = output, time.secondsSinceEpoch - start < 39 else { return nil }
            return event.distance
        }
        #expect(!reported.contains(Proximity.immediate))
    }

    @Test func theServerHookDecidesFromARealHTTPServer() throws {
        let folder = try scratchFolder("hook")
        let big = String(repeating: " ", count: 70_000)
        let server = try HTTPServer { path in
            switch path.split(separator: "?")[0] {
            case "/enable": .reply(status: 200, body: #"{"version": "2", "decision": "enable"}"#)
            case "/disable": .reply(status: 200, body: #"{"version": "2", "decision": "disable"}"#)
            case "/notify":
                .reply(
                    status: 200,
                    body:
                        #"{"version": "2", "decision": "notify", "notify_user": "Server text", "open_url": "http://other.test/{udid}"}"#
                )
            case "/500": .reply(status: 500, body: #"{"version": "2", "decision": "enable"}"#)
            case "/garbage": .reply(status: 200, body: "<html>busy</html>")
            case "/v1": .reply(status: 200, body: #"{"version": "1", "decision": "enable"}"#)
            case "/big": .reply(status: 200, body: #"{"version": "2", "decision": "enable", "pad": ""# + big + #""}"#)
            case "/hang": .hang
            default: .reply(status: 404, body: "")
            }
        }
        defer { server.stop() }
        let refused = "http://127.0.0.1:\(try HTTPServer.closedPort())/enable"
        let cases: [(url: String, reason: RuleReason?, detail: String?)] = [
            (server.url("/enable?id={id}"), nil, nil),
            (server.url("/disable"), .serverDisabled, nil),
            (server.url("/notify"), nil, nil),
            (server.url("/500"), .serverError, "HTTP status 500"),
            (server.url("/garbage"), .serverError, "reply is not a JSON object"),
            (server.url("/v1"), .serverError, #"reply is not version "2" (got "1")"#),
            (server.url("/big"), .serverError, "reply over 64 KiB"),
            (server.url("/hang"), .serverError, nil),
            (refused, .serverError, "connection refused"),
        ]
        for (url, reason, detail) in cases {
            let outputs = try Self.hooked(url, in: folder)
            let evaluation = try #require(Self.evaluations(outputs).first, "\(url)")
            #expect(evaluation.reason == reason, "\(url): \(evaluation)")
            if let detail { #expect(evaluation.detail == detail, "\(url)") }
            #expect(Self.notifications(outputs).count == (reason == nil ? 1 : 0), "\(url)")
            #expect(!outputs.contains { $0.type == "server" }, "a called server is not published")
        }
        // The id was put into the query; `notify` replaced the texts.
        #expect(server.requests.first == "/enable?id=1")
        let notified = try Self.notifications(Self.hooked(server.url("/notify"), in: folder))
        #expect(notified.map(\.body) == ["Server text"])
        #expect(notified.map(\.url) == ["http://other.test/dev-1"])
    }

    @Test func aHangingServerIsGivenUpAtServerTimeout() throws {
        let folder = try scratchFolder("hang")
        let server = try HTTPServer { _ in .hang }
        defer { server.stop() }
        let started = ContinuousClock.now
        let outputs = try Self.hooked(server.url("/"), in: folder)
        let waited = ContinuousClock.now - started
        #expect(Self.evaluations(outputs).map(\.reason) == [.serverError])
        #expect(Self.evaluations(outputs).first?.detail?.contains("in time") == true)
        #expect(waited >= .milliseconds(900) && waited < .seconds(5), "Rules.serverTimeout is 1 s; waited \(waited)")
    }

    @Test func withAutoServerNotifyOffScriptServersExitStatusDecides() throws {
        let folder = try scratchFolder("server-script")
        let rules = folder.appendingPathComponent("rules.json")
        try Self.rules(server: "http://campaign.test/{id}/{udid}").write(to: rules, atomically: true, encoding: .utf8)
        let seen = folder.appendingPathComponent("seen.json")
        for (status, reason) in [(0, nil), (3, RuleReason.declined)] {
            let script = try ScriptTests.script(
                "server-\(status).sh", in: folder,
                "cat > '\(seen.path)'; echo \"$BW_URL\" >> '\(seen.path)'; exit \(status)")
            let configuration = try Self.configuration(
                rulesSource: rules.path, extra: "Rules.autoServerNotify = false\nScript.server = \(script)", in: folder)
            let outputs = try Self.run(
                configuration, trace: Self.trace(visits: [0]),
                state: folder.appendingPathComponent("s\(status).sqlite").path,
                in: folder)
            let ruleTypes: Set<String> = ["rule", "server", "notification"]
            let said = outputs.map(\.type).filter { ruleTypes.contains($0) }
            #expect(said == (reason == nil ? ["server", "rule", "notification"] : ["server", "rule"]))
            #expect(Self.evaluations(outputs).first?.reason == reason)
            let text = try String(contentsOf: seen, encoding: .utf8)
            #expect(text.contains(#""type":"server""#) && text.hasSuffix("http://campaign.test/1/dev-1\n"))
        }
    }

    /// docs/behaviour.md §12: two replays sharing a state file count on from where the first stopped.
    @Test func countsSurviveARestart() async throws {
        let folder = try scratchFolder("counts")
        let rules = folder.appendingPathComponent("rules.json")
        try Self.rules(extra: #", "min_events": 2, "max_events": 3, "max_group_events": 5"#)
            .write(to: rules, atomically: true, encoding: .utf8)
        let configuration = try Self.configuration(rulesSource: rules.path, in: folder)
        let state = folder.appendingPathComponent("kept.sqlite").path
        let first = try Self.run(configuration, trace: Self.trace(visits: [0, 20]), state: state, in: folder)
        #expect(Self.evaluations(first).map(\.count) == [1, 2])
        let second = try Self.run(configuration, trace: Self.trace(visits: [40, 60]), state: state, in: folder)
        #expect(Self.evaluations(second).map(\.count) == [3, 4])
        #expect(Self.evaluations(second).map(\.reason) == [nil, .maxEvents])
        #expect(try StateStore(path: state).ruleState().day == DayCount(date: "2013-11-04", count: 2))

        // The same through the command line, as the issue asks: `replay --state` twice.
        let ini = folder.appendingPathComponent("hsyco.ini")
        try """
        LocationBaseBeacon.4201 = \(Self.uuid),42,1
        Monitor.exitTimeout = 5
        Rules.source = rules.json
        """.write(to: ini, atomically: true, encoding: .utf8)
        try Self.trace(visits: [0, 20]).write(
            to: folder.appendingPathComponent("trace.jsonl"), atomically: true, encoding: .utf8)
        var counts: [String] = []
        for _ in 0..<2 {
            let run = try await DecodeCommandTests.beaconwatch(
                ["replay", "hsyco.ini", "trace:trace.jsonl", "--state", "cli.sqlite"], in: folder)
            #expect(run.status == 0, "\(run.stderr)")
            for line in run.stdout.split(separator: "\n") {
                guard let object = JSONValue.parse(Array(line.utf8)), object["type"] == .string("rule") else {
                    continue
                }
                counts.append(object["count"]?.argument ?? "?")
            }
        }
        #expect(counts == ["1", "2", "3", "4"])
    }

    /// docs/behaviour.md §7.1: a URL source is requested with its query parameters and kept; when a fetch
    /// fails, the kept copy stays in force.
    @Test func aURLSourceIsFetchedKeptAndUsedWhenTheServerIsGone() throws {
        let folder = try scratchFolder("url-source")
        let document = Self.rules()
        let server = try HTTPServer { path in
            path.hasPrefix("/u_beacons.json") ? .reply(status: 200, body: document) : .reply(status: 404, body: "")
        }
        let url = server.url("/u_beacons.json?key=k")
        let configuration = try Self.configuration(
            rulesSource: url, extra: "Rules.namespace = n s\nMonitor.lat = 45.46\nMonitor.lng = 9.19", in: folder)
        let state = folder.appendingPathComponent("kept.sqlite").path
        let first = try Self.run(configuration, trace: Self.trace(visits: [0]), state: state, in: folder)
        #expect(Self.evaluations(first).count == 1)
        #expect(
            server.requests == [
                "/u_beacons.json?key=k&api_version=2&namespace=n%20s&udid=dev-1&lat=45.46&lgn=9.19"
            ])
        // valid_until is ahead: the kept copy serves without a fetch.
        _ = try Self.run(configuration, trace: Self.trace(visits: [0]), state: state, in: folder)
        #expect(server.requests.count == 1)

        // The server gone, a forced fetch fails and the kept copy stays in force, said once.
        server.stop()
        let warnings = LogCapture()
        let store = try StateStore(path: state)
        let source = RulesSource(configuration: configuration)
        let loaded = try #require(
            try source.load(store: store, now: Timestamp(.now)!, fetchKeptCopy: true, logger: warnings.logger))
        #expect(loaded.regions.map(\.id) == ["1"])
        #expect(loaded.origin.hasPrefix("kept copy"))
        #expect(warnings.messages.count == 1)
        #expect(warnings.messages.first?.contains("stays in force") == true)
    }

    @Test func aURLSourceWithNoKeptCopyAndNoServerStartsWithoutRules() throws {
        let folder = try scratchFolder("url-none")
        let configuration = try Self.configuration(
            rulesSource: "http://127.0.0.1:\(try HTTPServer.closedPort())/rules", in: folder)
        let warnings = LogCapture()
        let outputs = try Self.run(
            configuration, trace: Self.trace(visits: [0]), state: folder.appendingPathComponent("s.sqlite").path,
            in: folder, logger: warnings.logger)
        #expect(Self.evaluations(outputs).isEmpty)
        #expect(warnings.messages.map { $0.contains("no rules apply until a fetch succeeds") } == [true])
    }

    @Test func aBadRulesFileIsBadInputNamingTheFile() async throws {
        let folder = try scratchFolder("bad-rules")
        try #"{"u_beacons": [{"id": 1, "proximity_uid": "nope"}]}"#.write(
            to: folder.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
        try "LocationBaseBeacon.4201 = \(Self.uuid),42,1\nRules.source = rules.json\n".write(
            to: folder.appendingPathComponent("hsyco.ini"), atomically: true, encoding: .utf8)
        let run = try await DecodeCommandTests.beaconwatch(["replay", "hsyco.ini", "trace:-"], in: folder)
        #expect(run.status == 2)
        #expect(run.stderr.hasPrefix("beaconwatch: "))
        #expect(run.stderr.contains("rules.json: u_beacons[0] (id 1): \"proximity_uid\" must be a beacon UUID"))
        #expect(run.stderr.split(separator: "\n").count == 1)
    }

    /// A reload (SIGHUP, `cmd/reload`) takes the new document and keeps the counts.
    @Test func aReloadTakesTheNewRulesAndKeepsTheCounts() throws {
        let folder = try scratchFolder("reload-rules")
        let file = folder.appendingPathComponent("rules.json")
        try Self.rules(extra: #", "max_events": 9"#).write(to: file, atomically: true, encoding: .utf8)
        let configuration = try Self.configuration(rulesSource: file.path, in: folder)
        let store = try StateStore()
        func regions() throws -> [RuleRegion]? {
            try RulesSource(configuration: configuration, values: TemplateValues())
                .load(store: store, now: Timestamp(.now)!, logger: .silent)?.regions
        }
        var engine = Engine(
            configuration: configuration, identity: .resolve(configuration.monitor), rules: try regions(),
            ruleSettings: .resolve(configuration))
        var outputs: [MonitorOutput] = []
        let uuid = UUID(uuidString: Self.uuid)!
        func visit(at seconds: Double) {
            let time = Timestamp(secondsSinceEpoch: 1_383_555_600 + seconds)!
            let advertisement = Advertisement(
                format: .ibeacon, beacon: BeaconID(uuid: uuid, major: 42, minor: 1), power: -59, rssi: -60,
                address: nil)
            outputs += engine.handle(.advertisement(advertisement), at: time).outputs
            outputs += engine.advance(to: time.adding(seconds: 10)).outputs
        }
        visit(at: 0)
        visit(at: 20)
        try Self.rules(extra: #", "max_events": 9"#).replacingOccurrences(of: "Rule text", with: "New text")
            .write(to: file, atomically: true, encoding: .utf8)
        outputs +=
            engine.handle(
                .reconfigure(configuration, rules: try regions(), settings: .resolve(configuration)),
                at: Timestamp(secondsSinceEpoch: 1_383_555_640)!
            ).outputs
        visit(at: 60)
        #expect(Self.evaluations(outputs).map(\.count) == [1, 2, 3])
        #expect(Self.notifications(outputs).map(\.body) == ["Rule text", "Rule text", "New text"])
    }
}
