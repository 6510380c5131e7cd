import BeaconCore
import BeaconConfiguration
import Foundation
import RegionMonitor
import Testing

#if canImport(Glibc)
    import Glibc
#endif
import TestSupport

@Suite struct ConfigurationTests {
    static let office = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
    /// One beacon: the least a configuration holds.
    static let beacon = "LocationBaseBeacon.1 = \(office),1,1\n"

    func load(_ text: String, path: String = "conf/hsyco.ini") -> Result<Configuration, ConfigurationErrors> {
        Configuration.load(Array(text.utf8), path: path)
    }

    func errors(_ text: String) -> [InputError] {
        guard case .failure(let failure) = load(text) else { return [] }
        return failure.errors
    }

    @Test func everyConformanceScenarioFileLoads() throws {
        for scenario in ["beacons-mode", "zones-mode", "areas-then-zones", "ubudu-example-rules"] {
            let path = Conformance.url("scenarios/\(scenario)/hsyco.ini").path
            let configuration = try Configuration.load(contentsOf: path).get()
            #expect(!configuration.hierarchy.beacons.isEmpty, "\(scenario)")
        }
    }

    @Test func beaconsModeScenarioHasItsNamesAndSettings() throws {
        let path = Conformance.url("scenarios/beacons-mode/hsyco.ini").path
        let configuration = try Configuration.load(contentsOf: path).get()
        let hierarchy = configuration.hierarchy
        #expect(hierarchy.beacons.map(\.locationID) == ["101", "102", "201"])
        #expect(hierarchy.zones.map(\.name) == ["Kitchen", "Meeting room"])
        #expect(hierarchy.areas.map(\.name) == ["Office"])
        #expect(configuration.monitor.userid == "alice")
        #expect(configuration.monitor.session == "s1")
        #expect(configuration.monitor.address == "10.0.0.5")
        #expect(configuration.monitor.mode == .foreground)
        #expect(configuration.monitor.timezone?.identifier == "Europe/Rome")
        #expect(configuration.warnings.isEmpty)
    }

    @Test func theExampleOfficeLoadsWithoutWarnings() throws {
        let path = Conformance.directory.deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("etc/hsyco.ini").path
        let configuration = try Configuration.load(contentsOf: path).get()
        #expect(configuration.warnings.isEmpty)
        #expect(configuration.hierarchy.beacons.count == 4)
        #expect(configuration.hierarchy.beacons[configuration.hierarchy.index(ofLocation: "17101")!].power == -61)
        guard case .btsnoop(let capture) = configuration.monitor.source else {
            Issue.record("source is \(configuration.monitor.source)")
            return
        }
        #expect(FileManager.default.fileExists(atPath: capture))
    }

    @Test func syntaxCommentsSpacesAndOrder() throws {
        let text = """
            \u{FEFF}# a comment
            ; another
               LocationBeaconName.7 =   Front door  \r
            LocationBaseBeacon.7=\(Self.office) , 1 ,2
            \tMonitor.exitTimeout\t=\t2.5
            Some.Other.HSYCO.key = a = b
            """
        let configuration = try load(text).get()
        #expect(
            configuration.hierarchy.beacons == [
                Hierarchy.Beacon(
                    locationID: "7",
                    id: BeaconID(uuid: UUID(uuidString: Self.office)!, major: 1, minor: 2),
                    name: "Front door"
                )
            ])
        #expect(configuration.monitor.exitTimeout == 2.5)
        #expect(configuration.unknownKeys.map(\.value) == ["a = b"])
        #expect(configuration.warnings.map(\.line) == [6])
    }

    /// docs/behaviour.md §2: a comment takes a whole line. A value holding whitespace then `#` is an
    /// error naming the line and the comment (issue 47: copied from the docs it became a scanner id);
    /// a `#` with no whitespace before it is text, as in a topic filter.
    @Test func aCommentAtTheEndOfAValueIsAnErrorThatSaysSo() throws {
        let text = Self.beacon + "MQTT.host = 127.0.0.1\nMonitor.userid = lounge        # the gateway\n"
        let found = errors(text)
        #expect(found.map(\.line) == [3], "\(found)")
        #expect(
            found.first?.description
                == "conf/hsyco.ini:3: Monitor.userid ends in the comment '# the gateway': a comment takes a whole line; move it to a line of its own"
        )
        #expect(errors(Self.beacon + "Monitor.userid = lounge\t# tab\n").map(\.line) == [2])
        let configuration = try load(
            Self.beacon + "MQTT.host = 127.0.0.1\nScanners.theengs = home/+/BTtoMQTT/#\nMonitor.userid = room#1\n"
        ).get()
        #expect(configuration.scanners?.theengs == "home/+/BTtoMQTT/#")
        #expect(configuration.monitor.userid == "room#1")
    }

    /// A `forward` node's file has no building (`forward --help`: `MQTT.*`, `Monitor.userid`,
    /// `State.*`): it loads for it, and is still refused where a building is monitored.
    @Test func aForwardNodeNeedsNoBuilding() throws {
        let node = "Monitor.userid = node-1\nMQTT.host = 127.0.0.1\n"
        let loaded = try Configuration.load(Array(node.utf8), path: "node.ini", needsBuilding: false).get()
        #expect(loaded.monitor.userid == "node-1" && loaded.mqtt?.host == "127.0.0.1")
        #expect(errors(node).first?.description.contains("defines no beacon") == true)
    }

    /// docs/behaviour.md §18: `auto` with its confidence and maximum; a number keeps the fixed timeout.
    @Test func exitTimeoutAutoTakesItsConfidenceAndMaximum() throws {
        let auto = try load(
            "LocationBaseBeacon.1 = \(Self.office),1,1\nMonitor.exitTimeout = auto\nMonitor.exitConfidence = 1e-9\n"
                + "Monitor.exitTimeoutMax = 20"
        ).get()
        #expect(auto.monitor.adaptiveExit)
        #expect(auto.monitor.exitConfidence == 1e-9)
        #expect(auto.monitor.exitTimeoutMax == 20)
        let defaults = try load("LocationBaseBeacon.1 = \(Self.office),1,1\nMonitor.exitTimeout = AUTO").get()
        #expect(defaults.monitor.adaptiveExit)
        #expect(defaults.monitor.exitConfidence == 1e-6)
        #expect(defaults.monitor.exitTimeoutMax == 30)
        let fixed = try load("LocationBaseBeacon.1 = \(Self.office),1,1\nMonitor.exitTimeout = 4").get()
        #expect(!fixed.monitor.adaptiveExit)
        #expect(fixed.monitor.exitTimeout == 4)
    }

    /// docs/behaviour.md §17: geofences, their radius unit, the position source and its limits; geofences
    /// alone are a configuration.
    @Test func geofenceKeysAreRead() throws {
        let configuration = try load(
            """
            Rules.geofences = fences/u_geofences.json
            Rules.geofenceRadiusUnit = km
            Monitor.position = gpsd:gps.local:2947
            Monitor.maxPositionError = 50
            Monitor.geofenceHysteresis = 30
            """
        ).get()
        #expect(configuration.rules.geofences == .file("conf/fences/u_geofences.json"))
        #expect(configuration.rules.geofenceRadiusUnit == .km)
        #expect(configuration.monitor.position == GPSDEndpoint(host: "gps.local", port: 2947))
        #expect(configuration.monitor.geofence == GeofenceSettings(maxPositionError: 50, hysteresis: 30))
        let defaults = try load("Rules.geofences = https://example.com/u_geofences.json").get()
        #expect(defaults.rules.geofences == .url(URL(string: "https://example.com/u_geofences.json")!))
        #expect(defaults.rules.geofenceRadiusUnit == .m)
        #expect(defaults.monitor.geofence == GeofenceSettings(maxPositionError: 100, hysteresis: 20))
        #expect(defaults.monitor.position == nil)
    }

    @Test(arguments: [
        ("Rules.geofenceRadiusUnit = miles", "expected one of m, km"),
        ("Monitor.position = localhost:2947", "give gpsd:HOST:PORT"),
        ("Monitor.maxPositionError = -5", "metres"),
        ("Monitor.geofenceHysteresis = lots", "metres"),
        ("Rules.geofences = ftp://example.com/g.json", "only http and https"),
    ])
    func badGeofenceKeysNameTheLine(line: String, reason: String) {
        let found = errors("LocationBaseBeacon.1 = \(Self.office),1,1\n" + line)
        #expect(found.count == 1)
        #expect(found.first?.line == 2)
        #expect(found.first?.message.contains(reason) == true, "\(found)")
    }

    @Test func anInvalidUUIDOnLine7NamesTheFileAndLine() {
        let lines =
            (1...6).map { "LocationBaseBeacon.\($0) = \(Self.office),1,\($0)" }
            + ["LocationBaseBeacon.7 = E2C56DB5-DFFB-48D2-B060-D0F5A71096,1,7", "Monitor.userid = bob"]
        let found = errors(lines.joined(separator: "\n"))
        #expect(found.count == 1)
        #expect(found.first?.description.hasPrefix("conf/hsyco.ini:7: ") == true)
        #expect(found.first?.message.contains("not a UUID") == true)
    }

    @Test(arguments: [
        ("LocationBaseBeacon.2 = \(office),65536,1", "major"),
        ("LocationBaseBeacon.2 = \(office),-1,1", "major"),
        ("LocationBaseBeacon.2 = \(office),1,x", "minor"),
        ("LocationBaseBeacon.2 = \(office),1", "UUID,major,minor"),
        ("LocationBaseBeacon.a-b = \(office),1,1", "letters and digits"),
        ("LocationBeaconName.9 = Ghost", "no beacon with Location ID '9'"),
        ("LocationBeaconPower.9 = -59", "no beacon with Location ID '9'"),
        ("LocationAreaName.11111111-2222-3333-4444-555555555555 = Nowhere", "has no beacon"),
        ("LocationZoneName.\(office):9 = Nowhere", "has no beacon"),
        ("LocationZoneName.\(office) = Office", "is not a Zone"),
        ("Monitor.exitTimeout = 0", "above 0"),
        ("Monitor.exitTimeout = ten", "expected seconds"),
        ("Monitor.exitConfidence = 0.7", "a probability"),
        ("Monitor.exitConfidence = 0", "a probability"),
        ("Monitor.exitConfidence = nan", "a probability"),
        ("Monitor.exitTimeoutMax = -3", "above 0"),
        ("Monitor.maxRegions = 0", "at least 1"),
        ("Monitor.mode = sideways", "foreground, background"),
        ("Monitor.rssiFilter = average", "median, mean, kalman, none"),
        ("Monitor.timezone = Mars/Olympus", "not a time zone"),
        ("Monitor.hysteresis = 1.5", "fraction"),
        ("Monitor.near = 0.2", "farther than Monitor.immediate"),
        ("Monitor.source = usb0", "not a source"),
        // Every valid source is listed, `none` with them (issue 47).
        ("Monitor.source = radio", "trace:PATH, or none (no radio"),
        ("Monitor.source = uart:/dev/ttyACM0@12", "not a serial baud rate"),
        ("Monitor.source = h4tcp:controller", "no port from 1 to 65535"),
        ("Monitor.lat = 91", "latitude"),
        ("Rules.source = ftp://example.org/rules.json", "only http and https"),
        ("Rules.autoUserNotify = maybe", "true or false"),
        ("Script.boot = /bin/true", "no script event"),
        ("LocationAlert.1 = close,=", "immediate, near or far"),
        ("LocationAlert.1 = near,<", "=, <= or >="),
        ("LocationAlert.9 = near,=", "no beacon with Location ID '9'"),
        ("MQTT.host = broker\nMQTT.version = 4", "3.1.1 or 5"),
        ("MQTT.host = broker\nMQTT.topic = a/#", "without + or #"),
        ("MQTT.host = broker\nMQTT.clientId = a-client-id-longer-than-23", "23"),
        ("MQTT.host = broker\nMQTT.tls.cert = c.pem", "go together"),
        ("MQTT.host = broker\nMQTT.password = x\nMQTT.passwordFile = p", "keep one"),
        ("just some words", "expected 'key = value'"),
        ("= value", "no key before '='"),
        ("Monitor.mode = foreground\nMonitor.mode = background", "first set on line 2"),
    ])
    func badValuesAreErrorsThatSayWhatToWrite(line: String, reason: String) {
        let text = "LocationBaseBeacon.1 = \(Self.office),1,1\n" + line
        let found = errors(text)
        #expect(found.count >= 1, "accepted: \(line)")
        #expect(found.contains { $0.message.contains(reason) }, "\(found)")
        #expect(found.allSatisfy { $0.line != nil && $0.file == "conf/hsyco.ini" })
    }

    @Test func theSameBeaconUnderTwoLocationIDsIsAnError() {
        let found = errors(
            "LocationBaseBeacon.1 = \(Self.office),1,1\nLocationBaseBeacon.2 = \(Self.office.lowercased()),1,1")
        #expect(found.map(\.line) == [2])
        #expect(found.first?.message.contains("already Location ID 1 (line 1)") == true)
    }

    @Test func notUTF8IsAnErrorOnItsLine() {
        var bytes = Array("LocationBaseBeacon.1 = \(Self.office),1,1\nLocationBeaconName.1 = ".utf8)
        bytes += [0xC3, 0x28]
        guard case .failure(let failure) = Configuration.load(bytes, path: "x.ini") else {
            Issue.record("accepted")
            return
        }
        #expect(failure.errors.map(\.line) == [2])
    }

    @Test func unknownKeysAreKeptAsWarningsWithASuggestion() throws {
        let configuration = try load(Self.beacon + "Monitor.exitTimout = 5\nLocationBeconName.3 = x\nServer.port = 80")
            .get()
        #expect(configuration.unknownKeys.count == 3)
        #expect(configuration.warnings[0].message.contains("did you mean Monitor.exitTimeout?"))
        #expect(configuration.warnings[1].message.contains("LocationBeaconName.<id>"))
        #expect(!configuration.warnings[2].message.contains("did you mean"))
        #expect(configuration.monitor.exitTimeout == 10)
    }

    @Test func relativePathsResolveAgainstTheFilesFolder() throws {
        let configuration = try load(
            Self.beacon + """
                Monitor.source = trace:walks/monday.jsonl
                Rules.source = rules/u_beacons.json
                Script.enter = scripts/enter.sh
                State.database = /var/lib/bw.sqlite
                MQTT.host = broker
                MQTT.tls.ca = ca.pem
                """
        ).get()
        #expect(configuration.monitor.source == .trace(path: "conf/walks/monday.jsonl"))
        #expect(configuration.rules.source == .file("conf/rules/u_beacons.json"))
        #expect(configuration.scripts[.enter] == "conf/scripts/enter.sh")
        #expect(configuration.stateDatabase == "/var/lib/bw.sqlite")
        #expect(configuration.mqtt?.tlsCA == "conf/ca.pem")
        #expect(configuration.mqtt?.port == 8883)
    }

    @Test func defaultsAreTheSpecsWhenKeysAreAbsent() throws {
        let configuration = try load(Self.beacon).get()
        let monitor = configuration.monitor
        #expect(monitor.source == .adapter("hci0"))
        #expect(monitor.maxRegions == 20)
        #expect(monitor.exitTimeout == 10)
        #expect(monitor.mode == .background)
        #expect(monitor.backgroundRanging == 10)
        #expect(monitor.rssiFilter == .median)
        #expect(monitor.rssiWindow == 5)
        #expect(monitor.pathLossExponent == 2)
        #expect(monitor.immediate == 0.5 && monitor.near == 3 && monitor.hysteresis == 0.15)
        #expect(monitor.nearestMargin == 5)
        #expect(configuration.mqtt == nil)
        #expect(configuration.rules.refresh == 3600 && configuration.rules.serverTimeout == 5)
        #expect(configuration.rules.autoServerNotify && configuration.rules.autoUserNotify)
        #expect(configuration.alertResetAfter == 60 && configuration.scriptTimeout == 10)
    }

    @Test func mqttDefaultsAndThePasswordStaysOutOfTheDescription() throws {
        let configuration = try load(
            Self.beacon + "Monitor.userid = a-rather-long-user-name\nMQTT.host = broker.lan\nMQTT.password = s3cret"
        ).get()
        let mqtt = try #require(configuration.mqtt)
        #expect(mqtt.port == 1883 && mqtt.qos == 1 && mqtt.keepalive == 30 && mqtt.topic == "beaconwatch")
        #expect(mqtt.clientID == "beaconwatch-a-rather-lo")  // cut to MQTT 3.1.1's 23 bytes
        #expect(!mqtt.description.contains("s3cret"))
        #expect(mqtt.description.contains("password set"))
    }

    @Test func alertsParseWithDefaults() throws {
        let configuration = try load(
            "LocationBaseBeacon.1 = \(Self.office),1,1\nLocationAlert.1 = far,>=,open,A, title"
        ).get()
        #expect(
            configuration.alerts == [
                AlertDefinition(locationID: "1", range: .far, strategy: .atLeast, action: "open", title: "A, title")
            ])
        let popup = try load("LocationBaseBeacon.1 = \(Self.office),1,1\nLocationAlert.1 = near,=").get()
        #expect(popup.alerts.first?.action == "popup")
        #expect(popup.alerts.first?.title == nil)
    }

    @Test func anAreaWithMoreZonesThanTheCapIsAWarning() throws {
        let lines = (1...3).map { "LocationBaseBeacon.\($0) = \(Self.office),\($0),1" } + ["Monitor.maxRegions = 2"]
        let configuration = try load(lines.joined(separator: "\n")).get()
        #expect(configuration.warnings.count == 1)
        #expect(configuration.warnings.first?.message.contains("3 Zones, more than Monitor.maxRegions (2)") == true)
    }

    @Test func mutatedFilesNeverCrashTheLoader() throws {
        let seed = Array(try Data(contentsOf: Conformance.url("scenarios/zones-mode/hsyco.ini")))
        var random = SeededGenerator(seed: 20)
        var accepted = 0
        for _ in 0..<2_000 {
            var bytes = seed
            for _ in 0..<Int.random(in: 1...8, using: &random) {
                let index = Int.random(in: 0..<bytes.count, using: &random)
                bytes[index] = [
                    UInt8(ascii: "="), UInt8(ascii: ","), UInt8(ascii: "\n"), UInt8(ascii: "#"), 0xFF, 0x41,
                ]
                .randomElement(using: &random)!
            }
            if case .success = Configuration.load(bytes, path: "fuzz.ini") { accepted += 1 }
        }
        #expect(accepted > 0 && accepted < 2_000)
    }

    @Test func aFileThatIsNoConfigurationIsRefusedInOneLine() throws {
        func message(_ path: String) -> String? {
            guard case .failure(let errors) = Configuration.load(contentsOf: path) else { return nil }
            return errors.errors.count == 1 ? errors.errors[0].description : nil
        }
        #expect(
            message("/nonexistent/hsyco.ini")
                == "/nonexistent/hsyco.ini: no such file; give the configuration with --config PATH")
        #expect(message("/tmp")?.hasPrefix("/tmp: is a folder, not a file") == true)
        // A device with no end is refused once it passes the limit, not read forever.
        #expect(message("/dev/zero")?.hasPrefix("/dev/zero: is larger than 16 MiB") == true)
        // A FIFO nobody writes to reads as empty (whatever an empty file gives), not a wait forever.
        let fifo = FileManager.default.temporaryDirectory.appendingPathComponent("bw-fifo-\(UUID().uuidString)").path
        #expect(mkfifo(fifo, 0o600) == 0)
        defer { unlink(fifo) }
        let empty = try scratchFolder("empty").appendingPathComponent("hsyco.ini")
        #expect(FileManager.default.createFile(atPath: empty.path, contents: Data()))
        #expect(
            message(fifo)?.replacingOccurrences(of: fifo, with: "F")
                == message(empty.path)?.replacingOccurrences(of: empty.path, with: "F"))
        let fromFIFO = try? Configuration.load(contentsOf: fifo).get()
        let fromEmpty = try? Configuration.load(contentsOf: empty.path).get()
        #expect(fromFIFO?.hierarchy.beacons.count == fromEmpty?.hierarchy.beacons.count)
    }
}
