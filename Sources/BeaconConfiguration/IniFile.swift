import BeaconCore

/// The hsyco.ini syntax (docs/behaviour.md §2): one `key = value` a line, `#` and `;` comments of a
/// whole line (a value holding whitespace then `#` is an error), no continuation lines, UTF-8, and no
/// key set twice.
package struct IniFile: Sendable {
    package struct Entry: Sendable, Hashable {
        package var key: String
        package var value: String
        /// 1-based line number.
        package var line: Int
    }

    /// The file's name as messages give it.
    package var path: String
    package var entries: [Entry]

    /// Parses the bytes of an ini file; syntax errors come back alongside what did parse.
    package static func parse(_ bytes: [UInt8], path: String) -> (file: IniFile, errors: [InputError]) {
        var entries: [Entry] = []
        var errors: [InputError] = []
        var firstLine: [String: Int] = [:]
        var body = bytes[...]
        if body.starts(with: [0xEF, 0xBB, 0xBF]) { body = body.dropFirst(3) }  // a byte-order mark
        for (index, rawLine) in body.split(separator: 0x0A, omittingEmptySubsequences: false).enumerated() {
            let number = index + 1
            guard let text = String(validating: rawLine, as: UTF8.self) else {
                errors.append(InputError(file: path, line: number, message: "not UTF-8 text; save the file as UTF-8"))
                continue
            }
            let line = text.trimmingWhitespace()
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            guard let equals = line.firstIndex(of: "=") else {
                errors.append(
                    InputError(
                        file: path,
                        line: number,
                        message: "expected 'key = value', found '\(line.excerpt)'; comment it out with '#'"
                    )
                )
                continue
            }
            let key = String(line[..<equals]).trimmingWhitespace()
            let value = String(line[line.index(after: equals)...]).trimmingWhitespace()
            guard !key.isEmpty else {
                errors.append(InputError(file: path, line: number, message: "no key before '=' in '\(line.excerpt)'"))
                continue
            }
            if let comment = value.trailingComment {
                errors.append(
                    InputError(
                        file: path,
                        line: number,
                        message:
                            "\(key.excerpt) ends in the comment '\(comment.excerpt)': a comment takes a whole line; move it to a line of its own"
                    )
                )
                continue
            }
            if let first = firstLine[key] {
                errors.append(
                    InputError(
                        file: path,
                        line: number,
                        message: "duplicate key \(key.excerpt), first set on line \(first); keep one of them"
                    )
                )
                continue
            }
            firstLine[key] = number
            entries.append(Entry(key: key, value: value, line: number))
        }
        return (IniFile(path: path, entries: entries), errors)
    }
}

extension String {
    /// A `#` after whitespace and what follows it: a comment written at a line's end, which §2 makes an
    /// error (a `#` with no whitespace before it, as in `home/+/BTtoMQTT/#`, is text).
    fileprivate var trailingComment: Substring? {
        var previous: Character = "x"
        for index in indices {
            let character = self[index]
            if character == "#" && (previous == " " || previous == "\t") { return self[index...] }
            previous = character
        }
        return nil
    }
}

extension StringProtocol {
    /// Without spaces and tabs (and a Windows line end) at both ends.
    func trimmingWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}
