#!/usr/bin/env python3
"""Writes office-walk.btsnoop: someone walking through a small example office.

A btsnoop capture in btmon's format (datalink 2001), as `btmon -w` records it: HCI LE advertising
report events from four iBeacons of the office, with RSSI following the walker (log-distance with
an indoor exponent of 3, Gaussian noise, seeded; nothing weaker than -90 dBm is received, so a
beacon is heard within about 10 m and the walk enters and leaves rooms), plus what a real radio also hears: another company's device, a report
without RSSI, and an extended advertising report. Deterministic: rerunning writes the same bytes.
"""
import math, os, random, struct, datetime

OFFICE = bytes.fromhex("ACFD165EC0C011E39BBE1A514932AC01")
BEACONS = {  # Location ID: (major, minor, position in metres)
    "17082": (1, 17082, (0.0, 0.0)),    # Entrance
    "17081": (1, 17081, (4.0, 0.0)),    # Reception desk
    "17091": (2, 17091, (10.0, 6.0)),   # Kitchen
    "17101": (3, 17101, (18.0, 0.0)),   # Meeting room
}
# The walk: (seconds from start, position); positions in between are interpolated.
WALK = [(0, (-12.0, 0.0)), (8, (0.5, 0.0)), (20, (3.5, 0.5)), (30, (9.5, 5.5)), (55, (10.0, 6.2)),
        (65, (17.0, 0.5)), (95, (18.2, 0.3)), (105, (30.0, 0.0)), (130, (45.0, 0.0))]
START = datetime.datetime(2026, 11, 20, 9, 0, 0, tzinfo=datetime.timezone.utc).timestamp()
EPOCH_0AD = 0x00DCDDB30F2F8000
POWER = -59
PATH_LOSS = 3.0  # indoors, through walls and people
SENSITIVITY = -90

def position(t):
    for (t0, p0), (t1, p1) in zip(WALK, WALK[1:]):
        if t0 <= t <= t1:
            f = (t - t0) / (t1 - t0)
            return (p0[0] + f * (p1[0] - p0[0]), p0[1] + f * (p1[1] - p0[1]))
    return WALK[-1][1]

def ibeacon(major, minor, power=POWER):
    return bytes([0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15]) + OFFICE + struct.pack(">HHb", major, minor, power)

def legacy_event(data, rssi, address):
    report = bytes([0x03, 0x01]) + address + bytes([len(data)]) + data + struct.pack("b", rssi)
    params = bytes([0x02, 0x01]) + report
    return bytes([0x3E, len(params)]) + params

def extended_event(data, rssi, address):
    params = bytes([0x0D, 0x01, 0x10, 0x00, 0x01]) + address + bytes([0x01, 0x00, 0xFF, 0x7F]) + struct.pack("b", rssi)
    params += bytes([0x00, 0x00, 0x00]) + bytes(6) + bytes([len(data)]) + data
    return bytes([0x3E, len(params)]) + params

def main():
    rng = random.Random(2026)
    records = []
    for step in range(0, 140 * 2):  # the last 10 s outside, out of range: the final exits fall due
        t = step / 2.0
        here = position(t)
        for index, (major, minor, spot) in enumerate(BEACONS.values()):
            if (step + index) % 2:  # each beacon every second, staggered by half a second
                continue
            distance = max(0.2, math.dist(here, spot))
            rssi = round(POWER - 10 * PATH_LOSS * math.log10(distance) + rng.gauss(0, 2.0))
            if rssi < SENSITIVITY or rng.random() < 0.1:  # out of range, or lost
                continue
            address = bytes([0x01 + index, 0x00, 0x00, 0xEE, 0xFF, 0xC0])
            stamp = t + index * 0.05 + rng.random() * 0.02
            event = extended_event(ibeacon(major, minor), rssi, address) if minor == 17101 and step % 10 == 0 \
                else legacy_event(ibeacon(major, minor), rssi, address)
            records.append((stamp, event))
        if step % 20 == 5:  # a thermometer in the kitchen: not a beacon
            records.append((t + 0.3, legacy_event(bytes([0x02, 0x01, 0x06, 0x08, 0x09]) + b"Thermo1", -80, bytes(6))))
    records.append((41.7, legacy_event(ibeacon(2, 17091), 127, bytes([0x03, 0, 0, 0xEE, 0xFF, 0xC0]))))  # no RSSI
    records.sort(key=lambda r: r[0])
    out = bytearray(b"btsnoop\0" + struct.pack(">II", 1, 2001))
    for stamp, event in records:
        micros = round((START + stamp) * 1e6) + EPOCH_0AD
        out += struct.pack(">IIIIq", len(event), len(event), 0x00000003, 0, micros) + event
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "office-walk.btsnoop")
    with open(path, "wb") as f:
        f.write(out)
    print(f"wrote {path}: {len(records)} events")

main()
