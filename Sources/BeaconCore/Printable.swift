extension StringProtocol {
    /// The text with every control character (C0, DEL, C1) shown as `?`: what came from outside
    /// (a topic, a payload) is safe to put in a log line or on a terminal, which a CR or an ESC
    /// sequence would otherwise rewrite.
    public var printable: String {
        String(
            String.UnicodeScalarView(
                unicodeScalars.map { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) ? "?" : $0 }))
    }
}
