import BeaconCore
import Foundation
import RegionMonitor
import Syscalls

/// A key's value as the setting it is: text, numbers within a range, durations, booleans,
/// choices, paths relative to the ini's folder; every refusal an error at the key's line.
extension Loader {
    func resolve(_ path: String) -> String {
        if path.hasPrefix("/") || path == "-" || folder.isEmpty { return path }
        return folder + "/" + path
    }

    func resolve(_ spec: SourceSpec) -> SourceSpec {
        switch spec {
        case .adapter, .none: spec
        case .btsnoop(let path): .btsnoop(path: resolve(path))
        case .trace(let path): .trace(path: resolve(path))
        }
    }

    mutating func text(_ entry: IniFile.Entry) -> String? {
        guard !entry.value.isEmpty else {
            error(entry, "\(entry.key.excerpt) is empty; give a value or remove the line")
            return nil
        }
        return entry.value
    }

    mutating func integer(_ entry: IniFile.Entry, _ range: ClosedRange<Int>, _ what: String) -> Int? {
        guard let value = Int(entry.value), range.contains(value) else {
            error(
                entry,
                "\(entry.key.excerpt) = '\(entry.value.excerpt)': expected \(what) (\(range.lowerBound) to \(range.upperBound))"
            )
            return nil
        }
        return value
    }

    mutating func number(_ entry: IniFile.Entry, _ range: ClosedRange<Double>, _ what: String) -> Double? {
        guard let value = Double(entry.value), value.isFinite, range.contains(value) else {
            error(entry, "\(entry.key.excerpt) = '\(entry.value.excerpt)': expected \(what)")
            return nil
        }
        return value
    }

    mutating func duration(_ entry: IniFile.Entry, positive: Bool) -> Double? {
        guard let value = Double(entry.value), value.isFinite, positive ? value > 0 : value >= 0, value <= 31_536_000
        else {
            error(
                entry,
                "\(entry.key.excerpt) = '\(entry.value.excerpt)': expected seconds\(positive ? " above 0" : ""), such as 10 or 2.5"
            )
            return nil
        }
        return value
    }

    mutating func boolean(_ entry: IniFile.Entry) -> Bool? {
        switch entry.value.lowercased() {
        case "true", "yes", "on", "1": return true
        case "false", "no", "off", "0": return false
        default:
            error(entry, "\(entry.key.excerpt) = '\(entry.value.excerpt)': expected true or false")
            return nil
        }
    }

    mutating func choice<T: RawRepresentable & CaseIterable>(_ entry: IniFile.Entry, _ type: T.Type) -> T?
    where T.RawValue == String {
        guard let value = T(rawValue: entry.value) else {
            let names = T.allCases.map(\.rawValue).joined(separator: ", ")
            error(entry, "\(entry.key.excerpt) = '\(entry.value.excerpt)': expected one of \(names)")
            return nil
        }
        return value
    }
}

extension String {
    /// What follows `prefix`, when the string starts with it and something follows.
    func suffix(after prefix: String) -> String? {
        guard hasPrefix(prefix), count > prefix.count else { return nil }
        return String(dropFirst(prefix.count))
    }
}
