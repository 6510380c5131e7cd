import Foundation

extension Conformance {
    /// A folder of `scenarios/`: an ini, a trace, and the outputs `replay` must print.
    package struct Scenario: Sendable, CustomStringConvertible {
        package var name: String
        package var directory: URL
        /// The output types compared (`scenario.json` → `compare.types`).
        package var types: [String]
        package var about: String

        package var description: String { name }
        package var ini: URL { directory.appendingPathComponent("hsyco.ini") }
        package var trace: URL { directory.appendingPathComponent("trace.jsonl") }

        package init(_ name: String) throws {
            self.name = name
            directory = Conformance.url("scenarios").appendingPathComponent(name)
            let meta =
                try JSONSerialization.jsonObject(
                    with: Data(contentsOf: directory.appendingPathComponent("scenario.json"))
                ) as! [String: Any]
            types = (meta["compare"] as! [String: Any])["types"] as! [String]
            about = meta["about"] as! String
        }

        package func expected() throws -> [[String: Any]] {
            try Self.objects(String(contentsOf: directory.appendingPathComponent("expected.jsonl"), encoding: .utf8))
        }

        package static func objects(_ jsonLines: String) throws -> [[String: Any]] {
            try jsonLines.split(separator: "\n").filter { !$0.allSatisfy(\.isWhitespace) }.map {
                try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
            }
        }

        /// The differences between `actual` outputs and the expected ones, by the rules of
        /// `check-scenarios`: only the compared types, in order; only the fields an expected line
        /// names; times within 1 ms; `location`s per beacon, their times within 1 s; `regions` as sets.
        package func mismatches(_ actual: [[String: Any]]) throws -> [String] {
            let expected = try expected()
            var problems: [String] = []
            let plain = Set(types).subtracting(["location"])
            let wanted = expected.filter { plain.contains($0["type"] as! String) }
            let got = actual.filter { plain.contains($0["type"] as? String ?? "") }
            for (index, want) in wanted.enumerated() {
                guard index < got.count else {
                    problems.append("#\(index) missing: \(want)")
                    break
                }
                if let problem = Self.difference(want, got[index], timeTolerance: 0.001) {
                    problems.append("#\(index) \(problem)")
                    break
                }
            }
            if problems.isEmpty, got.count > wanted.count {
                problems.append("\(got.count - wanted.count) unexpected, first: \(got[wanted.count])")
            }
            if types.contains("location") {
                var byBeacon: [String: (want: [[String: Any]], got: [[String: Any]])] = [:]
                for line in expected where line["type"] as? String == "location" {
                    byBeacon[line["zone"] as! String, default: ([], [])].want.append(line)
                }
                for line in actual where line["type"] as? String == "location" {
                    byBeacon[line["zone"] as? String ?? "?", default: ([], [])].got.append(line)
                }
                for (zone, lists) in byBeacon.sorted(by: { $0.key < $1.key }) {
                    guard lists.want.count == lists.got.count else {
                        problems.append(
                            "location \(zone): want \(lists.want.map { $0["distance"]! }) got \(lists.got.map { $0["distance"] ?? "?" })"
                        )
                        continue
                    }
                    for (want, got) in zip(lists.want, lists.got) {
                        if let problem = Self.difference(want, got, timeTolerance: 1) {
                            problems.append("location \(zone): \(problem)")
                            break
                        }
                    }
                }
            }
            return problems
        }

        static func seconds(_ value: Any) -> Double? {
            if let number = value as? Double { return number }
            guard let text = value as? String else { return nil }
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            if let date = formatter.date(from: text) { return date.timeIntervalSince1970 }
            formatter.formatOptions = [.withInternetDateTime]
            return formatter.date(from: text)?.timeIntervalSince1970
        }

        /// Equality of two values as JSONSerialization gives them (strings, numbers, booleans,
        /// null, arrays).
        static func jsonEqual(_ lhs: Any, _ rhs: Any) -> Bool {
            switch (lhs, rhs) {
            case (is NSNull, is NSNull): return true
            case (let a as String, let b as String): return a == b
            case (let a as Bool, let b as Bool): return a == b
            case (let a as [Any], let b as [Any]): return a.count == b.count && zip(a, b).allSatisfy(jsonEqual)
            case (let a as NSNumber, let b as NSNumber): return a.doubleValue == b.doubleValue
            default: return false
            }
        }

        static func difference(_ want: [String: Any], _ got: [String: Any], timeTolerance: Double) -> String? {
            for (key, value) in want {
                guard let actual = got[key] else { return "missing field '\(key)' in \(got)" }
                if key == "t" {
                    guard let a = seconds(value), let b = seconds(actual), abs(a - b) <= timeTolerance else {
                        return "t differs: want \(value) got \(actual)"
                    }
                    continue
                }
                if key == "regions", let a = value as? [String], let b = actual as? [String] {
                    if a.sorted() != b.sorted() { return "regions differ: want \(a) got \(b)" }
                    continue
                }
                if !jsonEqual(value, actual) {
                    return "field '\(key)': want \(value) got \(actual)"
                }
            }
            return nil
        }
    }
}
