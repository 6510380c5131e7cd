import Foundation
import Testing
import TestSupport

@Suite struct CheckCommandTests {
    static let repository = Conformance.directory.deletingLastPathComponent().deletingLastPathComponent()

    @Test func checkOnTheExampleOfficePrintsHierarchyAndPlanAndExits0() async throws {
        let run = try await DecodeCommandTests.beaconwatch([
            "check", "--config", Self.repository.appendingPathComponent("etc/hsyco.ini").path,
        ])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("4 beacons in 3 zones in 1 area"))
        #expect(run.stdout.contains("zone ACFD165E-C0C0-11E3-9BBE-1A514932AC01:2 \"Kitchen\""))
        #expect(run.stdout.contains("monitoring plan: beacons"))
        #expect(run.stdout.contains("  web: http://127.0.0.1:8080/\n"))
        #expect(run.stdout.contains("no warnings"))
    }

    /// The ESPresense companion's own config.example.yaml as a floor plan (docs/floorplans.md).
    @Test func checkPrintsEachFloorOfTheCompanionsExample() async throws {
        let run = try await DecodeCommandTests.beaconwatch([
            "check", "--config", Self.repository.appendingPathComponent("Tests/floorplans/companion-example.ini").path,
        ])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("companion-config.example.yaml (ESPresense companion)"))
        #expect(
            run.stdout.contains(
                "  floor F2000000-0000-4000-8000-000000000002 \"Second Floor\": 4 rooms, 5 scanners placed, 0 doors"))
        #expect(
            run.stdout.contains("  floor room F1000000-0000-4000-8000-000000000001:4 \"Kitchen\": 10 corners, 36.6 m²"))
        #expect(run.stdout.contains("  floor scanner upstairs_hallway at 10.4,6.4, 3.4 m high"))
        // Its two floors are stacked by their bounds: one building, which no stairs join yet.
        #expect(
            run.stdout.contains(
                "  building of 2 floors (F1000000-0000-4000-8000-000000000001, F2000000-0000-4000-8000-000000000002), "
                    + "0 stairs: a tag changes floor only on strong evidence; join the floors with Stairs.<id>"))
        #expect(run.stdout.contains("through their known walls and floors (a floor 10 dB until then)"))
        #expect(run.stdout.contains("  tags: rooms position:"))
        #expect(run.stdout.contains("no warnings"))
    }

    @Test func checkShowsTheWebViewWithoutItsTokenAndRefusesAnOpenAddressWithoutOne() async throws {
        let beacon = "LocationBaseBeacon.1 = E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,1,1\n"
        let guarded = try TemporaryFile(
            contents: Data((beacon + "Web.listen = 0.0.0.0:9090\nWeb.token = 5ecret5ecret5ecret\n").utf8))
        let shown = try await DecodeCommandTests.beaconwatch(["check", "--config", guarded.path])
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stdout.contains("  web: http://0.0.0.0:9090/ (token required)"), "\(shown.stdout)")
        #expect(!shown.stdout.contains("5ecret"))
        let open = try TemporaryFile(contents: Data((beacon + "Web.listen = 0.0.0.0:9090\n").utf8))
        let refused = try await DecodeCommandTests.beaconwatch(["check", "--config", open.path])
        #expect(refused.status == 2)
        #expect(
            refused.stderr.contains(":2: Web.listen = 0.0.0.0:9090 is reachable from other machines; set Web.token"))
    }

    /// docs/behaviour.md §21: `check` prints the cluster settings, and says a daemon alone runs alone.
    @Test func checkShowsTheCluster() async throws {
        let beacon = "LocationBaseBeacon.1 = E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,1,1\n"
        let broker = "MQTT.host = 127.0.0.1\nMQTT.topic = bw\nMQTT.clientId = bw-hall-1\n"
        let clustered = try TemporaryFile(contents: Data((beacon + broker + "Cluster.name = hall\n").utf8))
        let shown = try await DecodeCommandTests.beaconwatch(["check", "--config", clustered.path])
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(
            shown.stdout.contains("  cluster: hall, member bw-hall-1, keepalive 2 s (topics under bw/_cluster/hall/)"),
            "\(shown.stdout)")
        let alone = try TemporaryFile(contents: Data((beacon + broker).utf8))
        let run = try await DecodeCommandTests.beaconwatch(["check", "--config", alone.path])
        #expect(run.stdout.contains("  cluster: off (no Cluster.name: this daemon runs alone)"), "\(run.stdout)")
    }

    @Test func checkListsEachRuleRegionAndWhereItAttaches() async throws {
        let scenario = Conformance.url("scenarios/ubudu-example-rules")
        let run = try await DecodeCommandTests.beaconwatch(["check", "--config", "hsyco.ini"], in: scenario)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.stdout.contains(
                #"rule region 1 "Full Beacon Example": 2 rules, attached to zone 566C5595-6EC7-4F08-909F-C954BDCA6CD3:42"#
            ),
            "\(run.stdout)")
        #expect(run.stdout.contains("rule region 1: weekday 'thi' read as 'thu'"))

        // The same rules on a building without zone 42: reported, and they never fire.
        let folder = try scratchFolder("check")
        let rules = Conformance.url("ubudu/u_beacons-example.json").path
        try "LocationBaseBeacon.1 = 566C5595-6EC7-4F08-909F-C954BDCA6CD3,41,1\nRules.source = \(rules)\n"
            .write(to: folder.appendingPathComponent("hsyco.ini"), atomically: true, encoding: .utf8)
        let other = try await DecodeCommandTests.beaconwatch(["check", "--config", "hsyco.ini"], in: folder)
        #expect(other.stdout.contains("rule region 1 \"Full Beacon Example\": 2 rules, matches no configured region"))
        #expect(
            other.stdout.contains(
                "rule region 1 (566C5595-6EC7-4F08-909F-C954BDCA6CD3:42) matches no configured region; its rules never fire"
            ))
    }

    @Test func checkFetchesAURLRulesSourceWithItsQuery() async throws {
        let document = try String(contentsOf: Conformance.url("ubudu/u_beacons-example.json"), encoding: .utf8)
        let server = try HTTPServer { _ in .reply(status: 200, body: document) }
        defer { server.stop() }
        let folder = try scratchFolder("check-url")
        try """
        LocationBaseBeacon.1 = 566C5595-6EC7-4F08-909F-C954BDCA6CD3,42,1
        Monitor.udid = u1
        Rules.source = \(server.url("/rules"))
        """.write(to: folder.appendingPathComponent("hsyco.ini"), atomically: true, encoding: .utf8)
        let run = try await DecodeCommandTests.beaconwatch(["check", "--config", "hsyco.ini"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.stdout.contains(#"rule region 1 "Full Beacon Example": 2 rules, attached to zone"#), "\(run.stdout)")
        #expect(server.requests == ["/rules?api_version=2&namespace=&udid=u1"])
        server.stop()
        let offline = try await DecodeCommandTests.beaconwatch(["check", "--config", "hsyco.ini"], in: folder)
        #expect(offline.status == 0)
        #expect(offline.stdout.contains("/rules cannot be fetched now: connection refused"), "\(offline.stdout)")
    }

    @Test func checkOnAnInvalidUUIDOnLine7PrintsFileAndLineAndExits2() async throws {
        let folder = try scratchFolder("check")
        defer { try? FileManager.default.removeItem(at: folder) }
        let lines =
            ["# six lines before the bad one"]
            + (1...5).map { "LocationBaseBeacon.\($0) = E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,1,\($0)" }
            + ["LocationBaseBeacon.7 = E2C56DB5-DFFB-48D2-B060-NOTAUUID", "Monitor.userid = bob"]
        try lines.joined(separator: "\n").write(
            to: folder.appendingPathComponent("hsyco.ini"), atomically: true, encoding: .utf8)
        let run = try await DecodeCommandTests.beaconwatch(["check", "--config", "hsyco.ini"], in: folder)
        #expect(run.status == 2)
        #expect(run.stderr.hasPrefix("beaconwatch: hsyco.ini:7: "), "\(run.stderr)")
        #expect(run.stdout.isEmpty)
    }

    @Test func checkShowsTheFleet() async throws {
        let file = try TemporaryFile(
            contents: Data(
                """
                LocationBaseBeacon.1 = E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,1,1
                MQTT.host = 127.0.0.1
                Fleet.theengs = home/+/BTtoMQTT/#
                Fleet.shard = 1/2
                Device.cart-7 = Cart 7

                """.utf8))
        let run = try await DecodeCommandTests.beaconwatch(["check", "--config", file.path])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.stdout.contains(
                "fleet: theengs home/+/BTtoMQTT/#; 1 declared devices, others added (at most 10000), shard 1/2"),
            "\(run.stdout)")
    }

    /// Scanners (id, location, Zone, offset, source), the room rule with its parameters, and the
    /// tags (docs/behaviour.md §19); a scanner at no known location is warned about.
    @Test func checkListsScannersTheRoomRuleAndTags() async throws {
        let file = try TemporaryFile(
            contents: Data(
                """
                LocationBaseBeacon.101 = E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,1,1
                LocationBaseBeacon.102 = E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,2,1
                LocationZoneName.E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1 = Kitchen
                MQTT.host = 127.0.0.1
                LocationScanner.101 = kitchen
                LocationScanner.102 = hall
                LocationScanner.999 = attic
                Scanner.hall.rssiOffset = -3
                Scanners.espresense = espresense/devices/+/+
                Tag.badge-1 = ibeacon:FDA50693-A4E2-4FB1-AFCF-C6EB07647825:7:1, Badge one
                Tag.phone = irk:0123456789abcdef0123456789abcdef, Ann's phone

                """.utf8))
        let run = try await DecodeCommandTests.beaconwatch(["check", "--config", file.path])
        #expect(run.status == 0, "\(run.stderr)")
        for line in [
            "scanners: 2 placed; reports from espresense espresense/devices/+/+; offline after 60 s without a report",
            "scanner kitchen at 101: room E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1 (Kitchen), offset 0 dB, via MQTT",
            "scanner hall at 102: room E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:2, offset -3 dB, via MQTT",
            "scanners: calibrate auto: each receiver's offset learned from what the scanners hear of each other "
                + "(ESPresense's node:<id>, or a Scanner.<id>.address); hall keeps its rssiOffset",
            "tags: rooms nearest: a reading moves a scanner's level 1 of the way up, 0.5 of the way down",
            "a tag moves to another room when that room leads by 10 dB, or when its lead less 3 dB adds up to 8 dB",
            "tags: exit auto: the silence of the tag's own advertisements that is improbable below confidence 1e-06, at most 30 s",
            "a report older than 10 s never wins",
            "tag badge-1 (Badge one): ibeacon:FDA50693-A4E2-4FB1-AFCF-C6EB07647825:7:1\n",
            // ESPresense's cadence, and what a phone's outage costs (issue 47).
            "tags: ESPresense nodes report a still tag every 5 s (the firmware's skip_ms), sooner while it moves: "
                + "one report a period counts, and a tag is away after 11 s without one (a report period missed by every node)",
            "tag phone (Ann's phone): irk:0123456789abcdef0123456789abcdef; a phone or watch: away after 35 s of "
                + "silence (an outage up to Monitor.exitTimeoutMax is waited out; raise it above the longest your phones go quiet)",
        ] {
            #expect(run.stdout.contains(line), "\(line) in \(run.stdout)")
        }
        #expect(run.stdout.contains(":7: LocationScanner.999 names no known location"), "\(run.stdout)")
    }

    /// Per declared OwnTracks device, the cap it is managed under (docs/behaviour.md §15.1).
    @Test func checkShowsTheCapOfEachOwnTracksPhone() async throws {
        let file = try TemporaryFile(
            contents: Data(
                """
                LocationBaseBeacon.1 = E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,1,1
                MQTT.host = 127.0.0.1
                Monitor.maxRegions = 18
                Fleet.owntracks = owntracks/+/+
                Device.alice-phone = Alice's iPhone,alice

                """.utf8))
        let run = try await DecodeCommandTests.beaconwatch(["check", "--config", file.path])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.stdout.contains("owntracks: each phone is given at most 18 regions (Monitor.maxRegions)"),
            "\(run.stdout)")
        #expect(
            run.stdout.contains(
                "owntracks device alice-phone (Alice's iPhone): cap 18 less its own waypoints (owntracks/alice/phone/cmd)"
            ),
            "\(run.stdout)")
    }

    @Test func checkShowsTheAdaptiveExit() async throws {
        let file = try TemporaryFile(
            contents: Data(
                """
                LocationBaseBeacon.1 = E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,1,1
                Monitor.exitTimeout = auto
                Monitor.exitTimeoutMax = 20

                """.utf8))
        let run = try await DecodeCommandTests.beaconwatch(["check", "--config", file.path])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("exitTimeout auto (confidence 1e-06, at most 20.0 s)"), "\(run.stdout)")
    }

    /// `Monitor.rssiFilter = none` is said as no filter (issue 47: "none filter over 5.0 s").
    @Test func checkSaysNoFilterForRSSIFilterNone() async throws {
        let file = try TemporaryFile(
            contents: Data(
                """
                LocationBaseBeacon.1 = E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,1,1
                Monitor.rssiFilter = none

                """.utf8))
        let run = try await DecodeCommandTests.beaconwatch(["check", "--config", file.path])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("  ranging: no filter, n = "), "\(run.stdout)")
        #expect(!run.stdout.contains("none filter"))
    }

    /// Issue 21: no subcommand is a usage error: the help on standard error, status 2; asking for
    /// the help is not.
    /// docs/behaviour.md §11: `--version` says the version and the commit the build came from.
    @Test func versionNamesTheBuildsCommit() async throws {
        let run = try await DecodeCommandTests.beaconwatch(["--version"])
        #expect(run.status == 0)
        let line = run.stdout.trimmingCharacters(in: .newlines)
        let match = try #require(
            line.wholeMatch(of: /beaconwatch \d+\.\d+\.\d+ \(commit ([0-9a-f]{12}\+?|unknown), libmosquitto [0-9.]+\)/))
        func git(_ arguments: [String]) throws -> Int32 {
            let git = Process()
            git.executableURL = URL(fileURLWithPath: "/usr/bin/git")
            git.arguments = ["-C", Self.repository.path] + arguments
            git.standardOutput = FileHandle.nullDevice
            git.standardError = FileHandle.nullDevice
            try git.run()
            git.waitUntilExit()
            return git.terminationStatus
        }
        let commit = String(match.output.1).replacingOccurrences(of: "+", with: "")
        if try git(["rev-parse", "HEAD"]) == 0 {
            // The build's commit is this checkout's HEAD or one before it (a commit since the build).
            #expect(try git(["merge-base", "--is-ancestor", commit, "HEAD"]) == 0, "\(line)")
        } else {
            #expect(commit == "unknown")
        }
    }

    @Test func noSubcommandPrintsTheHelpAndExits2() async throws {
        let bare = try await DecodeCommandTests.beaconwatch([])
        #expect(bare.status == 2)
        #expect(bare.stderr.contains("USAGE: beaconwatch <subcommand>"), "\(bare.stderr)")
        #expect(bare.stdout.isEmpty)
        let help = try await DecodeCommandTests.beaconwatch(["--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("USAGE: beaconwatch <subcommand>"))
    }

    /// docs/behaviour.md §17: `check` lists the geofences, and warns about radii under 10 m read in metres.
    @Test func checkListsGeofencesAndWarnsOfMetresThatLookLikeKilometres() async throws {
        let example = Conformance.url("ubudu/u_geofences-example.json").path
        for unit in ["km", "m"] {
            let file = try TemporaryFile(
                contents: Data(
                    "Rules.geofences = \(example)\nRules.geofenceRadiusUnit = \(unit)\nMonitor.source = none\n".utf8))
            let run = try await DecodeCommandTests.beaconwatch(["check", "--config", file.path])
            #expect(run.status == 0, "\(run.stderr)")
            let metres = unit == "km" ? ["100", "20"] : ["0.1", "0.02"]
            #expect(
                run.stdout.contains(
                    "geofence 52 \"DEMO PRESENTATION 2\": centre 48.86821546, 2.3231598, radius \(metres[0]) m, 2 rules"
                ),
                "\(run.stdout)")
            #expect(
                run.stdout.contains(
                    "geofence 35 \"demo-shop-2--10--rue-d-amsterdam\": centre 48.87621805, 2.32686415, radius \(metres[1]) m, 2 rules"
                ))
            let warned = run.stdout.contains(
                "geofence 52: radius 0.1 m is under 10 m: did you mean Rules.geofenceRadiusUnit = km?")
            #expect(warned == (unit == "m"), "\(run.stdout)")
            #expect(run.stdout.contains("no warnings") == (unit == "km"))
        }
    }

    @Test func checkSaysWhenTheGeofencesDocumentCannotBeRead() async throws {
        let file = try TemporaryFile(contents: Data("Rules.geofences = /nonexistent/u_geofences.json\n".utf8))
        let run = try await DecodeCommandTests.beaconwatch(["check", "--config", file.path])
        #expect(run.status == 2, "\(run.stderr)")
        #expect(
            run.stderr.contains(":1: Rules.geofences /nonexistent/u_geofences.json: no such file"), "\(run.stderr)")
    }

    /// Each thing `run` stops on at start is an error of `check` (exit 2, at the key's line),
    /// shown beside the report; `run` with the same file indeed stops.
    @Test(arguments: [
        ("Monitor.source = btsnoop:missing.btsnoop", "Monitor.source: the capture ", "missing.btsnoop does not exist"),
        ("State.database = PLAIN/state/beaconwatch.sqlite", "the state database ", "/plain is not a folder"),
        (
            "MQTT.host = 127.0.0.1\nMQTT.passwordFile = /nonexistent/password", "MQTT.passwordFile /nonexistent",
            "does not exist"
        ),
        ("MQTT.host = 127.0.0.1\nMQTT.tls.ca = ca.pem", "MQTT.tls.ca ", "ca.pem does not exist"),
        ("Rules.source = u_beacons.json", "Rules.source ", "u_beacons.json: no such file"),
    ])
    func checkStopsOnWhatRunWouldStopOn(setting: String, cause: String, detail: String) async throws {
        // run names the same file, in its own words.
        let named = detail.split(separator: " ")[0].split(separator: ":")[0]
        let folder = try scratchFolder("check-blockers")
        try Data().write(to: folder.appendingPathComponent("plain"))
        let capture = Self.repository.appendingPathComponent("etc/demo/office-walk.btsnoop").path
        var lines = ["LocationBaseBeacon.1 = E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,1,1"]
        if !setting.hasPrefix("Monitor.source") { lines.append("Monitor.source = btsnoop:\(capture)") }
        if !setting.hasPrefix("State.database") { lines.append("State.database = \(folder.path)/state.sqlite") }
        lines.append(setting.replacingOccurrences(of: "PLAIN", with: folder.appendingPathComponent("plain").path))
        try lines.joined(separator: "\n").write(
            to: folder.appendingPathComponent("hsyco.ini"), atomically: true, encoding: .utf8)
        let check = try await DecodeCommandTests.beaconwatch(["check", "--config", "hsyco.ini"], in: folder)
        #expect(check.status == 2, "\(check.stderr)")
        let line = lines.count + (setting.contains("\n") ? 1 : 0)
        let error = try #require(check.stderr.split(separator: "\n").first.map(String.init))
        #expect(error.hasPrefix("beaconwatch: hsyco.ini:\(line): \(cause)"), "\(check.stderr)")
        #expect(error.contains(detail), "\(error)")
        #expect(check.stderr.split(separator: "\n").count == 1, "\(check.stderr)")
        #expect(check.stdout.contains("run would stop at start: 1 error (on standard error)"), "\(check.stdout)")
        let run = try await DecodeCommandTests.beaconwatch(
            ["run", "--config", "hsyco.ini", "--web-listen", "", "--events", "/dev/null"], in: folder)
        #expect(run.status != 0, "\(run.stderr)")
        #expect(run.stderr.contains(named), "\(run.stderr)")
    }

    /// What `run` survives is a warning: an adapter that is not there, scripts that cannot run.
    @Test func checkWarnsOfAnAbsentAdapterAndScriptsThatCannotRun() async throws {
        let folder = try scratchFolder("check-warnings")
        let script = folder.appendingPathComponent("enter")
        try Data("#!/bin/sh\n".utf8).write(to: script)
        let lines = [
            "LocationBaseBeacon.1 = E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,1,1",
            "Monitor.source = hci9",
            "State.database = \(folder.path)/state.sqlite",
            "Script.enter = enter",
            "Script.exit = \(folder.path)",
        ]
        try lines.joined(separator: "\n").write(
            to: folder.appendingPathComponent("hsyco.ini"), atomically: true, encoding: .utf8)
        let check = try await DecodeCommandTests.beaconwatch(["check", "--config", "hsyco.ini"], in: folder)
        #expect(check.status == 0, "\(check.stderr)")
        let adapter =
            FileManager.default.fileExists(atPath: "/sys/class/bluetooth")
            ? "  Monitor.source: no Bluetooth adapter hci9 on this machine"
            : "  Monitor.source: this machine shows no Bluetooth support (/sys/class/bluetooth is missing), so run exits 3 here"
        #expect(check.stdout.contains(adapter), "\(check.stdout)")
        #expect(check.stdout.contains("  Script.enter: enter is not executable by user "), "\(check.stdout)")
        #expect(check.stdout.contains("  Script.exit: \(folder.path) is a folder, not a program"), "\(check.stdout)")
    }

    /// A 0-byte file (a truncated save) or one with no beacon monitors nothing: an error.
    @Test(arguments: ["", "# only a comment\nMonitor.userid = bob\n"])
    func checkRefusesAConfigurationWithNoBeacon(contents: String) async throws {
        let file = try TemporaryFile(contents: Data(contents.utf8))
        let run = try await DecodeCommandTests.beaconwatch(["check", "--config", file.path])
        #expect(run.status == 2)
        #expect(run.stderr.contains("add one with LocationBaseBeacon.<id> = UUID,major,minor"), "\(run.stderr)")
        #expect(run.stderr.split(separator: "\n").count == 1, "\(run.stderr)")
    }

    @Test func checkShowsUnknownKeysAsWarningsAndStillExits0() async throws {
        let file = try TemporaryFile(
            contents: Data("LocationBaseBeacon.1 = E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,1,1\nHsyco.port = 80\n".utf8))
        let run = try await DecodeCommandTests.beaconwatch(["check", "--config", file.path])
        #expect(run.status == 0)
        #expect(run.stdout.contains(":2: unknown key Hsyco.port"))
    }
}
