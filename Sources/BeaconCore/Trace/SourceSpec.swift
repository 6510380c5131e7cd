/// Where sightings come from (docs/behaviour.md §3.1): `hci0`, `btsnoop:PATH` or `trace:PATH` (`trace:-` is
/// standard input).
package enum SourceSpec: Hashable, Sendable, CustomStringConvertible {
    /// A live radio, by its text form: `hciN`, `uart:DEVICE[@BAUD]` or `h4tcp:HOST:PORT` (``Radio``).
    case adapter(String)
    case btsnoop(path: String)
    case trace(path: String)
    /// No radio of its own: a daemon for its fleet only (docs/behaviour.md §15), `Monitor.source = none`.
    case none

    /// Parses the text form. A bare path is taken as a trace unless it ends in `.btsnoop`/`.log`
    /// or `.snoop`, so that `decode capture.btsnoop` does what it says.
    package init?(_ text: String) {
        if text.hasPrefix("btsnoop:") {
            let path = String(text.dropFirst("btsnoop:".count))
            guard !path.isEmpty else { return nil }
            self = .btsnoop(path: path)
        } else if text.hasPrefix("trace:") {
            let path = String(text.dropFirst("trace:".count))
            guard !path.isEmpty else { return nil }
            self = .trace(path: path)
        } else if let radio = Radio(text) {
            self = .adapter(radio.description)
        } else if text == "none" {
            self = .none
        } else if text.hasSuffix(".btsnoop") || text.hasSuffix(".snoop") || text.hasSuffix(".log") {
            self = .btsnoop(path: text)
        } else if text.hasSuffix(".jsonl") || text.hasSuffix(".json") || text == "-" {
            self = .trace(path: text)
        } else {
            return nil
        }
    }

    /// A live radio (`hciN`, `uart:`, `h4tcp:`).
    package var isAdapter: Bool {
        if case .adapter = self { return true }
        return false
    }

    /// The live radio, when this is one.
    package var radio: Radio? {
        if case .adapter(let name) = self { return Radio(name) }
        return nil
    }

    package var description: String {
        switch self {
        case .adapter(let name): name
        case .btsnoop(let path): "btsnoop:\(path)"
        case .trace(let path): "trace:\(path)"
        case .none: "none"
        }
    }

    /// The name used in messages about this source's input: the path, or `stdin`.
    package var displayName: String {
        switch self {
        case .adapter(let name): name
        case .btsnoop(let path): path
        case .trace(let path): path == "-" ? "stdin" : path
        case .none: "none"
        }
    }
}
