/// Bad input: a file, a line (when there is one) and what to do about it.
///
/// Rendered as `file:line: message`, the form editors and terminals link to. Exit status 2.
package struct InputError: Error, Sendable, Hashable, CustomStringConvertible {
    package var file: String
    package var line: Int?
    package var message: String

    package init(file: String, line: Int? = nil, message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    /// `file:line: message`, control characters escaped: a CR in a file name or a message can
    /// not rewrite the line on a terminal (messages quote input through `excerpt`).
    package var description: String {
        if let line { return "\(file.printable):\(line): \(message.printable)" }
        return "\(file.printable): \(message.printable)"
    }
}
