import BeaconCore
import Foundation
import TestSupport
import Testing

/// Issue 61, "Follow the walker", end to end (docs/behaviour.md §20): the two-storey house of
/// docs/floorplans.md ("Several floors, stairs and exit doors"), its ini as the page gives it, and
/// an hour of scanner reports made here, through `replay` and through `run` with a real mosquitto.
/// Tests/FleetTests/FloorsAndDoorsTests.swift proves the same on the engine alone; this proves it
/// through the commands, the trace and the broker.
@Suite(.serialized) struct TwoFloorRunTests {
    typealias Subscriber = MQTTRunTests.Subscriber
    static let ground = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
    static let upstairs = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E1"
    static let uuid = "FDA50693-A4E2-4FB1-AFCF-C6EB07647825"
    static let start = 1_700_000_000.0

    /// The longest a walker's room may follow it after a door: issue 61's goal, 5 s (as
    /// `FloorsAndDoorsTests.handOver` holds it on the engine alone). Through the page's house and
    /// the commands it takes 4.3 s (5.3 s when the test was written, before the estimator's changes
    /// of issue 61's second session).
    static let handOver = 5.0

    /// The longest a walker that fell silent at the exit door may stay in the house (issue 61).
    static let leavesTheHouse = 10.0

    /// A scanner: its id, where it is in the building's frame, and its point as the page writes it
    /// (the bath's has no z: 2 m above the first floor's bottom at 3 m).
    struct Scanner {
        var id: String
        var x: Double
        var y: Double
        var z: Double
        var written: String
    }

    /// The ground floor 8 × 4 m of two rooms (a wall at x = 4 with a door at y 1.5–2.5), the first
    /// floor the same a metre short at x = 0, one scanner in each room, the upstairs ones near
    /// those downstairs; the front door, an exit, at x = 0, y 1.5–2.5 in the kitchen.
    static let scanners = [
        Scanner(id: "kitchen", x: 0.3, y: 2, z: 1.5, written: "0.3,2,1.5"),
        Scanner(id: "hall", x: 7, y: 2, z: 2.6, written: "7,2,2.6"),
        Scanner(id: "bedroom", x: 1.3, y: 2.2, z: 4.5, written: "1.3,2.2,4.5"),
        Scanner(id: "bath", x: 6.7, y: 1.8, z: 5, written: "6.7,1.8"),
    ]

    /// Where a tag is: x, y and its floor (0 or 1; the tag a metre above it).
    struct Spot {
        var x: Double
        var y: Double
        var floor: Int
    }

    /// The three tags, each with the minor of its iBeacon.
    static let tags: [(id: String, minor: Int)] = [("a", 1), ("b", 2), ("c", 3)]

    /// The trace: an hour of readings, every scanner once a second for each tag heard.
    static let duration = 3600

    /// The walker (tag c) stands in the hall at x 6 until `walks`, walks along y = 2 at 1.2 m/s
    /// through the inside door (x = 4, `crossed`) to x 2 in the kitchen and stands there; at
    /// `leaves` it walks on to the front door (x 0.3), stands at it `atTheDoor` seconds opening
    /// it, steps out and is heard no more.
    static let walks = 600.6
    static let leaves = 1200.6
    static let speed = 1.2
    static let atTheDoor = 5.0
    static var crossed: Double { walks + 2 / speed }

    /// Where `tag` is at `t` (seconds into the trace), `nil` once out of the house.
    static func spot(of tag: String, at t: Double) -> Spot? {
        switch tag {
        case "a": return Spot(x: 2.5, y: 1.5, floor: 1)  // still, upstairs in the bedroom
        case "b": return Spot(x: 3.6, y: 0.6, floor: 0)  // still, 0.4 m from the shared wall, away from the door
        default:
            if t < walks { return Spot(x: 6, y: 2, floor: 0) }
            if t < leaves { return Spot(x: max(2, 6 - speed * (t - walks)), y: 2, floor: 0) }
            guard t < leaves + 1.7 / speed + atTheDoor else { return nil }
            return Spot(x: max(0.3, 2 - speed * (t - leaves)), y: 2, floor: 0)
        }
    }

    /// What `scanner` reads of a tag at `spot` (``TwoStoreyRadio``, 3 dB of noise): -59 dBm at 1 m,
    /// exponent 2.5, 6 dB a wall outside the door, 12 dB through the floor.
    static func rssi(_ scanner: Scanner, _ spot: Spot, random: inout SeededGenerator) -> Int {
        Int(
            TwoStoreyRadio.rssi(
                scanner: (scanner.x, scanner.y, scanner.z), x: spot.x, y: spot.y, floor: spot.floor, noise: 3,
                random: &random))
    }

    /// Each second the tags in turn (0.3 s apart), each heard by every scanner in turn (0.05 s
    /// apart), `t` in whole milliseconds.
    static func trace(seed: UInt64 = 61) -> String {
        var random = SeededGenerator(seed: seed)
        var text = ""
        for second in 0..<duration {
            for (k, tag) in tags.enumerated() {
                for (n, scanner) in scanners.enumerated() {
                    let t = Double(second) + Double(k) * 0.3 + Double(n) * 0.05
                    guard let spot = spot(of: tag.id, at: t) else { continue }
                    let milliseconds = Int64(((start + t) * 1000).rounded())
                    let fraction = String(milliseconds % 1000)
                    text +=
                        #"{"t": \#(milliseconds / 1000).\#(String(repeating: "0", count: 3 - fraction.count) + fraction), "#
                        + #""scanner": "\#(scanner.id)", "tag": "ibeacon:\#(uuid):7:\#(tag.minor)", "#
                        + #""rssi": \#(rssi(scanner, spot, random: &random)), "power": -59}"# + "\n"
                }
            }
        }
        return text
    }

    /// The house's ini as docs/floorplans.md gives it.
    static func house() throws -> String {
        let block = try #require(
            DocumentationExampleTests.iniBlocks.first {
                $0.file == "docs/floorplans.md" && $0.text.contains("Stairs.")
            },
            "docs/floorplans.md has no two-storey ini block")
        for scanner in scanners {
            #expect(
                block.text.contains("LocationScannerPoint.\(scanner.id) = \(scanner.written)\n"),
                "docs/floorplans.md:\(block.line) moved \(scanner.id); move it here too")
        }
        return block.text
    }

    /// A folder with `house.ini` (the page's house, its tags, a broker on `port`) and `walk.jsonl`.
    static func folder(port: Int32) throws -> URL {
        let folder = try scratchFolder("two-floors")
        // The page's own tag and source give way to the trace's tags and this run's source.
        var ini = try house().split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.hasPrefix("Tag.") && !$0.hasPrefix("Monitor.source") }.joined(separator: "\n")
        for tag in tags { ini += "Tag.\(tag.id) = ibeacon:\(uuid):7:\(tag.minor)\n" }
        // A fixed exit timeout well over the exit door's few seconds, so that a quick exit is the door's.
        // The trace is every advertisement at 1 Hz, as a Theengs gateway reports them (not an
        // ESPresense node's 15-second medians): the page's scanners are also declared so.
        ini += """
            Scanners.theengs = home/+/BTtoMQTT/#
            Tags.exitTimeout = 30
            Monitor.source = none
            Monitor.userid = house
            Monitor.rssiFilter = none
            MQTT.port = \(port)
            MQTT.keepalive = 5
            State.database = state.sqlite

            """
        try ini.write(to: folder.appendingPathComponent("house.ini"), atomically: true, encoding: .utf8)
        try trace().write(to: folder.appendingPathComponent("walk.jsonl"), atomically: true, encoding: .utf8)
        return folder
    }

    static func replay(in folder: URL) async throws -> String {
        let run = try await DecodeCommandTests.beaconwatch(
            ["replay", "--config", "house.ini", "trace:walk.jsonl", "--state", "replay.sqlite"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        return ReplayCommandTests.withoutSession(run.stdout)
    }

    /// One output line, with its time in seconds into the trace.
    struct Output {
        var line: String
        var second: Double
        var type: String
        var device: String?
        var kind: String?
        var name: String?
        var area: String?
    }

    static func outputs(_ text: String) -> [Output] {
        text.split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let type = object["type"] as? String,
                let t = (object["t"] as? String).flatMap(Timestamp.init(iso8601:))
            else { return nil }
            return Output(
                line: String(line), second: t.secondsSinceEpoch - start, type: type,
                device: object["device"] as? String, kind: object["kind"] as? String, name: object["name"] as? String,
                area: object["area"] as? String)
        }
    }

    /// `type` (`enter` or `exit`) of `kind` (`area` or `zone`) for `device`, before the trace's end.
    static func transitions(_ outputs: [Output], _ device: String, _ type: String, _ kind: String) -> [Output] {
        outputs.filter {
            $0.device == device && $0.type == type && $0.kind == kind && $0.second < Double(duration)
        }
    }

    /// The last report in `folder`'s trace of the tag whose minor is `minor` (of any tag: `nil`),
    /// in seconds into the trace.
    static func lastReport(of minor: Int? = nil, in folder: URL) throws -> Double? {
        let trace = try String(contentsOf: folder.appendingPathComponent("walk.jsonl"), encoding: .utf8)
        let line = trace.split(separator: "\n").last { minor == nil || $0.contains(":7:\(minor ?? 0)\"") }
        return line.flatMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["t"] as? Double
        }.map { $0 - start }
    }

    /// The Area or room (`kind`) a tag is in after each step of `transitions` (its enters and
    /// exits, in order) that changed it, from `none` on: what `B/area` or `B/zone` shows.
    static func states(_ transitions: [Output], _ kind: String) -> [String] {
        var states = ["none"]
        var changed: Double?
        for output in transitions where output.kind == kind {
            let state = output.type == "enter" ? output.name ?? "" : "none"
            // An exit and an enter of one step (a room for the next) leave only the enter's.
            if output.second == changed { states[states.count - 1] = state } else { states.append(state) }
            changed = output.second
        }
        return states.enumerated().filter { $0.offset == 0 || states[$0.offset - 1] != $0.element }.map(\.element)
    }

    /// Whether `shown` is `states` with none added and none reordered (some may be left out).
    static func isInOrder(_ shown: [String], within states: [String]) -> Bool {
        var rest = states[...]
        for payload in shown {
            guard let index = rest.firstIndex(of: payload) else { return false }
            rest = rest[(index + 1)...]
        }
        return true
    }

    /// The still tag upstairs enters its floor and bedroom once and stays an hour, its position
    /// never on the ground floor; the still tag by the shared wall never changes room; the walker
    /// changes room within `handOver` of the inside door, and leaves the house within 10 s of its
    /// last report at the exit door (its exit timeout is 30 s).
    @Test func stillTagsStayAndTheWalkerIsFollowed() async throws {
        let folder = try Self.folder(port: 1883)
        let outputs = Self.outputs(try await Self.replay(in: folder))
        #expect(outputs.count > 100)

        // a: one Area enter, its bedroom only, never the ground floor.
        #expect(Self.transitions(outputs, "a", "enter", "area").map(\.name) == ["First floor"])
        #expect(Self.transitions(outputs, "a", "enter", "zone").map(\.name) == ["Bedroom"])
        #expect(
            Self.transitions(outputs, "a", "exit", "area").isEmpty
                && Self.transitions(outputs, "a", "exit", "zone").isEmpty)
        let positions = outputs.filter { $0.device == "a" && $0.type == "position" }
        #expect(
            !positions.isEmpty && positions.allSatisfy { $0.area == Self.upstairs },
            "\(positions.map(\.line).prefix(3))")
        let below = outputs.filter { $0.device == "b" && $0.type == "position" }
        #expect(!below.isEmpty && below.allSatisfy { $0.area == Self.ground }, "\(below.map(\.line).prefix(3))")

        // b: by the wall, never another room.
        #expect(Self.transitions(outputs, "b", "enter", "area").map(\.name) == ["Ground floor"])
        #expect(Self.transitions(outputs, "b", "enter", "zone").map(\.name) == ["Kitchen"])
        #expect(Self.transitions(outputs, "b", "exit", "zone").isEmpty)

        // c: the hall, the kitchen soon after the door, then out of the house soon after the exit door.
        let rooms = Self.transitions(outputs, "c", "enter", "zone")
        #expect(rooms.map(\.name) == ["Hall", "Kitchen"], "\(rooms.map(\.line))")
        let kitchen = try #require(rooms.last { $0.name == "Kitchen" }, "the walker never reached the kitchen")
        let delay = kitchen.second - Self.crossed
        #expect(delay >= 0 && delay <= Self.handOver, "the room followed \(delay) s after the door")
        let last = try #require(try Self.lastReport(of: 3, in: folder))
        let exits = Self.transitions(outputs, "c", "exit", "area")
        #expect(exits.map(\.name) == ["Ground floor"], "\(exits.map(\.line))")
        let exit = try #require(exits.first, "the walker never left the house")
        #expect(
            exit.second - last > 0 && exit.second - last <= Self.leavesTheHouse,
            "left \(exit.second - last) s after its last report")
        #expect(Self.transitions(outputs, "c", "exit", "zone").last?.second == exit.second)
    }

    /// `run` fed the same reports publishes to a real mosquitto, and writes, byte for byte what
    /// `replay` prints up to the trace's end (`replay` then runs its clock on until the still tags'
    /// exits fall due; `run` stops with its source); each tag's enters and exits and its Area and
    /// room on the broker are replay's.
    @Test func runThroughABrokerGivesWhatReplayGives() async throws {
        let broker = try Broker()
        let folder = try Self.folder(port: broker.port)
        let expected = Self.outputs(try await Self.replay(in: folder))
        let watcher = try await Subscriber(port: broker.port, filter: "beaconwatch/#")
        let (run, events) = try await DecodeCommandTests.runTrace(config: "house.ini", trace: "walk.jsonl", in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        let end = try #require(try Self.lastReport(in: folder))
        let upToTheEnd = expected.filter { $0.second <= end }
        #expect(upToTheEnd.count > 100 && upToTheEnd.count < expected.count)
        #expect(ReplayCommandTests.withoutSession(events) == upToTheEnd.map { $0.line + "\n" }.joined())

        func topic(_ device: String, _ leaf: String) -> [String] {
            watcher.messages.filter { $0.topic == "beaconwatch/\(device)/\(leaf)" }.map(\.payload)
        }
        let transitions = Dictionary(grouping: upToTheEnd.filter { $0.type == "enter" || $0.type == "exit" }) {
            $0.device ?? ""
        }
        try await Subscriber.until("every enter and exit on the broker, and the daemon's stop") {
            Self.tags.allSatisfy { topic($0.id, "transition").count >= transitions[$0.id]?.count ?? 0 }
                && topic("house", "status").last == "offline"
        }
        for tag in Self.tags {
            let mine = transitions[tag.id] ?? []
            #expect(mine.count >= 2)
            #expect(
                topic(tag.id, "transition").map(ReplayCommandTests.withoutSession) == mine.map(\.line),
                "\(tag.id)/transition")
            // The retained Area and room: replay's, in order (a change may be passed over, as when
            // the broker is connected late: a connect publishes the latest), and the same at the end.
            for kind in ["area", "zone"] {
                let shown = topic(tag.id, kind)
                let states = Self.states(mine, kind)
                #expect(Self.isInOrder(shown, within: states), "\(tag.id)/\(kind): \(shown), replay: \(states)")
                #expect(shown.last == states.last, "\(tag.id)/\(kind): \(shown), replay: \(states)")
            }
        }
        #expect(topic("a", "zone").last == "Bedroom" && topic("b", "zone").last == "Kitchen")
        #expect(topic("c", "zone").contains("Hall") && topic("c", "area").last == "none")
        watcher.client.shutdown()
    }
}
