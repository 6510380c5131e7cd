#!/usr/bin/env python3
"""Writes the btsnoop reproducers: three H4 records of one iBeacon of the ubudu-example-rules
scenario (566C5595-…:42:1), one second apart from 2013-11-04T08:33:20Z, the second record's
timestamp replaced by a value far from today (the crashes of issue 16)."""
import struct

EPOCH = 0x00DCDDB30F2F8000  # microseconds from year 0 to 1970
UUID = bytes.fromhex("566C55956EC74F08909FC954BDCA6CD3")
data = bytes([2, 1, 6, 0x1A, 0xFF, 0x4C, 0, 2, 0x15]) + UUID + struct.pack(">HHb", 42, 1, -59)
report = bytes([1, 0, 0]) + bytes([1, 2, 3, 4, 5, 6]) + bytes([len(data)]) + data + struct.pack("b", -60)
event = bytes([0x04, 0x3E, len(report) + 1, 0x02]) + report

for name, stamp in [("zero", 0), ("minus-one", -1), ("int64-min", -(2**63)), ("int64-max", 2**63 - 1),
                    ("high-bits", 0x7123456789ABCDEF), ("year-1970", EPOCH + 1_000_000)]:
    out = b"btsnoop\0" + struct.pack(">II", 1, 1002)
    for i in range(3):
        t = EPOCH + (1383555600 + i) * 1_000_000 if i != 1 else stamp
        out += struct.pack(">IIIIq", len(event), len(event), 1, 0, t) + event
    open(f"btsnoop-time-{name}.btsnoop", "wb").write(out)
