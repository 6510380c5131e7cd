/// A min-heap of deadlines, in microseconds, each with a payload: the one timer structure of the
/// core. Entries due at the same instant come out in the order they were scheduled.
///
/// The monitor arms a deadline once (a region's exit, a beacon going `off`) and, when it comes
/// due, checks whether a later sighting moved it; if so it re-arms. So a sighting costs no heap
/// operation, and the heap holds one entry per active region or beacon. The table of devices
/// keeps each device's next wake-up in one the same way.
///
/// Inlinable: it is generic, and the monitor's hot path uses it from another module.
package struct DeadlineQueue<Payload: Sendable>: Sendable {
    @usableFromInline
    struct Entry: Sendable {
        @usableFromInline var due: Int64
        @usableFromInline var sequence: UInt64
        @usableFromInline var payload: Payload

        @inlinable
        init(due: Int64, sequence: UInt64, payload: Payload) {
            self.due = due
            self.sequence = sequence
            self.payload = payload
        }
    }

    @usableFromInline var heap: [Entry] = []
    @usableFromInline var sequence: UInt64 = 0

    @inlinable
    package init() {}

    @inlinable
    package var isEmpty: Bool { heap.isEmpty }
    @inlinable
    package var count: Int { heap.count }

    /// The earliest deadline.
    @inlinable
    package var nextDue: Int64? { heap.first?.due }

    /// The earliest entry.
    @inlinable
    package var first: (due: Int64, payload: Payload)? { heap.first.map { ($0.due, $0.payload) } }

    @inlinable
    package mutating func schedule(_ payload: Payload, at due: Int64) {
        sequence &+= 1
        schedule(payload, at: due, rank: sequence)
    }

    /// Schedules `payload` at `due`, coming out among entries of the same instant by `rank`
    /// (smallest first) instead of the order of scheduling: a caller's own order (rules in file
    /// order). Use one way or the other for a queue, not both.
    @inlinable
    package mutating func schedule(_ payload: Payload, at due: Int64, rank: UInt64) {
        heap.append(Entry(due: due, sequence: rank, payload: payload))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.before(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the earliest entry if it is due at or before `time`.
    @inlinable
    package mutating func popDue(atOrBefore time: Int64) -> (due: Int64, payload: Payload)? {
        guard let first = heap.first, first.due <= time else { return nil }
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1
                let right = left + 1
                var smallest = parent
                if left < heap.count, Self.before(heap[left], heap[smallest]) { smallest = left }
                if right < heap.count, Self.before(heap[right], heap[smallest]) { smallest = right }
                if smallest == parent { break }
                heap.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return (first.due, first.payload)
    }

    /// For a queue whose entries go stale (their owner re-armed or cleared them since): drops
    /// the earliest entries that `isCurrent` refuses and returns the earliest deadline left.
    @inlinable
    package mutating func earliestCurrent(_ isCurrent: (_ due: Int64, _ payload: Payload) -> Bool) -> Int64? {
        while let first = heap.first, !isCurrent(first.due, first.payload) { _ = popDue(atOrBefore: first.due) }
        return heap.first?.due
    }

    /// Every deadline moved by `delta`: the same order, so the heap stays a heap.
    @inlinable
    package mutating func shiftClock(by delta: Int64) {
        for index in heap.indices { heap[index].due = heap[index].due.shifted(by: delta) }
    }

    @inlinable
    static func before(_ lhs: Entry, _ rhs: Entry) -> Bool {
        lhs.due != rhs.due ? lhs.due < rhs.due : lhs.sequence < rhs.sequence
    }
}

extension Int64 {
    /// `self` moved by `delta` microseconds, saturating; the sentinels `Int64.min` (never) and
    /// `Int64.max` stay as they are.
    @inlinable
    package func shifted(by delta: Int64) -> Int64 {
        guard self != .min, self != .max else { return self }
        let (sum, overflow) = addingReportingOverflow(delta)
        return overflow ? (delta < 0 ? .min + 1 : .max - 1) : sum
    }
}
