/// Where live HCI events come from: a radio, or a scripted stand-in in tests.
public protocol HCIEventSource: AnyObject {
    /// The next HCI event (from the event code on), or `nil` when none came within `timeout`.
    func nextEvent(timeout: Duration) throws -> [UInt8]?
}
