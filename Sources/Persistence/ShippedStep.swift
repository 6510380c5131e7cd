/// Where a state stands in its cluster's stream of committed steps (docs/behaviour.md §21): the
/// epoch of the active that made the last step applied, and that step's number. Numbers go on
/// across epochs: a new active's first step follows the last one it applied as a standby.
package struct StepPosition: Sendable, Hashable, CustomStringConvertible {
    package var epoch: Int64
    package var step: Int64

    package init(epoch: Int64, step: Int64) {
        self.epoch = epoch
        self.step = step
    }

    /// A state never shipped.
    package static let start = StepPosition(epoch: 0, step: 0)

    package var description: String { "epoch \(epoch) step \(step)" }
}

/// One committed step of the active, as it travels to the standbys: the position it was made on
/// (`base`), the one it leads to, and the rows it changed (an SQLite changeset, docs/failover.md).
package struct ShippedStep: Sendable, Hashable {
    package var base: StepPosition
    package var position: StepPosition
    package var changeset: [UInt8]

    package init(base: StepPosition, position: StepPosition, changeset: [UInt8]) {
        self.base = base
        self.position = position
        self.changeset = changeset
    }

    static let magic = Array("bws1".utf8)

    /// The payload: `bws1`, the four numbers (8 bytes each, big-endian), the changeset.
    package var payload: [UInt8] {
        var bytes = Self.magic
        bytes.reserveCapacity(36 + changeset.count)
        for number in [base.epoch, base.step, position.epoch, position.step] { bytes.append(bigEndian: number) }
        return bytes + changeset
    }

    /// Reads a payload; `nil` for one that is not a step.
    package init?(payload: some Collection<UInt8>) {
        let bytes = Array(payload)
        guard bytes.count >= 36, Array(bytes[0..<4]) == Self.magic else { return nil }
        let numbers = (0..<4).map { Int64(bigEndian: bytes, at: 4 + $0 * 8) }
        base = StepPosition(epoch: numbers[0], step: numbers[1])
        position = StepPosition(epoch: numbers[2], step: numbers[3])
        changeset = Array(bytes[36...])
    }
}

/// The whole shipped state of an active at one position: a copy of its database (`VACUUM INTO`),
/// for a standby that missed steps or holds a state of its own (an old active back).
package struct StateSnapshot: Sendable, Hashable {
    package var position: StepPosition
    /// An SQLite database file.
    package var image: [UInt8]

    package init(position: StepPosition, image: [UInt8]) {
        self.position = position
        self.image = image
    }

    static let magic = Array("bwn1".utf8)

    /// The payload: `bwn1`, the position (8 bytes each, big-endian), the database file.
    package var payload: [UInt8] {
        var bytes = Self.magic
        bytes.append(bigEndian: position.epoch)
        bytes.append(bigEndian: position.step)
        return bytes + image
    }

    /// Reads a payload; `nil` for one that is not a snapshot.
    package init?(payload: some Collection<UInt8>) {
        let bytes = Array(payload)
        guard bytes.count >= 20, Array(bytes[0..<4]) == Self.magic else { return nil }
        position = StepPosition(epoch: Int64(bigEndian: bytes, at: 4), step: Int64(bigEndian: bytes, at: 12))
        image = Array(bytes[20...])
    }
}

/// What a standby did with a shipped step.
package enum StepVerdict: Sendable, Hashable {
    /// Applied: its state is at the step's position now. `replaced` rows differed from what the
    /// step expected (the newer won), `omitted` changes found no row (both 0 in a cluster in step).
    case applied(replaced: Int, omitted: Int)
    /// Applied before (QoS 1 delivers again after a reconnect), or from an active that was
    /// taken over since: nothing to do.
    case seen
    /// Not made on this state (a step missed, or this state went its own way): it needs a
    /// snapshot, and the steps after it.
    case needsSnapshot(have: StepPosition)
}

extension Array where Element == UInt8 {
    mutating func append(bigEndian number: Int64) {
        for shift in stride(from: 56, through: 0, by: -8) { append(UInt8(truncatingIfNeeded: number >> Int64(shift))) }
    }
}

extension Int64 {
    /// The 8 bytes at `offset` of `bytes`, big-endian (the caller checked they are there).
    init(bigEndian bytes: [UInt8], at offset: Int) {
        var value: Int64 = 0
        for index in offset..<(offset + 8) { value = value << 8 | Int64(bytes[index]) }
        self = value
    }
}

/// Checks a changeset's layout before SQLite reads it: SQLite 3.40's `sqlite3changeset_apply`
/// loops for ever on some cut-short changesets (found by ShippingTests; a step arrives over the
/// broker, where anyone with access can publish). The layout is the session extension's
/// (sqlite3session.c): per table `T`, a varint column count, one primary-key flag per column
/// and the table's name ending in a NUL; then changes, each an operation (INSERT 18, UPDATE 23,
/// DELETE 9), an indirect flag and one record of values (two for an UPDATE), each value a type
/// (0 undefined, 1 integer and 2 real of 8 bytes, 3 text and 4 blob of a varint length, 5 NULL).
enum ChangesetLayout {
    /// Whether `bytes` is a changeset of whole tables and changes, on tables of `tables` only.
    static func isWellFormed(_ bytes: [UInt8], tables: Set<String>) -> Bool {
        var reader = Reader(bytes: bytes)
        var columns = 0
        while !reader.atEnd {
            guard let marker = reader.byte() else { return false }
            switch marker {
            case UInt8(ascii: "T"):
                guard let count = reader.varint(), (1...64).contains(count), reader.skip(Int(count)),
                    let name = reader.nulTerminated(), tables.contains(name)
                else { return false }
                columns = Int(count)
            case 9, 18, 23:
                guard columns > 0, let indirect = reader.byte(), indirect <= 1 else { return false }
                for _ in 0..<(marker == 23 ? 2 : 1) * columns { guard reader.value() else { return false } }
            default:
                return false
            }
        }
        return true
    }

    struct Reader {
        let bytes: [UInt8]
        var offset = 0

        var atEnd: Bool { offset >= bytes.count }

        mutating func byte() -> UInt8? {
            guard offset < bytes.count else { return nil }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func skip(_ count: Int) -> Bool {
            guard count >= 0, count <= bytes.count - offset else { return false }
            offset += count
            return true
        }

        /// SQLite's varint: up to 9 bytes, 7 bits each but the ninth's 8, high bit first.
        mutating func varint() -> UInt64? {
            var value: UInt64 = 0
            for index in 0..<9 {
                guard let byte = byte() else { return nil }
                if index == 8 { return value << 8 | UInt64(byte) }
                value = value << 7 | UInt64(byte & 0x7F)
                if byte & 0x80 == 0 { return value }
            }
            return nil
        }

        mutating func nulTerminated() -> String? {
            guard let end = bytes[offset...].firstIndex(of: 0) else { return nil }
            defer { offset = end + 1 }
            return String(validating: bytes[offset..<end], as: UTF8.self)
        }

        mutating func value() -> Bool {
            switch byte() {
            case 0, 5: return true
            case 1, 2: return skip(8)
            case 3, 4:
                guard let length = varint(), length <= UInt64(bytes.count) else { return false }
                return skip(Int(length))
            default: return false
            }
        }
    }
}

/// Whether the outputs of a commit in a cluster may go out (docs/behaviour.md §21,
/// docs/failover.md, "Outputs wait for the broker").
package enum ShippedVerdict: Sendable, Hashable {
    /// The broker holds every step up to the commit's: the next active has them.
    case acknowledged
    /// Not yet: the outputs wait.
    case waiting
    /// This daemon is no longer the active and the broker may not hold those steps: the outputs
    /// are withheld, and the next active tells what happened from its own state.
    case withheld
}

/// Says when the broker holds the steps shipped: the cluster connection (docs/behaviour.md §21).
package protocol StepAcknowledger: Sendable {
    /// Whether the outputs of the steps shipped up to number `step` may go out now.
    func verdict(through step: Int64) -> ShippedVerdict
    /// The same, once it is no longer `.waiting`, or after `limit`.
    func awaitVerdict(through step: Int64, within limit: Duration) -> ShippedVerdict
}
