import BeaconCore
import Fleet
import Foundation
import MQTT
import RegionMonitor
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// OwnTracks phones on a real iPhone's terms (docs/behaviour.md §15.1), against a real mosquitto and the daemon:
/// two phones that behave as the OwnTracks app does (``SimulatedPhone``), each on its own
/// persistent MQTT session, walk a building of 26 Zones in 4 Areas (one Area of exactly 20).
@Suite(.serialized) struct OwnTracksRunTests {
    typealias Subscriber = MQTTRunTests.Subscriber
    static let uuids = [
        "112EBB9D-B8C9-4ABD-9EB3-43578BF86A41", "22A17B43-552A-4482-865F-597D4C10BACC",
        "3C1D2E4F-0A1B-4C2D-8E3F-405162738495", "4D5E6F70-8192-43A4-B5C6-D7E8F9A0B1C2",
        "5E6F7081-92A3-44B5-86C7-D8E9FAB0C1D2",
    ].map { UUID(uuidString: $0)! }
    /// Zones per Area: 20, 3, 2, 1 (and a fifth Area a reload adds).
    static let zones = [20, 3, 2, 1, 1]

    /// The building and the daemon's settings; `areas` Areas of it.
    static func ini(port: Int32, areas: Int = 4) -> String {
        var lines: [String] = []
        for area in 0..<areas {
            for zone in 1...zones[area] {
                lines.append(
                    "LocationBaseBeacon.\(area + 1)\(String(format: "%02d", zone)) = \(uuids[area].uuidString),\(zone),1"
                )
            }
        }
        lines += [
            "Monitor.userid = hq", "Monitor.source = none", "Monitor.mode = foreground", "Monitor.rssiFilter = none",
            "Monitor.hysteresis = 0",
            // A Zone's presence here is the phone's own (enter to leave); an Area's lasts this long
            // after the last `beacon` message of its beacons (docs/behaviour.md §15.1), which a walk
            // from one Area into another waits for.
            "Monitor.exitTimeout = 3", "MQTT.host = 127.0.0.1", "MQTT.port = \(port)", "MQTT.keepalive = 5",
            "MQTT.homeassistant = false", "State.database = state.sqlite", "Fleet.owntracks = owntracks/+/+",
            // The phones' last fixes may be old: their messages' created_at says when they were made.
            "Fleet.maxAge = 10",
        ]
        return lines.joined(separator: "\n") + "\n"
    }

    static func beacon(_ area: Int, _ zone: Int) -> BeaconID {
        BeaconID(uuid: uuids[area - 1], major: UInt16(zone), minor: 1)
    }

    /// A phone on its own persistent MQTT session: it takes the commands on its `…/cmd` in order
    /// and publishes what it answers, as the app does.
    final class Handset: Sendable {
        let state: Mutex<(phone: SimulatedPhone, taken: Int)>
        let port: Int32
        let clientID: String
        let session: Mutex<Subscriber?>

        init(_ phone: SimulatedPhone, port: Int32) async throws {
            state = Mutex((phone, 0))
            self.port = port
            clientID = "ot-" + phone.base.replacingOccurrences(of: "/", with: "-")
            session = Mutex(try await Subscriber(port: port, filter: phone.base + "/cmd", persistentAs: clientID))
        }

        var phone: SimulatedPhone { state.withLock { $0.phone } }
        var id: String { phone.base.split(separator: "/").dropFirst().joined(separator: "-") }
        /// Commands received on the present connection.
        var received: [String] { session.withLock { $0?.payloads("/cmd") ?? [] } }

        func publish(_ messages: [SimulatedPhone.Published]) throws {
            guard let client = session.withLock({ $0?.client }) else { return }
            for message in messages {
                _ = try client.publish(
                    topic: message.topic, payload: Array(message.payload.utf8), qos: 1, retain: false)
            }
        }

        /// Takes every command that came, publishing the answers; returns whether all are taken.
        @discardableResult
        func pump() throws -> Bool {
            let commands = received
            let now = Date().timeIntervalSince1970
            var answers: [SimulatedPhone.Published] = []
            state.withLock { state in
                while state.taken < commands.count {
                    answers += state.phone.receive(
                        topic: state.phone.base + "/cmd", payload: commands[state.taken], now: now)
                    state.taken += 1
                }
            }
            try publish(answers)
            return true
        }

        func move(to beacons: [BeaconID: Double]) throws {
            let now = Date().timeIntervalSince1970
            let published = state.withLock { $0.phone.move(to: beacons, now: now) }
            try publish(published)
        }

        func locate() throws {
            try publish([phone.location(now: Date().timeIntervalSince1970)])
        }

        /// The phone's connection drops; the broker keeps its session.
        func disconnect() {
            let old = session.withLock { session -> Subscriber? in
                defer { session = nil }
                return session
            }
            old?.client.shutdown()
            state.withLock { $0.taken = 0 }
        }

        /// It connects again on its session: what was sent meanwhile comes now.
        func reconnect() async throws {
            let fresh = try await Subscriber(port: port, filter: phone.base + "/cmd", persistentAs: clientID)
            session.withLock { $0 = fresh }
        }

        func shutdown() { session.withLock { $0?.client.shutdown() } }
    }

    /// A daemon, its broker, its watcher and two phones: Alice (a last fix 10 minutes old) and Bob
    /// (three geofences of his own).
    final class Building {
        let broker: Broker
        let folder: URL
        let watcher: Subscriber
        let alice: Handset
        let bob: Handset
        var daemon: Process?

        init(extra: String = "") async throws {
            broker = try Broker()
            folder = try scratchFolder("owntracks")
            try (OwnTracksRunTests.ini(port: broker.port) + extra).write(
                to: folder.appendingPathComponent("hsyco.ini"), atomically: true, encoding: .utf8)
            watcher = try await Subscriber(port: broker.port, filter: "beaconwatch/#")
            let now = Date().timeIntervalSince1970
            alice = try await Handset(
                SimulatedPhone(base: "owntracks/alice/phone", lastFix: now - 600), port: broker.port)
            bob = try await Handset(
                SimulatedPhone(base: "owntracks/bob/phone", lastFix: now, geofences: ["Home", "Gym", "Office"]),
                port: broker.port)
        }

        var phones: [Handset] { [alice, bob] }

        func start() async throws {
            let online = watcher.payloads("hq/status").filter { $0 == "online" }.count
            daemon = try FleetRunTests.daemon(in: folder)
            try await Subscriber.until("the daemon online") {
                watcher.payloads("hq/status").filter { $0 == "online" }.count > online
            }
        }

        func stop() async throws {
            guard let daemon else { return }
            kill(daemon.processIdentifier, SIGTERM)
            try await Subscriber.until("the daemon to exit") { !daemon.isRunning }
            #expect(daemon.terminationStatus == 0)
            self.daemon = nil
        }

        /// The daemon's latest monitored set for `device`.
        func monitored(_ device: String) -> Set<Region>? {
            guard let last = watcher.payloads("/\(device)/monitoring").last,
                let object = try? JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any],
                let regions = object["regions"] as? [String]
            else { return nil }
            return Set(regions.compactMap { Region($0) })
        }

        /// `device`'s transitions, as `enter <region>`.
        func transitions(_ device: String) -> [String] {
            watcher.payloads("/\(device)/transition").map { payload in
                let object = (try? JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any]) ?? [:]
                return "\(object["type"] ?? "") \(object["region"] ?? "")"
            }
        }

        /// Lets the phones take what comes until each has made `counts` transitions (in all) and
        /// holds exactly what the daemon monitors for it.
        func settle(_ what: String, _ counts: [String: Int]) async throws {
            try await Subscriber.until(what) {
                for phone in phones { _ = try? phone.pump() }
                return phones.filter { counts[$0.id] != nil }.allSatisfy { phone in
                    let id = phone.id
                    return transitions(id).count == counts[id] && monitored(id) == phone.phone.beaconRegions
                        && phone.phone.beaconRegions.count > 0
                }
            }
            for phone in phones {
                #expect(phone.phone.most <= SimulatedPhone.iOSLimit, "\(phone.id) was asked for \(phone.phone.most)")
            }
        }

        /// The device's outputs in the events file, without what depends on when they were made,
        /// and without a `monitoring` that repeats the set before it (a start announces its set).
        func outputs(of device: String) -> [String] {
            var previous: String?
            return FleetRunTests.outputs(of: device, in: folder).filter { line in
                guard line.contains(#""type":"monitoring""#) else { return true }
                defer { previous = line }
                return line != previous
            }
        }

        func close() {
            watcher.client.shutdown()
            alice.shutdown()
            bob.shutdown()
        }
    }

    /// The walk: both phones come, go into Areas 1 and 2 and out again. A `restart` stops and
    /// starts the daemon while both stand still. Returns each phone's transitions and the
    /// commands it received after the restart.
    static func walk(restart: Bool) async throws -> (building: Building, afterRestart: [String: Int]) {
        let building = try await Building()
        let (alice, bob) = (building.alice, building.bob)
        try await building.start()
        try alice.locate()
        try bob.locate()
        try await building.settle("the four Areas on both phones", ["alice-phone": 0, "bob-phone": 0])
        // Each phone has answered the daemon's request for its waypoints before it moves: what
        // comes of the answer (Bob's cap of 17) is then the same in every run.
        try await Subscriber.until("both phones answered the request for their waypoints") {
            for phone in building.phones { _ = try? phone.pump() }
            return building.phones.allSatisfy { $0.phone.waypointsAnswers > 0 }
        }
        #expect(alice.phone.beaconRegions == Set(uuids.prefix(4).map { Region.area($0) }))

        // Into the Area of 20 Zones: Alice is given all 20 (4 regions to 20).
        try alice.move(to: [beacon(1, 5): 1.2])
        try await building.settle("Alice in 1:5", ["alice-phone": 2, "bob-phone": 0])
        #expect(alice.phone.beaconRegions.count == 20 && alice.phone.iOS.count == 20)
        // iOS knows each region by the name the app took from its desc: Beacons' would be
        // `bw<Location ID>`, an Area's or Zone's `bw` and 12 hex digits, all different.
        #expect(alice.phone.iOS.keys.allSatisfy { $0.hasPrefix("bw") && $0.count == 14 })
        // Bob has 3 geofences: he is given 17, with the Zone he stands in.
        try bob.move(to: [beacon(1, 3): 2.5])
        try await building.settle("Bob in 1:3", ["alice-phone": 2, "bob-phone": 2])
        #expect(bob.phone.beaconRegions.count == 17 && bob.phone.iOS.count == 20)
        // The HSYCO set for a cap of 17: the Zone sighted, then the others in file order.
        #expect(bob.phone.beaconRegions == Set((1...17).map { Region.zone(uuids[0], major: UInt16($0)) }))

        try alice.move(to: [beacon(1, 20): 0.8])
        try await building.settle("Alice in 1:20", ["alice-phone": 4, "bob-phone": 2])
        try bob.move(to: [beacon(2, 2): 1.5])
        try await building.settle("Bob in 2:2", ["alice-phone": 4, "bob-phone": 6])
        #expect(bob.phone.beaconRegions == Set((1...3).map { Region.zone(uuids[1], major: UInt16($0)) }))
        // Ranging goes `off` exitTimeout after a beacon's last message: waited for, so that both
        // walks (with a restart and without) have said it before going on.
        try await Subscriber.until("both phones' last beacons ranged off") {
            func off(_ device: String, _ zone: String) -> Bool {
                building.outputs(of: device).contains {
                    $0.contains("\"distance\":\"off\"") && $0.contains("\"zone\":\"\(zone)\"")
                }
            }
            return off("alice-phone", "120") && off("bob-phone", "202")
        }

        var afterRestart: [String: Int] = [:]
        if restart {
            let before = Dictionary(uniqueKeysWithValues: building.phones.map { ($0.id, $0.received.count) })
            try await building.stop()
            try await building.start()
            // Whatever the restart would send has had the time to come: the next moves' commands
            // come after it on the same session.
            try alice.move(to: [beacon(1, 20): 0.8])
            try await building.settle("Alice still in 1:20 after the restart", ["alice-phone": 4, "bob-phone": 6])
            for phone in building.phones { afterRestart[phone.id] = phone.received.count - (before[phone.id] ?? 0) }
        }

        try alice.move(to: [:])
        try await building.settle("Alice out", ["alice-phone": 6, "bob-phone": 6])
        try bob.move(to: [:])
        try await building.settle("Bob out", ["alice-phone": 6, "bob-phone": 8])
        #expect(alice.phone.beaconRegions == Set(uuids.prefix(4).map { Region.area($0) }))
        return (building, afterRestart)
    }

    /// Both phones hold the HSYCO monitored set for a cap of 20 less their own waypoints after
    /// every change, never more than 20 regions; each enter and leave reaches its region; Alice,
    /// whose last fix is 10 minutes old, is tracked with `Fleet.maxAge = 10`.
    @Test func twoPhonesWalkABuildingOfMoreThan20Zones() async throws {
        let (building, _) = try await Self.walk(restart: false)
        let (a1, a2) = (Self.uuids[0], Self.uuids[1])
        #expect(
            building.transitions("alice-phone") == [
                "enter \(a1)", "enter \(a1):5", "enter \(a1):20", "exit \(a1):5", "exit \(a1):20", "exit \(a1)",
            ])
        #expect(
            building.transitions("bob-phone") == [
                "enter \(a1)", "enter \(a1):3", "exit \(a1):3", "exit \(a1)", "enter \(a2)", "enter \(a2):2",
                "exit \(a2):2", "exit \(a2)",
            ])
        try await building.stop()
        let log = try String(contentsOf: building.folder.appendingPathComponent("daemon.log"), encoding: .utf8)
        #expect(!log.contains("ignored a message") && !log.contains("were dropped"), "\(log)")
        building.close()
    }

    /// A daemon restarted while both phones stand still sends no command and repeats no `enter`:
    /// the walk's outputs are those of the same walk without the restart.
    @Test func aRestartMidWalkSendsNothingAndRepeatsNothing() async throws {
        let (straight, _) = try await Self.walk(restart: false)
        try await straight.stop()
        let (restarted, afterRestart) = try await Self.walk(restart: true)
        try await restarted.stop()
        #expect(afterRestart == ["alice-phone": 0, "bob-phone": 0])
        for device in ["alice-phone", "bob-phone"] {
            #expect(restarted.transitions(device) == straight.transitions(device), "\(device)")
            #expect(restarted.outputs(of: device) == straight.outputs(of: device), "\(device)")
        }
        straight.close()
        restarted.close()
    }

    /// Both models in one daemon (docs/behaviour.md §19): Alice's phone walks in as the app does while two
    /// badges are heard by ESPresense nodes in Zones 1 and 2 of the same Area; each device has its
    /// own transitions under its own topic, and the phone gets no command because of the tags.
    @Test func aPhoneAndTwoTagsInOneDaemonEachHaveTheirOwnOutputs() async throws {
        let badge = "FDA50693-A4E2-4FB1-AFCF-C6EB07647825"
        let building = try await Building(
            extra:
                "LocationScanner.101 = lobby\nLocationScanner.102 = lab\nScanners.espresense = espresense/devices/+/+\n"
                + "Tag.badge-1 = ibeacon:\(badge):7:1\nTag.badge-2 = ibeacon:\(badge):7:2\n")
        let alice = building.alice
        try await building.start()
        try alice.locate()
        try await building.settle("the four Areas", ["alice-phone": 0])
        try alice.move(to: [Self.beacon(1, 5): 1.2])
        try await building.settle("Alice in 1:5", ["alice-phone": 2])
        let commands = alice.received.count
        for (tag, scanner) in [
            ("iBeacon:\(badge.lowercased())-7-1", "lobby"), ("iBeacon:\(badge.lowercased())-7-2", "lab"),
        ] {
            _ = try building.watcher.client.publish(
                topic: "espresense/devices/\(tag)/\(scanner)",
                payload: Array(#"{"id":"\#(tag)","rssi":-60.00,"rssi@1m":-59}"#.utf8),
                qos: 1, retain: false)
        }
        let area = Self.uuids[0].uuidString
        try await Subscriber.until("both badges in their Zones") {
            building.transitions("badge-1").contains("enter \(area):1")
                && building.transitions("badge-2").contains("enter \(area):2")
        }
        #expect(building.transitions("badge-1") == ["enter \(area)", "enter \(area):1"])
        #expect(building.transitions("badge-2") == ["enter \(area)", "enter \(area):2"])
        #expect(building.transitions("alice-phone") == ["enter \(area)", "enter \(area):5"])
        #expect(building.watcher.payloads("/badge-1/event").allSatisfy { $0.contains(#""device":"badge-1""#) })
        #expect(alice.received.count == commands)
        try await building.stop()
        building.close()
    }

    /// A phone away (its connection down) when its regions change gets the command when it comes
    /// back, on its persistent session: here a reload adds an Area while Bob is away.
    @Test func anOfflinePhoneGetsTheCommandSentWhileItWasAway() async throws {
        let building = try await Building()
        try await building.start()
        try building.alice.locate()
        try building.bob.locate()
        try await building.settle("the four Areas", ["alice-phone": 0, "bob-phone": 0])
        building.bob.disconnect()
        try Self.ini(port: building.broker.port, areas: 5).write(
            to: building.folder.appendingPathComponent("hsyco.ini"), atomically: true, encoding: .utf8)
        let daemon = try #require(building.daemon)
        kill(daemon.processIdentifier, SIGHUP)
        let five = Set(Self.uuids.map { Region.area($0) })
        try await Subscriber.until("Alice given the fifth Area") {
            _ = try? building.alice.pump()
            return building.alice.phone.beaconRegions == five && building.monitored("bob-phone") == five
        }
        #expect(building.bob.phone.beaconRegions.count == 4)
        try await building.bob.reconnect()
        try await Subscriber.until("Bob given the fifth Area on coming back") {
            _ = try? building.bob.pump()
            return building.bob.phone.beaconRegions == five
        }
        try await building.stop()
        building.close()
    }

    /// A database of the version before, whose phone holds `bw:<region>` waypoints: the start
    /// sends one command that deletes them by the rid the app derived and adds the named ones.
    @Test func aDatabaseWithWaypointsOfTheEarlierFormIsUpgraded() async throws {
        let building = try await Building()
        try await building.start()
        try building.alice.locate()
        try await building.settle("the four Areas", ["alice-phone": 0])
        try await building.stop()
        // The database as v7 left it: the phone's regions as `bw:` waypoints, no own radio's row.
        let areas = Self.uuids.prefix(4).map { Region.area($0) }
        let old = areas.map { region in
            #"{"_type":"waypoint","desc":"bw:\#(region)","lat":0,"lon":0,"rad":0,"tst":\#(Waypoints.tst(of: region)),"uuid":"\#(region.uuid.uuidString)"}"#
        }
        let script = """
            import sqlite3,sys; c=sqlite3.connect(sys.argv[1])
            for version in ["v8", "v9", "v10", "v11", "v12", "v13"]:
                c.execute("DELETE FROM grdb_migrations WHERE identifier LIKE ?", (version + ":%",))
            c.execute("DROP TABLE clusterPosition")
            c.execute("DROP TABLE clusterLocal")
            c.execute("DROP TABLE scannerLevel")
            c.execute("DROP TABLE fingerprint")
            c.execute("ALTER TABLE deviceRecord RENAME TO fleetDevice")
            c.execute("DELETE FROM fleetDevice WHERE device = ''")
            for column in ["waypointForm", "ownWaypoints", "presence"]:
                c.execute("ALTER TABLE fleetDevice DROP COLUMN " + column)
            c.execute("UPDATE fleetDevice SET waypoints = ? WHERE device = 'alice-phone'", (sys.argv[2],))
            c.commit()
            """
        let sqlite = try await Child.run(
            URL(fileURLWithPath: "/usr/bin/python3"),
            [
                "-c", script, building.folder.appendingPathComponent("state.sqlite").path,
                areas.map(\.description).joined(separator: "\n"),
            ])
        #expect(sqlite.status == 0, "\(sqlite.stderr)")
        // The phone as the version before left it: four waypoints named "bw", one iOS region.
        let command =
            #"{"_type":"cmd","action":"setWaypoints","waypoints":{"_type":"waypoints","waypoints":[\#(old.joined(separator: ","))]}}"#
        var phone = SimulatedPhone(base: "owntracks/alice/phone", lastFix: Date().timeIntervalSince1970)
        _ = phone.receive(topic: "owntracks/alice/phone/cmd", payload: command, now: Date().timeIntervalSince1970)
        #expect(phone.regions.count == 4 && phone.iOS.count == 1)
        let taken = building.alice.received.count
        building.alice.state.withLock { $0 = (phone, taken) }
        try await building.start()
        try await Subscriber.until("the upgrade's command") {
            _ = try? building.alice.pump()
            return building.alice.received.count == taken + 1
        }
        #expect(building.alice.phone.regions.count == 4)
        #expect(building.alice.phone.regions.allSatisfy { $0.name != Waypoints.legacyName })
        #expect(building.alice.phone.beaconRegions == Set(areas) && building.alice.phone.iOS.count == 4)
        try await building.stop()
        building.close()
    }
}
