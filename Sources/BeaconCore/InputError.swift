/// Bad input: a file, a line (when there is one) and what to do about it.
///
/// Rendered as `file:line: message`, the form editors and terminals link to. Exit status 2.
public struct InputError: Error, Sendable, Hashable, CustomStringConvertible {
    public var file: String
    public var line: Int?
    public var message: String

    public init(file: String, line: Int? = nil, message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    public var description: String {
        if let line { return "\(file):\(line): \(message)" }
        return "\(file): \(message)"
    }
}
