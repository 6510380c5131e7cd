import BeaconCore
import Floorplan
import RegionMonitor

/// "Learn this room" as the web view shows it (docs/behaviour.md §22): how well each trained room
/// is known, and the training sessions running. Read from the table of devices with the rest of a
/// reading.
package struct Training: Sendable, Hashable {
    /// A session running: the tag, the room (a Zone), its start and end on the engine's clock,
    /// and the samples it took so far.
    package struct Session: Sendable, Hashable {
        package var device: String
        package var room: Region
        package var started: Timestamp
        package var until: Timestamp
        package var samples: Int

        package init(device: String, room: Region, started: Timestamp, until: Timestamp, samples: Int) {
            (self.device, self.room, self.started, self.until, self.samples) = (device, room, started, until, samples)
        }

        /// Its length, seconds.
        package var seconds: Double { Double(until.microseconds &- started.microseconds) / 1_000_000 }

        /// Seconds left at `now`, 0 at the end.
        package func left(at now: Timestamp) -> Double {
            max(0, min(seconds, Double(until.microseconds &- now.microseconds) / 1_000_000))
        }
    }

    /// Each trained room (``Fingerprints/Status``), in the order of the hierarchy's Zones.
    package var rooms: [Fingerprints.Status] = []
    package var sessions: [Session] = []
    /// The engine's clock at the reading.
    package var now: Timestamp?

    package init(rooms: [Fingerprints.Status] = [], sessions: [Session] = [], now: Timestamp? = nil) {
        (self.rooms, self.sessions, self.now) = (rooms, sessions, now)
    }

    /// `device`'s session, if one runs.
    package func session(of device: String) -> Session? { sessions.first { $0.device == device } }

    /// The rooms in the order of `hierarchy`'s Zones (unknown ones last, by key).
    package func ordered(_ hierarchy: Hierarchy) -> [Fingerprints.Status] {
        rooms.sorted { a, b in
            let (x, y) = (Self.index(a.room, hierarchy), Self.index(b.room, hierarchy))
            return (x, a.room) < (y, b.room)
        }
    }

    static func index(_ room: String, _ hierarchy: Hierarchy) -> Int {
        Region(room).flatMap { hierarchy.zoneIndex(of: $0) } ?? Int.max
    }
}

extension BuildingModel {
    /// A room's name: its Zone's configured name, else its key.
    package func roomName(_ room: String) -> String { Region(room).map { name(of: $0) } ?? room }

    /// `0.93` as `93 %`.
    package static func percent(_ share: Double) -> String { "\(Int((share * 100).rounded())) %" }
}
