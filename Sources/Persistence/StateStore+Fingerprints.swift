import Floorplan
import GRDB

/// A room's fingerprints replaced or forgotten (docs/behaviour.md §22): what a commit writes.
package struct FingerprintChange: Sendable, Hashable {
    /// A Zone's region, or `*` for every room (with no training: all forgotten).
    package var room: String
    /// The room's new training; `nil` when forgotten.
    package var training: Fingerprints.Room?

    package init(room: String, training: Fingerprints.Room?) {
        self.room = room
        self.training = training
    }
}

/// The building's fingerprints (docs/behaviour.md §22): every room's training, kept so that a
/// restart, or a cluster's next active (docs/behaviour.md §21), places tags as before.
extension StateStore {
    static func write(_ changes: [FingerprintChange], in db: Database) throws {
        for change in changes {
            if change.room == "*" {
                try db.execute(sql: "DELETE FROM fingerprint")
            } else {
                try db.execute(sql: "DELETE FROM fingerprint WHERE room = ?", arguments: [change.room])
            }
            guard let training = change.training else { continue }
            let statement = try db.cachedStatement(
                sql: """
                    INSERT INTO fingerprint (room, sequence, scanner, level, at, device, trainedAt)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """)
            for (sequence, sample) in training.samples.enumerated() where sample.level.isFinite {
                try statement.execute(arguments: [
                    change.room, sequence, sample.scanner, sample.level, sample.at, training.device, training.trainedAt,
                ])
            }
        }
    }

    /// The fingerprints kept.
    package func keptFingerprints() throws -> Fingerprints {
        try reading { db in
            var rooms: [String: Fingerprints.Room] = [:]
            let rows = try Row.fetchAll(
                db, sql: "SELECT room, scanner, level, at, device, trainedAt FROM fingerprint ORDER BY room, sequence")
            for row in rows {
                let room: String = row["room"]
                let sample = FingerprintSample(room: room, scanner: row["scanner"], level: row["level"], at: row["at"])
                rooms[room, default: Fingerprints.Room(samples: [], device: row["device"], trainedAt: row["trainedAt"])]
                    .samples.append(sample)
            }
            return Fingerprints(rooms: rooms)
        }
    }
}
