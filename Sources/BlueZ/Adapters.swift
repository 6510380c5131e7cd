import BeaconCore
import Foundation

/// The Bluetooth adapters the kernel knows, as sysfs lists them: what `check` compares
/// `Monitor.source = hciN` against without opening a socket (which needs `CAP_NET_RAW`).
package enum Adapters {
    /// The adapters' names (`hci0`, `hci1`), sorted; `nil` when the folder is missing, as on a
    /// kernel without Bluetooth support.
    package static func names(sysfs: String = "/sys/class/bluetooth") -> [String]? {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: sysfs) else { return nil }
        // Connections appear beside adapters as hci0:11; only adapters are wanted.
        return entries.filter { $0.hasPrefix("hci") && !$0.contains(":") }.sorted()
    }

    /// Why `Monitor.source = name` will not scan on this machine, or `nil` when the adapter is
    /// there (it may still be down or busy; only `run` can tell).
    package static func absence(of name: String, sysfs: String = "/sys/class/bluetooth") -> String? {
        switch Radio(name) {
        case .uart(let device, _)?:
            // The line itself is only opened by run (it resets the controller).
            return FileManager.default.fileExists(atPath: device)
                ? nil : "no serial device \(device) on this machine; plug the controller in or fix the path"
        case .h4tcp?:
            return nil  // only connecting tells, and that takes the controller over
        default:
            break
        }
        guard let names = names(sysfs: sysfs) else {
            return "this machine shows no Bluetooth support (\(sysfs) is missing), so run exits 3 here; "
                + "load it with 'modprobe bluetooth', read a capture (btsnoop:PATH), "
                + "or set Monitor.source = none when scanners or a fleet hear the tags"
        }
        guard !names.contains(name) else { return nil }
        let present = names.isEmpty ? "none is present" : "present: \(names.joined(separator: ", "))"
        return
            "no Bluetooth adapter \(name) on this machine (\(present)); plug one in, set Monitor.source to one of them, "
            + "or set Monitor.source = none when scanners or a fleet hear the tags"
    }
}
