import BeaconConfiguration
import BeaconCore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import JSONText
import Logging
import NIOCore
import RegionMonitor
import ServiceLifecycle
import Synchronization
import WebView

/// Answers the web view's and the API's requests (docs/behaviour.md §16, docs/web.md): one
/// responder for every path, so that every error is the same one-line JSON.
package struct WebResponder: HTTPResponder {
    package typealias Context = BasicRequestContext

    let state: WebState
    let token: String?
    /// The broker connection and the script runner, for `/metrics`.
    let mqtt: MQTTSink?
    let scripts: ScriptSink?
    /// The cluster link of a daemon in a cluster (docs/behaviour.md §21), for its role.
    let cluster: ClusterLink?

    /// Request bodies over this are refused (413).
    package static let bodyLimit = 4096
    /// After each write to an event client, its writer waits this long: what comes meanwhile
    /// goes out in one write (a burst, or a busy fleet, costs a write per client per pause,
    /// not per output). Well inside the 250 ms a page has to show an output.
    package static let defaultEventPause = Duration.milliseconds(100)
    let eventPause: Duration
    /// A write this large is followed by the next without a pause.
    static let largeWrite = 64 << 10
    static let cookie = "beaconwatch_token"

    package init(
        state: WebState, token: String?, mqtt: MQTTSink? = nil, scripts: ScriptSink? = nil,
        cluster: ClusterLink? = nil, eventPause: Duration = Self.defaultEventPause
    ) {
        self.cluster = cluster
        self.eventPause = eventPause
        self.state = state
        self.token = token
        self.mqtt = mqtt
        self.scripts = scripts
    }

    package func respond(to request: Request, context: Context) async throws -> Response {
        let path = request.uri.path
        var setCookie: Cookie?
        if let token {
            switch authorize(request, token: token) {
            case .refused:
                return Self.error(
                    .unauthorized,
                    "send Authorization: Bearer <Web.token> (or open the page once with ?token=<Web.token>)",
                    bearer: true)
            case .byQuery:
                // The page's own requests (its script, its events) then carry it.
                setCookie = Cookie(name: Self.cookie, value: token, path: "/", httpOnly: true, sameSite: .strict)
            case .byHeader, .byCookie: break
            }
        }
        var response = try await route(request, path: path)
        if let setCookie { response.setCookie(setCookie) }
        return response
    }

    private func route(_ request: Request, path: String) async throws -> Response {
        let query = request.uri.queryParameters
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map {
            String($0).removingPercentEncoding ?? String($0)
        }
        if request.method == .post {
            if segments.count == 5, segments[0] == "api", segments[1] == "v1", segments[2] == "devices",
                segments[4] == "learn"
            {
                return try await learn(request, id: segments[3])
            }
            guard segments.count == 6, segments[0] == "api", segments[1] == "v1", segments[2] == "devices",
                segments[4] == "cmd"
            else {
                return Self.error(
                    .methodNotAllowed,
                    "POST is taken only on /api/v1/devices/<id>/cmd/mode, /api/v1/devices/<id>/cmd/alert and /api/v1/devices/<id>/learn"
                )
            }
            return try await command(request, id: segments[3], name: segments[5])
        }
        guard request.method == .get || request.method == .head else {
            return Self.error(
                .methodNotAllowed,
                "\(request.method) is not served here; the API takes GET, and POST on /api/v1/devices/<id>/cmd/mode|alert and /api/v1/devices/<id>/learn"
            )
        }
        switch segments.first {
        case "":
            guard segments.count == 1 else { break }
            let main = await state.rendered("building") { Pages.building($0) }
            if query["fragment"] == "main" { return Self.html(main) }
            return Self.html(Pages.page(title: "Building", device: nil, main: main))
        case "devices":
            guard segments.count == 2, !segments[1].isEmpty else { break }
            let id = segments[1]
            let model = await state.current()
            guard let main = Pages.device(model, id: id) else {
                return Self.html(
                    Pages.page(title: "Unknown device", device: nil, main: Pages.unknownDevice(id)), status: .notFound)
            }
            if query["fragment"] == "main" { return Self.html(main) }
            return Self.html(
                Pages.page(
                    title: model.devices[id]?.label ?? id, device: id, main: main,
                    controls: Pages.learnControl(model, id: id, commands: token != nil)))
        case "scanners":
            guard segments.count == 1 else { break }
            let main = await state.rendered("scanners") { Pages.scanners($0) }
            if query["fragment"] == "main" { return Self.html(main) }
            return Self.html(Pages.page(title: "Scanners", device: nil, main: main))
        case "floors":
            guard segments.count <= 2 else { break }
            let model = await state.current()
            // `/floors`: the one floor with a plan, or the list of them.
            guard segments.count == 2, !segments[1].isEmpty else {
                if model.floors.count == 1 { return Self.redirect(to: "/floors/\(model.floors[0].area)") }
                guard !model.floors.isEmpty else {
                    return Self.error(
                        .notFound,
                        "no Area has a floor plan: give its Zones shapes (LocationZoneShape, docs/floorplans.md)")
                }
                let main = Pages.floorIndex(model)
                if query["fragment"] == "main" { return Self.html(main) }
                return Self.html(Pages.page(title: "Floors", device: nil, main: main))
            }
            guard let floor = model.floor(named: segments[1]), let main = Pages.floor(model, area: segments[1]) else {
                let known = model.floors.map { "\(model.name(of: $0.area)) (/floors/\($0.area))" }
                return Self.error(
                    .notFound,
                    "no floor plan for Area \(Self.quoted(segments[1])); "
                        + (known.isEmpty
                            ? "no Area has one" : "the floors are, by name or UUID: \(known.joined(separator: ", "))"))
            }
            if query["fragment"] == "main" { return Self.html(main) }
            return Self.html(Pages.page(title: "Floor \(model.name(of: floor.area))", device: nil, main: main))
        case "assets":
            if segments.count == 2, segments[1] == "live.js" {
                return Self.text(Assets.liveJS, type: "text/javascript; charset=utf-8")
            }
            if segments.count == 2, segments[1] == "style.css" {
                return Self.text(Assets.styleCSS, type: "text/css; charset=utf-8")
            }
        case "healthz":
            guard segments.count == 1 else { break }
            if let reason = await state.health() { return Self.text("\(reason)\n", status: .serviceUnavailable) }
            return Self.text("ok\n")
        case "metrics":
            guard segments.count == 1 else { break }
            _ = await state.current()
            state.metrics.take(
                outbox: mqtt?.waiting, connected: mqtt?.isConnected, scripts: scripts?.pending ?? 0,
                slowClients: state.hub.slowClientsDisconnected)
            if let cluster { state.metrics.take(clusterActive: cluster.isActive) }
            return Self.text(state.metrics.text(), type: "text/plain; version=0.0.4; charset=utf-8")
        case "api":
            guard segments.count >= 3, segments[1] == "v1" else { break }
            switch (segments[2], segments.count) {
            case ("state", 3):
                return Self.json(await state.rendered("state") { StateJSON.state($0) })
            case ("devices", 4):
                guard let json = StateJSON.device(await state.current(), id: segments[3]) else {
                    return Self.error(
                        .notFound, "no device \(Self.quoted(segments[3])); /api/v1/state lists the devices")
                }
                return Self.json(json)
            case ("events", 3):
                return await events(device: query["device"].map(String.init))
            case ("fingerprints", 3):
                return Self.json(await state.rendered("fingerprints") { StateJSON.fingerprints($0) })
            case ("occupancy", 3):
                let json = await state.rendered("occupancy") { StateJSON.occupancy($0) ?? "" }
                guard !json.isEmpty else {
                    return Self.error(
                        .notFound,
                        "this configuration has no occupancy; set Occupancy.count = zones or a Sensor.<id> (docs/occupancy.md)"
                    )
                }
                return Self.json(json)
            default: break
            }
        default: break
        }
        return Self.error(
            .notFound,
            "no such path \(Self.quoted(path)); see /, /scanners, /floors, /floors/<Area>, /api/v1/state, /api/v1/events, /api/v1/fingerprints, /api/v1/occupancy, /healthz, /metrics"
        )
    }

    /// `POST /api/v1/devices/<id>/cmd/mode|alert`: the payloads of `B/cmd/*` (docs/behaviour.md §10.1).
    private func command(_ request: Request, id: String, name: String) async throws -> Response {
        guard let token else {
            return Self.error(
                .forbidden,
                "commands need Web.token: set it in the configuration and send Authorization: Bearer <token>")
        }
        // A cookie is not enough for a command: a page elsewhere could make the browser send it.
        guard case .byHeader = authorize(request, token: token, headerOnly: true) else {
            return Self.error(.unauthorized, "commands need Authorization: Bearer <Web.token>", bearer: true)
        }
        guard name == "mode" || name == "alert" else {
            return Self.error(.notFound, "no command \(Self.quoted(name)); the commands are mode and alert")
        }
        let body: ByteBuffer
        switch await Self.body(of: request) {
        case .success(let bytes): body = bytes
        case .failure(let refusal): return refusal.response
        }
        let model = await state.current(maxAge: .seconds(3600))
        guard model.devices[id] != nil else {
            return Self.error(.notFound, "no device \(Self.quoted(id)); /api/v1/state lists the devices")
        }
        switch DaemonCommand.parse(name: name, payload: Array(body.readableBytesView)) {
        case .failure(let problem):
            return Self.error(.badRequest, "\(problem)")
        case .success(let command):
            guard state.post(command, device: id) else {
                return Self.error(.conflict, "device \(Self.quoted(id)) takes no commands now (the engine has stopped)")
            }
            return Self.json(#"{"accepted":true}"#, status: .accepted)
        }
    }

    /// A request body too large to take (413), as a response.
    struct TooLarge: Error {
        var response: Response { WebResponder.error(.contentTooLarge, "the request body is over \(bodyLimit) bytes") }
    }

    /// A command's body, at most ``bodyLimit`` bytes.
    static func body(of request: Request) async -> Result<ByteBuffer, TooLarge> {
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > bodyLimit {
            return .failure(TooLarge())
        }
        do {
            return .success(try await request.body.collect(upTo: bodyLimit))
        } catch {
            return .failure(TooLarge())
        }
    }

    /// The header that, with the page's cookie, authorises a learn command (docs/web.md): a page
    /// of another site cannot send it without a CORS preflight, which is never approved.
    static let commandHeader = HTTPField.Name("X-Beaconwatch-Command")

    /// `POST /api/v1/devices/<id>/learn` (docs/behaviour.md §22): train a room with tag `id`, stop
    /// its session, or forget a room. The engine checks what needs its state (the room, the tag, a
    /// session running) and answers before the response: 202 when taken, 400 with the one line
    /// that says why not (nothing changed).
    private func learn(_ request: Request, id: String) async throws -> Response {
        guard let token else {
            return Self.error(
                .forbidden,
                "learn needs Web.token: set it in the configuration and send Authorization: Bearer <token> "
                    + "(or open the tag's page once with ?token=<token>)")
        }
        if case .refused = authorize(request, token: token, headerOnly: true) {
            // The page's cookie, with the header only a page of this daemon sends (a cookie alone
            // would let another site's page command it).
            let header = Self.commandHeader.flatMap { request.headers[$0] }
            guard header == "learn", let cookie = request.cookies[Self.cookie], Self.same(cookie.value, token) else {
                return Self.error(
                    .unauthorized,
                    "learn needs Authorization: Bearer <Web.token> (a page: its cookie and X-Beaconwatch-Command: learn)",
                    bearer: true)
            }
        }
        let body: ByteBuffer
        switch await Self.body(of: request) {
        case .success(let bytes): body = bytes
        case .failure(let refusal): return refusal.response
        }
        guard let text = String(validating: body.readableBytesView, as: UTF8.self) else {
            return Self.error(.badRequest, "learn: the body is not UTF-8 text; send a JSON object")
        }
        let command: LearnCommand
        switch LearnCommand.parse(text: text, device: id) {
        case .failure(let problem): return Self.error(.badRequest, "\(problem)")
        case .success(let parsed): command = parsed
        }
        switch await state.learn(command) {
        case .taken?:
            // The room as a person reads it (the page's picker sends its region).
            let room = command.room == "*" ? "*" : await state.current(maxAge: .seconds(3600)).roomName(command.room)
            var object = JSONObjectWriter()
            object.add("accepted", true)
            object.add("device", command.device)
            object.add("room", command.room.isEmpty ? nil : command.room)
            switch command.action {
            case .train(let seconds):
                object.add("action", "train")
                object.add("name", room)
                object.add("seconds", seconds)
                object.add(
                    "message",
                    "training \(room) with \(command.device) for \(JSONValue.numberText(seconds)) s: "
                        + "keep the tag in the room until it ends")
            case .stop:
                object.add("action", "stop")
                object.add("message", "stopped \(command.device)'s session; the room keeps what it took")
            case .forget:
                object.add("action", "forget")
                object.add("message", command.room == "*" ? "forgot every room" : "forgot \(room)")
            }
            return Self.json(object.text, status: .accepted)
        case .refused(let refusal)?:
            return Self.error(.badRequest, refusal.learnProblem ?? "learn: refused (\(refusal))")
        case .dropped?:
            return Self.error(.conflict, "learn: the engine has stopped; start the daemon again")
        case nil:
            return Self.error(.serviceUnavailable, "learn: the engine did not answer within 2 s; try again")
        }
    }

    /// `/api/v1/events`: every output as it is delivered, as server-sent events.
    private func events(device: String?) async -> Response {
        if let device {
            let known = await state.current(maxAge: .seconds(3600)).devices[device] != nil
            guard known else {
                return Self.error(.notFound, "no device \(Self.quoted(device)); /api/v1/state lists the devices")
            }
        }
        guard let id = state.hub.subscribe(device: device) else {
            return Self.error(.serviceUnavailable, "the daemon is stopping")
        }
        let (hub, pause, timers) = (state.hub, eventPause, state.timers)
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream"
        headers[.cacheControl] = "no-store"
        return Response(
            status: .ok, headers: headers,
            body: ResponseBody { writer in
                defer { hub.unsubscribe(id) }
                try await writer.write(ByteBuffer(string: "retry: 2000\n\n"))
                while let bytes = await hub.next(id) {
                    try await writer.write(ByteBuffer(bytes: bytes))
                    // A large write means outputs come fast: the client takes the next at once.
                    if bytes.count >= Self.largeWrite { continue }
                    // Between half and one and a half pauses: clients woken by the same output do
                    // not stay in step (a hundred writes at once delay the engine's next event).
                    try await timers.sleep(for: pause * Double.random(in: 0.5...1.5))
                }
                try await writer.finish(nil)
            })
    }

    // MARK: - Authorisation

    enum Authorisation { case refused, byHeader, byCookie, byQuery }

    func authorize(_ request: Request, token: String, headerOnly: Bool = false) -> Authorisation {
        if let header = request.headers[.authorization], header.hasPrefix("Bearer "),
            Self.same(String(header.dropFirst(7)), token)
        {
            return .byHeader
        }
        if headerOnly { return .refused }
        if let cookie = request.cookies[Self.cookie], Self.same(cookie.value, token) { return .byCookie }
        if let given = request.uri.queryParameters["token"], Self.same(String(given), token) { return .byQuery }
        return .refused
    }

    /// Compares in time that depends on the expected token's length only, not on where the
    /// given one differs.
    static func same(_ given: String, _ expected: String) -> Bool {
        let a = Array(given.utf8)
        let b = Array(expected.utf8)
        var difference = UInt8(truncatingIfNeeded: a.count ^ b.count)
        if a.count != b.count { difference |= 1 }
        for index in 0..<b.count { difference |= b[index] ^ (index < a.count ? a[index] : 0) }
        return difference == 0
    }

    // MARK: - Responses

    static func quoted(_ value: String) -> String {
        var bytes: [UInt8] = []
        JSONObjectWriter.appendString(String(value.prefix(80)), to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    static func error(_ status: HTTPResponse.Status, _ message: String, bearer: Bool = false) -> Response {
        var object = JSONObjectWriter()
        object.add("error", message)
        var response = json(object.text, status: status)
        if bearer { response.headers[.wwwAuthenticate] = "Bearer realm=\"beaconwatch\"" }
        return response
    }

    static func json(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        Self.text(text + "\n", status: status, type: "application/json")
    }

    /// `303 See Other` to `path` of this server.
    static func redirect(to path: String) -> Response {
        var headers = HTTPFields()
        headers[.location] = path
        headers[.cacheControl] = "no-store"
        return Response(status: .seeOther, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer()))
    }

    static func html(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        Self.text(text, status: status, type: "text/html; charset=utf-8")
    }

    static func text(_ text: String, status: HTTPResponse.Status = .ok, type: String = "text/plain; charset=utf-8")
        -> Response
    {
        var headers = HTTPFields()
        headers[.contentType] = type
        headers[.cacheControl] = "no-store"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }
}
