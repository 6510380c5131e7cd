import BeaconCore
import RegionMonitor
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Two daemons of one cluster (docs/behaviour.md §21, docs/failover.md) through a real mosquitto, with an
/// OwnTracks phone (the app as SimulatedPhone models it), a Theengs tracker and an ESPresense
/// tag: the active is killed, the standby takes over from the state it was shipped, the old
/// active comes back as a standby, and the broker restarts.
@Suite(.serialized) struct ClusterRunTests {
    typealias Subscriber = MQTTRunTests.Subscriber
    typealias Handset = OwnTracksRunTests.Handset
    static let rooms = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
    static let badge = "fda50693-a4e2-4fb1-afcf-c6eb07647825"

    /// The daemon `member`'s configuration: two Areas for the phone, a beacon for the tracker,
    /// three rooms with an ESPresense node each for the tags; presence that outlasts the test.
    static func ini(port: Int32, member: String) -> String {
        OwnTracksRunTests.ini(port: port, areas: 2).replacingOccurrences(
            of: "Monitor.exitTimeout = 3", with: "Monitor.exitTimeout = 120")
                + """
                LocationBaseBeacon.901 = \(rooms),1,1
                LocationBaseBeacon.902 = \(rooms),2,1
                LocationBaseBeacon.903 = \(rooms),3,1
                LocationAreaName.\(rooms) = Flat
                LocationZoneName.\(rooms):1 = Kitchen
                LocationZoneName.\(rooms):2 = Hall
                LocationZoneName.\(rooms):3 = Office
                LocationScanner.901 = kitchen
                LocationScanner.902 = hall
                LocationScanner.903 = office
                Scanners.espresense = espresense/devices/+/+
                Tag.anna = ibeacon:\(badge.uppercased()):7:1, Anna's badge
                Tag.ben = ibeacon:\(badge.uppercased()):7:2, Ben's badge
                Tags.exitTimeout = 120
                Fleet.theengs = home/+/BTtoMQTT/#
                MQTT.clientId = \(member)
                Cluster.name = hall

                """
    }

    /// A daemon of the pair: its folder, and its process while it runs.
    final class Member {
        let name: String
        let folder: URL
        var process: Process?
        var starts = 0

        init(_ name: String, port: Int32) throws {
            self.name = name
            folder = try scratchFolder("cluster-\(name)")
            try ClusterRunTests.ini(port: port, member: name).write(
                to: folder.appendingPathComponent("hsyco.ini"), atomically: true, encoding: .utf8)
        }

        func start() throws {
            starts += 1
            let process = Process()
            process.currentDirectoryURL = folder
            process.executableURL = DecodeCommandTests.productsDirectory.appendingPathComponent("beaconwatch")
            process.arguments = [
                "run", "--web-listen", "127.0.0.1:0", "--config", "hsyco.ini", "--events", "events.jsonl",
                "--log-level", "info",
            ]
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            try Eventually.start(process, loggingTo: log)
            self.process = process
        }

        /// The log of the present run.
        var log: URL { folder.appendingPathComponent("daemon-\(starts).log") }
        var logText: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

        /// The position of its state in the cluster's steps, read as another program would.
        var position: String {
            let python = Process()
            python.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            python.arguments = [
                "-c",
                "import sqlite3,sys; c=sqlite3.connect('file:'+sys.argv[1]+'?mode=ro', uri=True); print(c.execute('SELECT epoch, step FROM clusterPosition').fetchone())",
                folder.appendingPathComponent("state.sqlite").path,
            ]
            let output = Pipe()
            python.standardOutput = output
            python.standardError = FileHandle.nullDevice
            guard (try? python.run()) != nil else { return "" }
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            python.waitUntilExit()
            return text
        }

        /// The port of the web view it serves now (the standby's, or the active's full one).
        var webPort: Int? {
            logText.split(separator: "\n").last { $0.contains("web view at http://127.0.0.1:") }
                .flatMap { $0.split(separator: ":").last }
                .flatMap { Int($0.prefix { $0.isNumber }) }
        }

        /// The files its process holds open now.
        var openFiles: [String] {
            guard let process,
                let entries = try? FileManager.default.contentsOfDirectory(
                    atPath: "/proc/\(process.processIdentifier)/fd")
            else { return [] }
            return entries.compactMap {
                try? FileManager.default.destinationOfSymbolicLink(
                    atPath: "/proc/\(process.processIdentifier)/fd/\($0)")
            }
        }

        func kill(_ signal: Int32) async throws {
            guard let process else { return }
            Glibc.kill(process.processIdentifier, signal)
            try await Subscriber.until("\(name) to exit") { !process.isRunning }
            self.process = nil
        }
    }

    /// What an ESPresense node publishes for a tag it hears (docs/espresense.md).
    static func espresense(_ watcher: Subscriber, node: String, tag minor: Int, rssi: Int) throws {
        let payload =
            #"{"mac":"4a1b2c3d4e5f","id":"iBeacon:\#(badge)-7-\#(minor)","rssi@1m":-59,"rssi":\#(rssi),"rxAdj":0,"rssiVar":1.20,"distance":1.10,"var":0.20,"int":2000}"#
        _ = try watcher.client.publish(
            topic: "espresense/devices/iBeacon:\(badge)-7-\(minor)/\(node)", payload: Array(payload.utf8), qos: 1,
            retain: false)
    }

    /// A tracker's (Theengs) sighting of the Area 2 beacon.
    static func tracker(_ watcher: Subscriber, rssi: Int) throws {
        _ = try watcher.client.publish(
            topic: "home/cart-7/BTtoMQTT/0A0B0C0D0E0F",
            payload: Array(
                FleetRunTests.theengs(OwnTracksRunTests.uuids[1].uuidString, 1, 1, rssi: rssi).utf8),
            qos: 1, retain: false)
    }

    /// A device's zone and area transitions, each once however often the broker delivered it,
    /// as `enter|exit name-or-region`.
    static func transitions(_ watcher: Subscriber, _ device: String) -> [String] {
        OutboxTests.firstArrivals(watcher.payloads("/\(device)/transition")).compactMap { payload in
            guard let object = try? JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any],
                object["kind"] as? String != "beacon"
            else { return nil }
            return "\(object["type"] ?? "") \(object["name"] as? String ?? object["region"] as? String ?? "")"
        }
    }

    /// Lets the phone take what comes until it has made `count` transitions and holds what the
    /// daemon monitors for it (as OwnTracksRunTests' walk settles before each move).
    static func settle(_ what: String, _ phone: Handset, _ watcher: Subscriber, _ count: Int) async throws {
        try await Subscriber.until(what) {
            _ = try? phone.pump()
            guard let last = watcher.payloads("/alice-phone/monitoring").last,
                let object = try? JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any],
                let regions = object["regions"] as? [String]
            else { return false }
            return transitions(watcher, "alice-phone").count == count
                && Set(regions.compactMap { Region($0) }) == phone.phone.beaconRegions
        }
    }

    /// How many times the daemons said `online` (each active's start).
    static func online(_ watcher: Subscriber) -> Int { watcher.payloads("hq/status").filter { $0 == "online" }.count }

    /// A starts alone and becomes the active; B, started then, is its standby.
    static func start(_ a: Member, then b: Member, _ watcher: Subscriber) async throws {
        try a.start()
        try await Subscriber.until("A active and online") { online(watcher) == 1 }
        try b.start()
        try await Subscriber.until("B a standby") { b.logText.contains("standby web view at") }
    }

    /// Whether, per region, the transitions alternate enter, exit, enter … from an enter.
    static func alternate(_ transitions: [String]) -> Bool {
        var inside: [String: Bool] = [:]
        for transition in transitions {
            let parts = transition.split(separator: " ", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { return false }
            let entering = parts[0] == "enter"
            guard inside[parts[1], default: false] != entering else { return false }
            inside[parts[1]] = entering
        }
        return true
    }

    @Test func theStandbyTakesOverAKilledActiveRepeatingNothingAndTheOldActiveComesBackAsAStandby()
        async throws
    {
        let broker = try Broker()
        let watcher = try await Subscriber(port: broker.port, filter: "beaconwatch/#")
        defer { watcher.client.shutdown() }

        let alice = try await Handset(
            SimulatedPhone(base: "owntracks/alice/phone", lastFix: Date().timeIntervalSince1970), port: broker.port)
        defer { alice.shutdown() }
        let (a, b) = (try Member("bw-a", port: broker.port), try Member("bw-b", port: broker.port))
        defer {
            for member in [a, b] { if let process = member.process { Glibc.kill(process.processIdentifier, SIGKILL) } }
        }
        func online() -> Int { Self.online(watcher) }
        try await Self.start(a, then: b, watcher)
        // The standby is healthy and says so; its metrics give its role.
        let standbyPort = try #require(b.webPort)
        let health = try await HTTPProbe.request("GET", "/healthz", port: standbyPort)
        #expect(health.status == 200 && health.body == "standby\n")
        let metrics = try await HTTPProbe.request("GET", "/metrics", port: standbyPort)
        #expect(metrics.body.contains("beaconwatch_cluster_active 0"), "\(metrics.body)")
        #expect((try await HTTPProbe.request("GET", "/", port: standbyPort)).status == 503)
        // `systemctl reload` on the standby: said, and it lives on (SIGHUP's default would end it).
        if let process = b.process { Glibc.kill(process.processIdentifier, SIGHUP) }
        try await Subscriber.until("B's word on SIGHUP") { b.logText.contains("SIGHUP: a standby reads") }
        #expect(b.process?.isRunning == true)
        // On the active, the cluster's service (the signal's one owner) hands it to the active
        // life's reloader: one reload.
        if let process = a.process { Glibc.kill(process.processIdentifier, SIGHUP) }
        try await Subscriber.until("A's reload on SIGHUP") { a.logText.contains("configuration reloaded") }
        #expect(a.logText.components(separatedBy: "configuration reloaded").count == 2, "\(a.logText)")
        #expect(a.logText.contains("SIGHUP") && a.process?.isRunning == true)

        // Every kind of device in a region.
        try alice.locate()
        try await Self.settle("the phone given its regions", alice, watcher, 0)
        try await Subscriber.until("the phone's waypoints answered") {
            _ = try? alice.pump()
            return alice.phone.waypointsAnswers > 0
        }
        try alice.move(to: [OwnTracksRunTests.beacon(1, 5): 1.2])
        try Self.espresense(watcher, node: "kitchen", tag: 1, rssi: -55)
        try Self.tracker(watcher, rssi: -65)
        try await Self.settle("the phone inside", alice, watcher, 2)
        try await Subscriber.until("the tag and the tracker inside") {
            Self.transitions(watcher, "anna").contains("enter Kitchen") && watcher.payloads("cart-7/event").count == 1
        }
        // The standby holds what the active committed (no wall-clock wait: the positions tell).
        try await Subscriber.until("B at A's position") { !a.position.isEmpty && a.position == b.position }

        // The active dies. The standby takes over within the issue's 5 s (its first `online`).
        let killed = ContinuousClock.now
        try await a.kill(SIGKILL)
        try await Subscriber.until("B active and online", within: 20) { online() == 2 }
        let takeover = ContinuousClock.now - killed
        #expect(takeover < .seconds(5), "took over after \(takeover)")
        #expect(b.logText.contains("cluster: active (2 bw-b)"))
        try await Subscriber.until("B's full web view") { b.logText.contains("] web view at") }
        let activePort = try #require(b.webPort)
        #expect(try await HTTPProbe.request("GET", "/healthz", port: activePort).body == "ok\n")
        #expect(
            try await HTTPProbe.request("GET", "/metrics", port: activePort).body.contains(
                "beaconwatch_cluster_active 1"))

        // The same sightings again change nothing; new ones are told once.
        try Self.espresense(watcher, node: "kitchen", tag: 1, rssi: -55)
        try Self.tracker(watcher, rssi: -65)
        try Self.tracker(watcher, rssi: -85)
        for _ in 0..<3 {
            try Self.espresense(watcher, node: "office", tag: 1, rssi: -50)
            try Self.espresense(watcher, node: "kitchen", tag: 1, rssi: -90)
        }
        try alice.move(to: [OwnTracksRunTests.beacon(1, 20): 0.8])
        try await Self.settle("the phone in another Zone", alice, watcher, 4)
        try await Subscriber.until("the new sightings told") {
            Self.transitions(watcher, "anna").contains("enter Office")
                && OutboxTests.firstArrivals(watcher.payloads("cart-7/event")).count == 2
        }
        // Out of the Zone at once; the Area lasts Monitor.exitTimeout after its last beacon.
        try alice.move(to: [:])
        try await Self.settle("the phone out of its Zone", alice, watcher, 5)

        // The old active comes back: a standby, which B's state replaces.
        try a.start()
        try await Subscriber.until("A a standby again") { a.logText.contains("cluster: standby") }
        try await Subscriber.until("A at B's position") { !b.position.isEmpty && a.position == b.position }

        // The broker restarts: B stays the active, A the standby; inputs go on once.
        try await broker.stop()
        try broker.start()
        try await Subscriber.until("B online again") { online() >= 3 }
        try Self.espresense(watcher, node: "hall", tag: 2, rssi: -52)
        try await Subscriber.until("Ben in the hall") { Self.transitions(watcher, "ben").contains("enter Hall") }

        // Nothing repeated, nothing lost, one active throughout.
        let anna = Self.transitions(watcher, "anna")
        #expect(anna == ["enter Flat", "enter Kitchen", "exit Kitchen", "enter Office"], "\(anna)")
        #expect(Self.transitions(watcher, "ben") == ["enter Flat", "enter Hall"])
        let phone = Self.transitions(watcher, "alice-phone")
        #expect(Self.alternate(phone), "\(phone)")
        let cart = OutboxTests.firstArrivals(watcher.payloads("cart-7/event"))
        #expect(cart.count == 2 && cart[0].contains(#""distance":"near""#) && cart[1].contains(#""distance":"far""#))
        #expect(!a.logText.contains("cluster: active"), "\(a.logText)")
        #expect(!b.logText.contains("stepping down"), "\(b.logText)")

        try await a.kill(SIGTERM)
        try await b.kill(SIGTERM)
    }

    /// An active frozen past the silence (a stopped VM, a process stopped by a debugger): the
    /// standby takes over on the missing beats; the old active, resumed, hears it, steps down,
    /// tells nothing of its own (what it would commit now the broker does not hold before it
    /// hears the new leader), and lets go of its active life (its `--events` file among it).
    @Test func anActiveFrozenPastTheSilenceStepsDownTellingNothingTwiceAndLetsGoOfItsLife() async throws {
        let broker = try Broker()
        let watcher = try await Subscriber(port: broker.port, filter: "beaconwatch/#")
        defer { watcher.client.shutdown() }
        let (a, b) = (try Member("bw-a", port: broker.port), try Member("bw-b", port: broker.port))
        defer {
            for member in [a, b] { if let process = member.process { Glibc.kill(process.processIdentifier, SIGKILL) } }
        }
        func online() -> Int { Self.online(watcher) }
        try await Self.start(a, then: b, watcher)
        try Self.espresense(watcher, node: "kitchen", tag: 1, rssi: -55)
        try await Subscriber.until("Anna in the kitchen") {
            Self.transitions(watcher, "anna").contains("enter Kitchen")
        }
        try await Subscriber.until("B at A's position") { !a.position.isEmpty && a.position == b.position }
        #expect(a.openFiles.contains { $0.hasSuffix("/events.jsonl") })

        // A freezes; B hears no beat and takes over. Anna walks to the office meanwhile: both
        // get the sightings (A's wait in its socket until it runs again).
        let frozen = try #require(a.process?.processIdentifier)
        Glibc.kill(frozen, SIGSTOP)
        try await Subscriber.until("B active and online", within: 20) { online() == 2 }
        for _ in 0..<3 {
            try Self.espresense(watcher, node: "office", tag: 1, rssi: -50)
            try Self.espresense(watcher, node: "kitchen", tag: 1, rssi: -90)
        }
        try await Subscriber.until("Anna in the office") { Self.transitions(watcher, "anna").contains("enter Office") }
        Glibc.kill(frozen, SIGCONT)
        try await Subscriber.until("A a standby again") { a.logText.contains("stepping down") }
        try await Subscriber.until("A's active life let go of") {
            !a.openFiles.contains { $0.hasSuffix("/events.jsonl") }
        }
        #expect(b.process?.isRunning == true && b.logText.contains("cluster: active (2 bw-b)"))
        let anna = Self.transitions(watcher, "anna")
        #expect(anna == ["enter Flat", "enter Kitchen", "exit Kitchen", "enter Office"], "\(anna)")
        try await a.kill(SIGTERM)
        try await b.kill(SIGTERM)
    }
}
