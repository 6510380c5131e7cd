import BeaconConfiguration
import Daemon
import Foundation
import Logging
import Synchronization
import TestSupport
import Testing

/// The web view and HTTP API (docs/behaviour.md §16) of a daemon run in-process, fed through a FIFO trace so
/// that the test says when each sighting happens; requests over real loopback sockets.
@Suite struct WebTests {
    static let uuid = "74278BDA-B644-4520-8F0C-720EAF059935"
    static let ini = """
        Monitor.userid = alice
        LocationBaseBeacon.1001 = \(uuid),1,1
        LocationBaseBeacon.2001 = \(uuid),2,1
        LocationAreaName.\(uuid) = Office
        LocationZoneName.\(uuid):1 = Reception
        LocationZoneName.\(uuid):2 = Kitchen
        LocationBeaconName.1001 = Desk
        LocationBeaconName.2001 = Fridge
        Monitor.exitTimeout = 5

        """

    /// A daemon whose input is a FIFO the test writes trace lines into.
    final class Daemon: Sendable {
        let folder: URL
        let writer: Int32
        let port: Int
        let task: Task<Void, any Error>
        let events: URL

        init(extra: String = "", options configure: (inout BeaconwatchService.Options) -> Void = { _ in }) async throws
        {
            folder = try scratchFolder("web")
            let fifo = folder.appendingPathComponent("trace.fifo").path
            guard mkfifo(fifo, 0o600) == 0 else { throw HTTPProbe.Failure("mkfifo") }
            // Read and write: opening does not wait for the daemon, and its end of input comes
            // when this end is closed.
            writer = open(fifo, O_RDWR)
            let ini = WebTests.ini + "State.database = \(folder.path)/state.sqlite\n" + extra
            try ini.write(to: folder.appendingPathComponent("hsyco.ini"), atomically: true, encoding: .utf8)
            events = folder.appendingPathComponent("events.jsonl")
            var options = BeaconwatchService.Options(config: folder.appendingPathComponent("hsyco.ini").path)
            options.source = .trace(path: fifo)
            options.events = events.path
            options.noMQTT = true
            options.webListen = "127.0.0.1:0"
            let bound = Mutex<Int?>(nil)
            options.webBound = { port in
                bound.withLock { $0 = port }
                Eventually.changed()
            }
            configure(&options)
            var logger = Logger(label: "web-test")
            logger.logLevel = .critical
            let service = BeaconwatchService(options: options, logger: logger)
            let ended = Mutex(false)
            task = Task {
                defer {
                    ended.withLock { $0 = true }
                    Eventually.changed()
                }
                try await service.run()
            }
            // A daemon that stops before it listens says why (its error), rather than a timeout.
            try await Eventually.until("the web server listens") {
                bound.withLock { $0 } != nil || ended.withLock { $0 }
            }
            if bound.withLock({ $0 }) == nil {
                try await task.value
                throw HTTPProbe.Failure("the daemon ended before its web server listened")
            }
            port = bound.withLock { $0 } ?? 0
        }

        /// Writes trace lines: sightings of `minor` in zone `major` at seconds `times` after 1700000000.
        func sight(major: Int, minor: Int, at times: some Sequence<Int>, rssi: Int = -60) {
            var text = ""
            for second in times {
                text += """
                    {"t": \(1_700_000_000 + second).0, "uuid": "\(WebTests.uuid)", "major": \(major), "minor": \(minor), "rssi": \(rssi), "power": -59}

                    """
            }
            let bytes = Array(text.utf8)
            _ = bytes.withUnsafeBytes { write(writer, $0.baseAddress, $0.count) }
        }

        /// Writes scanner lines (docs/behaviour.md §19): `scanner` heard `tag` at `rssi`, at seconds after 1700000000.
        func report(_ scanner: String, _ tag: String, rssi: Double, at second: Double) {
            let text =
                #"{"t": \#(1_700_000_000 + second), "scanner": "\#(scanner)", "tag": "\#(tag)", "rssi": \#(rssi)}"#
                + "\n"
            let bytes = Array(text.utf8)
            _ = bytes.withUnsafeBytes { write(writer, $0.baseAddress, $0.count) }
        }

        func get(_ path: String, headers: [String: String] = [:]) async throws -> HTTPProbe.Response {
            try await HTTPProbe.request("GET", path, port: port, headers: headers)
        }

        /// Ends the input: the daemon stops at its end.
        func finish() async throws {
            close(writer)
            try await task.value
        }
    }

    static func object(_ text: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
    }

    /// A building of scanners (docs/behaviour.md §19): the tag in its room on the building page, its page
    /// with the scanners that heard it and why its room last changed, the scanners' page, and
    /// `beaconwatch_scanners` and per-scanner reports in `/metrics`.
    @Test func tagsAndScannersAreShownAndCounted() async throws {
        let daemon = try await Daemon(
            extra: "LocationScanner.1001 = reception\nLocationScanner.2001 = kitchen\n"
                + "Tag.badge = ibeacon:FDA50693-A4E2-4FB1-AFCF-C6EB07647825:7:1, Anna's badge\n")
        let stream = try HTTPProbe.EventStream("/api/v1/events?device=badge", port: daemon.port)
        try await stream.connected()
        daemon.report("reception", "badge", rssi: -60, at: 0)
        // Something that is none of the tags: counted for its scanner, nothing else.
        daemon.report("reception", "stranger", rssi: -70, at: 0.5)
        daemon.report("kitchen", "badge", rssi: -75, at: 1)
        daemon.report("kitchen", "badge", rssi: -41, at: 2)
        daemon.report("kitchen", "badge", rssi: -41, at: 2.5)
        // The move's outputs are delivered: a page asked for after them shows them.
        while let data = try await stream.next() {
            if data.contains(#""type":"enter""#) && data.contains(#""name":"Kitchen""#) { break }
        }
        let page = try await daemon.get("/devices/badge").body
        #expect(
            page.contains(
                "moved from Reception to Kitchen: scanner kitchen heard it at 14.9 dB against -1 dB for Reception"),
            "\(page)")
        #expect(page.contains("Scanners that heard it (last minute)"))
        #expect(page.contains("data-scanner=\"kitchen\"") && page.contains("data-scanner=\"reception\""))
        #expect(page.contains("-41.3 dBm (last -41.0)"), "\(page)")
        let api = Self.object(try await daemon.get("/api/v1/devices/badge").body)
        #expect(api["room"] as? String == "\(Self.uuid):2")
        #expect((api["why"] as? String)?.hasPrefix("moved from Reception to Kitchen: scanner kitchen") == true)
        let building = try await daemon.get("/").body
        #expect(building.contains("2 of 2 scanners online"), "\(building)")
        #expect(building.range(of: "Kitchen<span class=\"count\">1</span>") != nil)
        // The two scanners hear each other (ESPresense's node:<id>): the kitchen's receiver reads 4 dB
        // higher than the reception's, which Scanners.calibrate = auto learns; a move back to the
        // reception says they are taken.
        for index in 0..<5 {
            daemon.report("reception", "node:kitchen", rssi: -66, at: 3 + Double(index))
            daemon.report("kitchen", "node:reception", rssi: -62, at: 3.5 + Double(index))
        }
        daemon.report("reception", "badge", rssi: -20, at: 8)
        while let data = try await stream.next() {
            if data.contains(#""type":"enter""#) && data.contains(#""name":"Reception""#) { break }
        }
        let scanners = try await daemon.get("/scanners")
        #expect(scanners.status == 200)
        #expect(scanners.body.contains("data-scanner=\"reception\" class=\"online\""), "\(scanners.body)")
        #expect(scanners.body.components(separatedBy: "<td>8</td>").count == 3, "\(scanners.body)")
        #expect(
            scanners.body.contains("<td class=\"learned\">-2 dB (against 1 scanner)</td>")
                && scanners.body.contains("<td class=\"learned\">+2 dB (against 1 scanner)</td>"), "\(scanners.body)")
        #expect(scanners.body.contains("<td>Kitchen</td>"), "\(scanners.body)")
        let metrics = try await daemon.get("/metrics").body
        #expect(metrics.contains("beaconwatch_scanners{state=\"online\"} 2"), "\(metrics)")
        #expect(metrics.contains("beaconwatch_scanner_reports_total{scanner=\"reception\"} 8"), "\(metrics)")
        #expect(metrics.contains("beaconwatch_scanner_reports_total{scanner=\"kitchen\"} 8"), "\(metrics)")
        try await daemon.finish()
    }

    @Test func theAPIShowsWhereTheDeviceIsAndStreamsEveryOutputOnceInOrder() async throws {
        let daemon = try await Daemon()
        let stream = try HTTPProbe.EventStream("/api/v1/events", port: daemon.port)
        let filtered = try HTTPProbe.EventStream("/api/v1/events?device=alice", port: daemon.port)
        try await stream.connected()
        try await filtered.connected()
        daemon.sight(major: 1, minor: 1, at: 0..<3)
        // The walk moves on: Reception's silence passes exitTimeout while the Kitchen is heard.
        daemon.sight(major: 2, minor: 1, at: 3..<12)

        var seen: [String] = []
        while seen.count < 20 {
            guard let data = try await stream.next() else { break }
            seen.append(data)
            if Self.object(data)["type"] as? String == "exit" { break }
        }
        let types = seen.map { Self.object($0)["type"] as? String ?? "?" }
        #expect(types.prefix(3) == ["monitoring", "enter", "enter"])
        #expect(types.contains("exit"))
        for data in seen.prefix(3) { #expect(try await filtered.next() == data) }

        let state = try await daemon.get("/api/v1/state")
        #expect(state.status == 200)
        #expect(state.headers["content-type"] == "application/json")
        let devices = Self.object(state.body)["devices"] as? [[String: Any]] ?? []
        #expect(devices.first?["id"] as? String == "alice")
        #expect(devices.first?["zone"] as? String == "Kitchen")
        let device = Self.object(try await daemon.get("/api/v1/devices/alice").body)
        #expect(device["maxRegions"] as? Int == 20)
        #expect((device["inside"] as? [[String: Any]])?.contains { $0["name"] as? String == "Kitchen" } == true)
        #expect((device["beacons"] as? [[String: Any]])?.contains { $0["id"] as? String == "2001" } == true)

        let page = try await daemon.get("/")
        #expect(page.status == 200)
        #expect(page.body.contains("data-region=\"\(Self.uuid):2\""))
        #expect(page.body.range(of: "Kitchen<span class=\"count\">1</span>") != nil)
        #expect(try await daemon.get("/devices/alice").body.contains("class=\"slot filled"))
        #expect(try await daemon.get("/healthz").status == 200)
        let metrics = try await daemon.get("/metrics").body
        for name in [
            "beaconwatch_decoded_reports_total", "beaconwatch_sightings_total", "beaconwatch_outputs_total",
            "beaconwatch_outbox_depth", "beaconwatch_broker_connected", "beaconwatch_script_queue_depth",
            "beaconwatch_devices", "beaconwatch_regions_inside", "beaconwatch_event_latency_seconds_bucket",
        ] {
            #expect(metrics.contains(name), "\(name) missing from /metrics")
        }
        try await daemon.finish()

        // What the stream carried is what --events wrote, line for line, in order.
        let written = try String(contentsOf: daemon.events, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(Array(written.prefix(seen.count)) == seen)
    }

    @Test func errorsAreOneLineOfJSONWithTheirStatus() async throws {
        let daemon = try await Daemon()
        daemon.sight(major: 1, minor: 1, at: 0..<1)
        let cases: [(String, String, Int)] = [
            ("GET", "/nowhere", 404), ("GET", "/api/v1/devices/bob", 404), ("GET", "/api/v1/events?device=bob", 404),
            ("DELETE", "/api/v1/state", 405), ("POST", "/api/v1/state", 405),
            ("POST", "/api/v1/devices/alice/cmd/mode", 403), ("POST", "/api/v1/devices/alice/learn", 403),
        ]
        for (method, path, status) in cases {
            let response = try await HTTPProbe.request(method, path, port: daemon.port)
            #expect(response.status == status, "\(method) \(path)")
            #expect(Self.object(response.body)["error"] is String, "\(method) \(path): \(response.body)")
            #expect(response.body.split(separator: "\n").count == 1)
        }
        #expect(try await daemon.get("/devices/bob").status == 404)
        try await daemon.finish()
    }

    @Test func aTokenGuardsEveryRequestAndCommandsNeedTheHeader() async throws {
        let token = "0123456789abcdef0123456789abcdef"
        let daemon = try await Daemon(extra: "Web.token = \(token)\n")
        daemon.sight(major: 1, minor: 1, at: 0..<2)
        let bearer = ["Authorization": "Bearer \(token)"]
        #expect(try await daemon.get("/api/v1/state").status == 401)
        #expect(try await daemon.get("/api/v1/state", headers: ["Authorization": "Bearer \(token)x"]).status == 401)
        #expect(try await daemon.get("/", headers: ["Authorization": "Bearer wrong"]).status == 401)
        #expect(try await daemon.get("/api/v1/state", headers: bearer).status == 200)
        // A browser opens the page once with ?token=; the cookie carries it from then on.
        let opened = try await daemon.get("/?token=\(token)")
        #expect(opened.status == 200)
        let cookie = try #require(opened.headers["set-cookie"]?.split(separator: ";").first.map(String.init))
        #expect(try await daemon.get("/api/v1/state", headers: ["Cookie": cookie]).status == 200)

        func post(_ path: String, _ body: String, _ headers: [String: String]) async throws -> HTTPProbe.Response {
            try await HTTPProbe.request("POST", path, port: daemon.port, headers: headers, body: Array(body.utf8))
        }
        // The cookie is not enough for a command: another site's page could make a browser send it.
        #expect(try await post("/api/v1/devices/alice/cmd/mode", "background", ["Cookie": cookie]).status == 401)
        #expect(try await post("/api/v1/devices/alice/cmd/mode", "sideways", bearer).status == 400)
        #expect(try await post("/api/v1/devices/alice/cmd/alert", "{not json", bearer).status == 400)
        #expect(try await post("/api/v1/devices/bob/cmd/mode", "background", bearer).status == 404)
        #expect(try await post("/api/v1/devices/alice/cmd/shout", "x", bearer).status == 404)
        #expect(
            try await post("/api/v1/devices/alice/cmd/mode", String(repeating: "x", count: 5000), bearer).status == 413)
        #expect(try await post("/api/v1/devices/alice/cmd/mode", "background", bearer).status == 202)
        // A request after a command reads the engine after it.
        let device = try await daemon.get("/api/v1/devices/alice", headers: bearer)
        #expect(Self.object(device.body)["ranging"] as? String == "background")
        try await daemon.finish()
    }

    /// "Learn this room" through the API (docs/behaviour.md §22): `POST /api/v1/devices/<id>/learn`
    /// with the token (a Bearer header, or the page's cookie with its command header; a cookie
    /// alone is not enough), the engine's refusals as 400 with nothing changed, a session that
    /// ends in a `learned` output, and `/api/v1/fingerprints` and the tag's page after it.
    @Test func learnThroughTheAPIStartsASessionAndRefusesWhatCannotBeLearned() async throws {
        let token = "0123456789abcdef0123456789abcdef"
        let daemon = try await Daemon(
            extra: "Web.token = \(token)\nLocationScanner.1001 = reception\nLocationScanner.2001 = kitchen\n"
                + "Tag.badge = ibeacon:FDA50693-A4E2-4FB1-AFCF-C6EB07647825:7:1, Badge\n")
        let bearer = ["Authorization": "Bearer \(token)"]
        let stream = try HTTPProbe.EventStream("/api/v1/events?token=\(token)", port: daemon.port)
        try await stream.connected()
        func post(_ device: String, _ body: String, _ headers: [String: String]) async throws -> HTTPProbe.Response {
            try await HTTPProbe.request(
                "POST", "/api/v1/devices/\(device)/learn", port: daemon.port, headers: headers, body: Array(body.utf8))
        }
        func fingerprints() async throws -> [String: Any] {
            Self.object(try await daemon.get("/api/v1/fingerprints", headers: bearer).body)
        }
        // A file run takes commands at its input's time: the badge is heard first.
        daemon.report("kitchen", "badge", rssi: -45, at: 0)
        while let data = try await stream.next() {
            if data.contains(#""type":"enter""#) && data.contains(#""name":"Kitchen""#) { break }
        }
        let start = #"{"room": "Kitchen", "seconds": 5}"#
        // No token, a wrong one, and the page's cookie alone: 401.
        #expect(try await post("badge", start, [:]).status == 401)
        #expect(try await post("badge", start, ["Authorization": "Bearer nope"]).status == 401)
        let opened = try await daemon.get("/devices/badge?token=\(token)")
        #expect(opened.status == 200)
        #expect(opened.body.contains("<h2>Learn this room</h2>") && opened.body.contains("id=\"learn-form\""))
        #expect(opened.body.contains("<option value=\"\(Self.uuid):2\">Kitchen</option>"), "\(opened.body)")
        let cookie = try #require(opened.headers["set-cookie"]?.split(separator: ";").first.map(String.init))
        #expect(try await post("badge", start, ["Cookie": cookie]).status == 401)
        #expect(try await post("badge", start, ["Cookie": cookie, "X-Beaconwatch-Command": "mode"]).status == 401)
        // What cannot be learned: 400, one line naming the cause and the fix; nothing changed.
        let refused: [(String, String, String)] = [
            ("badge", #"{"room": "Attic", "seconds": 5}"#, "no room \"Attic\""),
            ("ghost", start, "no tag \"ghost\""),
            ("alice", start, "not a tag heard by scanners"),
            ("badge", #"{"room": "Kitchen", "seconds": 4}"#, "give 5 to 600"),
            ("badge", #"{"room": "Kitchen", "seconds": 601}"#, "give 5 to 600"),
            ("badge", "{not json", "not a JSON object"),
            ("badge", #"{"stop": true}"#, "no session running"),
        ]
        for (device, body, says) in refused {
            let response = try await post(device, body, bearer)
            #expect(response.status == 400, "\(device) \(body): \(response.body)")
            let error = Self.object(response.body)["error"] as? String ?? ""
            #expect(error.contains(says), "\(device) \(body): \(error)")
            #expect(response.body.split(separator: "\n").count == 1)
        }
        var status = try await fingerprints()
        #expect((status["rooms"] as? [Any])?.isEmpty == true && (status["sessions"] as? [Any])?.isEmpty == true)
        // The page's own request (its cookie and the command header) starts the session: 202.
        let taken = try await post(
            "badge", start, ["Cookie": cookie, "X-Beaconwatch-Command": "learn", "Content-Type": "application/json"])
        #expect(taken.status == 202, "\(taken.body)")
        #expect(Self.object(taken.body)["accepted"] as? Bool == true)
        #expect(
            Self.object(taken.body)["message"] as? String
                == "training Kitchen with badge for 5 s: keep the tag in the room until it ends", "\(taken.body)")
        // A second session for the same tag: refused, the first one unchanged.
        let second = try await post("badge", #"{"room": "Reception", "seconds": 60}"#, bearer)
        #expect(second.status == 400)
        #expect((Self.object(second.body)["error"] as? String)?.contains("is training") == true, "\(second.body)")
        status = try await fingerprints()
        let sessions = status["sessions"] as? [[String: Any]] ?? []
        #expect(sessions.count == 1, "\(status)")
        #expect(sessions.first?["name"] as? String == "Kitchen" && sessions.first?["seconds"] as? Double == 5)
        // The tag's reports while it runs are its samples; the file's clock passes its end.
        for second in 1...7 {
            daemon.report("kitchen", "badge", rssi: -45, at: Double(second))
            daemon.report("reception", "badge", rssi: -75, at: Double(second) + 0.5)
        }
        var learned: [String: Any] = [:]
        while let data = try await stream.next() {
            if data.contains(#""type":"learned""#) {
                learned = Self.object(data)
                break
            }
        }
        #expect(learned["device"] as? String == "badge" && learned["name"] as? String == "Kitchen", "\(learned)")
        #expect((learned["samples"] as? Int ?? 0) > 0 && learned["scanners"] as? Int == 2, "\(learned)")
        status = try await fingerprints()
        let rooms = status["rooms"] as? [[String: Any]] ?? []
        #expect(rooms.count == 1 && (status["sessions"] as? [Any])?.isEmpty == true, "\(status)")
        let room = rooms.first ?? [:]
        #expect(room["region"] as? String == "\(Self.uuid):2" && room["name"] as? String == "Kitchen")
        #expect(room["samples"] as? Int == learned["samples"] as? Int && room["scanners"] as? Int == 2)
        #expect(
            room["device"] as? String == "badge" && (room["trainedAt"] as? String)?.hasPrefix("2023-11-14T") == true)
        #expect(room["tooFew"] as? Bool == true && room["accuracy"] is NSNull, "\(room)")
        #expect(room["confusedWith"] is [Any])
        let page = try await daemon.get("/devices/badge", headers: bearer).body
        #expect(page.contains("class=\"learned-rooms\"") && page.contains("too few samples: train it for 30 s or more"))
        #expect(page.contains("No session running."), "\(page)")
        #expect(try await daemon.get("/", headers: bearer).body.contains("<h2>Rooms learned</h2>"))
        // Forgetting every room.
        #expect(try await post("badge", #"{"room": "*", "forget": true}"#, bearer).status == 202)
        #expect((try await fingerprints()["rooms"] as? [Any])?.isEmpty == true)
        try await daemon.finish()
    }

    /// Without Web.token the control on a tag's page says how to enable it.
    @Test func withoutATokenTheLearnControlSaysHowToEnableIt() async throws {
        let daemon = try await Daemon(
            extra: "LocationScanner.1001 = reception\nTag.badge = ibeacon:FDA50693-A4E2-4FB1-AFCF-C6EB07647825:7:1\n")
        let stream = try HTTPProbe.EventStream("/api/v1/events?device=badge", port: daemon.port)
        try await stream.connected()
        daemon.report("reception", "badge", rssi: -50, at: 0)
        while let data = try await stream.next() {
            if data.contains(#""type":"enter""#) { break }
        }
        let page = try await daemon.get("/devices/badge").body
        #expect(page.contains("<h2>Learn this room</h2>") && !page.contains("learn-form"), "\(page)")
        #expect(page.contains("Training from this page needs Web.token: set Web.token in the configuration"))
        // The own radio is no tag: no control.
        #expect(!(try await daemon.get("/devices/alice").body.contains("Learn this room")))
        try await daemon.finish()
    }

    @Test func anExplicitAddressThatIsTakenStopsTheDaemonAndTheDefaultOneOnlyWarns() async throws {
        let holder = try HTTPServer { _ in .reply(status: 200, body: "") }
        defer { holder.stop() }
        let folder = try scratchFolder("web-taken")
        let ini = WebTests.ini + "State.database = \(folder.path)/state.sqlite\n"
        try ini.write(to: folder.appendingPathComponent("hsyco.ini"), atomically: true, encoding: .utf8)
        try "".write(to: folder.appendingPathComponent("empty.jsonl"), atomically: true, encoding: .utf8)
        var options = BeaconwatchService.Options(config: folder.appendingPathComponent("hsyco.ini").path)
        options.source = .trace(path: folder.appendingPathComponent("empty.jsonl").path)
        options.noMQTT = true
        options.webListen = "127.0.0.1:\(holder.port)"
        var logger = Logger(label: "web-test")
        logger.logLevel = .critical
        await #expect(throws: RuntimeFailure.self) {
            try await BeaconwatchService(options: options, logger: logger).run()
        }
    }

    @Test func anAddressOtherMachinesReachNeedsAToken() throws {
        let folder = try scratchFolder("web-config")
        func load(_ extra: String) throws -> Result<Configuration, ConfigurationErrors> {
            let path = folder.appendingPathComponent("hsyco.ini")
            try (WebTests.ini + extra).write(to: path, atomically: true, encoding: .utf8)
            return Configuration.load(contentsOf: path.path)
        }
        guard case .failure(let open) = try load("Web.listen = 0.0.0.0:8080\n") else {
            Issue.record("a non-loopback address without a token was taken")
            return
        }
        #expect(open.errors.first?.description.contains("set Web.token") == true)
        #expect(open.errors.first?.line == 10)
        guard case .success(let guarded) = try load("Web.listen = 0.0.0.0:8080\nWeb.token = abcdefabcdefabcdef12\n")
        else {
            Issue.record("a token did not make a non-loopback address acceptable")
            return
        }
        #expect(guarded.web?.host == "0.0.0.0")
        #expect(guarded.web?.description.contains("abcdef") == false)
        guard case .success(let off) = try load("Web.listen =\n") else {
            Issue.record("empty Web.listen refused")
            return
        }
        #expect(off.web == nil)
        guard case .success(let byDefault) = try load("") else {
            Issue.record("no Web keys refused")
            return
        }
        #expect(byDefault.web == WebSettings(host: "127.0.0.1", port: 8080, explicit: false))
        for bad in [
            "Web.listen = 8080", "Web.listen = host:99999", "Web.listen = ::1:80", "Web.token = a b", "Web.token =",
        ] {
            guard case .failure = try load(bad + "\n") else {
                Issue.record("\(bad) was taken")
                return
            }
        }
        guard case .success(let six) = try load("Web.listen = [::1]:9000\n") else {
            Issue.record("[::1] refused")
            return
        }
        #expect(six.web?.isLoopback == true)
        #expect(six.web?.authority == "[::1]:9000")
    }
}
