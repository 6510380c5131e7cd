#!/usr/bin/env python3
"""The daemon itself through a broker outage: `beaconwatch run` on a trace of EVENTS sightings
(1,000 beacons in one Zone, each sighting flipping its beacon between immediate and far: one
LocationBeaconEvent each), once with --no-mqtt and once with MQTT pointed at a port where no broker
listens. Prints each run's peak resident memory (the kernel's, for the whole process: every
service, not only the sink as `beaconwatch-bench outage` measures) and the difference.
Usage: scripts/bench-outage-daemon.py BEACONWATCH [EVENTS]   (EVENTS defaults to 1,000,000)"""
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time

UUID = "5A4BCFCE-174E-4BAC-A814-092E77F6B7E5"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again: nothing listens there


def run(binary, folder, config, trace, extra):
    state = os.path.join(folder, "state.sqlite")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(state + suffix):
            os.remove(state + suffix)
    pid = os.fork()
    if pid == 0:
        os.execv(binary, [binary, "run", "--config", config, "--source", "trace:" + trace, "--log-level", "error"] + extra)
    started = time.monotonic()
    _, status, usage = os.wait4(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"bench-outage-daemon: beaconwatch run {' '.join(extra)} exited {code}")
    return usage.ru_maxrss / 1024, time.monotonic() - started


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    binary = os.path.abspath(sys.argv[1])
    events = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
    with tempfile.TemporaryDirectory(prefix="bench-outage-daemon-") as folder:
        config = os.path.join(folder, "bench.ini")
        with open(config, "w") as f:
            for minor in range(1, 1001):
                f.write(f"LocationBaseBeacon.{minor} = {UUID},1,{minor}\n")
            f.write(
                "Monitor.userid = bench\nMonitor.mode = foreground\nMonitor.rssiFilter = none\n"
                "Monitor.hysteresis = 0\nMonitor.exitTimeout = 3600\nMQTT.host = 127.0.0.1\n"
                f"MQTT.port = {free_port()}\nMQTT.homeassistant = false\nWeb.listen =\n"
                f"State.database = {folder}/state.sqlite\n")
        trace = os.path.join(folder, "trace.jsonl")
        with open(trace, "w") as f:
            for n in range(events):
                rssi = -50 if (n // 1000) % 2 == 0 else -75
                f.write(json.dumps({"t": 1_700_000_000 + n / 10_000, "uuid": UUID, "major": 1,
                                    "minor": n % 1000 + 1, "rssi": rssi, "power": -59}) + "\n")
        reference, _ = run(binary, folder, config, trace, ["--no-mqtt"])
        outage, seconds = run(binary, folder, config, trace, [])
        print(f"outage-daemon: {events} events, `run` peak RSS {reference:.1f} MiB without MQTT, "
              f"{outage:.1f} MiB with the broker down ({outage - reference:+.1f} MiB; {seconds:.1f} s)")


if __name__ == "__main__":
    main()
