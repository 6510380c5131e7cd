/// The truth itself, announced as §23 would with perfect signals: occupied from the second
/// someone is in, vacant `vacantAfter` after the last one left, the count exact. The benchmark's
/// ceiling (its scoring gives it every minute, and `vacantAfter` as the vacancy delay).
struct TruthAnnounced: OccupancyAnnouncer {
    let name = "oracle: the truth"
    private var announced: Announcements
    var shown: [RoomShown?] { announced.shown }
    var flips: [[(time: Double, occupied: Bool)]] { announced.flips }

    init(rooms: Int, vacantAfter: Double) { announced = Announcements(rooms: rooms, vacantAfter: vacantAfter) }

    mutating func step(at time: Double, people: [Int]) {
        announced.step(at: time, positive: people.map { $0 > 0 }, count: people, devices: people)
    }
}

/// §23's announcements from what says someone is in each room, each second: occupied at once,
/// vacant once nothing has said so for `vacantAfter` (the count held meanwhile).
struct Announcements {
    let vacantAfter: Double
    private var quiet: [Double?]
    private(set) var shown: [RoomShown?]
    private(set) var flips: [[(time: Double, occupied: Bool)]]

    init(rooms: Int, vacantAfter: Double) {
        self.vacantAfter = vacantAfter
        quiet = Array(repeating: nil, count: rooms)
        shown = Array(repeating: nil, count: rooms)
        flips = Array(repeating: [], count: rooms)
    }

    mutating func step(at time: Double, positive: [Bool], count: [Int], devices: [Int]) {
        for room in shown.indices {
            var occupied = true
            var people = count[room]
            if positive[room] {
                quiet[room] = nil
            } else if shown[room]?.occupied != false {
                let start = quiet[room] ?? time
                quiet[room] = start
                occupied = time - start < vacantAfter
                if occupied { people = shown[room]?.count ?? 0 }
            } else {
                occupied = false
            }
            if shown[room]?.occupied != occupied { flips[room].append((time, occupied)) }
            shown[room] = RoomShown(occupied: occupied, count: occupied ? people : 0, devices: devices[room])
        }
    }
}
