import CBluetooth
import Syscalls

#if canImport(Glibc)
    import Glibc
#endif

/// Questions about raw HCI sockets that need no open adapter.
package enum HCISocket {
    /// Whether the kernel has Bluetooth at all: a raw HCI socket can be made.
    package static func checkKernelSupport(adapter name: String) throws(BluetoothUnavailable) {
        let probe = try Syscall.retrying(adapter: name, whileRunning: false) {
            Int(socket(bw_af_bluetooth(), Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), bw_btproto_hci()))
        }
        close(Int32(probe))
    }

    /// Opens and closes a raw HCI socket bound to `name` (`hci0`), or says in plain words why not.
    package static func checkAvailable(adapter name: String) throws(BluetoothUnavailable) {
        try checkKernelSupport(adapter: name)
        let id = hci_devid(name)
        guard id >= 0 else { throw .noSuchAdapter(name) }
        let device = try Syscall.retrying(adapter: name, whileRunning: false) { Int(hci_open_dev(id)) }
        hci_close_dev(Int32(device))
    }
}
