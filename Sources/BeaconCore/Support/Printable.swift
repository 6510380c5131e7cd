extension StringProtocol {
    /// The text with every control character (C0, DEL, C1) escaped as JSON writes it (`\r`, `\n`,
    /// `\t`, `\u001b`): what came from outside (a topic, a payload, a line of a file) is safe to put
    /// in a log line or on a terminal, which a CR or an ESC sequence would otherwise rewrite.
    package var printable: String {
        var out = ""
        for scalar in unicodeScalars { Self.appendEscaped(scalar, to: &out) }
        return out
    }

    /// At most ``excerptLimit`` characters of the text, escaped as ``printable``, with `…` when
    /// there was more: how a message quotes input, so that a 70 KB value makes a short line.
    package var excerpt: String {
        var out = ""
        for scalar in unicodeScalars {
            if out.unicodeScalars.count >= excerptLimit {
                out += "…"
                break
            }
            Self.appendEscaped(scalar, to: &out)
        }
        return out
    }

    /// How many characters of input a message quotes at most (``excerpt``).
    package var excerptLimit: Int { 80 }

    private static func appendEscaped(_ scalar: Unicode.Scalar, to out: inout String) {
        switch scalar.value {
        case 0x0A: out += "\\n"
        case 0x0D: out += "\\r"
        case 0x09: out += "\\t"
        case 0..<0x20, 0x7F...0x9F:
            let hex = String(scalar.value, radix: 16)
            out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        default: out.unicodeScalars.append(scalar)
        }
    }
}
