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

#endif
