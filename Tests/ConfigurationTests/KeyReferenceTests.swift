import BeaconConfiguration
import Foundation
import Testing
import TestSupport

/// docs/configuration.md lists every key the loader reads, and no other.
@Suite struct KeyReferenceTests {
    static let page = Conformance.directory.deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/configuration.md")

    /// The keys in the first column of the page's tables: `` `Monitor.lat`, `Monitor.lng` `` is
    /// two; `` `Script.<event>` `` is the prefix `Script.`.
    static func documentedKeys(_ text: String) -> (keys: Set<String>, prefixes: Set<String>) {
        var keys: Set<String> = []
        var prefixes: Set<String> = []
        for line in text.split(separator: "\n") where line.hasPrefix("| `") {
            let cell = line.dropFirst(2).prefix { $0 != "|" }
            for part in cell.split(separator: ",") {
                let key = part.trimmingCharacters(in: .whitespaces).trimmingCharacters(
                    in: CharacterSet(charactersIn: "`"))
                if let angle = key.firstIndex(of: "<") {
                    prefixes.insert(String(key[..<angle]))
                } else {
                    keys.insert(key)
                }
            }
        }
        return (keys, prefixes)
    }

    @Test func thePageListsEveryKeyOfTheLoaderAndNoOther() throws {
        let (keys, prefixes) = Self.documentedKeys(try String(contentsOf: Self.page, encoding: .utf8))
        let known = Set(Configuration.knownKeys)
        #expect(known.subtracting(keys).sorted() == [], "keys the loader reads that docs/configuration.md lacks")
        #expect(
            keys.subtracting(known).sorted() == [], "keys docs/configuration.md lists that the loader does not read")
        #expect(prefixes == Set(Configuration.keyPrefixes))
    }

    /// The check fails when the page and the loader part: a row taken out, or one made up.
    @Test func aMissingOrMadeUpRowIsFound() throws {
        let text = try String(contentsOf: Self.page, encoding: .utf8)
        let without = text.replacingOccurrences(of: "| `Monitor.udid` |", with: "| Monitor udid |")
        #expect(!Self.documentedKeys(without).keys.contains("Monitor.udid"))
        let extra = text + "\n| `Monitor.colour` | red | made up |\n"
        #expect(Self.documentedKeys(extra).keys.subtracting(Configuration.knownKeys) == ["Monitor.colour"])
    }
}
