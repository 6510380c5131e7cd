/// Where live HCI events come from: a radio, or a scripted stand-in in tests.
package protocol HCIEventSource: AnyObject {
    /// The next HCI event (from the event code on), or `nil` when none came within `timeout`.
    func nextEvent(timeout: Duration) throws -> [UInt8]?
    /// The same, returning `nil` early when file descriptor `wake` turns readable (another
    /// thread has something for the loop: a command, an answer, a stop).
    func nextEvent(timeout: Duration, wake: Int32?) throws -> [UInt8]?
    /// Starts what the source delivers, if it was made not to at once (a scan enabled only when
    /// its reader is ready: the first report then waits for nothing); nothing when started.
    func start() throws
}

extension HCIEventSource {
    /// A source that delivers from the start (files, scripted sources in tests).
    package func start() throws {}

    /// A source that cannot wait on a descriptor waits out `timeout` (scripted sources in tests).
    package func nextEvent(timeout: Duration, wake: Int32?) throws -> [UInt8]? { try nextEvent(timeout: timeout) }
}
