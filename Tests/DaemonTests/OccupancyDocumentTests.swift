import BeaconConfiguration
import BeaconCore
import Foundation
import JSONText
import Rules
import Testing

/// docs/occupancy.md shows the files of etc/occupancy that OccupancyRunTests runs, and they cannot
/// drift apart: each block the page introduces with a file's name is that file; its JSON parses;
/// the rules document loads and attaches its rule to the Zone the page says; the ESPHome and
/// zigbee2mqtt configurations publish on the topics the ini's sensors listen to. (Its ini blocks
/// load as written, and its console examples print what they show: DocumentationExampleTests.)
@Suite struct OccupancyDocumentTests {
    static let repository = DocumentationExampleTests.repository
    static let etc = OccupancyRunTests.etc

    /// A fenced block of the page: its language, first line, text, and the line before it.
    struct Block {
        var language: String
        var line: Int
        var text: String
        var before: String
    }

    static func blocks() throws -> [Block] {
        let text = try String(
            contentsOf: repository.appendingPathComponent("docs/occupancy.md"), encoding: .utf8)
        var blocks: [Block] = []
        var open: Block?
        var previous = ""
        for (index, line) in text.components(separatedBy: "\n").enumerated() {
            if line.hasPrefix("```") {
                if let block = open {
                    blocks.append(block)
                    open = nil
                } else {
                    open = Block(language: String(line.dropFirst(3)), line: index + 2, text: "", before: previous)
                }
            } else if open != nil {
                open?.text += line + "\n"
            } else if !line.trimmingCharacters(in: .whitespaces).isEmpty {
                previous = line
            }
        }
        return blocks
    }

    /// The file of etc/occupancy a block's introduction names (``…(`etc/occupancy/NAME`):``).
    static func file(introducing block: Block) -> String? {
        guard block.before.hasSuffix(":"),
            let match = block.before.firstMatch(of: /`etc\/occupancy\/([A-Za-z0-9._-]+)`\)?:$/)
        else { return nil }
        return String(match.output.1)
    }

    @Test func theBlocksNamingAFileAreThatFile() throws {
        let blocks = try Self.blocks()
        var shown: Set<String> = []
        for block in blocks {
            guard let name = Self.file(introducing: block) else { continue }
            let file = try String(contentsOf: Self.etc.appendingPathComponent(name), encoding: .utf8)
            #expect(block.text == file, "docs/occupancy.md:\(block.line) is not etc/occupancy/\(name); copy the file")
            shown.insert(name)
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.etc.path)
            .filter { !["day.jsonl", "make-trace.py"].contains($0) && !$0.hasPrefix(".") }
        #expect(shown == Set(files), "shown: \(shown.sorted()), in etc/occupancy: \(files.sorted())")
    }

    @Test func itsJSONParses() throws {
        let blocks = try Self.blocks().filter { $0.language == "json" }
        #expect(blocks.count >= 2)
        for block in blocks {
            let whole = JSONValue.parse(Array(block.text.utf8))
            let lines = block.text.split(separator: "\n").allSatisfy { JSONValue.parse(Array($0.utf8)) != nil }
            #expect(whole != nil || lines, "docs/occupancy.md:\(block.line) does not parse")
        }
    }

    /// The lights-off rule: `vacant`, latched 5 minutes, on the meeting room's Zone, its schedule
    /// closed during opening hours (Monday 2 March 2026 in Paris: 17:59 closed, 18:00 open).
    @Test func theRulesDocumentLoadsOnTheMeetingRoom() throws {
        let configuration = try Configuration.load(contentsOf: Self.etc.appendingPathComponent("hsyco.ini").path)
            .get()
        let bytes = try Data(contentsOf: Self.etc.appendingPathComponent("rules.json"))
        let document = try RulesDocument.load(Array(bytes), name: "rules.json").get()
        let region = try #require(document.regions.first)
        #expect(document.regions.count == 1 && region.warnings.isEmpty, "\(region.warnings)")
        let zone = try #require(region.attachment(in: configuration.hierarchy))
        #expect(configuration.hierarchy.name(of: zone) == "Meeting room")
        #expect(region.rules.map(\.trigger) == ["vacant"] && region.rules.map(\.latchTime) == [300])
        let zoneOfRegion = try #require(region.timeZone)
        func open(_ iso: String) throws -> Bool {
            region.schedule.isOpen(at: try #require(Timestamp(iso8601: iso)), in: zoneOfRegion)
        }
        #expect(try !open("2026-03-02T16:59:59Z") && open("2026-03-02T17:00:00Z"))
        #expect(try open("2026-03-02T06:59:59Z") && !open("2026-03-02T07:00:00Z"))
        #expect(try open("2026-03-07T12:00:00Z"))  // a Saturday: no opening hours, the rule may fire
    }

    /// ESPHome publishes on `<name>/<domain>/<object id>/state`, the object id the entity's name in
    /// snake case; zigbee2mqtt on `<base_topic>/<friendly_name>`: the ini's sensors listen there.
    @Test func theFirmwaresPublishWhereTheSensorsListen() throws {
        let configuration = try Configuration.load(contentsOf: Self.etc.appendingPathComponent("hsyco.ini").path)
            .get()
        let topics = Set(configuration.occupancy?.sensors.map(\.topic) ?? [])
        func value(_ key: String, in text: String, after: String? = nil) -> String? {
            var lines = text.components(separatedBy: "\n")[...]
            if let after, let start = lines.firstIndex(where: { $0.contains(after) }) { lines = lines[start...] }
            return lines.lazy.compactMap { line -> String? in
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                guard trimmed.hasPrefix("\(key): ") else { return nil }
                return String(trimmed.dropFirst(key.count + 2)).trimmingCharacters(
                    in: CharacterSet(charactersIn: "'\""))
            }.first
        }
        for (file, domain, entity) in [
            ("office-radar.yaml", "binary_sensor", "has_target:"), ("kitchen-radar.yaml", "sensor", "target_count:"),
        ] {
            let text = try String(contentsOf: Self.etc.appendingPathComponent(file), encoding: .utf8)
            let node = try #require(value("name", in: text, after: "esphome:"))
            let name = try #require(value("name", in: text, after: entity))
            let objectID = name.lowercased().replacingOccurrences(of: " ", with: "_")
            #expect(topics.contains("\(node)/\(domain)/\(objectID)/state"), "\(file): \(topics)")
        }
        let zigbee = try String(contentsOf: Self.etc.appendingPathComponent("zigbee2mqtt.yaml"), encoding: .utf8)
        let base = try #require(value("base_topic", in: zigbee))
        let name = try #require(value("friendly_name", in: zigbee))
        #expect(topics.contains("\(base)/\(name)"), "\(topics)")
        #expect(value("occupancy_timeout", in: zigbee) == "90")
    }
}
