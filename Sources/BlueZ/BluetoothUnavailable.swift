#if canImport(Glibc)
    import Glibc
#endif

/// Why live scanning cannot start (docs/behaviour.md §3.1), each with the fix in the message. Exit status 3.
package enum BluetoothUnavailable: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kernel has no `AF_BLUETOOTH` (no Bluetooth support built or loaded).
    case noKernelSupport
    /// No adapter of that name.
    case noSuchAdapter(String)
    /// The adapter exists but is down.
    case adapterDown(String)
    /// Raw HCI sockets need `CAP_NET_RAW`.
    case permissionDenied(String)
    /// The adapter went away (unplugged, powered off) while in use.
    case adapterRemoved(String)
    /// Anything else the kernel said.
    case other(String, errno: Int32, message: String)
    /// An H4 line (`uart:`, `h4tcp:`) that cannot be opened or whose controller cannot be set up:
    /// the whole message, with its fix.
    case line(String, String)
    /// An H4 line that closed, went silent or carried bytes that are not H4 while in use.
    case lineLost(String, reason: String)

    package var description: String {
        switch self {
        case .noKernelSupport:
            "Bluetooth is not available: this kernel has no Bluetooth support (AF_BLUETOOTH); "
                + "load it with 'modprobe bluetooth', read a capture (btsnoop:PATH) or a trace (trace:PATH), "
                + "or set Monitor.source = none when scanners or a fleet hear the tags"
        case .noSuchAdapter(let name):
            "no Bluetooth adapter '\(name)'; list adapters with 'hciconfig' or 'btmgmt info' and pass --source hciN, "
                + "or set Monitor.source = none when scanners or a fleet hear the tags"
        case .adapterDown(let name):
            "Bluetooth adapter \(name) is down; bring it up with 'sudo hciconfig \(name) up' or 'bluetoothctl power on'"
        case .permissionDenied(let name):
            "permission denied opening \(name): raw HCI needs CAP_NET_RAW; run as root or grant it "
                + "('sudo setcap cap_net_raw+ep beaconwatch'; the systemd unit in etc/ does)"
        case .adapterRemoved(let name):
            "Bluetooth adapter \(name) was removed or powered off while scanning; retrying every 3 s until it returns"
        case .other(let name, let code, let message):
            "cannot use Bluetooth adapter \(name): \(message) (errno \(code))"
        case .line(_, let message):
            message
        case .lineLost(let name, let reason):
            "the controller on \(name) \(reason); opening it again every 3 s"
        }
    }

    /// The failure an `errno` stands for: from opening or binding a raw HCI socket, or, with
    /// `whileRunning`, from using one (where the kernel reports an adapter that went away as
    /// `ENODEV`, `ENETDOWN`, `EPIPE` or `EBADFD`).
    package static func from(errno code: Int32, adapter name: String, whileRunning: Bool = false)
        -> BluetoothUnavailable
    {
        if whileRunning, [ENODEV, ENETDOWN, EPIPE, EBADFD].contains(code) { return .adapterRemoved(name) }
        return switch code {
        case EAFNOSUPPORT, EPROTONOSUPPORT: .noKernelSupport
        case ENODEV, ENXIO: .noSuchAdapter(name)
        case ENETDOWN: .adapterDown(name)
        case EPERM, EACCES: .permissionDenied(name)
        default: .other(name, errno: code, message: String(cString: strerror(code)))
        }
    }
}
