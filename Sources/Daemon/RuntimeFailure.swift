/// A failure at run time that is not bad input nor missing Bluetooth (exit status 1).
package struct RuntimeFailure: Error, Sendable, CustomStringConvertible {
    package var message: String
    package init(_ message: String) { self.message = message }
    package var description: String { message }
}
