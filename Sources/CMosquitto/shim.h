// libmosquitto headers for Swift. Keep to includes and static inline shims for macros.
#ifndef BEACONWATCH_CMOSQUITTO_SHIM_H
#define BEACONWATCH_CMOSQUITTO_SHIM_H

#include <mosquitto.h>

#endif
