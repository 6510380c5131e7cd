"""The emulated building the kernel test and the chaos run share (docs/live-radio.md): Bumble
controllers on one LocalLink, beacons advertising iBeacons, and the scanner controller beaconwatch
meets, with the RSSI of each advertiser set by the test."""

import asyncio
import dataclasses
import socket
import time

from bumble import hci, ll
from bumble.controller import Controller, LegacyAdvertiser
from bumble.device import AdvertisingType, Device
from bumble.host import Host
from bumble.transport.common import AsyncPipeSink

UUID = "ACFD165E-C0C0-11E3-9BBE-1A514932AC01"
BEACONS = {  # address → (major, minor), the three rooms of Tests/kernel/hsyco.ini
    "C0:00:00:00:00:01": (1, 17081),
    "C0:00:00:00:00:02": (2, 17091),
    "C0:00:00:00:00:03": (3, 17101),
}
OFF = None


class Failure(Exception):
    pass


def ibeacon(major, minor, power=-59):
    body = bytes.fromhex(UUID.replace("-", "")) + major.to_bytes(2, "big") + minor.to_bytes(2, "big")
    return bytes([2, 1, 6, 26, 0xFF, 0x4C, 0x00, 0x02, 0x15]) + body + (power & 0xFF).to_bytes(1, "big")


class AnyLegacyAdvertiser(LegacyAdvertiser):
    """Bumble's legacy advertiser sends connectable ADV_IND only; `beaconwatch advertise` asks for
    ADV_NONCONN_IND, as beacons do. This one sends the PDU for every undirected type."""

    def send_advertising_data(self):
        if self.enabled and self.advertising_type in (0x00, 0x02, 0x03):
            self.controller.send_advertising_pdu(ll.AdvInd(advertiser_address=self.address, data=self.advertising_data))


class Scanner(Controller):
    """The guest's controller. As Bumble's own, except: the RSSI of each report is the building's
    level for its advertiser (Bumble fixes -50); scan responses are not reported (Bumble reports
    one per advertisement even to a passive scan, which no controller does); and every report sent
    is written down for the replay."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.levels = {}
        self.recording = False
        self.record_on_scan = False  # armed: recording starts with the next scan enable
        self.trace = []
        self.enables = []  # (time, enabled)
        self.le_legacy_advertiser = AnyLegacyAdvertiser(self)

    mute = False  # a controller that stopped answering: hears nothing, says nothing
    withheld = False  # reports not sent (nor written down): while it is unknown whether they would arrive

    def on_packet(self, packet):
        if not self.mute:
            super().on_packet(packet)

    def send_hci_packet(self, packet):
        if self.mute:
            return
        if isinstance(packet, hci.HCI_LE_Advertising_Report_Event):
            reports = [self._level(r) for r in packet.reports if r.event_type != 4]
            if not reports:
                return
            packet = hci.HCI_LE_Advertising_Report_Event(reports)
        elif isinstance(packet, hci.HCI_LE_Extended_Advertising_Report_Event):
            reports = [self._level(r) for r in packet.reports if r.event_type & 0x08 == 0]
            if not reports:
                return
            packet = hci.HCI_LE_Extended_Advertising_Report_Event(reports)
        else:
            return super().send_hci_packet(packet)
        if self.withheld:
            return
        if self.recording:
            # From the event code on, as the trace's "hci" field and the guest's socket carry it.
            self.trace.append((time.time(), bytes(packet)[1:].hex()))
        super().send_hci_packet(packet)

    def _level(self, report):
        address = str(report.address).split("/")[0]
        return dataclasses.replace(report, rssi=self.levels.get(address, -70))

    def on_hci_le_set_scan_enable_command(self, command):
        self._enabled(bool(command.le_scan_enable))
        return super().on_hci_le_set_scan_enable_command(command)

    def on_hci_le_set_extended_scan_enable_command(self, command):
        self._enabled(bool(command.enable))
        return super().on_hci_le_set_extended_scan_enable_command(command)

    def _enabled(self, on):
        self.enables.append((time.time(), on))
        if on and self.record_on_scan:
            # From the very command on: a test that switched recording on once it saw the scan
            # (polling) missed the reports sent meanwhile, which the host still received.
            self.record_on_scan = False
            self.recording = True
            self.withheld = False

    def record_from_next_scan(self):
        """Writes down every report from the next scan enable on (not before: the replay starts
        where the scan did)."""
        self.recording = False
        self.record_on_scan = True

    def scanning_since(self, after):
        """When the scan last turned on after `after`, or None."""
        times = [t for t, on in self.enables if t >= after and on]
        return times[-1] if times else None


class Building:
    def __init__(self, scanner, link):
        self.scanner = scanner
        self.link = link
        self.beacons = {}

    async def add(self, address):
        controller = Controller(f"beacon {address}", link=self.link, public_address=address)
        device = Device(address=hci.Address(address), host=Host(controller, AsyncPipeSink(controller)))
        await device.power_on()
        self.beacons[address] = device

    async def set(self, levels):
        for address, level in levels.items():
            device = self.beacons[address]
            if level is OFF:
                await device.stop_advertising()
                continue
            self.scanner.levels[address] = level
            if not device.is_advertising:
                major, minor = BEACONS[address]
                await device.start_advertising(
                    advertising_type=AdvertisingType.UNDIRECTED,
                    own_address_type=hci.OwnAddressType.PUBLIC,
                    advertising_data=ibeacon(major, minor),
                    advertising_interval_min=200,
                    advertising_interval_max=200,
                )


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def scanning(scanner, after, limit, what):
    """When `scanner` was (last) told to scan after `after`, waiting up to `limit` seconds from
    `after`; the failure says `what` and the scan enable commands the controller got meanwhile."""
    while (t := scanner.scanning_since(after)) is None:
        if time.time() - after > limit:
            commands = ", ".join(f"{'on' if on else 'off'} at +{t - after:.1f} s" for t, on in scanner.enables if t >= after)
            raise Failure(f"{what} within {limit:.0f} s (waiting for LE Set Scan Enable on at {scanner.name}; "
                          f"scan enable commands since: {commands or 'none'})")  # fmt: skip
        await asyncio.sleep(0.05)
    return t


async def sleep_until(at):
    left = at - time.time()
    if left > 0:
        await asyncio.sleep(left)
