import BeaconCore
import CBluetooth
import Syscalls

#if canImport(Glibc)
    import Glibc
#endif

/// An open raw HCI socket on one adapter: the thin shell between the pure HCI code
/// (``HCICommand``, ``ScanSetup``, the advertising report decoder) and the kernel.
///
/// Opening it saves the socket's HCI filter and sets one that passes LE meta events and command
/// answers only, built with libbluetooth's own inline helpers; ``close()`` (or deinit) puts the old
/// filter back. Every call retries `EINTR` and turns `errno` into ``BluetoothUnavailable``. Calls
/// block: use it from a dedicated thread, never from the cooperative pool.
package final class HCIDevice {
    package let name: String
    private var descriptor: Int32
    private var savedFilter = hci_filter()

    /// Opens `name` (`hci0`), or says in plain words why not.
    package init(adapter name: String) throws(BluetoothUnavailable) {
        self.name = name
        try HCISocket.checkKernelSupport(adapter: name)
        let id = hci_devid(name)
        guard id >= 0 else { throw .noSuchAdapter(name) }
        switch bw_hci_is_up(id) {
        case 0: throw .adapterDown(name)
        case 1: break
        default: throw .from(errno: errno, adapter: name)
        }
        let opened = Int32(try Syscall.retrying(adapter: name, whileRunning: false) { Int(hci_open_dev(id)) })
        descriptor = opened
        var length = socklen_t(MemoryLayout<hci_filter>.size)
        var saved = hci_filter()
        do {
            try Syscall.retrying(adapter: name, whileRunning: false) {
                Int(getsockopt(opened, Int32(bw_sol_hci()), Int32(bw_hci_filter()), &saved, &length))
            }
        } catch {
            hci_close_dev(opened)
            throw error
        }
        savedFilter = saved
        var filter = hci_filter()
        hci_filter_clear(&filter)
        hci_filter_set_ptype(Int32(HCI_EVENT_PKT), &filter)
        hci_filter_set_event(Int32(EVT_LE_META_EVENT), &filter)
        hci_filter_set_event(Int32(EVT_CMD_COMPLETE), &filter)
        hci_filter_set_event(Int32(EVT_CMD_STATUS), &filter)
        do {
            try Syscall.retrying(adapter: name, whileRunning: false) {
                Int(
                    setsockopt(
                        opened, Int32(bw_sol_hci()), Int32(bw_hci_filter()), &filter,
                        socklen_t(MemoryLayout<hci_filter>.size)))
            }
        } catch {
            hci_close_dev(opened)
            throw error
        }
    }

    deinit { close() }

    /// Writes one command packet.
    package func send(_ command: HCICommand) throws(BluetoothUnavailable) {
        let packet = command.packet
        let written = try Syscall.retrying(adapter: name) {
            packet.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        }
        guard written == packet.count else { throw .other(name, errno: EIO, message: "short write of \(command.name)") }
    }

    /// The next HCI event (from the event code on), or `nil` when none came within `timeout` or
    /// `wake` was signalled.
    package func nextEvent(timeout: Duration, wake: Int32? = nil) throws(BluetoothUnavailable) -> [UInt8]? {
        let revents: Int16
        do {
            revents = try Syscall.waitReadable([descriptor] + (wake.map { [$0] } ?? []), timeout: timeout)[0]
        } catch {
            throw BluetoothUnavailable.from(errno: error.code, adapter: name, whileRunning: true)
        }
        guard revents != 0 else { return nil }
        if revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0, revents & Int16(POLLIN) == 0 {
            throw .adapterRemoved(name)
        }
        var buffer = [UInt8](repeating: 0, count: Int(HCI_MAX_EVENT_SIZE) + 1)
        let count = try Syscall.retrying(adapter: name) {
            buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        }
        guard count > 1, buffer[0] == UInt8(HCI_EVENT_PKT) else { return count == 0 ? nil : [] }
        return Array(buffer[1..<count])
    }

    /// Restores the HCI filter found at open and closes the socket.
    package func close() {
        guard descriptor >= 0 else { return }
        _ = setsockopt(
            descriptor, Int32(bw_sol_hci()), Int32(bw_hci_filter()), &savedFilter,
            socklen_t(MemoryLayout<hci_filter>.size))
        hci_close_dev(descriptor)
        descriptor = -1
    }
}

extension Syscall {
    /// Runs `call` through ``Syscall/retrying(_:_:)``; a failure becomes ``BluetoothUnavailable``
    /// (one seen `whileRunning` may mean the adapter went away).
    @discardableResult
    static func retrying(adapter: String, whileRunning: Bool = true, _ call: () -> Int) throws(BluetoothUnavailable)
        -> Int
    {
        do {
            return try Syscall.retrying("HCI socket", call)
        } catch {
            throw BluetoothUnavailable.from(errno: error.code, adapter: adapter, whileRunning: whileRunning)
        }
    }
}
