import Simulation

/// The truth of one room at one second of the occupancy benchmark, and when it last changed.
struct RoomTruth {
    var people = 0
    var untagged = 0
    /// When the room last went from empty to occupied, and from occupied to empty (the instant
    /// its last person crossed its edge).
    var entered = -Double.infinity
    var left = -Double.infinity
    /// When its number of people last changed.
    var changed = -Double.infinity
}

/// Every room's truth as the benchmark's people move, second by second, and when each room
/// filled and emptied.
struct FloorTruth {
    let floor: Floor
    let people: [Occupant]
    private(set) var rooms: [RoomTruth]
    /// Each time a room's last person left (to 10 ms), and each room's instants of filling.
    private(set) var leaves: [(room: Int, at: Double)] = []
    private(set) var enters: [[Double]]
    private var roomOf: [Int?]

    init(floor: Floor, people: [Occupant]) {
        (self.floor, self.people) = (floor, people)
        rooms = Array(repeating: RoomTruth(), count: floor.rooms.count)
        enters = Array(repeating: [], count: floor.rooms.count)
        roomOf = people.map { $0.room(at: 0, on: floor) }
    }

    /// The truth at `time`, one second after the last step.
    mutating func step(at time: Double) {
        let now = people.map { $0.room(at: time, on: floor) }
        var counts = Array(repeating: (people: 0, untagged: 0), count: rooms.count)
        for (person, room) in now.enumerated() {
            guard let room else { continue }
            counts[room].people += 1
            if !people[person].tagged { counts[room].untagged += 1 }
        }
        for room in rooms.indices {
            let before = rooms[room].people
            let after = counts[room].people
            rooms[room].untagged = counts[room].untagged
            guard before != after else { continue }
            rooms[room].people = after
            rooms[room].changed = time
            if before == 0 {
                rooms[room].entered = time
                enters[room].append(time)
            } else if after == 0 {
                var last = time - 1
                for (person, was) in roomOf.enumerated() where was == room {
                    last = max(last, crossing(people[person], leaving: room, after: time - 1, by: time))
                }
                rooms[room].left = last
                leaves.append((room, last))
            }
        }
        roomOf = now
    }

    /// The instant in `(from, to]` at which `occupant` left room `room` (to 10 ms).
    private func crossing(_ occupant: Occupant, leaving room: Int, after from: Double, by to: Double) -> Double {
        var (low, high) = (from, to)
        while high - low > 0.01 {
            let middle = (low + high) / 2
            if occupant.room(at: middle, on: floor) == room { low = middle } else { high = middle }
        }
        return high
    }
}

/// How one system's occupancy compares with the truth, room by room (docs/performance.md,
/// "Occupancy"): sampled every second; a minute is scored from its 60 samples.
struct OccupancyScore {
    /// Seconds after a room's first person enters, and after any change of its number of people,
    /// in which either answer is taken as right (a tag is placed in a few seconds).
    static let settle = 10.0

    struct Room {
        var minutes = 0
        var minutesRight = 0
        var seconds = 0
        var secondsRight = 0
        var longestFalseVacant = 0.0
        var falseVacantSince: Double?
        /// Minutes with someone in the room, everyone tagged; those exact; the sum of their mean
        /// absolute errors.
        var countMinutes = 0
        var countExact = 0
        var countError = 0.0
        /// From each last person's leaving to "vacant" announced, s (`missed`: not announced while
        /// the room stayed empty, counted as that long).
        var delays: [Double] = []
        var missed = 0
        /// Why seconds were wrong: "vacant" with a tagged person in, or with only untagged ones;
        /// "occupied" within 3 minutes of the room emptying (a hold, a ghost), or later.
        var why = Why()
        var spellTagged = false

        // The minute being scored.
        var wrong = false
        var scored = false
        var someone = false
        var untagged = false
        var countWrong = false
        var errorSum = 0.0
        var errorSeconds = 0
    }

    /// Seconds wrong by cause, and false "vacant" spells over 30 s by who was in.
    struct Why {
        var vacantTagged = 0
        var vacantUntagged = 0
        var occupiedTail = 0
        var occupiedLater = 0
        var spellsTagged = 0
        var spellsUntagged = 0

        static func + (a: Why, b: Why) -> Why {
            Why(
                vacantTagged: a.vacantTagged + b.vacantTagged, vacantUntagged: a.vacantUntagged + b.vacantUntagged,
                occupiedTail: a.occupiedTail + b.occupiedTail, occupiedLater: a.occupiedLater + b.occupiedLater,
                spellsTagged: a.spellsTagged + b.spellsTagged, spellsUntagged: a.spellsUntagged + b.spellsUntagged)
        }

        var line: String {
            "wrong seconds: vacant with a tagged person in \(vacantTagged), with only untagged ones "
                + "\(vacantUntagged); occupied within 3 min of emptying \(occupiedTail), later \(occupiedLater); "
                + "false vacant spells over 30 s: \(spellsTagged) with a tagged person in, \(spellsUntagged) with "
                + "only untagged ones"
        }
    }

    var rooms: [Room]
    let vacantAfter: Double

    init(rooms: Int, vacantAfter: Double) {
        self.rooms = Array(repeating: Room(), count: rooms)
        self.vacantAfter = vacantAfter
    }

    /// One second's sample of room `index`: the truth and what the system showed.
    mutating func sample(
        _ index: Int, truth: RoomTruth, shown: RoomShown?, at time: Double, endsMinute: Bool
    ) {
        var room = rooms[index]
        defer { rooms[index] = room }
        let occupied = truth.people > 0
        let showsOccupied = shown?.occupied ?? false
        // The longest "vacant" shown while someone is in (no grace).
        if occupied, !showsOccupied {
            let since = room.falseVacantSince ?? time
            if room.falseVacantSince == nil { room.spellTagged = false }
            room.falseVacantSince = since
            room.spellTagged = room.spellTagged || truth.untagged < truth.people
            room.longestFalseVacant = max(room.longestFalseVacant, time - since + 1)
            if time - since + 1 == 31 {
                if room.spellTagged { room.why.spellsTagged += 1 } else { room.why.spellsUntagged += 1 }
            }
        } else {
            room.falseVacantSince = nil
        }
        // Occupied or vacant, outside the allowed delays: a person's arrival being noticed, and
        // vacantAfter + 5 s after the last one left.
        let grace =
            occupied ? time - truth.entered < Self.settle : time - truth.left < vacantAfter + 5
        if !grace {
            room.scored = true
            room.seconds += 1
            if occupied == showsOccupied {
                room.secondsRight += 1
            } else {
                room.wrong = true
                if occupied {
                    if truth.untagged < truth.people {
                        room.why.vacantTagged += 1
                    } else {
                        room.why.vacantUntagged += 1
                    }
                } else if time - truth.left < 180 {
                    room.why.occupiedTail += 1
                } else {
                    room.why.occupiedLater += 1
                }
            }
        }
        // The count, outside the settling after each change.
        room.someone = room.someone || occupied
        room.untagged = room.untagged || truth.untagged > 0
        let countGrace = time - truth.changed < Self.settle || !occupied && time - truth.left < vacantAfter + 5
        if !countGrace {
            let count = showsOccupied ? shown?.count ?? 0 : 0
            let error = abs(count - truth.people)
            room.errorSum += Double(error)
            room.errorSeconds += 1
            if error != 0 { room.countWrong = true }
        }
        guard endsMinute else { return }
        if room.scored {
            room.minutes += 1
            if !room.wrong { room.minutesRight += 1 }
        }
        if room.someone, !room.untagged, room.errorSeconds > 0 {
            room.countMinutes += 1
            if !room.countWrong { room.countExact += 1 }
            room.countError += room.errorSum / Double(room.errorSeconds)
        }
        (room.wrong, room.scored, room.someone, room.untagged, room.countWrong) = (false, false, false, false, false)
        (room.errorSum, room.errorSeconds) = (0, 0)
    }

    /// The figures over `indices`.
    func summary(_ indices: [Int]) -> Summary {
        var summary = Summary()
        for index in indices {
            let room = rooms[index]
            summary.minutes += room.minutes
            summary.minutesRight += room.minutesRight
            summary.seconds += room.seconds
            summary.secondsRight += room.secondsRight
            summary.longestFalseVacant = max(summary.longestFalseVacant, room.longestFalseVacant)
            summary.countMinutes += room.countMinutes
            summary.countExact += room.countExact
            summary.countError += room.countError
            summary.delays += room.delays
            summary.missed += room.missed
            summary.why = summary.why + room.why
        }
        summary.limit = vacantAfter + 5
        return summary
    }

    struct Summary {
        var minutes = 0
        var minutesRight = 0
        var seconds = 0
        var secondsRight = 0
        var longestFalseVacant = 0.0
        var countMinutes = 0
        var countExact = 0
        var countError = 0.0
        var delays: [Double] = []
        var missed = 0
        var limit = 35.0
        var why = Why()

        func percent(_ part: Int, _ whole: Int) -> String {
            whole == 0 ? "–" : format(Double(part) / Double(whole) * 100, 1) + "%"
        }

        /// The columns of the benchmark's table.
        var columns: [String] {
            let within = delays.filter { $0 <= limit }.count
            return [
                percent(minutesRight, minutes) + " of \(minutes)",
                percent(secondsRight, seconds),
                format(longestFalseVacant, 0) + " s",
                percent(countExact, countMinutes) + " of \(countMinutes)",
                countMinutes == 0 ? "–" : format(countError / Double(countMinutes), 3),
                delays.isEmpty
                    ? "–"
                    : "\(format(quantile(delays, 0.5), 1))/\(format(quantile(delays, 0.95), 1))/"
                        + "\(format(delays.max() ?? 0, 1)) s",
                percent(within, delays.count) + " of \(delays.count)" + (missed > 0 ? ", \(missed) never" : ""),
            ]
        }
    }
}
