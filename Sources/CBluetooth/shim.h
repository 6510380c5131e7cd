// libbluetooth (BlueZ) headers for Swift. Keep to includes and static inline shims for macros.
#ifndef BEACONWATCH_CBLUETOOTH_SHIM_H
#define BEACONWATCH_CBLUETOOTH_SHIM_H

#include <sys/socket.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
#include <bluetooth/hci_lib.h>

/// `AF_BLUETOOTH` and `BTPROTO_HCI` are macros Swift cannot always import; expose them as values.
static inline int bw_af_bluetooth(void) { return AF_BLUETOOTH; }
static inline int bw_btproto_hci(void) { return BTPROTO_HCI; }
static inline int bw_sol_hci(void) { return SOL_HCI; }
static inline int bw_hci_filter(void) { return HCI_FILTER; }

/// Whether the adapter `dev_id` is up, through libbluetooth's own `hci_devinfo` and `hci_test_bit`;
/// -1 with errno set when it cannot be asked.
static inline int bw_hci_is_up(int dev_id) {
    struct hci_dev_info info;
    if (hci_devinfo(dev_id, &info) < 0) return -1;
    return hci_test_bit(HCI_UP, &info.flags) ? 1 : 0;
}

#endif
