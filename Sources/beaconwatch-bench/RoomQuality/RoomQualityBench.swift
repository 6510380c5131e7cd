import ArgumentParser
import Floorplan
import Foundation
import RegionMonitor
import Simulation

/// How often each system puts a tag in the wrong room, how fast it follows a walker and notices one
/// leave, on simulated floors (issue 36, docs/performance.md "Rooms: the right room, fast").
struct RoomQualityBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rooms",
        abstract: "Room decisions of beaconwatch and of the rules people run today, on the same simulated floors.",
        discussion: """
            Floors (RegionMonitor's Floor): five rooms along a corridor (5 dB walls between rooms, 4 dB \
            onto the corridor through 1 m doors), an open-plan floor of six zones (a scanner in each, \
            or eight drawn anywhere on it), a house of two storeys (a hall and two rooms on each, a \
            scanner in each room, those upstairs almost straight above those downstairs, 13 dB through \
            the floor, stairs, a front door marked exit), each with receivers ±4 dB off; the ESPresense companion's \
            accuracy harness (docs/companion-harness.md: two rooms of a 6 × 4 m floor, a node in each \
            corner, its two walks, each leg in 30 s) and its published flat (four rooms, 3 dB walls), \
            both with 2.5 dB noise and 10 % of readings 6 dB down by multipath. People walk room to room (stays of 30 to 180 s, 1.2 m/s, one stay in ten \
            followed by 1 to 5 minutes out of the building); still tags sit by a wall or in a doorway. \
            The radio: shadowing of 3 dB correlated over 10 s, 2 dB of noise per reading, multipath \
            bursts (one a minute per path, 6 to 12 dB for 1 to 4 s), 15 % of advertisements lost \
            (independently, or in runs of 5 at 25 %). Every system sees the same reports: every \
            advertisement heard, or an ESPresense node's reports of them (the median of 15 s, sent \
            every 5 s or on 0.5 m of movement). Each is sampled every 0.1 s against the truth. \
            wrong: share of the time in the building that the room shown is not the true one (away \
            counts as wrong); decision errors: the share of that time the nearest scanner on a \
            noise-free radio (the oracle: the floor's own limit) was right; hand-over: from entering a \
            room (for stays of 30 s or more) to showing it; flaps: room changes of still tags an hour; \
            away: from leaving the building to showing away; false aways: away shown while in, an hour \
            of time in. In the house also the right floor: the share of the time in it that the floor \
            (Area) shown is the true one (on the stairs the nearer; away counts as wrong), and floor \
            changes of still tags an hour, and the floor hand-over: from a walker half way up or down \
            the stairs to showing its new floor. The first 15 s of a run are not scored.
            """
    )

    @Option(help: "Scale every scenario's simulated time (1 = as documented).")
    var scale = 1.0

    @Option(help: "Only the scenarios whose name contains this.")
    var only: String?

    @Option(
        help: "Also beaconwatch under another room rule: margin,drift,threshold,fresh,rise,fall (RoomRule; repeatable)."
    )
    var rule: [String] = []

    @Flag(
        help:
            "Only how well receiver offsets can be learned from what scanners hear in common (an experiment for Scanners.calibrate = auto)."
    )
    var calibration = false

    @Option(
        help:
            "Only these feeds: raw, pairs (nodes, each pair on its own schedule), firmware (nodes as ESPresense's firmware reports); repeatable."
    )
    var feeds: [String] = []

    /// What the systems are fed: every advertisement heard, or ESPresense nodes' reports on the
    /// benchmark's first schedule or the firmware's (``NodeReports/Cadence``).
    enum Feed: String {
        case raw, pairs, firmware
        var nodes: Bool { self != .raw }
    }

    @Option(
        help:
            "Also beaconwatch's position rule with these figures: spread,holdShare,sigmaAbove,sigmaBelow,outlier,correlation,drift,threshold[,audible[,jump]] (PositionSettings; repeatable)."
    )
    var position: [String] = []

    @Flag(
        help: """
            Only how well rooms are told from 60 s of training in each (issue 59): the nearest \
            scanner, k nearest training vectors and a Gaussian per room and scanner.
            """)
    var fingerprints = false

    @Flag(
        help: """
            Also beaconwatch with every room trained for 60 s before the run (issue 59), with and \
            without a floor plan, and with the tags 4 dB quieter than the trainer.
            """)
    var trained = false

    @Flag(
        help:
            "The robustness matrix instead of the scenarios: the corridor with one thing of its radio changed at a time."
    )
    var matrix = false

    @Flag(help: "Also the position filter's most probable room without the contest (a probe of its lag).")
    var probe = false

    @Option(
        help:
            "Also beaconwatch's position rule with these settings changed: key=value,… (PositionSettings' names; repeatable)."
    )
    var tune: [String] = []

    @Option(
        help:
            "Also beaconwatch with these ini lines added (\\n between lines; \"plan:\" first: with the floor plan; repeatable)."
    )
    var ini: [String] = []

    @Option(
        help:
            "Write the corridor walk at 1 Hz (with --only, the first scenario it names; every advertisement) as a trace of scanner reports to this file, and its hsyco.ini beside it (FILE.ini; with its floor plan, FILE.plan.ini), then stop."
    )
    var trace: String?

    func run() throws {
        if let trace { return try writeTrace(trace) }
        if calibration { return calibrationExperiment() }
        if fingerprints { return fingerprintExperiment() }
        print(
            "rooms: \(pad("scenario", 30)) \(pad("feed", 6)) \(pad("system", 22)) "
                + "\(pad("walkers: wrong, decision", 26)) \(pad("still: wrong, decision", 24)) "
                + "\(pad("hand-over p50/p95", 18)) \(pad("flaps/h", 8)) \(pad("away p50/p95", 14)) false aways"
        )
        for scenario in matrix ? Self.matrix(scale: scale) : Self.scenarios(scale: scale)
        where only.map({ scenario.name.contains($0) }) ?? true {
            for feed in [Feed.raw, .pairs, .firmware] where feeds.isEmpty || feeds.contains(feed.rawValue) {
                try measure(scenario, feed: feed)
            }
        }
    }

    struct Scenario {
        var name: String
        var simulation: FloorSimulation
        /// Walkers going to and fro along a path instead of room to room, and the seconds each leg
        /// takes (`nil`: at 0.5 m/s).
        var shuttles: [[Floor.Point]] = []
        var leg: Double?
        /// A scanner (by index) that dies at a time: nothing of it after, as sender or receiver.
        var dies: (scanner: Int, at: Double)?
    }

    /// The robustness matrix (issue 71; docs/performance.md "Real radio"): the corridor at 1 Hz
    /// with one thing changed at a time from the benchmark's radio, so that no one tuned radio
    /// is the measure.
    static func matrix(scale: Double) -> [Scenario] {
        func cell(_ name: String, _ change: (inout Scenario) -> Void = { _ in }) -> Scenario {
            var simulation = FloorSimulation(floor: Floor.corridor(seed: 11))
            simulation.duration = 3600 * scale
            simulation.walkers = 12
            simulation.stationary = 8
            simulation.seed = 4711
            var scenario = Scenario(name: "matrix: \(name)", simulation: simulation)
            change(&scenario)
            return scenario
        }
        return [
            cell("the bench's radio"),
            cell("scanner pairs steady") { $0.simulation.pairPaths = .steady },
            cell("scanner pairs absent") { $0.simulation.pairPaths = .absent },
            cell("tags 15 dB under claim") { $0.simulation.tagOffset = -15 },
            cell("tags 5 dB under claim") { $0.simulation.tagOffset = -5 },
            cell("tags 10 dB over claim") { $0.simulation.tagOffset = 10 },
            cell("exponent 1.6") { $0.simulation.floor.exponent = 1.6 },
            cell("exponent 3.5") { $0.simulation.floor.exponent = 3.5 },
            cell("shadowing 0 dB") { $0.simulation.radio.shadowing = 0 },
            cell("shadowing 8 dB") { $0.simulation.radio.shadowing = 8 },
            cell("bursty losses") {
                $0.simulation.radio.loss = 0.25
                $0.simulation.radio.lossRun = 5
            },
            // Issue 71's leaving: out through the exit door (declared), then heard 10 to 40 s more,
            // 6 dB fainter through the outer wall, before walking out of range.
            cell("heard outside the exit door") {
                $0.simulation.floor.exitDoor = (Floor.Point(0, 0.5), Floor.Point(0, 1.5))
                $0.simulation.leaving = 0.3
                $0.simulation.heardOutside = 10...40
            },
        ]
    }

    static func scenarios(scale: Double) -> [Scenario] {
        func make(
            _ name: String, _ floor: Floor, interval: Double = 1, seconds: Double = 3600, walkers: Int = 12,
            still: Int = 8, _ change: (inout Radio) -> Void = { _ in }
        ) -> Scenario {
            var simulation = FloorSimulation(floor: floor)
            simulation.interval = interval
            simulation.duration = seconds * scale
            simulation.walkers = walkers
            simulation.stationary = still
            simulation.seed = name.utf8.reduce(7) { $0 &* 31 &+ UInt64($1) }
            change(&simulation.radio)
            return Scenario(name: name, simulation: simulation)
        }
        var espresense = Radio()
        espresense.shadowing = 0
        espresense.fading = 2.5
        espresense.multipathShare = 0.1
        espresense.multipathDepth = 6
        espresense.loss = 0
        func flat(_ name: String, _ a: Floor.Point, _ b: Floor.Point) -> Scenario {
            var scenario = make(name, Floor.flat(), seconds: 1800, walkers: 0, still: 0) { $0 = espresense }
            scenario.shuttles = Array(repeating: [a, b], count: 4)
            return scenario
        }
        func quiet(_ scenario: Scenario) -> Scenario {
            var scenario = scenario
            scenario.simulation.quietPhones = 10
            return scenario
        }
        func wandering(_ scenario: Scenario) -> Scenario {
            var scenario = scenario
            scenario.simulation.wander = 60
            scenario.simulation.stay = 90...240
            return scenario
        }
        // The companion's harness (docs/companion-harness.md): its two walks as it samples them (each
        // leg in 30 samples whatever its length), walked to and fro by four tags advertising at 1 Hz,
        // a leg in 30 s: a sample's share of the harness is its share of the time here.
        func harness(_ name: String, _ path: [Floor.Point]) -> Scenario {
            var scenario = make(name, Floor.companionHarness(), seconds: 1800, walkers: 0, still: 0) {
                $0 = espresense
            }
            scenario.shuttles = Array(repeating: path, count: 4)
            scenario.leg = 30
            return scenario
        }
        return [
            make("corridor, 1 Hz", Floor.corridor(seed: 11)),
            make("corridor, 1 Hz, bursty losses", Floor.corridor(seed: 12)) {
                $0.loss = 0.25
                $0.lossRun = 5
            },
            make("corridor, 0.3 Hz", Floor.corridor(seed: 13), interval: 1 / 0.3),
            // Badges walked about each room for a minute, then still (issue 47's office).
            wandering(make("corridor, 1 Hz, wandering", Floor.corridor(seed: 15), walkers: 20, still: 8)),
            wandering(make("open plan, 1 Hz, wandering", Floor.openPlan(seed: 25), walkers: 20, still: 8)),
            wandering(
                make(
                    "corridor, 10 Hz, wandering", Floor.corridor(seed: 16), interval: 0.1, seconds: 1200, walkers: 10,
                    still: 4)),
            make("corridor, 10 Hz", Floor.corridor(seed: 14), interval: 0.1, seconds: 1200, walkers: 6, still: 4),
            quiet(make("corridor, phones going quiet", Floor.corridor(seed: 17), walkers: 0, still: 0)),
            make("open plan, 1 Hz", Floor.openPlan(seed: 21)),
            make("open plan, 1 Hz, bursty losses", Floor.openPlan(seed: 22)) {
                $0.loss = 0.25
                $0.lossRun = 5
            },
            {
                // Room 1's only scanner dies half way: its still tags must not be put next door.
                var scenario = make("corridor, 1 Hz, a room's scanner dies", Floor.corridor(seed: 18))
                scenario.dies = (2, scenario.simulation.duration / 2)
                return scenario
            }(),
            make("open plan at random, 1 Hz", Floor.openPlanAtRandom(seed: 27)),
            // Issue 61's house: two storeys, scanners upstairs almost straight above those downstairs.
            make("two floors, 1 Hz", Floor.twoStorey(seed: 31)),
            {
                // Issue 71's leaving: out through the front door, then heard 10 to 40 s more (the
                // steps, the street), 6 dB fainter through the outer wall.
                var scenario = make("two floors, heard outside, 1 Hz", Floor.twoStorey(seed: 32))
                scenario.simulation.leaving = 0.3
                scenario.simulation.heardOutside = 10...40
                return scenario
            }(),
            harness("harness, diagonal walk", [Floor.Point(0.5, 0.5), Floor.Point(3, 2), Floor.Point(5.5, 3.5)]),
            harness(
                "harness, crossing",
                [Floor.Point(1, 2), Floor.Point(3, 2), Floor.Point(3.9, 2), Floor.Point(4.1, 2), Floor.Point(5, 2)]),
            flat("flat, diagonal walk", Floor.Point(0.4, 0.4), Floor.Point(5.6, 3.6)),
            flat("flat, across a wall", Floor.Point(1.5, 1), Floor.Point(4.5, 1)),
        ]
    }

    /// What one system did against the truth.
    struct Score {
        var walkerTime = 0.0
        var walkerWrong = 0.0
        var walkerDecision = 0.0
        var stillTime = 0.0
        var stillWrong = 0.0
        var stillDecision = 0.0
        var stillFlaps = 0
        var handOvers: [Double] = []
        var aways: [Double] = []
        var falseAways = 0
        var visits = 0
        /// The longest a still tag was shown in a room not its own (not "no room"), seconds, from
        /// ``wrongFrom`` on.
        var stillLongestWrong = 0.0
        var wrongFrom = 0.0
        /// The dead scanner's room, and the longest one of its still tags was shown in another.
        var deadRoom: Int?
        var deadRoomLongestWrong = 0.0
        /// On a building of several storeys: the time in it and on the right floor (Area), walkers
        /// and still tags, and how often a still tag's floor changed (an away between not counted).
        var walkerFloorTime = 0.0
        var walkerFloorRight = 0.0
        var stillFloorTime = 0.0
        var stillFloorRight = 0.0
        var stillFloorChanges = 0
        /// From a walker's true floor changing (half way up or down the stairs) to showing it.
        var floorHandOvers: [Double] = []

        func floorLine() -> String {
            func share(_ part: Double, _ whole: Double) -> String { format(part / max(whole, 1e-9) * 100, 2) + "%" }
            return "right floor: walkers \(share(walkerFloorRight, walkerFloorTime)), still "
                + "\(share(stillFloorRight, stillFloorTime)), all "
                + "\(share(walkerFloorRight + stillFloorRight, walkerFloorTime + stillFloorTime)); still tags' floor "
                + "changes \(stillFloorTime > 0 ? format(Double(stillFloorChanges) / (stillFloorTime / 3600), 1) : "–")/h "
                + "(\(stillFloorChanges)); floor hand-over p50/p95 "
                + (floorHandOvers.isEmpty
                    ? "–"
                    : "\(format(quantile(floorHandOvers, 0.5), 1))/\(format(quantile(floorHandOvers, 0.95), 1)) s")
        }

        func line() -> String {
            func share(_ part: Double, _ whole: Double) -> String { format(part / max(whole, 1e-9) * 100, 1) + "%" }
            func quantiles(_ values: [Double]) -> String {
                values.isEmpty
                    ? "–" : "\(format(quantile(values, 0.5), 1))/\(format(quantile(values, 0.95), 1)) s"
            }
            let inside = walkerTime + stillTime
            return pad("\(share(walkerWrong, walkerTime)), \(share(walkerDecision, walkerTime))", 26) + " "
                + pad("\(share(stillWrong, stillTime)), \(share(stillDecision, stillTime))", 24) + " "
                + pad(quantiles(handOvers), 18) + " "
                + pad(stillTime > 0 ? format(Double(stillFlaps) / (stillTime / 3600), 1) : "–", 8) + " "
                + pad(quantiles(aways), 14) + " "
                + "\(format(Double(falseAways) / max(inside / 3600, 1e-9), 2))/h (\(falseAways) in \(visits) visits)"
        }
    }

    /// Per system and tag: the stay being scored.
    struct Tracking {
        var shown: Int??
        /// The true room since when, and whether the system has shown it since.
        var truth: Int?
        var since = 0.0
        var caught: Double?
        var awaySince: Double?
        var awayCaught = false
        /// Whether the oracle showed the true room at the last sample.
        var oracleRight = false
        /// Since when a still tag has been shown in a room not its own.
        var wrongSince: Double?
        /// The floor last shown (away not counted).
        var floor: Int?
        /// A walker's true floor (out of the building not counted), and since when it has not
        /// been shown since it changed.
        var floorTruth: Int?
        var floorSince: Double?
    }

    func measure(_ scenario: Scenario, feed: Feed) throws {
        let nodes = feed.nodes
        let simulation = scenario.simulation
        let floor = simulation.floor
        var movers = simulation.movers()
        for path in scenario.shuttles { movers.append(simulation.shuttle(along: path, segment: scenario.leg)) }
        let count = movers.count
        // The scanners also advertise and hear each other (tags count + s: scanner s).
        let heard = (simulation.heard(movers) + simulation.heardBetweenScanners(firstTag: count)).sorted {
            ($0.time, $0.tag, $0.scanner) < ($1.time, $1.tag, $1.scanner)
        }
        let roomOf = floor.scanners.map(\.room)
        // The quiet phones come after the walkers and still tags: declared as phones (`irk:`).
        let firstPhone = simulation.walkers + simulation.stationary + 1
        let phones = Set(firstPhone..<(firstPhone + simulation.quietPhones))
        var systems: [any RoomDecider] = [
            try BeaconwatchRooms(floor: floor, tags: count, nodes: nodes, phones: phones),
            try BeaconwatchRooms(
                name: "bw position", floor: floor, tags: count, nodes: nodes, phones: phones, plan: true),
            MQTTRoom(tags: count, roomOf: roomOf),
            Bermuda(tags: count, roomOf: roomOf),
            NearestLatest(tags: count, roomOf: roomOf),
        ]
        // Scored from the 30th minute: the same defaults, and receivers calibrated by hand
        // (Scanner.<id>.rssiOffset, exactly): what calibration is worth on the floor.
        var starts = Array(repeating: 15.0, count: systems.count)
        if simulation.duration > 1800, floor.scanners.contains(where: { $0.offset != 0 }) {
            let exact = floor.scanners.map { "Scanner.\($0.id).rssiOffset = \(format(-$0.offset, 2))" }
                .joined(separator: "\n")
            systems.append(
                try BeaconwatchRooms(name: "bw, 30 min on", floor: floor, tags: count, nodes: nodes, phones: phones))
            systems.append(
                try BeaconwatchRooms(
                    name: "bw uncalibrated, 30 min on", floor: floor, tags: count, nodes: nodes, phones: phones,
                    extra: "Scanners.calibrate = off"))
            systems.append(
                try BeaconwatchRooms(
                    name: "bw calibrated, 30 min on", floor: floor, tags: count, nodes: nodes, phones: phones,
                    extra: exact))
            starts += [1800, 1800, 1800]
        }
        if trained {
            let cadence: NodeReports.Cadence = feed == .firmware ? .firmware : .pairs
            for (name, plan, quieter) in [
                ("bw trained", false, 0.0), ("bw position, trained", true, 0.0),
                ("bw position, 4 dB quieter", true, 4.0), ("bw position, trained, 4 dB q.", true, 4.0),
            ] {
                var system = try BeaconwatchRooms(
                    name: name, floor: floor, tags: count, nodes: nodes, phones: phones, plan: plan, trainer: true)
                if name.contains("trained") {
                    system.train(floor: floor, simulation: simulation, tags: count, nodes: nodes, cadence: cadence)
                }
                system.quieter = quieter
                systems.append(system)
                starts.append(15)
            }
        }
        if probe {
            var probe = try BeaconwatchRooms(
                name: "bw filter only", floor: floor, tags: count, nodes: nodes, phones: phones, plan: true)
            probe.filterOnly = true
            systems.append(probe)
        }
        for text in ini {
            // "plan:" first: with the floor plan (the position rule).
            let plan = text.hasPrefix("plan:")
            let lines = text.dropFirst(plan ? 5 : 0).replacingOccurrences(of: "\\n", with: "\n")
            systems.append(
                try BeaconwatchRooms(
                    name: "bw \(text)", floor: floor, tags: count, nodes: nodes, phones: phones, extra: lines,
                    plan: plan))
        }
        for text in rule {
            let values = text.split(separator: ",").compactMap { Double($0) }
            guard values.count == 6 else { throw ValidationError("--rule takes six numbers, not \(text)") }
            let candidate = RoomRule(
                margin: values[0], drift: values[1], threshold: values[2], fresh: values[3], rise: values[4],
                fall: values[5])
            systems.append(
                try BeaconwatchRooms(
                    name: "bw \(text)", floor: floor, tags: count, nodes: nodes, phones: phones, rule: candidate))
        }
        for text in position {
            let values = text.split(separator: ",").compactMap { Double($0) }
            guard values.count >= 8 && values.count <= 10 else {
                throw ValidationError("--position takes eight to ten numbers, not \(text)")
            }
            var tuning = PositionSettings(
                holdShare: values[1], spread: values[0], sigmaAbove: values[2], sigmaBelow: values[3],
                outlier: values[4], correlation: values[5], drift: values[6], threshold: values[7],
                audible: values.count >= 9 ? values[8] : PositionSettings().audible)
            if values.count == 10 { tuning.jump = values[9] }
            tuning.learnsSpread = false  // the figures given, not the radio's
            let variant = try BeaconwatchRooms(
                name: "pos \(text)", floor: floor, tags: count, nodes: nodes, phones: phones, plan: true,
                position: tuning)
            systems.append(variant)
            if probe {
                var filter = variant
                filter.filterOnly = true
                filter.name = "filter \(text)"
                systems.append(filter)
            }
        }
        for text in tune {
            var values: [String: Double] = [:]
            for pair in text.split(separator: ",") {
                let parts = pair.split(separator: "=")
                guard parts.count == 2, let value = Double(parts[1]) else {
                    throw ValidationError("--tune takes key=value pairs, not \(pair)")
                }
                values[String(parts[0])] = value
            }
            let known: Set = [
                "spread", "holdShare", "sigmaAbove", "sigmaBelow", "outlier", "correlation", "drift", "threshold",
                "audible", "corroboration", "jump", "walkThreshold", "moving", "movingWindow", "learnsSpread",
                "window", "decay", "sigma", "powerSpread", "rate", "minConfidence",
            ]
            if let unknown = values.keys.first(where: { !known.contains($0) }) {
                throw ValidationError("--tune: no setting \(unknown)")
            }
            // The feed's own defaults: ESPresense nodes' reports are read with other figures.
            let defaults = nodes ? PositionSettings.filteredReports(floors: [:]) : PositionSettings()
            var tuning = PositionSettings(
                holdShare: values["holdShare"] ?? defaults.holdShare, spread: values["spread"] ?? defaults.spread,
                sigmaAbove: values["sigmaAbove"] ?? defaults.sigmaAbove,
                sigmaBelow: values["sigmaBelow"] ?? defaults.sigmaBelow, outlier: values["outlier"] ?? defaults.outlier,
                correlation: values["correlation"] ?? defaults.correlation, drift: values["drift"] ?? defaults.drift,
                threshold: values["threshold"] ?? defaults.threshold,
                corroboration: values["corroboration"] ?? defaults.corroboration,
                audible: values["audible"] ?? defaults.audible,
                walkThreshold: values["walkThreshold"] ?? defaults.walkThreshold,
                moving: values["moving"] ?? defaults.moving,
                movingWindow: values["movingWindow"] ?? defaults.movingWindow)
            tuning.jump = values["jump"] ?? defaults.jump
            tuning.learnsSpread = values["learnsSpread"].map { $0 != 0 } ?? defaults.learnsSpread
            tuning.window = values["window"] ?? defaults.window
            tuning.decay = values["decay"] ?? defaults.decay
            tuning.sigma = values["sigma"] ?? defaults.sigma
            tuning.powerSpread = values["powerSpread"] ?? defaults.powerSpread
            tuning.rate = values["rate"] ?? defaults.rate
            tuning.minConfidence = values["minConfidence"] ?? defaults.minConfidence
            let variant = try BeaconwatchRooms(
                name: "tune \(text)", floor: floor, tags: count, nodes: nodes, phones: phones, plan: true,
                position: tuning)
            systems.append(variant)
        }
        starts += Array(repeating: 15.0, count: systems.count - starts.count)
        var reports: [FloorSimulation.Heard] = heard
        if let dies = scenario.dies {
            reports.removeAll {
                $0.time >= dies.at && ($0.scanner == dies.scanner || $0.tag == count + dies.scanner)
            }
        }
        if nodes {
            var node = NodeReports(
                tags: count + floor.scanners.count, scanners: floor.scanners.count,
                cadence: feed == .firmware ? .firmware : .pairs)
            // The node hears what reached it (not the dead scanner's, after it died).
            reports = reports.compactMap { reading in
                node.hear(tag: reading.tag, scanner: reading.scanner, rssi: reading.rssi, at: reading.time).map {
                    FloorSimulation.Heard(time: $0.time, tag: reading.tag, scanner: reading.scanner, rssi: $0.rssi)
                }
            }
            // Delivered in the order they reach the broker.
            reports.sort { ($0.time, $0.tag, $0.scanner) < ($1.time, $1.tag, $1.scanner) }
        }
        var scores = Array(repeating: Score(), count: systems.count + 1)
        if let dies = scenario.dies {
            for index in scores.indices {
                scores[index].wrongFrom = dies.at
                scores[index].deadRoom = floor.scanners[dies.scanner].room
            }
        }
        var tracking = Array(repeating: Array(repeating: Tracking(), count: count), count: systems.count + 1)
        var shown = Array(repeating: Array(repeating: Int?.none, count: count), count: systems.count + 1)
        // On a building of several storeys, each system's floor for each tag too.
        let storeys = floor.rooms.map(\.storey)
        let floors = floor.storeys > 1
        var shownFloor = shown
        let step = 0.1
        let warmUp = 15.0
        var cursor = 0
        let steps = Int(simulation.duration / step)
        let clock = ContinuousClock()
        let started = clock.now
        for index in 0...steps {
            let time = Double(index) * step
            while cursor < reports.count, reports[cursor].time <= time {
                let report = reports[cursor]
                for system in systems.indices {
                    if report.tag >= count {
                        systems[system].scannerHeard(
                            transmitter: report.tag - count, receiver: report.scanner, rssi: report.rssi,
                            at: report.time)
                    } else {
                        systems[system].report(
                            tag: report.tag, scanner: report.scanner, rssi: report.rssi, at: report.time)
                    }
                }
                cursor += 1
            }
            for system in systems.indices {
                systems[system].rooms(at: time, into: &shown[system])
                if floors { systems[system].floors(into: &shownFloor[system], rooms: shown[system], storeys: storeys) }
            }
            for (tag, mover) in movers.enumerated() {
                // On the stairs a tag is on the storey it is nearer.
                let place = mover.place(at: time)
                let storey = place.map { Int($0.storey.rounded()) }
                let truth = place.flatMap { floor.room(at: $0.point, storey: Int($0.storey.rounded())) }
                let oracle = place.map { floor.nearestRoom(to: $0.point, storey: $0.storey) }
                shown[systems.count][tag] = oracle
                if floors { shownFloor[systems.count][tag] = oracle.map { storeys[$0] } }
                guard time >= warmUp else { continue }
                for system in 0...systems.count where system == systems.count || time >= starts[system] {
                    score(
                        &scores[system], &tracking[system][tag], shown: shown[system][tag], truth: truth,
                        oracle: oracle, still: mover.stationary, at: time, step: step)
                    if floors {
                        scoreFloor(
                            &scores[system], &tracking[system][tag], shown: shownFloor[system][tag],
                            truth: truth == nil ? nil : storey, still: mover.stationary, at: time, step: step)
                    }
                }
            }
        }
        let elapsed = (clock.now - started).inSeconds
        let visits = movers.reduce(0) { $0 + ($1.stationary ? 0 : $1.stops.count) }
        let feed = feed.rawValue
        let names = systems.map(\.name) + ["oracle: nearest, no noise"]
        for (system, name) in names.enumerated() {
            var score = scores[system]
            score.visits = visits
            print("rooms: \(pad(scenario.name, 30)) \(pad(feed, 6)) \(pad(name, 22)) \(score.line())")
        }
        if floors {
            for (system, name) in names.enumerated() {
                print("rooms: \(pad(scenario.name, 30)) \(pad(feed, 6)) \(pad(name, 22)) \(scores[system].floorLine())")
            }
        }
        if let own = systems.first as? BeaconwatchRooms, let calibration = own.table.calibration,
            floor.scanners.contains(where: { $0.offset != 0 })
        {
            // What Scanners.calibrate = auto learned, against the truth (both centred: only how
            // scanners compare matters).
            let truth = floor.scanners.map { -$0.offset }
            let learned = floor.scanners.map { calibration.correction($0.id) }
            func centred(_ values: [Double]) -> [Double] {
                let mean = values.reduce(0, +) / Double(values.count)
                return values.map { $0 - mean }
            }
            let error = zip(centred(truth), centred(learned)).map { abs($0 - $1) }.max() ?? 0
            print(
                "rooms: \(pad(scenario.name, 30)) \(pad(feed, 6)) Scanners.calibrate = auto learned "
                    + "\(centred(learned).map { format($0, 1) }.joined(separator: " ")) dB, true "
                    + "\(centred(truth).map { format($0, 1) }.joined(separator: " ")) dB: at most \(format(error, 1)) dB off"
            )
        }
        if let dies = scenario.dies {
            let stretches = names.indices.map {
                "\(names[$0]) \(format(scores[$0].deadRoomLongestWrong, 1)) s (any still tag \(format(scores[$0].stillLongestWrong, 1)) s)"
            }
            print(
                "rooms: \(pad(scenario.name, 30)) \(pad(feed, 6)) \(floor.scanners[dies.scanner].id) died at "
                    + "\(format(dies.at, 0)) s; the longest one of its room's still tags was shown in another room: "
                    + stretches.joined(separator: ", "))
        }
        if let positioned = systems.first(where: { $0.name == "bw position" }) as? BeaconwatchRooms {
            print("rooms: \(pad(scenario.name, 30)) \(pad(feed, 6)) radio learned: \(positioned.table.radio)")
        }
        print(
            "rooms: \(pad(scenario.name, 30)) \(pad(feed, 6)) \(reports.count) reports of \(count) tags over "
                + "\(format(simulation.duration / 60, 0)) simulated minutes, scored in \(format(elapsed, 1)) s"
        )
    }

    func score(
        _ score: inout Score, _ track: inout Tracking, shown: Int?, truth: Int?, oracle: Int?, still: Bool,
        at time: Double,
        step: Double
    ) {
        defer {
            track.shown = .some(shown)
            track.oracleRight = oracle == truth
        }
        if let truth {
            let wrong = shown != truth
            let decision = wrong && oracle == truth
            if still {
                score.stillTime += step
                if wrong { score.stillWrong += step }
                if decision { score.stillDecision += step }
            } else {
                score.walkerTime += step
                if wrong { score.walkerWrong += step }
                if decision { score.walkerDecision += step }
            }
            if shown == nil, let previous = track.shown, previous != nil { score.falseAways += 1 }
        }
        if still, let previous = track.shown, previous != shown { score.stillFlaps += 1 }
        if still, time >= score.wrongFrom, let truth, let shown, shown >= 0, shown != truth {
            let since = track.wrongSince ?? time
            track.wrongSince = since
            score.stillLongestWrong = max(score.stillLongestWrong, time - since)
            if truth == score.deadRoom { score.deadRoomLongestWrong = max(score.deadRoomLongestWrong, time - since) }
        } else {
            track.wrongSince = nil
        }
        // Hand-overs: from the true room's change to the system showing it, for stays of 30 s or more.
        if truth != track.truth {
            // Only where even the oracle is right at the end of the stay: elsewhere no rule can be.
            if track.truth != nil, time - track.since >= 30, !still, track.oracleRight {
                score.handOvers.append(track.caught ?? (time - track.since))
            }
            if truth == nil, track.truth != nil {
                track.awaySince = time
                track.awayCaught = false
            } else if truth != nil, let since = track.awaySince, !track.awayCaught {
                score.aways.append(time - since)
                track.awaySince = nil
            }
            (track.truth, track.since, track.caught) = (truth, time, nil)
        }
        if let truth, shown == truth, track.caught == nil { track.caught = time - track.since }
        if truth == nil, shown == nil, let since = track.awaySince, !track.awayCaught {
            score.aways.append(time - since)
            track.awayCaught = true
        }
    }

    /// The floor (storey) shown against the true one (`nil`: out of the building), on a building of
    /// several storeys.
    func scoreFloor(
        _ score: inout Score, _ track: inout Tracking, shown: Int?, truth: Int?, still: Bool, at time: Double,
        step: Double
    ) {
        if !still, truth == nil, let since = track.floorSince {
            // Out of the building before its new floor was shown: unshown for as long as it was in.
            score.floorHandOvers.append(time - since)
            track.floorSince = nil
        }
        if !still, let truth {
            if let previous = track.floorTruth, previous != truth {
                // Back before the last change was shown: that one counts as long as it went unshown.
                if let since = track.floorSince { score.floorHandOvers.append(time - since) }
                track.floorSince = time
            }
            track.floorTruth = truth
            if let since = track.floorSince, shown == truth {
                score.floorHandOvers.append(time - since)
                track.floorSince = nil
            }
        }
        if let truth {
            if still {
                score.stillFloorTime += step
                if shown == truth { score.stillFloorRight += step }
            } else {
                score.walkerFloorTime += step
                if shown == truth { score.walkerFloorRight += step }
            }
        }
        guard let shown else { return }
        if still, let last = track.floor, last != shown { score.stillFloorChanges += 1 }
        track.floor = shown
    }

    /// The corridor walk at 1 Hz (or the first scenario `--only` names) as a trace of scanner
    /// reports (docs/behaviour.md §19), and its ini with and without the floor plan (§20).
    func writeTrace(_ path: String) throws {
        let scenarios = Self.scenarios(scale: scale)
        guard var scenario = scenarios.first(where: { only.map($0.name.contains) ?? true }) else {
            throw ValidationError("--only \(only ?? ""): no scenario of that name")
        }
        scenario.simulation.walkers = 2
        scenario.simulation.stationary = 1
        let movers = scenario.simulation.movers()
        let heard = scenario.simulation.heard(movers)
        let text = scenario.simulation.trace(heard)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let extra = "Monitor.source = none\nMonitor.session = room-bench\n"
        let floor = scenario.simulation.floor
        try floor.ini(tags: movers.count, extra: extra).write(toFile: path + ".ini", atomically: true, encoding: .utf8)
        // The same floor with its plan: rooms from positions (docs/behaviour.md §20).
        try floor.ini(tags: movers.count, extra: extra, plan: true).write(
            toFile: path + ".plan.ini", atomically: true, encoding: .utf8)
        print(
            "rooms: \(heard.count) reports of \(movers.count) tags to \(path), its hsyco.ini to \(path).ini "
                + "(with its floor plan: \(path).plan.ini)")
    }
}

/// The `q` quantile of `values` (the nearest rank), 0 for none; the benchmarks' tables use it.
func quantile(_ values: [Double], _ q: Double) -> Double {
    guard !values.isEmpty else { return 0 }
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * q).rounded()))]
}

/// `text` padded with spaces to `width` columns.
func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
}

extension RoomQualityBench {
    /// How well each receiver's offset is learned, after the first 30 minutes, by two estimators:
    /// each scanner's 95th percentile of levels (tags passing close by), and the pairwise median of
    /// two scanners' readings of the same advertisement, solved by least squares (tags roaming the
    /// floor alike on both sides of every pair). Prints the true offsets (mean removed), each
    /// estimate's, and their RMS error in dB.
    func calibrationExperiment() {
        for scenario in Self.scenarios(scale: scale)
        where scenario.simulation.floor.scanners.contains(where: { $0.offset != 0 }) {
            var simulation = scenario.simulation
            simulation.duration = min(simulation.duration, 1800)
            let floor = simulation.floor
            let heard = simulation.heard(simulation.movers())
            let count = floor.scanners.count
            // Percentiles.
            var levels = Array(repeating: [Double](), count: count)
            for reading in heard { levels[reading.scanner].append(reading.rssi - simulation.power) }
            let percentile = levels.map { values -> Double in
                let sorted = values.sorted()
                return sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * 0.95))]
            }
            let median = percentile.sorted()[count / 2]
            let byPercentile = percentile.map { median - $0 }
            // Pairwise medians of the same advertisement (same tag, same instant).
            var differences = Array(repeating: Array(repeating: [Double](), count: count), count: count)
            var start = 0
            while start < heard.count {
                var end = start + 1
                while end < heard.count, heard[end].tag == heard[start].tag, heard[end].time == heard[start].time {
                    end += 1
                }
                for a in start..<end {
                    for b in start..<end where heard[a].scanner < heard[b].scanner {
                        differences[heard[a].scanner][heard[b].scanner].append(heard[a].rssi - heard[b].rssi)
                    }
                }
                start = end
            }
            // Least squares on o_a - o_b = -median(d_ab) (offsets added), by Gauss-Seidel sweeps.
            var learned = Array(repeating: 0.0, count: count)
            var pairs: [(a: Int, b: Int, d: Double, w: Double)] = []
            for a in 0..<count {
                for b in 0..<count where !differences[a][b].isEmpty {
                    let sorted = differences[a][b].sorted()
                    pairs.append((a, b, sorted[sorted.count / 2], Double(sorted.count).squareRoot()))
                }
            }
            for _ in 0..<200 {
                for scanner in 0..<count {
                    var sum = 0.0
                    var weight = 0.0
                    for pair in pairs where pair.a == scanner || pair.b == scanner {
                        // o_a - o_b should be -d: o_scanner from the other's.
                        let target = pair.a == scanner ? learned[pair.b] - pair.d : learned[pair.a] + pair.d
                        sum += target * pair.w
                        weight += pair.w
                    }
                    if weight > 0 { learned[scanner] = sum / weight }
                }
                let mean = learned.reduce(0, +) / Double(count)
                learned = learned.map { $0 - mean }
            }
            let truth = floor.scanners.map { -$0.offset }
            let mean = truth.reduce(0, +) / Double(count)
            let centred = truth.map { $0 - mean }
            func rms(_ estimate: [Double]) -> Double {
                let m = estimate.reduce(0, +) / Double(count)
                return
                    (zip(estimate.map { $0 - m }, centred).map { ($0 - $1) * ($0 - $1) }.reduce(0, +) / Double(count))
                    .squareRoot()
            }
            print("calibration: \(scenario.name): true \(centred.map { format($0, 1) })")
            print(
                "calibration:   95th percentile \(byPercentile.map { format($0, 1) }) RMS \(format(rms(byPercentile), 2)) dB"
            )
            print("calibration:   pairwise median \(learned.map { format($0, 1) }) RMS \(format(rms(learned), 2)) dB")
            print("calibration:   none RMS \(format(rms(Array(repeating: 0, count: count)), 2)) dB")
        }
    }
}
