import BeaconCore
import Engine
import JSONText
import RegionMonitor

/// A JSON value written in order into one byte buffer: objects, arrays, strings, numbers.
struct JSONText {
    private(set) var bytes: [UInt8] = []
    private var needsComma: [Bool] = [false]

    init(capacity: Int = 1024) { bytes.reserveCapacity(capacity) }

    var text: String { String(decoding: bytes, as: UTF8.self) }

    private mutating func separate() {
        if needsComma[needsComma.count - 1] { bytes.append(UInt8(ascii: ",")) }
        needsComma[needsComma.count - 1] = true
    }

    mutating func key(_ key: String) {
        separate()
        JSONObjectWriter.appendString(key, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        // The value that follows is not separated again.
        needsComma[needsComma.count - 1] = false
    }

    private mutating func value(_ body: (inout [UInt8]) -> Void) {
        separate()
        body(&bytes)
    }

    mutating func string(_ value: String?) {
        self.value { out in
            if let value { JSONObjectWriter.appendString(value, to: &out) } else { out += Array("null".utf8) }
        }
    }

    mutating func number(_ value: Double?) {
        self.value { out in
            if let value, value.isFinite { out += Array(value.description.utf8) } else { out += Array("null".utf8) }
        }
    }

    mutating func integer(_ value: Int) { self.value { $0 += Array(String(value).utf8) } }

    mutating func bool(_ value: Bool) { self.value { $0 += Array((value ? "true" : "false").utf8) } }

    mutating func time(_ value: Timestamp?) {
        self.value { out in
            guard let value else { return out += Array("null".utf8) }
            out.append(UInt8(ascii: "\""))
            value.appendISO8601(to: &out)
            out.append(UInt8(ascii: "\""))
        }
    }

    mutating func object(_ body: (inout JSONText) -> Void) { nest("{", "}", body) }

    mutating func array(_ body: (inout JSONText) -> Void) { nest("[", "]", body) }

    private mutating func nest(_ open: Unicode.Scalar, _ close: Unicode.Scalar, _ body: (inout JSONText) -> Void) {
        separate()
        bytes.append(UInt8(ascii: open))
        needsComma.append(false)
        body(&self)
        needsComma.removeLast()
        bytes.append(UInt8(ascii: close))
    }

    mutating func field(_ name: String, _ value: String?) {
        key(name)
        string(value)
    }

    mutating func field(_ name: String, _ value: Double?) {
        key(name)
        number(value)
    }

    mutating func field(_ name: String, _ value: Int) {
        key(name)
        integer(value)
    }

    mutating func field(_ name: String, _ value: Bool) {
        key(name)
        bool(value)
    }

    mutating func field(_ name: String, time value: Timestamp?) {
        key(name)
        time(value)
    }
}

/// The API's JSON (docs/behaviour.md §16, docs/web.md): `/api/v1/state` and `/api/v1/devices/<id>`.
package enum StateJSON {
    /// The building: every device's whereabouts, the hierarchy with who is inside each Area and
    /// Zone and today's leaderboard per Zone, and the latest transitions (newest first).
    package static func state(_ model: BuildingModel) -> String {
        var json = JSONText(capacity: 4096 + model.devices.count * 200)
        let devices = model.orderedDevices
        var inside: [Region: [String]] = [:]
        for device in devices {
            for presence in device.reading?.monitor.inside ?? [] where presence.region.kind != .beacon {
                inside[presence.region, default: []].append(device.id)
            }
        }
        let boards = model.leaderboards()
        json.object { json in
            json.field("t", time: model.latestTime)
            json.key("devices")
            json.array { json in
                for device in devices {
                    json.object { json in
                        json.field("id", device.id)
                        json.field("name", device.name)
                        json.field("own", device.own)
                        let reading = device.reading
                        let inside = reading?.monitor.inside.map(\.region) ?? []
                        json.field("area", inside.first { $0.kind == .area }.map(model.name(of:)))
                        json.field("zone", inside.first { $0.kind == .zone }.map(model.name(of:)))
                        json.field("nearest", reading?.monitor.nearest)
                        json.key("inside")
                        json.array { json in for region in inside { json.string(region.description) } }
                        if let geofences = reading?.geofences {
                            json.key("geofences")
                            json.array { json in for label in geofences { json.string(label) } }
                        }
                    }
                }
            }
            json.key("areas")
            json.array { json in
                for area in model.hierarchy.areas {
                    json.object { json in
                        json.field("region", area.region.description)
                        json.field("name", area.name)
                        json.key("devices")
                        json.array { json in for id in inside[area.region] ?? [] { json.string(id) } }
                        json.key("zones")
                        json.array { json in
                            for index in area.zones {
                                let zone = model.hierarchy.zones[index]
                                json.object { json in
                                    json.field("region", zone.region.description)
                                    json.field("name", zone.name)
                                    json.key("devices")
                                    json.array { json in for id in inside[zone.region] ?? [] { json.string(id) } }
                                    json.key("leaderboard")
                                    json.array { json in
                                        for row in boards[zone.region.description] ?? [] {
                                            json.object { json in
                                                json.field("device", row.device.id)
                                                json.field("seconds", row.seconds)
                                            }
                                        }
                                    }
                                    json.field("beacons", zone.beacons.count)
                                }
                            }
                        }
                    }
                }
            }
            json.key("transitions")
            json.array { json in
                for entry in model.transitions.reversed() { transition(entry, into: &json) }
            }
        }
        return json.text
    }

    static func transition(_ entry: BuildingModel.TransitionEntry, into json: inout JSONText) {
        json.object { json in
            json.field("t", time: entry.time)
            json.field("type", entry.transition.direction.rawValue)
            json.field("device", entry.device)
            json.field("region", entry.transition.region.description)
            json.field("kind", entry.transition.region.kind.rawValue)
            json.field("name", entry.transition.name)
        }
    }

    /// One device in full: its monitored set, regions inside, beacons with their RSSI of the last
    /// five minutes, alerts, rule counts, latches; `nil` for an unknown id.
    package static func device(_ model: BuildingModel, id: String) -> String? {
        guard let device = model.devices[id] else { return nil }
        var json = JSONText()
        let reading = device.reading
        let monitor = reading?.monitor
        json.object { json in
            json.field("id", device.id)
            json.field("name", device.name)
            json.field("own", device.own)
            json.field("t", time: monitor?.time)
            json.field("ranging", monitor?.ranging.rawValue)
            json.field("mode", monitor?.mode.rawValue)
            json.field("maxRegions", model.maxRegions)
            json.key("monitored")
            json.array { json in for region in monitor?.monitored ?? [] { json.string(region.description) } }
            json.key("inside")
            json.array { json in
                for presence in monitor?.inside ?? [] {
                    json.object { json in
                        json.field("region", presence.region.description)
                        json.field("kind", presence.region.kind.rawValue)
                        json.field("name", model.hierarchy.name(of: presence.region))
                        json.field("since", time: presence.since)
                    }
                }
            }
            json.field("nearest", monitor?.nearest)
            if let monitor, monitor.room != nil || monitor.roomChange != nil {
                // A tag's room and why it last changed (docs/behaviour.md §19).
                json.field("room", monitor.room?.description)
                json.field("why", monitor.roomChange.map(model.why))
            }
            json.key("beacons")
            json.array { json in
                let history = model.history[device.id] ?? [:]
                var listed = Set<String>()
                for beacon in monitor?.beacons ?? [] {
                    listed.insert(beacon.locationID)
                    beaconJSON(beacon.locationID, beacon, history: history[beacon.locationID] ?? [], model, &json)
                }
                for (locationID, samples) in history.sorted(by: { $0.key < $1.key }) where !listed.contains(locationID)
                {
                    beaconJSON(locationID, nil, history: samples, model, &json)
                }
            }
            json.key("alerts")
            json.array { json in
                for (id, status) in (reading?.alerts ?? [:]).sorted(by: { $0.key < $1.key }) {
                    json.object { json in
                        json.field("id", id)
                        json.field("status", status.rawValue)
                    }
                }
            }
            json.key("rules")
            json.array { json in
                let counts = (reading?.ruleCounts ?? [:]).sorted {
                    ($0.key.region, $0.key.rule) < ($1.key.region, $1.key.rule)
                }
                for (key, count) in counts {
                    json.object { json in
                        json.field("region", key.region)
                        json.field("rule", key.rule)
                        json.field("count", count)
                    }
                }
            }
            json.key("latches")
            json.array { json in
                for latch in reading?.latches ?? [] {
                    json.object { json in
                        json.field("region", latch.region)
                        json.field("rule", latch.rule)
                        json.field("event", latch.direction.rawValue)
                        json.field("due", time: latch.due)
                    }
                }
            }
            json.field("notificationsToday", reading?.notificationsToday ?? 0)
            json.key("dwellToday")
            json.object { json in
                for (region, seconds) in (reading?.dwellToday ?? [:]).sorted(by: { $0.key < $1.key }) {
                    json.field(region, seconds)
                }
            }
        }
        return json.text
    }

    private static func beaconJSON(
        _ locationID: String, _ beacon: MonitorReading.Beacon?, history: [BuildingModel.Sample],
        _ model: BuildingModel, _ json: inout JSONText
    ) {
        let index = model.hierarchy.index(ofLocation: locationID)
        json.object { json in
            json.field("id", locationID)
            json.field("name", index.flatMap { model.hierarchy.beacons[$0].name })
            json.field("region", index.map { Region.beacon(model.hierarchy.beacons[$0].id).description })
            json.field("class", (beacon?.computed ?? .off).rawValue)
            json.field("reported", (beacon?.reported ?? .off).rawValue)
            json.field("rssi", beacon?.rssi)
            json.field("meters", beacon?.meters)
            json.key("history")
            json.array { json in
                for sample in history {
                    json.array { json in
                        json.time(sample.time)
                        json.number(sample.rssi)
                    }
                }
            }
        }
    }
}
