/// A min-heap of deadlines, in microseconds, each with a payload.
///
/// The monitor arms a deadline once (a region's exit, a beacon going `off`) and, when it comes
/// due, checks whether a later sighting moved it; if so it re-arms. So a sighting costs no heap
/// operation, and the heap holds one entry per active region or beacon.
struct TimerQueue<Payload: Sendable>: Sendable {
    private struct Entry: Sendable {
        var due: Int64
        var sequence: UInt64
        var payload: Payload
    }

    private var heap: [Entry] = []
    private var sequence: UInt64 = 0

    var isEmpty: Bool { heap.isEmpty }
    var count: Int { heap.count }

    /// The earliest deadline.
    var nextDue: Int64? { heap.first?.due }

    mutating func schedule(_ payload: Payload, at due: Int64) {
        sequence += 1
        heap.append(Entry(due: due, sequence: sequence, payload: payload))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.before(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the earliest entry if it is due at or before `time`.
    mutating func popDue(atOrBefore time: Int64) -> (due: Int64, payload: Payload)? {
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

    /// Every deadline moved by `delta`: the same order, so the heap stays a heap.
    mutating func shiftClock(by delta: Int64) {
        for index in heap.indices { heap[index].due = heap[index].due.shifted(by: delta) }
    }

    private static func before(_ lhs: Entry, _ rhs: Entry) -> Bool {
        lhs.due != rhs.due ? lhs.due < rhs.due : lhs.sequence < rhs.sequence
    }
}
