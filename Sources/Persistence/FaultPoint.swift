import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A place where the fault-injection tests kill the process (SIGKILL, as a power cut or the
/// OOM killer would) when `BEACONWATCH_FAULT` names it: halfway through a migration, between a
/// commit and the `--events` write.
package enum FaultPoint {
    static let armed = ProcessInfo.processInfo.environment["BEACONWATCH_FAULT"]

    package static func reach(_ name: String) {
        if armed == name { kill(getpid(), SIGKILL) }
    }
}
