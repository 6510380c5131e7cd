/// Where sightings come from (docs/behaviour.md §3.1): `hci0`, `btsnoop:PATH` or `trace:PATH` (`trace:-` is
/// standard input).
public enum SourceSpec: Hashable, Sendable, CustomStringConvertible {
    case adapter(String)
    case btsnoop(path: String)
    case trace(path: String)
    /// No radio of its own: a daemon for its fleet only (docs/behaviour.md §15), `Monitor.source = none`.
    case none

    /// Parses the text form. A bare path is taken as a trace unless it ends in `.btsnoop`/`.log`
    /// or `.snoop`, so that `decode capture.btsnoop` does what it says.
    public init?(_ text: String) {
        if text.hasPrefix("btsnoop:") {
            let path = String(text.dropFirst("btsnoop:".count))
            guard !path.isEmpty else { return nil }
            self = .btsnoop(path: path)
        } else if text.hasPrefix("trace:") {
            let path = String(text.dropFirst("trace:".count))
            guard !path.isEmpty else { return nil }
            self = .trace(path: path)
        } else if Self.isAdapterName(text) {
            self = .adapter(text)
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

    /// A live adapter (`hciN`).
    public var isAdapter: Bool {
        if case .adapter = self { return true }
        return false
    }

    /// `hci` followed by digits.
    static func isAdapterName(_ text: String) -> Bool {
        text.hasPrefix("hci") && text.count > 3 && text.dropFirst(3).allSatisfy { $0.isASCII && $0.isNumber }
    }

    public var description: String {
        switch self {
        case .adapter(let name): name
        case .btsnoop(let path): "btsnoop:\(path)"
        case .trace(let path): "trace:\(path)"
        case .none: "none"
        }
    }

    /// The name used in messages about this source's input: the path, or `stdin`.
    public var displayName: String {
        switch self {
        case .adapter(let name): name
        case .btsnoop(let path): path
        case .trace(let path): path == "-" ? "stdin" : path
        case .none: "none"
        }
    }
}
