import ArgumentParser
import BeaconCore
import Foundation
import Simulation

/// Who is in each room (issue 60, docs/behaviour.md §23): beaconwatch's occupancy from tags and
/// presence sensors, against the truth, beside each source alone (docs/performance.md,
/// "Occupancy").
struct OccupancyBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "occupancy",
        abstract: "Occupancy from tags and presence sensors against the truth, beside tags alone and sensors alone.",
        discussion: """
            The rooms benchmark's corridor (five rooms off a corridor) and open plan (six zones), its \
            radio and its scanners (`rooms --help`), every tag's advertisements heard at 1 Hz. People \
            (six with a tag, three without) go room to room at 1.2 m/s: 40 % of stays are visits of \
            30 to 180 s, the rest seated spells of 10 to 40 minutes, getting up to another spot of the \
            room every 5 to 15 minutes; a seated person moves enough for a PIR once every 5 minutes \
            on average; after a stay one in four goes out of the building for 5 to 30 minutes. Two \
            asset tags lie by walls (`Tag.<id>.occupant = false`). Sensors, with the faults of \
            docs/presence-sensors.md §4: a PIR (an Aqara through zigbee2mqtt: `occupancy: true` on a \
            detection, blind 60 s after each, `false` 90 s after the last, an hourly check-in with \
            the cached state) in room 1, an mmWave (an LD2450's `has_target` on ESPHome: ON/OFF on \
            change only, a ghost target 36 to 120 s after the room empties, a still person lost for \
            5 to 40 s once every 30 minutes of stillness) in room 2, both in room 3, a count \
            (the LD2450's `target_count`, at most 3, its last target kept 30 to 42 s, a still person \
            lost as above, one off for 2 to 10 s once every 15 minutes) in room 4, none elsewhere. \
            Systems: `fusion` (tags and sensors, the defaults), `tags alone` (no sensor), `sensors \
            alone` (every tag `occupant = false`), each a device table fed as `run` feeds it. Each \
            second every room's truth is compared with what each system last announced. Occupied \
            right: a minute is right when every second of it is, except 10 s after a room's first \
            person enters and vacantAfter + 5 s after its last one leaves (either answer is taken \
            there). Longest false vacant: "vacant" shown while someone is in, no exception. Count: \
            the minutes with someone in the room and everyone in it tagged; exact when every second \
            is, except 10 s after any change of the number; error: the mean absolute error of a \
            minute, averaged. Vacancy: from the last person leaving (rooms that stay empty at least \
            vacantAfter + 30 s) to "vacant" announced. The first 2 minutes are not scored.
            """
    )

    @Option(help: "Scale the simulated time (1 = 8 hours a floor).")
    var scale = 1.0

    @Option(help: "Only the floors whose name contains this.")
    var only: String?

    @Flag(help: "The tags' rooms from the floor plan's position rule (docs/behaviour.md §20).")
    var plan = false

    @Option(help: "Also fusion with these ini lines added (\\n between lines; repeatable).")
    var ini: [String] = []

    @Flag(help: "Also each room on its own line.")
    var rooms = false

    @Flag(help: "Also why seconds were wrong, by cause, in the rooms with a sensor.")
    var why = false

    @Flag(
        help: """
            Also a rule the engine does not have, modelled here: what a sensor said before the last \
            counted device left a room counts for nothing after (TagsExplainSensors).
            """)
    var explain = false

    @Option(help: "People with a tag.")
    var tagged = 6
    @Option(help: "People without a tag.")
    var untagged = 3
    @Option(help: "Asset tags (not people).")
    var assets = 2

    struct Scenario {
        var name: String
        var floor: Floor
        var seed: UInt64
        var sensors: [(id: String, model: SensorModel, room: Int)]
    }

    /// The rooms benchmark's corridor and open plan, sensors in their first four rooms.
    static func scenarios() -> [Scenario] {
        func sensors(_ first: Int) -> [(id: String, model: SensorModel, room: Int)] {
            [
                ("pir-1", .pir, first), ("radar-2", .presence, first + 1), ("pir-3", .pir, first + 2),
                ("radar-3", .presence, first + 2), ("count-4", .count, first + 3),
            ]
        }
        return [
            Scenario(name: "corridor", floor: Floor.corridor(seed: 11), seed: 60, sensors: sensors(1)),
            Scenario(name: "open plan", floor: Floor.openPlan(seed: 21), seed: 61, sensors: sensors(0)),
        ]
    }

    func validate() throws {
        guard scale >= 0.01, scale <= 100 else { throw ValidationError("--scale takes 0.01 to 100, not \(scale)") }
        guard tagged >= 1, untagged >= 0, assets >= 0, tagged + untagged + assets <= 1000 else {
            throw ValidationError("--tagged takes at least 1, --untagged and --assets at least 0, 1,000 in all")
        }
    }

    func run() throws {
        print(
            "occupancy: \(pad("floor", 10)) \(pad("system", 24)) \(pad("rooms", 9)) \(pad("minutes right", 18)) "
                + "\(pad("seconds", 8)) \(pad("false vacant", 13)) \(pad("count exact", 17)) \(pad("error", 6)) "
                + "\(pad("vacancy p50/p95/max", 20)) within vacantAfter + 5 s")
        for (number, text) in ini.enumerated() {
            print("occupancy: +\(number + 1): \(text.replacingOccurrences(of: "\\n", with: "; "))")
        }
        for scenario in Self.scenarios() where only.map({ scenario.name.contains($0) }) ?? true {
            try measure(scenario)
        }
    }

    /// Each system's ini lines, what it is fed (reports, sensors).
    struct Setup {
        var name: String
        var extra: String
        var reports: Bool
        var sensors: Bool
    }

    func measure(_ scenario: Scenario) throws {
        let floor = scenario.floor
        let duration = (8 * 3600 * scale).rounded()
        var random = SeededGenerator(seed: scenario.seed)
        let day = Workday(floor: floor, duration: duration)
        let people = (0..<(tagged + untagged)).map { day.occupant(tagged: $0 < tagged, random: &random) }
        let assetTags = (0..<assets).map { _ in day.asset(random: &random) }
        // The radio: the tagged people are t1…, the asset tags after them.
        var simulation = FloorSimulation(floor: floor)
        simulation.duration = duration
        simulation.seed = scenario.seed
        let tagMovers = people.filter(\.tagged).map(\.mover) + assetTags.map(\.mover)
        let reports = simulation.heard(tagMovers)
        let events = sensorEvents(scenario, people: people, duration: duration, random: &random)

        let tagCount = tagMovers.count
        let assetLines = (tagged..<tagCount).map { "Tag.t\($0 + 1).occupant = false\n" }.joined()
        let sensorLines = scenario.sensors.map {
            "Sensor.\($0.id) = \($0.model.topic($0.id)), \($0.model.kind), \(floor.rooms[$0.room].name)\n"
        }.joined()
        let nobody = (0..<tagCount).map { "Tag.t\($0 + 1).occupant = false\n" }.joined()
        var setups = [
            Setup(name: "fusion", extra: sensorLines + assetLines, reports: true, sensors: true),
            Setup(name: "tags alone", extra: "Occupancy.count = zones\n" + assetLines, reports: true, sensors: false),
            Setup(name: "sensors alone", extra: sensorLines + nobody, reports: false, sensors: true),
        ]
        for (number, text) in ini.enumerated() {
            let lines = text.replacingOccurrences(of: "\\n", with: "\n") + "\n"
            setups.append(
                Setup(
                    name: "fusion +\(number + 1)", extra: sensorLines + assetLines + lines, reports: true, sensors: true
                ))
            setups.append(
                Setup(
                    name: "sensors alone +\(number + 1)", extra: sensorLines + nobody + lines, reports: false,
                    sensors: true))
        }
        var systems = try setups.map {
            try OccupancySystem(name: $0.name, floor: floor, tags: tagCount, extra: $0.extra, plan: plan)
        }
        let vacantAfter = systems[0].table.configuration?.occupancy?.vacantAfter ?? 30
        let hold = systems[0].table.configuration?.occupancy?.sensors.first?.hold ?? 120
        var models =
            explain
            ? [
                TagsExplainSensors(
                    name: "model: tags explain", rooms: floor.rooms.count, sensors: scenario.sensors, hold: hold,
                    vacantAfter: vacantAfter)
            ] : []
        var oracle = TruthAnnounced(rooms: floor.rooms.count, vacantAfter: vacantAfter)
        var scores = (0..<(systems.count + models.count + 1)).map { _ in
            OccupancyScore(rooms: floor.rooms.count, vacantAfter: vacantAfter)
        }

        let clock = ContinuousClock()
        let started = clock.now
        let warmUp = 120
        var truth = FloorTruth(floor: floor, people: people)
        var (report, event) = (0, 0)
        var occupiedSeconds = 0
        for second in 1...Int(duration) {
            let time = Double(second)
            // Every report and message up to this second, in time order.
            while true {
                let nextReport = report < reports.count && reports[report].time <= time ? reports[report].time : nil
                let nextEvent = event < events.count && events[event].time <= time ? events[event].time : nil
                if let at = nextReport, nextEvent.map({ at <= $0 }) ?? true {
                    let heard = reports[report]
                    for index in systems.indices where setups[index].reports {
                        systems[index].report(tag: heard.tag, scanner: heard.scanner, rssi: heard.rssi, at: heard.time)
                    }
                    report += 1
                } else if nextEvent != nil {
                    for index in systems.indices where setups[index].sensors { systems[index].sensor(events[event]) }
                    for index in models.indices { models[index].sensor(events[event]) }
                    event += 1
                } else {
                    break
                }
            }
            for index in systems.indices { systems[index].advance(to: time) }
            let devices = systems[0].shown.map { $0?.devices ?? 0 }
            for index in models.indices { models[index].step(at: time, devices: devices) }

            truth.step(at: time)
            oracle.step(at: time, people: truth.rooms.map(\.people))
            guard second >= warmUp else { continue }
            let endsMinute = (second - warmUp) % 60 == 59
            occupiedSeconds += truth.rooms.filter { $0.people > 0 }.count
            let shown = systems.map(\.shown) + models.map(\.shown) + [oracle.shown]
            for index in scores.indices {
                for room in truth.rooms.indices {
                    scores[index].sample(
                        room, truth: truth.rooms[room], shown: shown[index][room], at: time, endsMinute: endsMinute)
                }
            }
        }
        // Vacancy delays: rooms that stayed empty long enough for "vacant" to be due.
        let announcers: [any OccupancyAnnouncer] = systems + models + [oracle]
        for (room, left) in truth.leaves where left >= Double(warmUp) {
            let back = truth.enters[room].first { $0 > left } ?? duration
            guard back - left >= vacantAfter + 30 else { continue }
            for (index, system) in announcers.enumerated() {
                if system.occupied(room, at: left) == false {
                    scores[index].rooms[room].delays.append(0)
                } else if let vacant = system.vacant(room, after: left), vacant < back {
                    scores[index].rooms[room].delays.append(vacant - left)
                } else {
                    scores[index].rooms[room].delays.append(back - left)
                    scores[index].rooms[room].missed += 1
                }
            }
        }
        let elapsed = (clock.now - started).inSeconds

        show(scenario, announcers, scores)
        for system in systems where !system.notices.isEmpty {
            print(
                "occupancy: \(pad(scenario.name, 10)) \(system.name) logged: \(system.notices.joined(separator: " | "))"
            )
        }
        let scored = (Int(duration) - warmUp + 1) * floor.rooms.count
        print(
            "occupancy: \(pad(scenario.name, 10)) \(tagged) people with tags, \(untagged) without, \(assets) asset tags "
                + "over \(format(duration / 60, 0)) simulated minutes: rooms occupied \(format(Double(occupiedSeconds) / Double(max(scored, 1)) * 100, 1))% "
                + "of the time, \(truth.leaves.count) times a room emptied; \(reports.count) reports, \(events.count) sensor "
                + "messages; scored in \(format(elapsed, 1)) s")
    }

    /// The table's rows for `scenario`: the rooms with a sensor and every room, then (`--why`)
    /// the wrong seconds by cause and (`--rooms`) each room.
    func show(_ scenario: Scenario, _ announcers: [any OccupancyAnnouncer], _ scores: [OccupancyScore]) {
        func row(_ system: String, _ label: String, _ summary: OccupancyScore.Summary) {
            let columns = summary.columns
            print(
                "occupancy: \(pad(scenario.name, 10)) \(pad(system, 24)) \(pad(label, 9)) "
                    + "\(pad(columns[0], 18)) \(pad(columns[1], 8)) \(pad(columns[2], 13)) \(pad(columns[3], 17)) "
                    + "\(pad(columns[4], 6)) \(pad(columns[5], 20)) \(columns[6])")
        }
        let floor = scenario.floor
        let sensed = Set(scenario.sensors.map(\.room)).sorted()
        for (index, system) in announcers.enumerated() {
            row(system.name, "sensors", scores[index].summary(sensed))
            row(system.name, "all", scores[index].summary(Array(floor.rooms.indices)))
        }
        if why {
            for (index, system) in announcers.enumerated() {
                print(
                    "occupancy: \(pad(scenario.name, 10)) \(pad(system.name, 24)) \(scores[index].summary(sensed).why.line)"
                )
            }
        }
        guard rooms else { return }
        for (index, system) in announcers.enumerated() {
            for room in floor.rooms.indices {
                let kinds = scenario.sensors.filter { $0.room == room }.map(\.model.rawValue)
                let label = "\(floor.rooms[room].name)" + (kinds.isEmpty ? "" : " (\(kinds.joined(separator: "+")))")
                row(system.name, label, scores[index].summary([room]))
            }
        }
    }

    /// Every sensor's messages over the day, in time order: the rooms seen every half second.
    func sensorEvents(_ scenario: Scenario, people: [Occupant], duration: Double, random: inout SeededGenerator)
        -> [SensorEvent]
    {
        let floor = scenario.floor
        var doubles = scenario.sensors.map { SensorDouble(id: $0.id, model: $0.model, room: $0.room, random: &random) }
        var events: [SensorEvent] = []
        let step = 0.5
        var views = Array(repeating: RoomView(), count: floor.rooms.count)
        for index in 0...Int(duration / step) {
            let time = Double(index) * step
            for room in views.indices { views[room] = RoomView() }
            for person in people {
                guard let room = person.room(at: time, on: floor) else { continue }
                views[room].people += 1
                if person.walking(at: time) { views[room].walking = true }
                if person.fidgeted(after: time - step, upTo: time) { views[room].fidgeted = true }
            }
            for sensor in doubles.indices {
                doubles[sensor].step(
                    at: time, step: step, view: views[doubles[sensor].room], random: &random, into: &events)
            }
        }
        return events.sorted { $0.time < $1.time }
    }
}
