import CBluetooth

#if canImport(Glibc)
    import Glibc
#endif

/// The raw HCI socket, through libbluetooth. For now it only answers whether an adapter can be
/// opened; scanning builds on it.
public enum HCISocket {
    /// Opens and closes a raw HCI socket bound to `name` (`hci0`), or says in plain words why not.
    public static func checkAvailable(adapter name: String) throws(BluetoothUnavailable) {
        let probe = socket(bw_af_bluetooth(), Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), bw_btproto_hci())
        guard probe >= 0 else { throw .from(errno: errno, adapter: name) }
        close(probe)
        let id = hci_devid(name)
        guard id >= 0 else { throw .noSuchAdapter(name) }
        let device = hci_open_dev(id)
        guard device >= 0 else { throw .from(errno: errno, adapter: name) }
        hci_close_dev(device)
    }
}
