import BeaconCore
import Syscalls

/// `Monitor.source = none`: a daemon with no radio of its own, for its fleet only (docs/behaviour.md §15). It
/// hears nothing; its waits end at their timeout or when the control wakes them (a fleet message,
/// a command, a stop).
package final class NoRadio: HCIEventSource {
    package init() {}

    package func nextEvent(timeout: Duration) throws -> [UInt8]? {
        Syscall.sleep(timeout)
        return nil
    }

    package func nextEvent(timeout: Duration, wake: Int32?) throws -> [UInt8]? {
        guard let wake else { return try nextEvent(timeout: timeout) }
        _ = try Syscall.waitReadable([wake], timeout: timeout)
        return nil
    }
}
