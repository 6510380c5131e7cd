import BeaconCore

/// HTML text built in order, every text and attribute value escaped.
package struct HTML {
    private(set) var text = ""

    init(capacity: Int = 8192) { text.reserveCapacity(capacity) }

    /// Markup written as is: only literals of this module go here.
    mutating func raw(_ markup: String) { text += markup }

    /// Text content, escaped.
    mutating func escaped(_ content: String) { text += Self.escape(content) }

    /// `<tag attributes>content</tag>`, the content escaped.
    mutating func element(_ tag: String, _ attributes: [(String, String)] = [], _ content: String) {
        open(tag, attributes)
        escaped(content)
        text += "</\(tag)>"
    }

    mutating func open(_ tag: String, _ attributes: [(String, String)] = []) {
        text += "<\(tag)"
        for (name, value) in attributes { text += " \(name)=\"\(Self.escape(value))\"" }
        text += ">"
    }

    mutating func close(_ tag: String) { text += "</\(tag)>" }

    package static func escape(_ value: String) -> String {
        guard value.utf8.contains(where: { $0 == 0x26 || $0 == 0x3C || $0 == 0x3E || $0 == 0x22 || $0 == 0x27 })
        else { return value }
        var out = ""
        out.reserveCapacity(value.utf8.count + 16)
        for character in value.unicodeScalars {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(character)
            }
        }
        return out
    }

    /// `hh:mm:ss` UTC of `time`.
    static func clock(_ time: Timestamp) -> String {
        let iso = time.iso8601
        let start = iso.index(iso.startIndex, offsetBy: 11)
        return String(iso[start..<iso.index(start, offsetBy: 8)])
    }

    /// `42 s`, `12 min`, `2 h 05 min`.
    package static func duration(_ seconds: Double) -> String {
        let whole = Int(max(0, min(seconds, 1e9)).rounded())
        if whole < 60 { return "\(whole) s" }
        if whole < 3600 { return "\(whole / 60) min" }
        let minutes = whole / 60 % 60
        return "\(whole / 3600) h \(minutes < 10 ? "0" : "")\(minutes) min"
    }
}
