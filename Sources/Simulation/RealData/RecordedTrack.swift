import Foundation

/// Recorded radio with ground truth (docs/performance.md "Real radio"): the TETAM open-plan office
/// (Tests/real-data/tetam/README.md), twelve fixed sensors and one carried beacon whose position
/// the cameras measured at every reception. Read, turned into what the daemon reads (an ini with a
/// floor plan and a trace of scanner reports), and scored against the truth.
package struct RecordedSite: Sendable {
    package struct Sensor: Sendable, Hashable {
        package var name: String
        package var mac: String
        package var x: Double
        package var y: Double
        package var z: Double
    }

    package struct Room: Sendable, Hashable {
        package var name: String
        /// The polygon, metres.
        package var points: [(x: Double, y: Double)]
        package static func == (a: Room, b: Room) -> Bool { a.name == b.name }
        package func hash(into hasher: inout Hasher) { hasher.combine(name) }
    }

    package var sensors: [Sensor]
    package var rooms: [Room]
    /// Each sensor's room (index into ``rooms``).
    package var roomOfSensor: [Int]
    package var tracks: [RecordedTrack]

    /// The four quadrants the README splits the office into (x = 10.33, y = 8.82).
    package static let splitX = 10.33
    package static let splitY = 8.82
    package static let width = 20.66
    package static let depth = 17.64

    /// The quadrant of a point: Q1 (x < 10.33, y < 8.82), Q2 (x < 10.33, y ≥ 8.82), Q3, Q4.
    package static func quadrant(x: Double, y: Double) -> Int {
        x < splitX ? (y < splitY ? 0 : 1) : (y >= splitY ? 2 : 3)
    }

    /// How far a point is from every room but its own: the distance to the nearest quadrant line.
    package static func margin(x: Double, y: Double) -> Double { min(abs(x - splitX), abs(y - splitY)) }

    /// Reads `folder` (Tests/real-data/tetam): `cnf/tetam.dev` and every `trk/*.mbd`, sorted by time.
    package init(folder: URL) throws {
        let dev = try String(contentsOf: folder.appendingPathComponent("cnf/tetam.dev"), encoding: .utf8)
        guard let line = dev.split(separator: "\n").first(where: { $0.hasPrefix("Dongles:") }),
            let json = try JSONSerialization.jsonObject(with: Data(line.dropFirst("Dongles:".count).utf8))
                as? [String: [Any]]
        else { throw RecordedDataError("cnf/tetam.dev has no Dongles line") }
        var sensors: [Sensor] = []
        for (mac, entry) in json {
            guard let point = entry.first as? [Double], point.count == 3, let name = entry.last as? String else {
                throw RecordedDataError("cnf/tetam.dev: sensor \(mac) has no point or name")
            }
            sensors.append(Sensor(name: name, mac: mac, x: point[0], y: point[1], z: point[2]))
        }
        sensors.sort { $0.name < $1.name }
        self.sensors = sensors
        let (w, d, sx, sy) = (Self.width, Self.depth, Self.splitX, Self.splitY)
        rooms = [
            Room(name: "Q1", points: [(0, 0), (sx, 0), (sx, sy), (0, sy)]),
            Room(name: "Q2", points: [(0, sy), (sx, sy), (sx, d), (0, d)]),
            Room(name: "Q3", points: [(sx, sy), (w, sy), (w, d), (sx, d)]),
            Room(name: "Q4", points: [(sx, 0), (w, 0), (w, sy), (sx, sy)]),
        ]
        roomOfSensor = sensors.map { Self.quadrant(x: $0.x, y: $0.y) }
        let index = Dictionary(uniqueKeysWithValues: sensors.enumerated().map { ($1.mac, $0) })
        let files = try FileManager.default.contentsOfDirectory(
            at: folder.appendingPathComponent("trk"), includingPropertiesForKeys: nil
        ).filter { $0.pathExtension == "mbd" }.sorted { $0.lastPathComponent < $1.lastPathComponent }
        tracks = try files.map { try RecordedTrack(file: $0, sensors: index) }
    }
}

package struct RecordedDataError: Error, CustomStringConvertible {
    package var description: String
    init(_ description: String) { self.description = description }
}

/// One recorded walk: every reception, in time order, with where the beacon was.
package struct RecordedTrack: Sendable {
    package struct Reception: Sendable {
        /// Seconds since the track's first reception.
        package var time: Double
        package var sensor: Int
        package var rssi: Double
        package var x: Double
        package var y: Double

        package init(time: Double, sensor: Int, rssi: Double, x: Double, y: Double) {
            self.time = time
            self.sensor = sensor
            self.rssi = rssi
            self.x = x
            self.y = y
        }
    }

    package var name: String
    package var receptions: [Reception]
    package var duration: Double { receptions.last?.time ?? 0 }

    /// A track of given receptions, in time order (such as nodes' reports of a recorded walk).
    package init(name: String, receptions: [Reception]) {
        self.name = name
        self.receptions = receptions
    }

    init(file: URL, sensors: [String: Int]) throws {
        name = file.deletingPathExtension().lastPathComponent.replacingOccurrences(of: "_all_sensors", with: "")
        let text = try String(contentsOf: file, encoding: .utf8)
        var rows: [(Double, Reception)] = []
        for line in text.split(whereSeparator: \.isNewline) {
            let fields = line.split(separator: ",")
            guard fields.count >= 7, let t = Double(fields[0]), let sensor = sensors[String(fields[1])],
                let rssi = Double(fields[3]), let x = Double(fields[4]), let y = Double(fields[5])
            else { throw RecordedDataError("\(file.lastPathComponent): a line is not a reception: \(line.prefix(60))") }
            rows.append((t, Reception(time: 0, sensor: sensor, rssi: rssi, x: x, y: y)))
        }
        // The source's files hold a few lines a fraction of a millisecond out of order.
        rows.sort { $0.0 < $1.0 }
        let start = rows.first?.0 ?? 0
        receptions = rows.map { row in
            var reception = row.1
            reception.time = row.0 - start
            return reception
        }
    }

    /// The true position at `time` (linear between receptions).
    package func truth(at time: Double) -> (x: Double, y: Double) {
        var low = 0
        var high = receptions.count - 1
        guard high > 0, time > receptions[0].time else { return (receptions[0].x, receptions[0].y) }
        guard time < receptions[high].time else { return (receptions[high].x, receptions[high].y) }
        while high - low > 1 {
            let mid = (low + high) / 2
            if receptions[mid].time <= time { low = mid } else { high = mid }
        }
        let (a, b) = (receptions[low], receptions[high])
        let share = b.time > a.time ? (time - a.time) / (b.time - a.time) : 0
        return (a.x + (b.x - a.x) * share, a.y + (b.y - a.y) * share)
    }
}
