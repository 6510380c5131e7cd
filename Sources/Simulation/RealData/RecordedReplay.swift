import Foundation

/// A recorded site as the daemon reads it: an ini with the floor plan and a trace of scanner
/// reports (docs/performance.md "Real radio").
extension RecordedSite {
    package static let areaUUID = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
    package static let tagUUID = "FDA50693-A4E2-4FB1-AFCF-C6EB07647825"
    /// The trace's first instant (Unix seconds).
    package static let epoch = 1_700_000_000.0

    /// The ini: one Area, a Zone per room with its polygon, every sensor a scanner at its point in
    /// the room it stands in, the beacon a declared tag. `walls`: `LocationAreaWalls` (nil: the
    /// key left out, as a user who does not know it leaves it). `floorPlan` false: the same
    /// building without shapes (section 19's nearest rule). `nodes`: the sensors are ESPresense
    /// nodes, declared as `scripts/bench rooms` declares its nodes (`Scanners.espresense`, the
    /// only source: every report a node's filtered estimate, docs/espresense.md).
    package func ini(walls: String? = "none", floorPlan: Bool = true, nodes: Bool = false, extra: String = "")
        -> String
    {
        var lines = ["LocationAreaName.\(Self.areaUUID) = Office"]
        for (index, room) in rooms.enumerated() {
            lines.append("LocationZoneName.\(Self.areaUUID):\(index + 1) = \(room.name)")
            if floorPlan {
                let points = room.points.map { "\(format($0.x)),\(format($0.y))" }.joined(separator: "; ")
                lines.append("LocationZoneShape.\(Self.areaUUID):\(index + 1) = \(points)")
            }
        }
        for (index, sensor) in sensors.enumerated() {
            let id = 101 + index
            lines.append("LocationBaseBeacon.\(id) = \(Self.areaUUID),\(roomOfSensor[index] + 1),\(id)")
            lines.append("LocationScanner.\(id) = \(sensor.name)")
            if floorPlan {
                lines.append(
                    "LocationScannerPoint.\(sensor.name) = \(format(sensor.x)),\(format(sensor.y)),\(format(sensor.z))")
            }
        }
        if floorPlan, let walls { lines.append("LocationAreaWalls.\(Self.areaUUID) = \(walls)") }
        lines += [
            "Tag.beacon = ibeacon:\(Self.tagUUID):7:1, Beacon",
            "Monitor.source = none",
            "Monitor.userid = office",
        ]
        if nodes { lines += ["MQTT.host = 127.0.0.1", "Scanners.espresense = espresense/devices/+/+"] }
        return lines.joined(separator: "\n") + "\n" + extra
    }

    /// The trace of `track`: one scanner report a reception, the beacon claiming `power` dBm.
    package func trace(_ track: RecordedTrack, power: Int = -59) -> String {
        var text = ""
        for reception in track.receptions {
            let t = String(format: "%.6f", Self.epoch + reception.time)
            text +=
                #"{"t": \#(t), "scanner": "\#(sensors[reception.sensor].name)", "tag": "ibeacon:\#(Self.tagUUID):7:1", "rssi": \#(Int(reception.rssi)), "power": \#(power)}"#
                + "\n"
        }
        return text
    }

    /// The beacon as an ESPresense node names it in its topic (`iBeacon:<uuid>-<major>-<minor>`).
    package static let espresenseID = "iBeacon:\(tagUUID.lowercased())-7-1"

    /// The trace of ESPresense nodes' reports (`reports`: each one's time, sensor and filtered
    /// RSSI, in delivery order): each line a node's report (`"via": "espresense"`, the RSSI to
    /// 0.01 dB, the beacon by the node's id for it), the beacon claiming `power` dBm (`rssi@1m`).
    package func nodeTrace(_ reports: [RecordedTrack.Reception], power: Int = -59) -> String {
        var text = ""
        for report in reports {
            let t = String(format: "%.6f", Self.epoch + report.time)
            let rssi = String(format: "%.2f", report.rssi)
            text +=
                #"{"t": \#(t), "scanner": "\#(sensors[report.sensor].name)", "tag": "\#(Self.espresenseID)", "rssi": \#(rssi), "power": \#(power), "via": "espresense"}"#
                + "\n"
        }
        return text
    }

    private func format(_ value: Double) -> String { String(format: "%.2f", value) }

    /// What `replay` printed, as the room it put the tag in over time and its positions.
    package func timeline(fromReplay output: String) -> Timeline {
        var timeline = Timeline()
        let names = Dictionary(uniqueKeysWithValues: rooms.enumerated().map { ($1.name, $0) })
        for line in output.split(separator: "\n") {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let type = object["type"] as? String, let t = Self.seconds(object["t"])
            else { continue }
            let time = t - Self.epoch
            switch type {
            case "enter" where object["kind"] as? String == "zone":
                if let name = object["name"] as? String, let room = names[name] { timeline.rooms.append((time, room)) }
            case "exit" where object["kind"] as? String == "zone":
                if let name = object["name"] as? String, let room = names[name],
                    timeline.rooms.last?.room == room
                {
                    timeline.rooms.append((time, nil))
                }
            case "exit" where object["kind"] as? String == "area":
                timeline.areaExits.append(time)
                timeline.rooms.append((time, nil))
            case "position":
                if let x = object["x"] as? Double, let y = object["y"] as? Double {
                    timeline.positions.append((time, x, y))
                }
            default: break
            }
        }
        return timeline
    }

    /// An output's `t`: ISO 8601 text.
    static func seconds(_ value: Any?) -> Double? {
        guard let text = value as? String else { return (value as? Double) }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date.timeIntervalSince1970 }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)?.timeIntervalSince1970
    }
}

/// A system's answer over a track: rooms (nil: no room) and positions, each from its instant on.
package struct Timeline: Sendable {
    package var rooms: [(time: Double, room: Int?)] = []
    package var positions: [(time: Double, x: Double, y: Double)] = []
    package var areaExits: [Double] = []

    package init() {}

    func room(at time: Double, from index: inout Int) -> Int? {
        while index + 1 < rooms.count, rooms[index + 1].time <= time { index += 1 }
        guard index < rooms.count, rooms[index].time <= time else { return nil }
        return rooms[index].room
    }

    func position(at time: Double, from index: inout Int) -> (x: Double, y: Double)? {
        while index + 1 < positions.count, positions[index + 1].time <= time { index += 1 }
        guard index < positions.count, positions[index].time <= time else { return nil }
        return (positions[index].x, positions[index].y)
    }
}

/// How right a timeline is against a track's truth, sampled every 0.1 s.
package struct TrackScore: Sendable {
    package var samples = 0
    package var right = 0
    /// Samples at least 1 m from every other room, and those right.
    package var clear = 0
    package var clearRight = 0
    package var changes = 0
    package var truthChanges = 0
    /// Seconds from each true room change to the system showing the new room (the rest of the
    /// track where it never does).
    package var handovers: [Double] = []
    package var errors: [Double] = []
    package var areaExits = 0

    package init() {}

    package init(track: RecordedTrack, timeline: Timeline) {
        var (roomIndex, positionIndex) = (0, 0)
        var shown: Int?? = .none
        var truthRoom: Int?
        var pending: [(since: Double, room: Int)] = []
        let step = 0.1
        var time = 0.0
        while time <= track.duration {
            let truth = track.truth(at: time)
            let room = RecordedSite.quadrant(x: truth.x, y: truth.y)
            let estimate = timeline.room(at: time, from: &roomIndex)
            samples += 1
            if estimate == room { right += 1 }
            if RecordedSite.margin(x: truth.x, y: truth.y) >= 1 {
                clear += 1
                if estimate == room { clearRight += 1 }
            }
            if let truthRoom, truthRoom != room {
                truthChanges += 1
                pending.append((time, room))
            }
            truthRoom = room
            if let shownRoom = shown, shownRoom != estimate, estimate != nil { changes += 1 }
            if estimate != nil { shown = .some(estimate) }
            pending.removeAll { entry in
                guard estimate == entry.room else { return false }
                handovers.append(time - entry.since)
                return true
            }
            if let point = timeline.position(at: time, from: &positionIndex) {
                let (dx, dy) = (point.x - truth.x, point.y - truth.y)
                errors.append((dx * dx + dy * dy).squareRoot())
            }
            time += step
        }
        handovers += pending.map { track.duration - $0.since }
        areaExits = timeline.areaExits.filter { $0 < track.duration }.count
    }

    package mutating func add(_ other: TrackScore) {
        samples += other.samples
        right += other.right
        clear += other.clear
        clearRight += other.clearRight
        changes += other.changes
        truthChanges += other.truthChanges
        handovers += other.handovers
        errors += other.errors
        areaExits += other.areaExits
    }

    package var rightShare: Double { samples > 0 ? Double(right) / Double(samples) : 0 }
    package var clearShare: Double? { clear > 0 ? Double(clearRight) / Double(clear) : nil }

    package static func percentile(_ values: [Double], _ p: Double) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int((p * Double(sorted.count - 1)).rounded()))]
    }
}

/// The rules users run, on the same receptions: each decides the room (and a point) at every
/// reception from what came before.
extension RecordedSite {
    /// The strongest sensor over the last `window` seconds (each sensor's loudest reception in it)
    /// wins at once: the room of that sensor, its point as the position.
    package func strongest(_ track: RecordedTrack, window: Double = 2) -> Timeline {
        var timeline = Timeline()
        var recent: [(time: Double, sensor: Int, rssi: Double)] = []
        for reception in track.receptions {
            recent.append((reception.time, reception.sensor, reception.rssi))
            recent.removeAll { $0.time < reception.time - window }
            guard let best = recent.max(by: { $0.rssi < $1.rssi || ($0.rssi == $1.rssi && $0.time < $1.time) }) else {
                continue
            }
            if timeline.rooms.last?.room != roomOfSensor[best.sensor] {
                timeline.rooms.append((reception.time, roomOfSensor[best.sensor]))
            }
            timeline.positions.append((reception.time, sensors[best.sensor].x, sensors[best.sensor].y))
        }
        return timeline
    }

    /// A weighted centroid of the `count` loudest sensors over the last `window` seconds (each
    /// sensor's mean reception), weighed by the inverse of the distance their RSSI gives at the
    /// usual −59 dBm and exponent 2.5; its room is the room of that point.
    package func centroid(_ track: RecordedTrack, count: Int = 3, window: Double = 2) -> Timeline {
        var timeline = Timeline()
        var recent: [(time: Double, sensor: Int, rssi: Double)] = []
        for reception in track.receptions {
            recent.append((reception.time, reception.sensor, reception.rssi))
            recent.removeAll { $0.time < reception.time - window }
            var totals = [Double](repeating: 0, count: sensors.count)
            var counts = [Double](repeating: 0, count: sensors.count)
            for entry in recent {
                totals[entry.sensor] += entry.rssi
                counts[entry.sensor] += 1
            }
            var means: [(sensor: Int, rssi: Double)] = []
            for sensor in sensors.indices where counts[sensor] > 0 {
                means.append((sensor, totals[sensor] / counts[sensor]))
            }
            means.sort { $0.rssi > $1.rssi || ($0.rssi == $1.rssi && $0.sensor < $1.sensor) }
            let loudest = means.prefix(count)
            var (x, y, weight) = (0.0, 0.0, 0.0)
            for entry in loudest {
                let w = 1 / max(0.3, pow(10, (-59 - entry.rssi) / 25))
                x += w * sensors[entry.sensor].x
                y += w * sensors[entry.sensor].y
                weight += w
            }
            guard weight > 0 else { continue }
            let point = (x / weight, y / weight)
            let room = Self.quadrant(x: point.0, y: point.1)
            if timeline.rooms.last?.room != room { timeline.rooms.append((reception.time, room)) }
            timeline.positions.append((reception.time, point.0, point.1))
        }
        return timeline
    }

    /// The oracle: the room of the sensor nearest the true position (a noise-free nearest rule,
    /// the layout's own limit for rules that pick a sensor).
    package func oracle(_ track: RecordedTrack) -> Timeline {
        var timeline = Timeline()
        for reception in track.receptions {
            let nearest = sensors.indices.min { a, b in
                hypot(sensors[a].x - reception.x, sensors[a].y - reception.y)
                    < hypot(sensors[b].x - reception.x, sensors[b].y - reception.y)
            }!
            if timeline.rooms.last?.room != roomOfSensor[nearest] {
                timeline.rooms.append((reception.time, roomOfSensor[nearest]))
            }
        }
        return timeline
    }
}
