import ArgumentParser
import BeaconConfiguration
import BeaconCore
import Daemon
import Foundation
import JSONText
import Syscalls

#if canImport(Glibc)
    import Glibc
#endif

/// `beaconwatch learn`: "Learn this room" through the running daemon's HTTP API (docs/behaviour.md
/// §22, docs/commands.md): start a session, stop it, forget a room, or list what is learned.
struct Learn: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Train a room's fingerprint with a tag, through the running daemon (its HTTP API).",
        discussion: """
            Stand in the room with the tag and run `learn --device ID --room ROOM`: the daemon takes \
            every report of the tag for --seconds (60) as a sample of the room. The command waits \
            for the session's end, showing its progress, and prints what was learned (--no-wait \
            returns at once); a session that took no sample changes nothing. --stop ends the tag's \
            session early; --forget ROOM forgets a room (* every room); --status lists each trained \
            room's samples, scanners, date, accuracy and confusions. The daemon is reached at the \
            configuration's Web.listen with its Web.token (commands need one). Exit status: 0 done, \
            1 the daemon cannot be reached or failed, 2 bad input (arguments, configuration, or a \
            command the daemon refused).
            """)

    @Option(help: "The hsyco.ini file of the running daemon (its Web.listen and Web.token).")
    var config = "etc/hsyco.ini"

    @Option(help: "The tag that stands in the room (a Tag.<id>).")
    var device: String?

    @Option(help: "The room: a Zone's name (LocationZoneName) or its UUID:major; * with --forget.")
    var room: String?

    @Option(help: "How long the session takes, 5 to 600 seconds.")
    var seconds: Double?

    @Flag(help: "End the tag's session now (it keeps what it took).")
    var stop = false

    @Flag(help: "Forget the room's fingerprints: --forget ROOM, or --forget --room ROOM ('*': every room's).")
    var forget = false

    @Argument(help: "With --forget: the room to forget, as --room gives it ('*': every room).")
    var roomToForget: String?

    @Flag(help: "List each trained room: samples, scanners, date, accuracy and confusions; and the sessions.")
    var status = false

    @Flag(help: "Return once the daemon took the session instead of waiting for its end.")
    var noWait = false

    func validate() throws {
        let actions = [stop, forget, status].filter { $0 }.count
        guard actions <= 1 else { throw ValidationError("give one of --stop, --forget and --status") }
        if let roomToForget {
            guard forget else {
                throw ValidationError(
                    "\(roomToForget) is a room without --forget: to train it give --room \(roomToForget) and --device")
            }
            guard room == nil else {
                throw ValidationError("give the room to forget once: --forget \(roomToForget), or --forget --room ROOM")
            }
        }
        if status {
            guard device == nil, room == nil, seconds == nil else {
                throw ValidationError("--status takes no --device, --room or --seconds")
            }
            return
        }
        if stop {
            guard device != nil else { throw ValidationError("--stop needs the --device whose session to end") }
            guard room == nil, seconds == nil else { throw ValidationError("--stop takes no --room or --seconds") }
            return
        }
        guard room ?? roomToForget != nil else {
            throw ValidationError(
                forget ? "--forget needs the room to forget: --forget ROOM ('*' for every room)" : "--room is missing")
        }
        if forget {
            guard seconds == nil else { throw ValidationError("--forget takes no --seconds") }
            return
        }
        guard device != nil else { throw ValidationError("--device is missing: name the tag that stands in the room") }
        if let seconds, !(LearnCommand.seconds.contains(seconds)) {
            throw ValidationError("--seconds \(JSONValue.numberText(seconds)) is out of range; give 5 to 600")
        }
    }

    func run() throws {
        let settings: Configuration
        switch Configuration.load(contentsOf: config) {
        case .failure(let errors): throw errors
        case .success(let loaded): settings = loaded
        }
        guard let web = settings.web else {
            throw InputError(
                file: config,
                message: "Web.listen is empty, so the daemon serves no HTTP API to train through; set Web.listen "
                    + "(and Web.token) and restart the daemon")
        }
        let api = DaemonAPI(settings: web)
        if status {
            print(try Self.statusText(api.get("/api/v1/fingerprints")), terminator: "")
            return
        }
        guard web.token != nil else {
            throw InputError(
                file: config,
                message: "learn needs Web.token: set it (openssl rand -hex 24 makes one) and restart the daemon")
        }
        let room = self.room ?? roomToForget
        if !stop, !forget, let device {
            try refuseSecondSession(api, device: device)
        }
        var body: [String: JSONValue] = [:]
        if let room { body["room"] = .string(room) }
        if stop { body["stop"] = .bool(true) }
        if forget { body["forget"] = .bool(true) }
        if !stop, !forget { body["seconds"] = .number(seconds ?? LearnCommand.defaultSeconds) }
        let tag = device ?? "_"
        let answer = try api.post("/api/v1/devices/\(Self.segment(tag))/learn", body: JSONValue.object(body).jsonText)
        if stop || forget || noWait {
            print(answer["message"].flatMap(\.string) ?? "done")
            return
        }
        try wait(api, device: tag, room: room ?? "")
    }

    /// A tag that is training a room already takes no second session: said here as a command-line
    /// user fixes it (the daemon's own refusal, for every door, cannot name this command).
    func refuseSecondSession(_ api: DaemonAPI, device: String) throws {
        let sessions = try api.get("/api/v1/fingerprints")["sessions"]?.items ?? []
        guard let running = sessions.first(where: { $0["device"]?.string == device }) else { return }
        let name = running["name"]?.string ?? running["room"]?.string ?? "a room"
        let left = Int((running["secondsLeft"]?.double ?? 0).rounded(.up))
        throw InputError(
            file: "learn",
            message: "\(device) is training \(name) already (\(left) s left); wait for its end, or end it with "
                + "beaconwatch learn --stop --device \(device) --config \(config)")
    }

    /// Follows the tag's session until it ends (reading `/api/v1/fingerprints` every second,
    /// within its length and 30 s more), then says what the room learned.
    func wait(_ api: DaemonAPI, device: String, room: String) throws {
        let length = seconds ?? LearnCommand.defaultSeconds
        let clock = DaemonClock.system
        let deadline = clock.elapsed() + .seconds(length + 30)
        let showing = isatty(STDERR_FILENO) == 1
        var started: String?
        var region: String?
        var line = ""
        while true {
            let status = try api.get("/api/v1/fingerprints")
            let session = status["sessions"]?.items?.first { $0["device"]?.string == device }
            guard let session else { break }
            started = started ?? session["started"]?.string
            region = session["room"]?.string
            if showing {
                let left = session["secondsLeft"]?.double ?? 0
                let samples = Int(session["samples"]?.double ?? 0)
                let name = session["name"]?.string ?? room
                line = "training \(name) with \(device): \(Int(left.rounded())) s left, \(samples) samples"
                FileHandle.standardError.write(Data("\r\u{1B}[K\(line)".utf8))
            }
            guard clock.elapsed() < deadline else {
                if showing { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
                throw RuntimeFailure(
                    "learn: \(device)'s session has not ended \(Int(length) + 30) s after it began; see "
                        + "beaconwatch learn --status, or end it with --stop")
            }
            // The pace of the progress line, not a wait for anything: the session's end is read.
            Syscall.sleep(.seconds(1))
        }
        if showing, !line.isEmpty { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        // The room as the daemon keeps it: trained by this tag at the session's end.
        let rooms = try api.get("/api/v1/fingerprints")["rooms"]?.items ?? []
        let trained = rooms.first { entry in
            entry["device"]?.string == device
                && (region == nil ? true : entry["region"]?.string == region)
                && (started.map { entry["trainedAt"]?.string ?? "" >= $0 } ?? true)
        }
        guard let trained else {
            throw RuntimeFailure(
                "learn: the session took no samples, so \(room) learned nothing (its earlier training, if any, is "
                    + "kept); is \(device) advertising where the scanners hear it? Try again in the room")
        }
        print(Self.roomLine(trained))
    }

    /// `learn --status`'s text, as `check` lists: per room its samples, scanners, date, accuracy
    /// and confusions; then the sessions running.
    static func statusText(_ status: JSONValue) -> String {
        var text = ""
        let rooms = status["rooms"]?.items ?? []
        text += rooms.isEmpty ? "rooms learned: none yet\n" : "rooms learned: \(rooms.count)\n"
        for room in rooms { text += "  " + roomLine(room) + "\n" }
        let sessions = status["sessions"]?.items ?? []
        if !sessions.isEmpty {
            text += "sessions running: \(sessions.count)\n"
            for session in sessions {
                let name = session["name"]?.string ?? session["room"]?.string ?? "?"
                let left = Int((session["secondsLeft"]?.double ?? 0).rounded())
                text +=
                    "  \(session["device"]?.string ?? "?") in \(name): \(left) s left, "
                    + "\(Int(session["samples"]?.double ?? 0)) samples so far\n"
            }
        }
        return text
    }

    /// `Kitchen (UUID:1): 240 samples, 3 scanners, trained 2026-11-20 09:01 UTC by anna, accuracy 93 %; confused with Hall 5 %`.
    static func roomLine(_ room: JSONValue) -> String {
        let name = room["name"]?.string ?? "?"
        let region = room["region"]?.string ?? "?"
        let samples = Int(room["samples"]?.double ?? 0)
        let scanners = Int(room["scanners"]?.double ?? 0)
        let date = (room["trainedAt"]?.string).map { "\($0.prefix(10)) \($0.dropFirst(11).prefix(8)) UTC" } ?? "?"
        var line =
            "\(name) (\(region)): \(samples) samples, \(scanners) scanner\(scanners == 1 ? "" : "s"), trained \(date)"
            + " by \(room["device"]?.string ?? "?")"
        if room["tooFew"]?.flag == true {
            line += "; too few samples: train it for 30 s or more"
        } else if let accuracy = room["accuracy"]?.double {
            line += ", accuracy \(Int((accuracy * 100).rounded())) %"
        } else {
            line += ", accuracy unknown (train a second room to measure it)"
        }
        let confused = (room["confusedWith"]?.items ?? []).compactMap { other -> String? in
            guard let share = other["share"]?.double else { return nil }
            return "\(other["name"]?.string ?? other["room"]?.string ?? "?") \(Int((share * 100).rounded())) %"
        }
        if !confused.isEmpty { line += "; confused with " + confused.joined(separator: ", ") }
        return line
    }

    /// A path segment: everything but unreserved characters percent-encoded.
    static func segment(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~")))
            ?? text
    }
}

/// The running daemon's HTTP API as `learn` uses it: where `Web.listen` says (a wildcard address
/// reached on loopback), with `Web.token`.
struct DaemonAPI {
    let base: String
    let token: String?

    init(settings: WebSettings) {
        var reach = settings
        if reach.host == "0.0.0.0" || reach.host.isEmpty { reach.host = "127.0.0.1" }
        if reach.host == "::" { reach.host = "::1" }
        base = "http://\(reach.authority)"
        token = settings.token
    }

    func get(_ path: String) throws -> JSONValue { try request("GET", path, body: nil) }

    func post(_ path: String, body: String) throws -> JSONValue { try request("POST", path, body: Array(body.utf8)) }

    /// The reply's JSON; the daemon's error (its one line) as an error: a refusal is bad input (2),
    /// a daemon that cannot be reached or fails is a runtime failure (1).
    func request(_ method: String, _ path: String, body: [UInt8]?) throws -> JSONValue {
        guard let url = URL(string: base + path) else {
            throw InputError(file: "Web.listen", message: "\(base) is not an address to reach the daemon at")
        }
        var headers = ["Accept": "application/json"]
        if let token { headers["Authorization"] = "Bearer \(token)" }
        if body != nil { headers["Content-Type"] = "application/json" }
        switch HTTPFetch.request(method, url, headers: headers, body: body, timeout: 10, limit: 1 << 20) {
        case .failure(let failure):
            throw RuntimeFailure(
                "learn: cannot reach the daemon at \(base) (\(failure)); is it running (beaconwatch run) with this "
                    + "configuration's Web.listen?")
        case .success(let reply):
            let json = JSONValue.parse(reply.body)
            if (200..<300).contains(reply.status), let json { return json }
            let said = json?["error"]?.string ?? "HTTP \(reply.status)"
            switch reply.status {
            case 400: throw InputError(file: "learn", message: Self.withoutPrefix(said))
            case 401, 403:
                throw InputError(
                    file: "learn",
                    message:
                        "the daemon refused the token (\(Self.withoutPrefix(said))); use the Web.token it runs with")
            default: throw RuntimeFailure("learn: the daemon answered \(reply.status): \(Self.withoutPrefix(said))")
            }
        }
    }

    static func withoutPrefix(_ text: String) -> String {
        text.hasPrefix("learn: ") ? String(text.dropFirst(7)) : text
    }
}

extension JSONValue {
    fileprivate var items: [JSONValue]? {
        if case .array(let items) = self { items } else { nil }
    }

    fileprivate var double: Double? {
        if case .number(let value) = self, value.isFinite { value } else { nil }
    }

    fileprivate var flag: Bool? {
        if case .bool(let value) = self { value } else { nil }
    }
}
