import BeaconCore
import RegionMonitor

/// "Learn this room" on the web view (docs/behaviour.md §22, docs/web.md): the control on a tag's
/// page, and how well each trained room is known.
extension Pages {
    /// The control on tag `id`'s page: a room picker (the hierarchy's Zones), the seconds, start
    /// and stop, and a line for the daemon's answer. It sits outside the page's `main`, so that a
    /// live refresh never takes away what the user picked; the session's progress is in `main`.
    /// `nil` for a device that is not a tag. Without `Web.token` (`commands` false) the daemon
    /// takes no command, and the control says how to enable it.
    package static func learnControl(_ model: BuildingModel, id: String, commands: Bool) -> String? {
        guard model.tags.contains(id) else { return nil }
        var html = HTML()
        html.open("section", [("class", "learn-control"), ("id", "learn")])
        html.raw("<h2>Learn this room</h2>")
        guard commands else {
            html.open("p", [("class", "learn-disabled")])
            html.escaped(
                "Training from this page needs Web.token: set Web.token in the configuration (openssl rand -hex 24 "
                    + "makes one), restart the daemon and open this page once as /devices/\(percentEncoded(id))"
                    + "?token=<token>. Or train with beaconwatch learn --device \(id) --room <room>.")
            html.close("p")
            html.close("section")
            return html.text
        }
        html.raw(
            "<p class=\"hint\">Stand in the room with the tag, pick the room and start: every report of the tag "
                + "until the end is a sample of that room. The tag's own room goes on as the daemon decides it.</p>")
        html.open("form", [("id", "learn-form"), ("data-device", id)])
        html.raw("<label>Room <select name=\"room\" id=\"learn-room\">")
        for zone in model.hierarchy.zones {
            let region = zone.region.description
            html.open("option", [("value", region)])
            html.escaped(zone.name ?? region)
            html.close("option")
        }
        html.raw("</select></label>")
        html.open("label")
        html.escaped("Seconds ")
        html.open(
            "input",
            [
                ("type", "number"), ("name", "seconds"), ("id", "learn-seconds"), ("min", "5"), ("max", "600"),
                ("step", "1"), ("value", "60"),
            ])
        html.close("label")
        html.raw("<button type=\"submit\" id=\"learn-start\">Start</button>")
        html.raw("<button type=\"button\" id=\"learn-stop\">Stop</button>")
        html.close("form")
        html.raw(
            "<noscript><p>Starting a session from this page needs JavaScript; beaconwatch learn does the same.</p>"
                + "</noscript><p id=\"learn-message\" role=\"status\"></p>")
        html.close("section")
        return html.text
    }

    /// A tag's training in its page's `main`: its session's progress while one runs, and how well
    /// each trained room is known.
    static func training(_ model: BuildingModel, device id: String, into html: inout HTML) {
        let training = model.training
        html.open("section", [("class", "training"), ("data-device", id)])
        html.raw("<h2>Training</h2>")
        if let session = training.session(of: id) {
            let left = training.now.map { session.left(at: $0) } ?? session.seconds
            let done = session.seconds - left
            html.open("p", [("class", "learn-session"), ("data-room", session.room.description)])
            html.escaped(
                "Training \(model.name(of: session.room)): \(Int(done.rounded(.down))) s of \(Int(session.seconds.rounded())) s, "
                    + "\(session.samples) sample\(session.samples == 1 ? "" : "s") so far")
            html.close("p")
            html.open(
                "progress",
                [
                    ("class", "learning"), ("max", Chart.oneDecimal(session.seconds)),
                    ("value", Chart.oneDecimal(done)),
                ])
            html.escaped("\(Int((done / max(session.seconds, 1) * 100).rounded())) %")
            html.close("progress")
        } else {
            html.raw("<p class=\"learn-idle none\">No session running.</p>")
        }
        learnedRooms(model, into: &html)
        html.close("section")
    }

    /// Every trained room: samples, scanners, when and by which tag, the cross-validated accuracy
    /// (or that it has too few samples) and the rooms it is confused with.
    static func learnedRooms(_ model: BuildingModel, into html: inout HTML) {
        html.raw("<table class=\"learned-rooms\"><thead><tr><th>room</th><th>samples</th><th>scanners</th>")
        html.raw("<th>trained</th><th>accuracy</th><th>confused with</th></tr></thead><tbody>")
        let rooms = model.training.ordered(model.hierarchy)
        for room in rooms {
            html.open("tr", [("data-region", room.room), ("class", room.tooFew ? "too-few" : "known")])
            html.element("td", [("class", "room")], model.roomName(room.room))
            html.element("td", [("class", "samples")], "\(room.samples)")
            html.element("td", [], "\(room.scanners)")
            let time = Timestamp(microseconds: room.trainedAt)
            html.element("td", [], "\(time.iso8601.prefix(10)) \(HTML.clock(time)) UTC by \(room.device)")
            if room.tooFew {
                html.element("td", [("class", "accuracy")], "too few samples: train it for 30 s or more")
            } else {
                html.element("td", [("class", "accuracy")], room.accuracy.map(BuildingModel.percent) ?? "—")
            }
            let confused = room.confusedWith.map { "\(model.roomName($0.room)) \(BuildingModel.percent($0.share))" }
            html.element("td", [("class", "confused")], confused.isEmpty ? "—" : confused.joined(separator: ", "))
            html.close("tr")
        }
        if rooms.isEmpty { html.raw("<tr><td colspan=\"6\" class=\"none\">no room is trained yet</td></tr>") }
        html.raw("</tbody></table>")
    }

    /// The building page's part: the trained rooms and the sessions running; nothing while no
    /// room is trained and no session runs.
    static func buildingTraining(_ model: BuildingModel, into html: inout HTML) {
        let training = model.training
        guard !training.rooms.isEmpty || !training.sessions.isEmpty else { return }
        html.raw("<section class=\"training\"><h2>Rooms learned</h2>")
        if !training.sessions.isEmpty {
            html.raw("<ul class=\"sessions\">")
            for session in training.sessions {
                html.open("li", [("data-device", session.device)])
                let left = training.now.map { session.left(at: $0) } ?? session.seconds
                html.element("a", [("href", "/devices/\(percentEncoded(session.device))")], session.device)
                html.escaped(
                    " is training \(model.name(of: session.room)): \(Int(left.rounded())) s left, \(session.samples) samples"
                )
                html.close("li")
            }
            html.raw("</ul>")
        }
        learnedRooms(model, into: &html)
        html.raw("</section>")
    }
}
