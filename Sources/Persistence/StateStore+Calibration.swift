import BeaconCore
import GRDB

/// The scanners' calibration (docs/behaviour.md §19): each direction's settled level, kept so
/// that a restart, or a cluster's next active (docs/behaviour.md §21), corrects the receivers at
/// once.
extension StateStore {
    static func write(_ calibration: [ScannerLevel], in db: Database) throws {
        try db.execute(sql: "DELETE FROM scannerLevel")
        let statement = try db.cachedStatement(
            sql: "INSERT OR REPLACE INTO scannerLevel (receiver, transmitter, level) VALUES (?, ?, ?)")
        for row in calibration where row.level.isFinite {
            try statement.execute(arguments: [row.receiver, row.transmitter, row.level])
        }
    }

    /// The levels kept, in scanner order.
    package func keptCalibration() throws -> [ScannerLevel] {
        try reading { db in
            try Row.fetchAll(
                db, sql: "SELECT receiver, transmitter, level FROM scannerLevel ORDER BY receiver, transmitter"
            )
            .map { ScannerLevel(receiver: $0["receiver"], transmitter: $0["transmitter"], level: $0["level"]) }
        }
    }
}
