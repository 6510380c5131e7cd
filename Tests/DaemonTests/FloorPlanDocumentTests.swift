import Foundation
import Testing
import TestSupport

/// docs/floorplans.md's ini examples, as a new user copies them (issue 72): each is a whole file
/// that `beaconwatch check` takes with no warning (no radio of its own: `Monitor.source = none`,
/// or a machine without `hci0` exits 3) and that declares a tag, which a `replay` of a short trace
/// then places in a room (a file with no tag tracks nothing). The house's exit door is in the
/// ground floor's outer wall, not in the bedroom's above it. The house ships as
/// `etc/floorplans/house.ini` with a recorded walk, whose replay the page's console block shows
/// (run by DocumentationExampleTests, where its ini blocks also load).
@Suite struct FloorPlanDocumentTests {
    static let page = "docs/floorplans.md"

    static var blocks: [(file: String, line: Int, text: String)] {
        DocumentationExampleTests.iniBlocks.filter { $0.file == page }
    }

    /// The scanners a block places (`LocationScanner.<location> = <id>`), in the block's order.
    static func scanners(_ text: String) -> [String] {
        text.split(separator: "\n").compactMap { line in
            guard line.hasPrefix("LocationScanner."), let equals = line.firstIndex(of: "=") else { return nil }
            return line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        }
    }

    /// The identity of the block's first `Tag.<id> = identity, name` and its id.
    static func tag(_ text: String) -> (id: String, identity: String)? {
        for line in text.split(separator: "\n") where line.hasPrefix("Tag.") {
            let parts = line.split(separator: "=", maxSplits: 1)
            guard parts.count == 2 else { continue }
            let id = parts[0].dropFirst("Tag.".count).trimmingCharacters(in: .whitespaces)
            let identity = parts[1].split(separator: ",")[0].trimmingCharacters(in: .whitespaces)
            return (id, identity)
        }
        return nil
    }

    /// A folder holding the block as `floors.ini`.
    static func folder(_ block: (file: String, line: Int, text: String)) throws -> URL {
        let folder = try scratchFolder("floorplans-\(block.line)")
        try block.text.write(to: folder.appendingPathComponent("floors.ini"), atomically: true, encoding: .utf8)
        return folder
    }

    @Test func thePageHasItsTwoExamples() {
        #expect(Self.blocks.count == 2, "\(Self.blocks.map(\.line))")
    }

    @Test func eachExampleChecksAsWrittenWithATag() async throws {
        for block in Self.blocks {
            let place = "\(block.file):\(block.line)"
            #expect(block.text.contains("\nMonitor.source = none\n"), "\(place): no Monitor.source = none")
            #expect(Self.tag(block.text) != nil, "\(place): declares no tag")
            let check = try await DecodeCommandTests.beaconwatch(
                ["check", "--config", "floors.ini"], in: Self.folder(block))
            #expect(check.status == 0, "\(place): \(check.stderr)")
            #expect(check.stdout.contains("\nno warnings\n"), "\(place): \(check.stdout)")
            #expect(check.stdout.contains("  tags: 1 declared"), "\(place): \(check.stdout)")
        }
    }

    /// A tag heard loudest by a block's first scanner enters a room in a `replay`: the example
    /// tracks what it declares.
    @Test func eachExampleReplaysATrace() async throws {
        for block in Self.blocks {
            let place = "\(block.file):\(block.line)"
            let folder = try Self.folder(block)
            let tag = try #require(Self.tag(block.text), "\(place)")
            let scanners = Self.scanners(block.text)
            #expect(scanners.count >= 2, "\(place): \(scanners)")
            var trace = ""
            for second in 0..<30 {
                for (index, scanner) in scanners.enumerated() {
                    trace +=
                        #"{"t": \#(1_700_000_000 + second).\#(index)00, "scanner": "\#(scanner)", "#
                        + #""tag": "\#(tag.identity)", "rssi": \#(index == 0 ? -62 : -80), "power": -59}"# + "\n"
                }
            }
            try trace.write(to: folder.appendingPathComponent("walk.jsonl"), atomically: true, encoding: .utf8)
            let run = try await DecodeCommandTests.beaconwatch(
                ["replay", "--config", "floors.ini", "trace:walk.jsonl", "--state", "replay.sqlite"], in: folder)
            #expect(run.status == 0, "\(place): \(run.stderr)")
            let enters = run.stdout.split(separator: "\n").filter {
                $0.contains(#""type":"enter","device":"\#(tag.id)""#) && $0.contains(#""kind":"zone""#)
            }
            #expect(!enters.isEmpty, "\(place): \(tag.id) entered no room:\n\(run.stdout.prefix(2000))")
        }
    }

    /// `etc/floorplans/house.ini`, which the page's replay runs, is the house as the page writes it.
    @Test func theShippedHouseIsThePagesHouse() throws {
        let block = try #require(Self.blocks.first { $0.text.contains("Stairs.") }, "no two-storey block")
        let file = DocumentationExampleTests.repository.appendingPathComponent("etc/floorplans/house.ini")
        #expect(try String(contentsOf: file, encoding: .utf8) == block.text)
    }

    /// The house's front door, an exit, is on the ground floor alone: the first floor stops short
    /// of it, so no corner of the bedroom is a way out.
    @Test func theExitDoorIsOnTheGroundFloorOnly() async throws {
        let block = try #require(Self.blocks.first { $0.text.contains("Stairs.") }, "no two-storey block")
        let check = try await DecodeCommandTests.beaconwatch(
            ["check", "--config", "floors.ini"], in: Self.folder(block))
        #expect(check.status == 0, "\(check.stderr)")
        var floor = ""
        var exits: [String] = []
        for line in check.stdout.split(separator: "\n") {
            if line.hasPrefix("  floor E2C56DB5") { floor = String(line) }
            if line.hasPrefix("  floor door "), line.hasSuffix("exit (to the outside)") { exits.append(floor) }
        }
        #expect(exits.count == 1 && exits.allSatisfy { $0.contains("\"Ground floor\"") }, "\(check.stdout)")
    }
}
