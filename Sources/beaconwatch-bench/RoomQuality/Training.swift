import BeaconCore
import Fleet
import Foundation
import Simulation

extension BeaconwatchRooms {
    /// The trainer's tag id: the one after the scored tags.
    static func trainer(after tags: Int) -> String { "t\(tags + 1)" }

    /// Trains every room of `floor` before the run (docs/behaviour.md §22), as a user would: a
    /// phone carried about each room for 60 s (four spots, 15 s between them) on another day
    /// (`simulation` redrawn with another seed), a `learn` session per room, the rooms one after
    /// the other ending 10 s before the run starts; through the same feed as the run (`nodes`:
    /// ESPresense nodes' reports at `cadence`). The scanners hear each other meanwhile, as they
    /// always do.
    mutating func train(
        floor: Floor, simulation: FloorSimulation, tags: Int, nodes: Bool, cadence: NodeReports.Cadence
    ) {
        var training = simulation
        training.duration = 60
        training.seed = simulation.seed &+ 59
        var random = SeededGenerator(seed: training.seed)
        let trainers = floor.rooms.map { room in
            training.shuttle(
                along: (0..<4).map { _ in RoomQualityBench.spot(in: room.rect, random: &random) }, segment: 15)
        }
        let slot = 62.0
        let begin = -(Double(floor.rooms.count) * slot + 10)
        var readings: [(time: Double, scanner: Int, rssi: Double)] = []
        var node = NodeReports(tags: floor.rooms.count, scanners: floor.scanners.count, cadence: cadence)
        for reading in training.heard(trainers) {
            let time = begin + Double(reading.tag) * slot + reading.time
            guard nodes else {
                readings.append((time, reading.scanner, reading.rssi))
                continue
            }
            if let report = node.hear(tag: reading.tag, scanner: reading.scanner, rssi: reading.rssi, at: reading.time)
            {
                readings.append((begin + Double(reading.tag) * slot + report.time, reading.scanner, report.rssi))
            }
        }
        var between = training
        between.duration = Double(floor.rooms.count) * slot + 10
        let scannerCount = floor.scanners.count
        let heardBetween = between.heardBetweenScanners(firstTag: 0).map {
            (time: begin + $0.time, transmitter: $0.tag, receiver: $0.scanner, rssi: $0.rssi)
        }
        readings.sort { ($0.time, $0.scanner) < ($1.time, $1.scanner) }
        let trainer = Self.trainer(after: tags)
        var cursor = 0
        var betweenCursor = 0
        for (index, room) in floor.rooms.enumerated() {
            let start = begin + Double(index) * slot
            let region = "\(Floor.area(storey: room.storey)):\(index + 1)"
            table.handle(
                .learn(LearnCommand(device: trainer, room: region, action: .train(seconds: 60))),
                at: Self.time(start), into: &actions)
            while cursor < readings.count, readings[cursor].time < start + slot {
                while betweenCursor < heardBetween.count, heardBetween[betweenCursor].time <= readings[cursor].time {
                    let heard = heardBetween[betweenCursor]
                    if heard.transmitter < scannerCount {
                        scannerHeard(
                            transmitter: heard.transmitter, receiver: heard.receiver, rssi: heard.rssi,
                            at: heard.time)
                    }
                    betweenCursor += 1
                }
                let reading = readings[cursor]
                table.handle(
                    .report(
                        ScannerReport(scanner: scanners[reading.scanner], tag: trainer, rssi: reading.rssi, power: -59)),
                    at: Self.time(reading.time), into: &actions)
                cursor += 1
            }
            table.advance(to: Self.time(start + 61), into: &actions)
        }
        actions.removeAll()
    }
}
