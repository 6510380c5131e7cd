#!/usr/bin/env python3
"""The Python libraries people use instead of beaconwatch, on the same capture (issue 19).

Usage (scripts/bench peers runs it inside a venv that has the peers):
  bench-peers.py CAPTURE BEACONWATCH BENCH [RUNS]   the table
  bench-peers.py --e2e PEER CAPTURE                 one peer end to end: JSON lines on stdout

Each peer does the same work per HCI event: LE Advertising Report -> uuid, major, minor, power,
rssi (and the address) of an iBeacon, nothing for anything else.
  bluetooth-data-tools  Home Assistant's advertisement parser (parse_advertisement_data_bytes),
                        the iBeacon fields then read from its Apple manufacturer data
  ibeacon-ble           Home Assistant's iBeacon integration: the same parse, a
                        BluetoothServiceInfo, then iBeaconParser.parse (vendor lookup included)
  beacontools           Monitor.process_packet on the raw H4 packet, as its scanner does
The HCI header is read by a few lines here for the first two (neither library reads HCI events),
one report per event, as scripts/make-bench-capture writes them.

"End to end" is a process reading the capture and writing one JSON line per iBeacon, timed with
its start, against `beaconwatch decode --quiet btsnoop:CAPTURE`; "decoder alone" is the loop over
events already in memory, against `beaconwatch-bench decode --capture CAPTURE`. Medians of RUNS.
Before timing, each peer's iBeacons are checked equal to beaconwatch's output, all of them.
"""
import json
import re
import statistics
import struct
import subprocess
import sys
import time

PEERS = ["bluetooth-data-tools", "ibeacon-ble", "beacontools"]
APPLE = 0x004C
UNPACK = struct.Struct(">HHb").unpack


def packets(path):
    """The H4 packets of a btsnoop capture (datalink 1002), in order."""
    with open(path, "rb") as file:
        data = file.read()
    if data[:8] != b"btsnoop\0" or struct.unpack(">I", data[12:16])[0] != 1002:
        sys.exit(f"bench-peers: {path} is not an H4 btsnoop capture")
    offset, found = 16, []
    while offset + 24 <= len(data):
        included = struct.unpack(">I", data[offset + 4 : offset + 8])[0]
        found.append(data[offset + 24 : offset + 24 + included])
        offset += 24 + included
    return found


def report(packet):
    """(address, data, rssi) of a one-report LE Advertising Report in H4, or None."""
    if len(packet) < 15 or packet[0] != 4 or packet[1] != 0x3E or packet[3] != 2 or packet[4] != 1:
        return None
    length = packet[13]
    if 14 + length >= len(packet):
        return None
    address = ":".join(f"{b:02X}" for b in reversed(packet[7:13]))
    rssi = packet[14 + length]
    return address, packet[14 : 14 + length], rssi - 256 if rssi > 127 else rssi


def uuid_text(raw):
    text = raw.hex().upper()
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def make_decoder(peer):
    """A function from an H4 packet to (uuid, major, minor, power, rssi, address) or None."""
    if peer == "bluetooth-data-tools":
        from bluetooth_data_tools import parse_advertisement_data_bytes

        def decode(packet):
            found = report(packet)
            if found is None:
                return None
            address, data, rssi = found
            manufacturer = parse_advertisement_data_bytes(data)[3].get(APPLE)
            if manufacturer is None or len(manufacturer) < 23 or manufacturer[0] != 2 or manufacturer[1] != 0x15:
                return None
            major, minor, power = UNPACK(manufacturer[18:23])
            return uuid_text(manufacturer[2:18]), major, minor, power, rssi, address

        return decode
    if peer == "ibeacon-ble":
        import asyncio

        from bluetooth_data_tools import parse_advertisement_data_bytes
        from habluetooth.models import BluetoothServiceInfo
        from ibeacon_ble import iBeaconParser

        parser = iBeaconParser()
        asyncio.run(parser.async_setup())

        def decode(packet):
            found = report(packet)
            if found is None:
                return None
            address, data, rssi = found
            name, uuids, service_data, manufacturer, _ = parse_advertisement_data_bytes(data)
            info = BluetoothServiceInfo(name or address, address, rssi, manufacturer, service_data, uuids, "hci0")
            beacon = parser.parse(info)
            if beacon is None:
                return None
            return str(beacon.uuid).upper(), beacon.major, beacon.minor, beacon.power, beacon.rssi, address

        return decode
    if peer == "beacontools":
        import types

        # Its Monitor imports the PyBluez socket backend, which parsing never uses (and which
        # needs a radio): an empty stand-in lets the parser run as it does in the scanner.
        stand_in = types.ModuleType("bluetooth")
        stand_in._bluetooth = types.ModuleType("bluetooth._bluetooth")
        sys.modules.setdefault("bluetooth", stand_in)
        sys.modules.setdefault("bluetooth._bluetooth", stand_in._bluetooth)
        from beacontools.packet_types import IBeaconAdvertisement
        from beacontools.scanner import Monitor

        results = []

        def callback(address, rssi, packet, properties):
            if isinstance(packet, IBeaconAdvertisement):
                results.append((packet.uuid.upper(), packet.major, packet.minor, packet.tx_power, rssi, address.upper()))

        monitor = Monitor(callback, 0, None, None, {})

        def decode(packet):
            monitor.process_packet(packet)
            return results.pop() if results else None

        return decode
    sys.exit(f"bench-peers: no peer {peer!r}; there is: {', '.join(PEERS)}")


def end_to_end(peer, capture):
    """What a user's script does: read the capture, write a JSON line per iBeacon."""
    decode = make_decoder(peer)
    write = sys.stdout.write
    for packet in packets(capture):
        found = decode(packet)
        if found is not None:
            uuid, major, minor, power, rssi, address = found
            write(json.dumps({"uuid": uuid, "major": major, "minor": minor, "power": power, "rssi": rssi, "address": address}) + "\n")


def timed(command, runs):
    """Median wall seconds of `command` with its output to /dev/null; fails if it does."""
    seconds = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, stdout=subprocess.DEVNULL, check=True)
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds)


def ours(beaconwatch, capture):
    """beaconwatch's iBeacons in the capture, as the peers give them."""
    lines = subprocess.run([beaconwatch, "decode", "--quiet", f"btsnoop:{capture}"], capture_output=True, check=True).stdout
    found = []
    for line in lines.splitlines():
        item = json.loads(line)
        if item["format"] == "ibeacon":
            found.append((item["uuid"], item["major"], item["minor"], item["power"], item["rssi"], item["address"]))
    return found


def rate(value):
    return f"{value / 1e6:.2f} M/s" if value >= 1e6 else f"{value / 1e3:.0f} k/s"


def table(capture, beaconwatch, bench, runs):
    events = packets(capture)
    expected = ours(beaconwatch, capture)
    rows = []
    for peer in PEERS:
        decode = make_decoder(peer)
        got = [found for found in map(decode, events) if found is not None]
        if got != expected:
            first = next((i for i, (a, b) in enumerate(zip(got, expected)) if a != b), min(len(got), len(expected)))
            sys.exit(f"bench-peers: {peer} disagrees with beaconwatch at iBeacon {first} ({len(got)} against {len(expected)})")
        alone = []
        for _ in range(runs):
            start = time.perf_counter()
            for packet in events:
                decode(packet)
            alone.append(len(events) / (time.perf_counter() - start))
        whole = len(events) / timed([sys.executable, __file__, "--e2e", peer, capture], runs)
        rows.append((peer, whole, statistics.median(alone)))
    our_whole = len(events) / timed([beaconwatch, "decode", "--quiet", f"btsnoop:{capture}"], runs)
    output = subprocess.run([bench, "decode", "--capture", capture, "--reports", "20000000"], capture_output=True, text=True, check=True).stdout
    our_alone = float(re.search(r"([0-9.]+) million reports/s", output).group(1)) * 1e6
    best_whole = max(row[1] for row in rows)
    best_alone = max(row[2] for row in rows)
    print(f"peers: {len(events)} reports of {capture}, {len(expected)} iBeacons, every one equal across all four; medians of {runs} runs")
    print("| decoder | end to end (process start, capture to JSON lines) | decoder alone (events in memory) |")
    print("|---|---|---|")
    print(f"| beaconwatch | {rate(our_whole)} ({our_whole / best_whole:.1f}× the fastest peer) | {rate(our_alone)} ({our_alone / best_alone:.0f}× the fastest peer) |")
    for peer, whole, alone in rows:
        print(f"| {peer} | {rate(whole)} (beaconwatch {our_whole / whole:.1f}×) | {rate(alone)} (beaconwatch {our_alone / alone:.0f}×) |")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--e2e":
        end_to_end(sys.argv[2], sys.argv[3])
    elif len(sys.argv) in (4, 5):
        table(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) == 5 else 3)
    else:
        sys.exit(__doc__)
