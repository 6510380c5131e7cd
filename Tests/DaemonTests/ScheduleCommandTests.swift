import Foundation
import TestSupport
import Testing

/// `beaconwatch schedule` (docs/behaviour.md §8, §11) on the Ubudu example.
@Suite struct ScheduleCommandTests {
    static let rules = Conformance.url("ubudu/u_beacons-example.json").path

    func schedule(_ extra: [String]) async throws -> DecodeCommandTests.Run {
        try await DecodeCommandTests.beaconwatch(["schedule", "--rules", Self.rules] + extra)
    }

    @Test func theSundayTheClocksWentBackIsClosedUntilMondayMorning() async throws {
        let run = try await schedule(["--region", "1", "--at", "2013-10-27T07:59:59+01:00"])
        #expect(run.status == 0)
        #expect(run.stdout == "closed until 2013-10-28T09:00:00+01:00 (Monday)\n")
    }

    @Test func theMondayBreakIsClosedUntilThreeAndJSONSaysTheSame() async throws {
        #expect(
            try await schedule(["--region", "1", "--at", "2013-10-28T13:30:00+01:00"]).stdout
                == "closed until 2013-10-28T15:00:00+01:00 (Monday)\n")
        #expect(
            try await schedule(["--region", "1", "--at", "2013-10-28T12:00:00+01:00"]).stdout
                == "open until 2013-10-28T13:00:00+01:00 (Monday)\n")
        let json = try await schedule(["--region", "1", "--at", "2013-10-28T13:30:00+01:00", "--json"])
        #expect(json.stdout == #"{"open":false,"next":"2013-10-28T15:00:00+01:00"}"# + "\n")
    }

    @Test func anEmptyScheduleIsOpenWithNoChange() async throws {
        let folder = try scratchFolder("schedule")
        let file = folder.appendingPathComponent("rules.json")
        try #"{"u_beacons": [{"id": "5", "proximity_uid": "566C5595-6EC7-4F08-909F-C954BDCA6CD3", "schedule": null}]}"#
            .write(to: file, atomically: true, encoding: .utf8)
        let run = try await DecodeCommandTests.beaconwatch([
            "schedule", "--rules", file.path, "--region", "5", "--at", "2013-10-28T13:30:00Z", "--json",
        ])
        #expect(run.stdout == #"{"open":true,"next":null}"# + "\n")
        #expect(
            try await DecodeCommandTests.beaconwatch([
                "schedule", "--rules", file.path, "--region", "5", "--at", "2013-10-28T13:30:00Z",
            ]).stdout == "open\n")
    }

    @Test(arguments: [
        (["--region", "9", "--at", "2013-10-28T13:30:00+01:00"], "no region \"9\"; its regions are: 1"),
        (["--region", "1", "--at", "2013-10-28 13:30"], "is not an ISO-8601 time with an offset"),
    ])
    func badInputExits2WithOneLine(_ extra: [String], message: String) async throws {
        let run = try await schedule(extra)
        #expect(run.status == 2)
        #expect(run.stderr.contains(message), "\(run.stderr)")
        #expect(run.stderr.split(separator: "\n").count == 1)
    }

    @Test func aBrokenRulesFileExits2NamingIt() async throws {
        let folder = try scratchFolder("schedule")
        let file = folder.appendingPathComponent("rules.json")
        try "{".write(to: file, atomically: true, encoding: .utf8)
        let run = try await DecodeCommandTests.beaconwatch([
            "schedule", "--rules", file.path, "--region", "1", "--at", "2013-10-28T13:30:00Z",
        ])
        #expect(run.status == 2)
        #expect(run.stderr.contains("rules.json: not JSON"), "\(run.stderr)")
    }

    /// `--rules` may be an http(s) URL, fetched as it is; one that cannot be fetched is a runtime
    /// failure (status 1) in one line.
    @Test func aURLIsFetched() async throws {
        let document = try String(contentsOfFile: Self.rules, encoding: .utf8)
        let server = try HTTPServer { _ in .reply(status: 200, body: document) }
        defer { server.stop() }
        let run = try await DecodeCommandTests.beaconwatch([
            "schedule", "--rules", server.url("/u_beacons.json"), "--region", "1", "--at", "2013-10-28T13:30:00+01:00",
        ])
        #expect(run.stdout == "closed until 2013-10-28T15:00:00+01:00 (Monday)\n", "\(run.stderr)")
        let gone = "http://127.0.0.1:\(try HTTPServer.closedPort())/rules"
        let failed = try await DecodeCommandTests.beaconwatch([
            "schedule", "--rules", gone, "--region", "1", "--at", "2013-10-28T13:30:00+01:00",
        ])
        #expect(failed.status == 1)
        #expect(
            failed.stderr
                == "beaconwatch: \(gone) cannot be fetched: connection refused; check the URL and the network\n")
    }
}
