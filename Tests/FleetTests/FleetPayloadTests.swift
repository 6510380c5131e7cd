import BeaconCore
import BeaconConfiguration
import Fleet
import Foundation
import RegionMonitor
import Testing

/// Fleet payloads (docs/behaviour.md §15): OwnTracks, Theengs and forward messages to observations, and every
/// kind of garbage refused in one line naming the topic.
@Suite struct FleetPayloadTests {
    static let uuid = "112EBB9D-B8C9-4ABD-9EB3-43578BF86A41"
    static let owntracks = TopicFilter("owntracks/+/+")!
    static let theengs = TopicFilter("home/+/BTtoMQTT/#")!
    static let forward = TopicFilter("beaconwatch/+/sightings")!

    static func parse(_ source: FleetSource, _ topic: String, _ payload: String) -> Result<FleetMessage?, FleetError> {
        let filter =
            switch source {
            case .owntracks: owntracks
            case .theengs: theengs
            case .forward, .scanners, .radio: forward
            }
        return FleetMessage.parse(source: source, filter: filter, topic: topic, payload: Array(payload.utf8))
    }

    static func kinds(_ result: Result<FleetMessage?, FleetError>) -> [FleetObservation.Kind]? {
        guard case .success(let message?) = result else { return nil }
        return message.observations.map(\.kind)
    }

    // MARK: Topics and shards

    @Test func topicFiltersAreCheckedAndMatchTheirWildcardsAndWhatFollows() throws {
        #expect(TopicFilter("owntracks/+/+") != nil && TopicFilter("home/+/BTtoMQTT/#") != nil)
        for bad in ["", "a/b+/c", "a/#/b", "a/b#"] { #expect(TopicFilter(bad) == nil, "\(bad)") }
        let (wildcards, rest) = try #require(Self.owntracks.match("owntracks/alice/phone/event"))
        #expect(wildcards == ["alice", "phone"] && rest == ["event"])
        #expect(Self.owntracks.match("owntracks/alice") == nil)
        #expect(Self.owntracks.match("other/alice/phone") == nil)
        #expect(Self.theengs.match("home/cart-7/BTtoMQTT/AABBCCDDEEFF")?.wildcards == ["cart-7"])
        #expect(Self.owntracks.withSubtopics == "owntracks/+/+/#" && Self.theengs.withSubtopics == "home/+/BTtoMQTT/#")
    }

    /// FNV-1a-64's published test vectors, and a fleet split between two daemons with no device
    /// handled twice or left out.
    @Test func shardsSplitTheFleetByFNV1a64() {
        #expect(FNV1a64.hash("") == 0xcbf2_9ce4_8422_2325)
        #expect(FNV1a64.hash("a") == 0xaf63_dc4c_8601_ec8c)
        #expect(FNV1a64.hash("foobar") == 0x8594_4171_f739_67e8)
        let devices = (0..<200).map { "device-\($0)" }
        let shards = [Shard(index: 0, count: 2), Shard(index: 1, count: 2)]
        let owners = devices.map { device in shards.filter { $0.owns(device) }.count }
        #expect(owners.allSatisfy { $0 == 1 })
        let first = devices.filter(shards[0].owns).count
        #expect((60...140).contains(first), "\(first) of 200 on shard 0")
        #expect(devices.allSatisfy(Shard(index: 0, count: 1).owns))
    }

    // MARK: OwnTracks

    @Test func ownTracksMessagesBecomeObservationsOfUserDashDevice() throws {
        let location = Self.parse(
            .owntracks, "owntracks/alice/phone", #"{"_type":"location","lat":45.5,"lon":9.2,"acc":12,"tst":1700000000}"#
        )
        guard case .success(let message?) = location else {
            Issue.record("\(location)")
            return
        }
        #expect(message.device == "alice-phone" && message.commandTopic == "owntracks/alice/phone/cmd")
        #expect(
            message.observations == [
                FleetObservation(
                    time: Timestamp(secondsSinceEpoch: 1_700_000_000),
                    kind: .position(Position(latitude: 45.5, longitude: 9.2, accuracy: 12)))
            ])
        #expect(
            Self.kinds(Self.parse(.owntracks, "owntracks/alice/phone", #"{"_type":"lwt","tst":1700000000}"#)) == [
                .offline
            ])
        // A transition names its region by rid and desc (the waypoint's name); the fleet matches it.
        let enter =
            #"{"_type":"transition","event":"enter","t":"b","desc":"bw1003","rid":"bw0123456789ab","wtst":1000000001,"tst":1700000000}"#
        #expect(
            Self.kinds(Self.parse(.owntracks, "owntracks/alice/phone/event", enter)) == [
                .transition(PhoneTransition(rid: "bw0123456789ab", desc: "bw1003", entered: true))
            ])
        let leave = enter.replacingOccurrences(of: "enter", with: "leave")
        #expect(
            Self.kinds(Self.parse(.owntracks, "owntracks/alice/phone/event", leave)) == [
                .transition(PhoneTransition(rid: "bw0123456789ab", desc: "bw1003", entered: false))
            ])
        let beacon =
            #"{"_type":"beacon","uuid":"\#(Self.uuid)","major":3,"minor":1,"rssi":-67,"prox":2,"tst":1700000000}"#
        guard
            case .sighting(let advertisement, let proximity)? = Self.kinds(
                Self.parse(.owntracks, "owntracks/alice/phone/beacon", beacon))?.first
        else {
            Issue.record("no sighting")
            return
        }
        #expect(advertisement.beacon == BeaconID(uuid: UUID(uuidString: Self.uuid)!, major: 3, minor: 1))
        #expect(advertisement.rssi == -67 && proximity == .near)
    }

    /// What is not beaconwatch's is ignored without a word: the user's circular regions, cards,
    /// our own commands on `…/cmd`, an RSSI iOS could not measure. (A beacon region of the user's
    /// own is parsed, and matches none of the hierarchy's: FleetEngineTests.)
    @Test func whatIsNotBeaconwatchsIsIgnoredSilently() {
        let ignored: [(String, String)] = [
            ("owntracks/alice/phone/event", #"{"_type":"transition","event":"enter","t":"c","desc":"Home","tst":1}"#),

            ("owntracks/alice/phone", #"{"_type":"card","name":"Alice"}"#),
            ("owntracks/alice/phone/cmd", #"{"_type":"cmd","action":"setWaypoints"}"#),
            ("owntracks/alice/phone/info", "not even JSON"),
        ]
        for (topic, payload) in ignored {
            guard case .success(nil) = Self.parse(.owntracks, topic, payload) else {
                Issue.record("\(topic) \(payload) was not ignored")
                continue
            }
        }
        let unmeasured = #"{"_type":"beacon","uuid":"\#(Self.uuid)","major":3,"minor":1,"rssi":0,"prox":0}"#
        #expect(Self.kinds(Self.parse(.owntracks, "owntracks/alice/phone/beacon", unmeasured)) == [])
    }

    /// When a message was made (the age check, docs/behaviour.md §15): `created_at` when the app gives it (its
    /// last fix is old), else `tst`; never a `beacon` message's `tst`, which is the last fix.
    @Test func theAgeComesFromCreatedAtAndNeverFromABeaconsTst() {
        let old = 1_700_000_000
        let made = old + 600
        let transition =
            #"{"_type":"transition","event":"enter","t":"b","desc":"bw1","rid":"bw1","tst":\#(old),"created_at":\#(made)}"#
        let location = #"{"_type":"location","lat":45,"lon":9,"tst":\#(old),"created_at":\#(made)}"#
        let plain = #"{"_type":"location","lat":45,"lon":9,"tst":\#(old)}"#
        let beacon = #"{"_type":"beacon","uuid":"\#(Self.uuid)","major":3,"minor":1,"rssi":-60,"prox":2,"tst":\#(old)}"#
        func time(_ topic: String, _ payload: String) -> Timestamp?? {
            guard case .success(let message?) = Self.parse(.owntracks, topic, payload) else { return nil }
            return message.observations.first?.time
        }
        #expect(time("owntracks/a/b/event", transition) == Timestamp(secondsSinceEpoch: Double(made)))
        #expect(time("owntracks/a/b", location) == Timestamp(secondsSinceEpoch: Double(made)))
        #expect(time("owntracks/a/b", plain) == Timestamp(secondsSinceEpoch: Double(old)))
        #expect(time("owntracks/a/b/beacon", beacon) == .some(nil))
    }

    /// The phone's answer to `action: waypoints`: which of its waypoints iOS monitors (a circle,
    /// or a beacon region), as the app writes them (`regionAsJSON`).
    @Test func thePhonesWaypointsSayWhichIOSMonitors() {
        let answer = #"""
            {"_type":"waypoints","waypoints":[
             {"_type":"waypoint","desc":"Home","lat":45.4,"lon":9.1,"rad":100,"tst":1600000000,"rid":"e1b527"},
             {"_type":"waypoint","desc":"Pin","lat":45.4,"lon":9.1,"rad":0,"tst":1600000001,"rid":"aaaaaa"},
             {"_type":"waypoint","desc":"bw1003:\#(Self.uuid):3:1","lat":0,"lon":0,"rad":0,"tst":1000000001,"rid":"bw1"},
             {"_type":"waypoint","lat":1},
             "junk"]}
            """#
        #expect(
            Self.kinds(Self.parse(.owntracks, "owntracks/alice/phone/waypoints", answer)) == [
                .waypoints([
                    PhoneWaypoint(rid: "e1b527", name: "Home", monitored: true),
                    PhoneWaypoint(rid: "aaaaaa", name: "Pin", monitored: false),
                    PhoneWaypoint(rid: "bw1", name: "bw1003", monitored: true),
                ])
            ])
        let changed = #"{"_type":"waypoint","desc":"Home","lat":45.4,"lon":9.1,"rad":150,"tst":1600000000}"#
        #expect(Self.kinds(Self.parse(.owntracks, "owntracks/alice/phone/waypoint", changed)) == [.waypointChanged])
    }

    /// Garbage, wrong types, unknown `_type`s and oversized payloads: one line naming the topic
    /// and the reason, never a crash.
    @Test(arguments: [
        ("owntracks/alice/phone", "{not json", "not a JSON object"),
        ("owntracks/alice/phone", #"{"lat": 1}"#, "no \"_type\""),
        ("owntracks/alice/phone", #"{"_type":"teleport"}"#, "unknown \"_type\" 'teleport'"),
        ("owntracks/alice/phone", #"{"_type":"location","lat":"45","lon":9}"#, "\"lat\" and \"lon\""),
        ("owntracks/alice/phone", #"{"_type":"location","lat":95,"lon":9}"#, "\"lat\" and \"lon\""),
        ("owntracks/alice/phone", #"{"_type":"lwt","tst":"yesterday"}"#, "\"tst\""),
        ("owntracks/alice/phone/event", #"{"_type":"transition","event":"wander","t":"b","desc":"bw1"}"#, "\"event\""),
        ("owntracks/alice/phone/event", #"{"_type":"transition","event":"enter","t":"b","tst":1}"#, "names the region"),
        (
            "owntracks/alice/phone/event",
            #"{"_type":"transition","event":"enter","t":"b","desc":"bw1","created_at":"now"}"#, "\"created_at\""
        ),
        ("owntracks/alice/phone/waypoints", #"{"_type":"waypoints","waypoints":{"a":1}}"#, "must be a list"),
        ("owntracks/alice/phone/beacon", #"{"_type":"beacon","uuid":"x","major":1,"minor":1,"rssi":-60}"#, "\"uuid\""),
        (
            "owntracks/alice/phone/beacon", #"{"_type":"beacon","uuid":"\#(uuid)","major":70000,"minor":1,"rssi":-60}"#,
            "\"major\""
        ),
        (
            "owntracks/alice/phone/beacon", #"{"_type":"beacon","uuid":"\#(uuid)","major":1,"minor":1,"rssi":5}"#,
            "\"rssi\""
        ),
        (
            "owntracks/alice/phone/beacon",
            #"{"_type":"beacon","uuid":"\#(uuid)","major":1,"minor":1,"rssi":-5,"prox":9}"#, "\"prox\""
        ),
        ("owntracks/al ice/phone", #"{"_type":"lwt"}"#, "device id"),
    ])
    func ownTracksGarbageIsOneLineNamingTopicAndReason(topic: String, payload: String, reason: String) {
        guard case .failure(let error) = Self.parse(.owntracks, topic, payload) else {
            Issue.record("\(payload) was taken")
            return
        }
        #expect(error.description.hasPrefix("ignored a message on \(topic): "), "\(error)")
        #expect(error.description.contains(reason), "\(error)")
    }

    @Test func aPayloadOver64KiBIsRefusedUnread() {
        let huge = String(repeating: " ", count: 1 << 20)
        for (source, topic) in [
            (FleetSource.owntracks, "owntracks/a/b"), (.theengs, "home/g/BTtoMQTT/x"),
            (.forward, "beaconwatch/n/sightings"),
        ] {
            guard case .failure(let error) = Self.parse(source, topic, huge) else {
                Issue.record("\(source) took 1 MiB")
                continue
            }
            #expect(error.reason == "a payload of 1048576 bytes is over 64 KiB")
        }
    }

    // MARK: Theengs

    @Test func theengsIBeaconsAreSightingsOfTheGateway() throws {
        let dashed =
            #"{"id":"AA:BB:CC:DD:EE:FF","mfid":"4c00","uuid":"\#(Self.uuid.lowercased())","major":3,"minor":1,"txpower":-61,"rssi":-70}"#
        let bare =
            #"{"id":"AA:BB:CC:DD:EE:FF","mfid":"4C00","uuid":"\#(Self.uuid.replacingOccurrences(of: "-", with: ""))","major":3,"minor":1,"power":-61,"rssi":-70}"#
        var seen: [Advertisement] = []
        for payload in [dashed, bare] {
            let result = Self.parse(.theengs, "home/cart-7/BTtoMQTT/AABBCCDDEEFF", payload)
            guard case .success(let message?) = result,
                case .sighting(let advertisement, nil)? = message.observations.first?.kind
            else {
                Issue.record("\(result)")
                continue
            }
            #expect(message.device == "cart-7")
            seen.append(advertisement)
        }
        #expect(seen.count == 2 && seen[0] == seen[1])
        #expect(
            seen.first?.power == -61 && seen.first?.rssi == -70
                && seen.first?.address?.description == "AA:BB:CC:DD:EE:FF")
        // Another device, an Apple device that is no iBeacon: not ours.
        for other in [
            #"{"id":"11:22:33:44:55:66","rssi":-80,"brand":"Xiaomi"}"#, #"{"mfid":"4c00","rssi":-50}"#,
            #"{"mfid":"0059","uuid":"\#(Self.uuid)","major":1,"minor":1,"rssi":-50}"#,
        ] {
            guard case .success(nil) = Self.parse(.theengs, "home/cart-7/BTtoMQTT/x", other) else {
                Issue.record("\(other) was not ignored")
                continue
            }
        }
        for bad in [
            #"{"mfid":"4c00","uuid":"xyz","major":1,"minor":1,"rssi":-50}"#,
            #"{"mfid":"4c00","uuid":"\#(Self.uuid)","major":"1","minor":1,"rssi":-50}"#,
            #"{"mfid":"4c00","uuid":"\#(Self.uuid)","major":1,"minor":1}"#,
            #"{"mfid":"4c00","uuid":"\#(Self.uuid)","major":1,"minor":1,"rssi":-50,"txpower":"high"}"#, "[1,2]",
        ] {
            guard case .failure = Self.parse(.theengs, "home/cart-7/BTtoMQTT/x", bad) else {
                Issue.record("\(bad) was taken")
                continue
            }
        }
    }

    // MARK: forward

    @Test func forwardMessagesAreTraceLinesAndABadLineRefusesTheMessage() {
        let lines = [
            #"{"t": 1700000000.5, "uuid": "\#(Self.uuid)", "major": 3, "minor": 1, "rssi": -60}"#,
            #"{"t": 1700000000.6, "hci": "3e2a020103010f0e0d0c0b0a1e0201061aff4c000215b9407f30f5f8466eaff925556b57fe6d0049000ac5bf"}"#,
        ]
        let result = Self.parse(.forward, "beaconwatch/node-1/sightings", lines.joined(separator: "\n") + "\n")
        guard case .success(let message?) = result else {
            Issue.record("\(result)")
            return
        }
        #expect(message.device == "node-1" && message.observations.count == 2)
        #expect(message.observations.first?.time == Timestamp(secondsSinceEpoch: 1_700_000_000.5))
        let bad = lines[0] + "\n" + #"{"t": 1700000001, "uuid": "nope"}"#
        guard case .failure(let error) = Self.parse(.forward, "beaconwatch/node-1/sightings", bad) else {
            Issue.record("a bad line was taken")
            return
        }
        #expect(error.reason.hasPrefix("line 2: "), "\(error)")
        let mode = #"{"t": 1700000001, "mode": "foreground"}"#
        #expect((try? Self.parse(.forward, "beaconwatch/node-1/sightings", mode).get()) == nil)
    }
}
