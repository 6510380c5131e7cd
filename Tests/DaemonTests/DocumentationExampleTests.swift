import BeaconConfiguration
import Foundation
import Testing
import TestSupport

/// A command example of the README or docs/ that shows its output: a ```console block's
/// `$ command` (continued by a trailing backslash) and the lines after it.
struct DocumentationExample: Sendable, CustomTestStringConvertible {
    var file: String
    var line: Int
    var command: String
    var expected: [String]

    var testDescription: String { "\(file):\(line): \(command.prefix(60))" }

    /// The examples of one Markdown text.
    static func parse(_ text: String, file: String) -> [DocumentationExample] {
        var examples: [DocumentationExample] = []
        var inConsole = false
        var continuing = false
        var startsBlock = true
        for (index, raw) in text.components(separatedBy: "\n").enumerated() {
            let line = String(raw)
            if line.hasPrefix("```") {
                inConsole = !inConsole && line == "```console"
                continuing = false
                startsBlock = true
                continue
            }
            guard inConsole else { continue }
            if continuing, var last = examples.popLast() {
                last.command += "\n" + line
                continuing = line.hasSuffix("\\")
                examples.append(last)
            } else if line.hasPrefix("$ ") {
                // A command that shows no output (writing a file the next one reads) runs with the
                // next command of its block, in one shell: examples run in parallel, and a setup
                // step of its own raced the command that needed it.
                if !startsBlock, let last = examples.indices.last, examples[last].expected.isEmpty {
                    examples[last].command += "\n" + String(line.dropFirst(2))
                } else {
                    examples.append(
                        DocumentationExample(
                            file: file, line: index + 1, command: String(line.dropFirst(2)), expected: []))
                }
                startsBlock = false
                continuing = line.hasSuffix("\\")
            } else if var last = examples.popLast() {
                last.expected.append(line)
                examples.append(last)
            }
        }
        // Blank lines closing a block's last example are layout, not output.
        return examples.map { example in
            var example = example
            while example.expected.last?.isEmpty == true { example.expected.removeLast() }
            return example
        }
    }

    /// Whether `actual` is what the example shows: line by line, a line `...` standing for any
    /// number of lines and `…` within a line for any text; trailing spaces do not count.
    static func matches(expected: [String], actual: [String]) -> Bool {
        func trimmed(_ line: String) -> String {
            var line = Substring(line)
            while line.last == " " { line = line.dropLast() }
            return String(line)
        }
        func lineMatches(_ pattern: String, _ line: String) -> Bool {
            let pieces = trimmed(pattern).components(separatedBy: "…")
            var rest = Substring(trimmed(line))
            guard rest.hasPrefix(pieces[0]) else { return false }
            rest = rest.dropFirst(pieces[0].count)
            if pieces.count == 1 { return rest.isEmpty }
            for piece in pieces.dropFirst().dropLast() {
                guard let range = rest.range(of: piece) else { return false }
                rest = rest[range.upperBound...]
            }
            return rest.hasSuffix(pieces[pieces.count - 1])
        }
        func match(_ e: ArraySlice<String>, _ a: ArraySlice<String>) -> Bool {
            guard let first = e.first else { return a.isEmpty }
            if trimmed(first) == "..." {
                return (a.startIndex...a.endIndex).contains { match(e.dropFirst(), a[$0...]) }
            }
            guard let line = a.first, lineMatches(first, line) else { return false }
            return match(e.dropFirst(), a.dropFirst())
        }
        return match(expected[...], actual[...])
    }
}

@Suite struct DocumentationExampleTests {
    static let repository = Conformance.directory.deletingLastPathComponent().deletingLastPathComponent()

    static let examples: [DocumentationExample] = {
        let files = FileManager.default
        var pages = ["README.md"]
        let docs = (try? files.contentsOfDirectory(atPath: repository.appendingPathComponent("docs").path)) ?? []
        pages += docs.filter { $0.hasSuffix(".md") }.sorted().map { "docs/\($0)" }
        return pages.flatMap { page in
            let text = (try? String(contentsOf: repository.appendingPathComponent(page), encoding: .utf8)) ?? ""
            return DocumentationExample.parse(text, file: page)
        }
    }()

    /// Runs `command` as a reader would, in a clone's folder with the build on `PATH`; standard
    /// output and standard error together, as a terminal shows them.
    static func run(_ command: String) async throws -> [String] {
        let scratch = try scratchFolder("example")
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = DecodeCommandTests.productsDirectory.path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        environment["SCRATCH"] = scratch.path
        environment["TZ"] = "UTC"
        let run = try await Child.run(
            URL(fileURLWithPath: "/bin/bash"),
            ["-c", "{ " + command.replacingOccurrences(of: "\\\n", with: "") + "\n} 2>&1"],
            in: repository, environment: environment)
        var lines = run.stdout.components(separatedBy: "\n")
        if lines.last == "" { lines.removeLast() }
        return lines
    }

    @Test func theDocsHaveExamplesToRun() {
        #expect(Self.examples.count >= 8, "\(Self.examples.map(\.testDescription))")
    }

    @Test(arguments: examples)
    func theExampleShowsWhatTheCommandPrints(_ example: DocumentationExample) async throws {
        let actual = try await Self.run(example.command)
        #expect(
            DocumentationExample.matches(expected: example.expected, actual: actual),
            "\(example.file):\(example.line): `\(example.command)` printed:\n\(actual.joined(separator: "\n"))\n--- the example shows:\n\(example.expected.joined(separator: "\n"))"
        )
    }

    /// An example edited so that it no longer shows what the command prints fails.
    @Test func anEditedExampleFails() async throws {
        let example = try #require(
            Self.examples.first { $0.command.hasPrefix("beaconwatch check --config etc/hsyco.ini") })
        let actual = try await Self.run(example.command)
        #expect(DocumentationExample.matches(expected: example.expected, actual: actual))
        var edited = example.expected
        let index = try #require(edited.firstIndex { $0.contains("4 beacons") })
        edited[index] = edited[index].replacingOccurrences(of: "4 beacons", with: "5 beacons")
        #expect(!DocumentationExample.matches(expected: edited, actual: actual))
        #expect(!DocumentationExample.matches(expected: example.expected + ["one line more"], actual: actual))
    }

    /// The ```ini blocks of the README and docs/, each as a reader copies it: its first line, and
    /// its lines with `…` (what the page leaves out) dropped.
    static let iniBlocks: [(file: String, line: Int, text: String)] = {
        var blocks: [(file: String, line: Int, text: String)] = []
        for page in pages {
            let text = (try? String(contentsOf: repository.appendingPathComponent(page), encoding: .utf8)) ?? ""
            var current: (line: Int, lines: [String])?
            for (index, line) in text.components(separatedBy: "\n").enumerated() {
                if line.hasPrefix("```") {
                    if let block = current {
                        blocks.append((page, block.line, block.lines.joined(separator: "\n") + "\n"))
                        current = nil
                    } else if line == "```ini" {
                        current = (index + 2, [])
                    }
                } else if current != nil, line.trimmingCharacters(in: .whitespaces) != "…" {
                    current?.lines.append(line)
                }
            }
        }
        return blocks
    }()

    static var pages: [String] {
        let docs =
            (try? FileManager.default.contentsOfDirectory(atPath: repository.appendingPathComponent("docs").path)) ?? []
        return ["README.md"] + docs.filter { $0.hasSuffix(".md") }.sorted().map { "docs/\($0)" }
    }

    /// Every ini block of the docs loads as written, with no error and no warning (issue 47: blocks
    /// with comments at line ends failed with exit 2, and the fleet example dropped a device it
    /// declared). A block that shows a part of a file gets what it leaves out — a beacon, the
    /// locations its scanners sit at, a broker — after its own lines.
    @Test func everyIniBlockOfTheDocsLoadsAsWritten() throws {
        #expect(Self.iniBlocks.count >= 6, "\(Self.iniBlocks.map { "\($0.file):\($0.line)" })")
        for block in Self.iniBlocks {
            var text = block.text
            let keys = text.split(separator: "\n").compactMap { $0.split(separator: "=").first }
                .map { $0.trimmingCharacters(in: .whitespaces) }
            var minor = 100
            for key in keys where key.hasPrefix("LocationScanner.") {
                let id = key.dropFirst("LocationScanner.".count)
                if !keys.contains("LocationBaseBeacon.\(id)") {
                    minor += 1
                    text += "LocationBaseBeacon.\(id) = 0C63B10D-0E7A-4C3B-9F0B-3A2D86AB9E11,9,\(minor)\n"
                }
            }
            if !keys.contains(where: { $0.hasPrefix("LocationBaseBeacon.") || $0 == "Rules.geofences" }) {
                text += "LocationBaseBeacon.900 = 0C63B10D-0E7A-4C3B-9F0B-3A2D86AB9E11,9,900\n"
            }
            if keys.contains(where: { $0.hasPrefix("Fleet.") || $0.hasPrefix("Scanners.") }),
                !keys.contains("MQTT.host")
            {
                text += "MQTT.host = 127.0.0.1\n"
            }
            switch Configuration.load(Array(text.utf8), path: "\(block.file):\(block.line)") {
            case .failure(let failure):
                Issue.record("\(block.file):\(block.line): the block does not load: \(failure)")
            case .success(let configuration):
                #expect(configuration.warnings.isEmpty, "\(block.file):\(block.line): \(configuration.warnings)")
            }
        }
    }

    /// A code block of settings is an ```ini block, so that the test above runs it.
    @Test func everyBlockOfSettingsIsMarkedIni() throws {
        let setting = /^[A-Za-z][A-Za-z0-9_.<>\-]*\s*=\s*\S/
        var unmarked: [String] = []
        for page in Self.pages {
            let text = try String(contentsOf: Self.repository.appendingPathComponent(page), encoding: .utf8)
            var block: (line: Int, language: String)?
            for (index, line) in text.components(separatedBy: "\n").enumerated() {
                if line.hasPrefix("```") {
                    block = block == nil ? (index + 1, String(line.dropFirst(3))) : nil
                } else if let open = block, open.language != "ini", open.language != "console",
                    line.firstMatch(of: setting) != nil
                {
                    unmarked.append("\(page):\(open.line)")
                    block = (open.line, "ini")  // once a block
                }
            }
        }
        #expect(unmarked == [])
    }

    /// Every relative link of the README and docs/ leads to a file of the repository.
    @Test func everyLinkBetweenThePagesLeadsToAFile() throws {
        let files = FileManager.default
        var pages = ["README.md", "CHANGELOG.md"]
        pages += try files.contentsOfDirectory(atPath: Self.repository.appendingPathComponent("docs").path)
            .filter { $0.hasSuffix(".md") }.map { "docs/\($0)" }
        let link = /\]\(([^)#\s]+)(#[^)]*)?\)/
        var broken: [String] = []
        for page in pages {
            let text = try String(contentsOf: Self.repository.appendingPathComponent(page), encoding: .utf8)
            let folder = Self.repository.appendingPathComponent(page).deletingLastPathComponent()
            for match in text.matches(of: link) {
                let target = String(match.output.1)
                if target.contains("://") || target.hasPrefix("mailto:") { continue }
                if !files.fileExists(atPath: folder.appendingPathComponent(target).path) {
                    broken.append("\(page): \(target)")
                }
            }
        }
        #expect(broken == [])
    }

    @Test func ellipsesStandForLinesAndText() {
        let actual = ["first", "second 42 here", "third", "last"]
        #expect(DocumentationExample.matches(expected: ["first", "...", "last"], actual: actual))
        #expect(DocumentationExample.matches(expected: ["...", "second … here", "...", "last"], actual: actual))
        #expect(DocumentationExample.matches(expected: ["first", "second…", "third", "last", "..."], actual: actual))
        #expect(!DocumentationExample.matches(expected: ["first", "second", "third", "last"], actual: actual))
        #expect(!DocumentationExample.matches(expected: ["first", "..."], actual: ["second"]))
        #expect(!DocumentationExample.matches(expected: ["first"], actual: actual))
        let parsed = DocumentationExample.parse(
            "text\n```console\n$ echo a \\\n  b\na b\n\n$ true\n```\n```\n$ not run\n```\n", file: "x.md")
        #expect(parsed.map(\.command) == ["echo a \\\n  b", "true"])
        #expect(parsed.map(\.expected) == [["a b"], []])
        #expect(parsed.map(\.line) == [3, 7])
        // A command with no output of its own runs with the next one of its block, in order.
        let chained = DocumentationExample.parse("```console\n$ echo x > f\n$ cat f\nx\n```\n", file: "y.md")
        #expect(chained.map(\.command) == ["echo x > f\ncat f"] && chained.map(\.expected) == [["x"]])
    }
}
