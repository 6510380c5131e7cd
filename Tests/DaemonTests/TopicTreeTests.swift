import BeaconCore
import Daemon
import Foundation
import MQTT
import RegionMonitor
import Testing

/// docs/behaviour.md §10.1's topics and payloads, without a broker.
@Suite struct TopicTreeTests {
    static let tree = TopicTree(topic: "beaconwatch", userid: "alice", qos: 1)
    static let uuid = UUID(uuidString: "ACFD165E-C0C0-11E3-9BBE-1A514932AC01")!

    @Test func everyOutputGoesToItsTopicsWithItsRetainFlag() {
        let time = Timestamp(secondsSinceEpoch: 1_700_000_000)!
        let event = LocationBeaconEvent(
            session: "s", address: "a", userid: "alice", zone: "17081", distance: .near, background: false,
            beacon: BeaconID(uuid: Self.uuid, major: 1, minor: 17081), name: nil, area: "Office", zoneName: "Reception",
            rssi: -60, meters: 1.1)
        let location = Self.tree.messages(for: .location(time, event))
        #expect(location.map(\.topic) == ["beaconwatch/alice/event", "beaconwatch/alice/beacon/17081"])
        #expect(location.map(\.retain) == [false, true])
        #expect(location[1].payload == "near")
        #expect(location[0].payload == MonitorOutput.location(time, event).json)
        let enter = MonitorOutput.transition(
            time, Transition(direction: .enter, region: .area(Self.uuid), name: "Office", how: .derived))
        #expect(
            Self.tree.messages(for: enter).map { "\($0.topic) \($0.retain)" } == ["beaconwatch/alice/transition false"])
        let monitoring = MonitorOutput.monitoring(
            time, MonitoringChange(mode: .areas, area: nil, regions: [.area(Self.uuid)]))
        #expect(
            Self.tree.messages(for: monitoring).map { "\($0.topic) \($0.retain)" } == [
                "beaconwatch/alice/monitoring true"
            ])
        #expect(
            Self.tree.current(area: nil, zone: "Kitchen", nearest: "17081").map { "\($0.topic)=\($0.payload)" } == [
                "beaconwatch/alice/area=none", "beaconwatch/alice/zone=Kitchen", "beaconwatch/alice/nearest=17081",
            ])
        #expect(Self.tree.current(area: nil, zone: nil, nearest: nil).last?.payload == "none")
        // The nearest is state after the step, like the Area and Zone: its output is no event.
        let nearest = MonitorOutput.nearest(time, NearestChange(locationID: "17081", name: nil))
        #expect(Self.tree.messages(for: nearest).isEmpty)
        #expect(
            Self.tree.dwell(region: "\(Self.uuid):1", seconds: 12.5)
                == MQTTMessage(
                    topic: "beaconwatch/alice/dwell/\(Self.uuid):1", payload: "12.5", qos: 1, retain: true))
        #expect(
            Self.tree.status(online: false)
                == MQTTMessage(topic: "beaconwatch/alice/status", payload: "offline", qos: 1, retain: true))
    }

    @Test func ruleOutputsAreEventsOnTheirOwnTopics() {
        let time = Timestamp(secondsSinceEpoch: 1_700_000_000)!
        let outputs: [MonitorOutput] = [
            .rule(time, RuleEvaluation(region: "1", rule: "11", trigger: "on_entry", fired: true, count: 2)),
            .server(time, ServerNotice(region: "1", rule: "11", url: "http://s.test/1")),
            .notification(
                time,
                UserNotification(
                    region: "1", rule: "11", title: "Shop", body: "Hi", payload: nil, url: nil, pbk: nil,
                    delivery: .automatic)),
        ]
        for output in outputs {
            let messages = Self.tree.messages(for: output)
            #expect(
                messages == [
                    MQTTMessage(topic: "beaconwatch/alice/\(output.type)", payload: output.json, qos: 1, retain: false)
                ])
            #expect(Self.tree.event(for: output) == messages.first, "through the outbox")
        }
    }

    /// Where a tag is on its floor (docs/behaviour.md §20): retained on `B/position`, not an event.
    @Test func aPositionIsRetainedStateOnItsTopic() {
        let area = Region.area(Self.uuid)
        let output = MonitorOutput.position(
            Timestamp(secondsSinceEpoch: 1_700_000_000)!,
            PositionReport(
                area: area, x: 3.25, y: 2, error: 0.8, room: .zone(Self.uuid, major: 1), confidence: 0.91))
        let tag = TopicTree(topic: "beaconwatch", userid: "badge", qos: 1, device: "badge")
        #expect(tag.event(for: output) == nil)
        let messages = tag.messages(for: output)
        #expect(messages.count == 1 && messages.first?.topic == "beaconwatch/badge/position")
        #expect(messages.first?.retain == true)
        let payload = messages.first?.payload ?? ""
        for field in [
            #""type":"position""#, #""device":"badge""#, #""x":3.25"#, #""y":2.0"#, #""error":0.8"#,
            #""confidence":0.91"#, #""room":"\#(Self.uuid.uuidString):1""#, #""area":"\#(Self.uuid.uuidString)""#,
        ] {
            #expect(payload.contains(field), "\(payload) lacks \(field)")
        }
        // In no room: null.
        let unplaced = MonitorOutput.position(
            Timestamp(secondsSinceEpoch: 1_700_000_000)!,
            PositionReport(area: area, x: 1, y: 1, error: 2, room: nil, confidence: 0.4))
        #expect(tag.messages(for: unplaced).first?.payload.contains(#""room":null"#) == true)
    }

    /// docs/behaviour.md §17: geofence transitions on `B/transition`, their dwell under `B/dwell/geofence/<id>`,
    /// and `B/geofence` with the labels inside or `none`.
    @Test func geofenceTransitionsAndTheGeofencesInside() {
        let time = Timestamp(secondsSinceEpoch: 1_700_000_000)!
        var exit = GeofenceTransition(direction: .exit, id: "52", name: "Shop", distance: 140)
        exit.dwell = 30
        exit.dwellToday = 75.5
        let messages = Self.tree.messages(for: .geofence(time, exit))
        #expect(
            messages.map { "\($0.topic) \($0.retain) \($0.payload)" } == [
                "beaconwatch/alice/transition false \(MonitorOutput.geofence(time, exit).json)",
                "beaconwatch/alice/dwell/geofence/52 true 75.5",
            ])
        #expect(
            MonitorOutput.geofence(time, exit).json.contains(
                #""type":"exit","region":"52","kind":"geofence","name":"Shop""#))
        #expect(Self.tree.geofences([]).payload == "none")
        #expect(Self.tree.geofences(["Shop", "Yard"]).payload == "Shop,Yard")
        #expect(Self.tree.geofences(["Shop"]).topic == "beaconwatch/alice/geofence")
        #expect(Self.tree.geofences(["Shop"]).retain)
    }
}
