/// A failure at run time that is not bad input nor missing Bluetooth (exit status 1).
public struct RuntimeFailure: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
