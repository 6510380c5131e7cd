#!/usr/bin/env python3
"""The chaos run (issue 38, docs/reliability.md): one daemon with its own radio, trackers of a
fleet and commands, while a seeded random schedule breaks what it depends on; then a checker
proves from the subscriber's log, the committed events and the daemon's process what must hold.

The radio is a Bumble controller (as in the kernel test, Tests/kernel/building.py) that the
daemon owns on `h4tcp:`; three beacons walk in and out at random. Theengs-style trackers report
beacons through mosquitto, an OwnTracks iPhone ranges them (its `beacon` messages, as the iOS
app sends them: docs/owntracks-app.md), and a badge walks from room to room heard by ESPresense
nodes (each room's node reports it, the nearest loudest; now and then it leaves). The faults, one every few seconds:
  broker      mosquitto SIGKILLed or stopped, started again 1-4 s later (persistence on)
  daemon      beaconwatch SIGKILLed, started again 0.5-3 s later on the same database
  disk        the state database's file system (a small tmpfs; root only) filled for 2-6 s
  reload      SIGHUP with a changed good file, or with a broken one (then the good one again)
  garbage     random bytes on the command topics (mode, alert, reload, unknown)
  radio       the controller's TCP line closed under the daemon
  clock       the daemon's wall clock stepped by 5 s to 2 days either way, or back to the true
              time (Tests/chaos/clockshift.c, preloaded into the daemon only); sometimes while
              the daemon is down, so that it starts on kept state from another time
Checked at the end:
  - every committed event (the --events journal) reached the subscriber at least once, and first
    arrivals on each topic are in committed order; nothing arrived that was not committed;
  - per device and region, enters and exits alternate, and every enter has its exit at the end
    (but the phone's: iOS leaves a region by its own `leave`, which this phone never sends);
  - each rule's counter in the database equals its committed rule outputs;
  - the daemon's memory and open descriptors are flat over each life of 30 s or more;
  - the daemon never exited on its own (only SIGKILL and the final SIGTERM, which exits 0);
  - each step of its wall clock while it ran was noticed (its log says so within 10 s).

Usage: chaos.py BINARY [--minutes N] [--seed S] [--keep DIR]; exit 0 passed, 1 failed.
"""

import argparse
import asyncio
import collections
import json
import mmap
import os
import random
import shutil
import signal
import sqlite3
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "kernel"))
try:
    from bumble.link import LocalLink
    from bumble.transport import open_transport
    from building import BEACONS, OFF, Building, Failure, Scanner, free_port, scanning
    from broker import Broker, BrokerDidNotListen
    from kitchen import kitchen_rules
except ImportError:
    print("chaos: SKIPPED: Bumble is not installed (scripts/setup --kernel installs it)", file=sys.stderr)
    sys.exit(77)

EVENT_TYPES = {"enter", "exit", "location", "rule", "server", "notification", "alert"}
TRACKERS = ["cart-1", "cart-2"]
PHONES = {"alice-iphone"}
CONFIG = """# The chaos run's daemon (Tests/chaos/chaos.py)
LocationBaseBeacon.17081 = ACFD165E-C0C0-11E3-9BBE-1A514932AC01,1,17081
LocationBaseBeacon.17091 = ACFD165E-C0C0-11E3-9BBE-1A514932AC01,2,17091
LocationBaseBeacon.17101 = ACFD165E-C0C0-11E3-9BBE-1A514932AC01,3,17101
LocationBeaconName.17081 = {name}
LocationBeaconName.17091 = Kitchen counter
LocationBeaconName.17101 = Meeting room table
LocationAlert.17081 = near,=,popup,Welcome
Alert.resetAfter = 20
Monitor.userid = alice
Monitor.source = h4tcp:127.0.0.1:{radio}
Monitor.exitTimeout = 6
Monitor.rssiWindow = 3
Rules.source = {rules}
Rules.autoServerNotify = false
MQTT.host = 127.0.0.1
MQTT.port = {broker}
MQTT.qos = 1
Fleet.theengs = home/+/BTtoMQTT/#
Fleet.owntracks = owntracks/+/+
Fleet.maxAge = 0
LocationScanner.17081 = reception
LocationScanner.17091 = kitchen
LocationScanner.17101 = meeting
Scanners.espresense = espresense/devices/+/+
Tag.anna = ibeacon:FDA50693-A4E2-4FB1-AFCF-C6EB07647825:7:1, Anna's badge
Tags.exitTimeout = 10
State.database = {state}
Web.listen =
{broken}"""
RULES = kitchen_rules("chaos", "ACFD165E-C0C0-11E3-9BBE-1A514932AC01", 2)


class Daemon:
    """beaconwatch run, its lives, and samples of its memory and descriptors."""

    def __init__(self, binary, config, events, log, environment=None):
        self.binary, self.config, self.events = binary, config, events
        self.environment = environment
        self.log_path = log
        self.log = open(log, "a")
        self.process = None
        self.lives = []  # per life: [(time, rss KiB, descriptors)]
        self.exits = []  # (how it ended, status)

    async def start(self):
        self.process = await asyncio.create_subprocess_exec(
            self.binary, "run", "--config", self.config, "--events", self.events, "--log-level", "notice",
            stdout=subprocess.DEVNULL, stderr=self.log, env=self.environment)  # fmt: skip
        self.lives.append([])
        self.killed = False

    def sample(self):
        if not self.process or self.process.returncode is not None:
            return
        try:
            with open(f"/proc/{self.process.pid}/status") as file:
                rss = next(int(line.split()[1]) for line in file if line.startswith("VmRSS:"))
            descriptors = len(os.listdir(f"/proc/{self.process.pid}/fd"))
        except (OSError, StopIteration):
            return
        self.lives[-1].append((time.time(), rss, descriptors))

    async def kill(self):
        self.killed = True
        self.process.send_signal(signal.SIGKILL)
        self.exits.append(("SIGKILL", await self.process.wait()))

    def hang_up(self):
        self.process.send_signal(signal.SIGHUP)

    async def stop(self):
        self.process.send_signal(signal.SIGTERM)
        try:
            status = await asyncio.wait_for(self.process.wait(), 30)
        except asyncio.TimeoutError:
            self.process.kill()
            status = "hung"
        self.exits.append(("SIGTERM", status))

    def died_by_itself(self):
        return self.process is not None and self.process.returncode is not None and not self.killed


async def publish(port, topic, payload, qos=1):
    """One message; the payload (bytes, any of them) through standard input."""
    process = await asyncio.create_subprocess_exec(
        "mosquitto_pub", "-h", "127.0.0.1", "-p", str(port), "-q", str(qos), "-t", topic, "-s",
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    await process.communicate(payload if isinstance(payload, bytes) else payload.encode())


FAULTS = ["broker", "daemon", "disk", "reload", "garbage", "radio", "clock"]


class WallClock:
    """The daemon's wall clock: an offset from the machine's that Tests/chaos/clockshift.c,
    preloaded into the daemon, adds to every reading. None when no C compiler can build it."""

    def __init__(self, work):
        self.offset = 0  # microseconds
        self.library = os.path.join(work, "clockshift.so")
        self.path = os.path.join(work, "clock-offset")
        compiler = shutil.which("cc") or shutil.which("clang")
        source = os.path.join(HERE, "clockshift.c")
        built = compiler and subprocess.run(
            [compiler, "-shared", "-fPIC", "-O2", "-o", self.library, source, "-ldl"], capture_output=True).returncode == 0
        with open(self.path, "wb") as file:
            file.write(bytes(mmap.PAGESIZE))
        self.file = open(self.path, "r+b")
        self.map = mmap.mmap(self.file.fileno(), mmap.PAGESIZE)
        self.available = bool(built)

    def environment(self):
        if not self.available:
            return None
        return dict(os.environ, LD_PRELOAD=self.library, CHAOS_CLOCK_OFFSET=self.path)

    def step(self, rng):
        """A new offset: a step of 5 s to 2 minutes or 1 to 48 hours either way, or back to the
        true time; returns the step in seconds."""
        if self.offset and rng.random() < 0.25:
            offset = 0
        else:
            seconds = rng.uniform(5, 120) if rng.random() < 0.5 else rng.uniform(3600, 48 * 3600)
            offset = self.offset + int(rng.choice([-1, 1]) * seconds * 1_000_000)
        step, self.offset = (offset - self.offset) / 1_000_000, offset
        struct.pack_into("<q", self.map, 0, offset)
        return step


async def chaos(binary, minutes, seed, work, faults_wanted=FAULTS):
    rng = random.Random(seed)
    counts = collections.Counter()
    broker = Broker(work, free_port())
    await broker.start()
    subscriber_log = open(os.path.join(work, "subscriber.log"), "w")
    subscriber = await asyncio.create_subprocess_exec(
        "mosquitto_sub", "-h", "127.0.0.1", "-p", str(broker.port), "-q", "1", "-c", "-i", "chaos-subscriber",
        "-t", "beaconwatch/#", "-F", "%t\t%p", stdout=subscriber_log, stderr=subprocess.DEVNULL)  # fmt: skip

    # The radio: a Bumble controller beaconwatch owns on h4tcp:, and three beacons.
    radio_port = free_port()
    transport = await open_transport(f"tcp-server:127.0.0.1:{radio_port}")
    link = LocalLink()
    scanner = Scanner("chaos scanner", host_source=transport.source, host_sink=transport.sink, link=link,
                      public_address="00:1B:DC:00:00:09")  # fmt: skip
    building = Building(scanner, link)
    for address in BEACONS:
        await building.add(address)

    # The state database on a small file system of its own, when this user may mount one.
    state_folder = os.path.join(work, "state")
    os.makedirs(state_folder, exist_ok=True)
    tmpfs = os.geteuid() == 0 and subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", state_folder], capture_output=True).returncode == 0
    rules = os.path.join(work, "u_beacons.json")
    with open(rules, "w") as file:
        json.dump(RULES, file)
    config = os.path.join(work, "hsyco.ini")
    values = dict(radio=radio_port, rules=rules, broker=broker.port, state=os.path.join(state_folder, "state.sqlite"))

    def write_config(name="Reception desk", broken=""):
        with open(config + ".new", "w") as file:
            file.write(CONFIG.format(name=name, broken=broken, **values))
        os.replace(config + ".new", config)

    write_config()
    events = os.path.join(work, "events.jsonl")
    clock = WallClock(work)
    if "clock" in faults_wanted and not clock.available:
        print("chaos: no C compiler built Tests/chaos/clockshift.c: the clock steps are left out", file=sys.stderr)
    daemon = Daemon(binary, config, events, os.path.join(work, "daemon.log"), clock.environment())
    end = time.time() + minutes * 60
    broker_up = True

    async def walk():
        while time.time() < end:
            address = rng.choice(list(BEACONS))
            level = OFF if rng.random() < 0.3 else rng.randint(-95, -50)
            if level is not OFF:
                scanner.levels[address] = level
            await building.set({address: level})
            await asyncio.sleep(rng.uniform(1, 6))
        await building.set({address: OFF for address in BEACONS})

    async def trackers():
        while time.time() < end:
            if broker_up:
                tracker = rng.choice(TRACKERS)
                major, minor = rng.choice(list(BEACONS.values()))
                report = {"id": "C0:FF:EE:00:01:B9", "mfid": "4c00", "uuid": "ACFD165E-C0C0-11E3-9BBE-1A514932AC01",
                          "major": major, "minor": minor, "txpower": -59, "rssi": rng.randint(-90, -50)}  # fmt: skip
                await publish(broker.port, f"home/{tracker}/BTtoMQTT/C0FFEE0001B9", json.dumps(report), qos=0)
            await asyncio.sleep(rng.uniform(0.3, 2))

    async def phone():
        """An iPhone ranging the office's beacons: `beacon` messages with `prox` and `rssi`,
        now and then a location fix; its waypoints commands come back on its cmd topic."""
        proximity = {1: -55, 2: -68, 3: -82}
        while time.time() < end:
            if broker_up:
                major, minor = rng.choice(list(BEACONS.values()))
                prox = rng.choice([1, 2, 3])
                message = {"_type": "beacon", "tid": "al", "tst": int(time.time()),
                           "uuid": "ACFD165E-C0C0-11E3-9BBE-1A514932AC01", "major": major, "minor": minor,
                           "prox": prox, "rssi": proximity[prox] + rng.randint(-3, 3), "acc": 1.5}  # fmt: skip
                await publish(broker.port, "owntracks/alice/iphone/beacon", json.dumps(message))
                if rng.random() < 0.1:
                    fix = {"_type": "location", "lat": 45.4642, "lon": 9.19, "acc": 12, "tst": int(time.time())}
                    await publish(broker.port, "owntracks/alice/iphone", json.dumps(fix))
            await asyncio.sleep(rng.uniform(0.5, 3))

    async def badge():
        """Anna's badge as ESPresense nodes report it (docs/espresense.md): a room, a few reports
        from each node a few seconds apart, the room's own node the loudest; sometimes away."""
        rooms = ["reception", "kitchen", "meeting"]
        device = "iBeacon:fda50693-a4e2-4fb1-afcf-c6eb07647825-7-1"
        while time.time() < end:
            room = None if rng.random() < 0.2 else rng.choice(rooms)
            until = time.time() + rng.uniform(5, 25)
            while time.time() < min(until, end):
                if broker_up and room is not None:
                    for node in rooms:
                        rssi = rng.uniform(-62, -55) if node == room else rng.uniform(-85, -72)
                        report = {"mac": "4a1b2c3d4e5f", "id": device, "rssi@1m": -61, "rssi": round(rssi, 2),
                                  "int": 1000}  # fmt: skip
                        await publish(broker.port, f"espresense/devices/{device}/{node}", json.dumps(report), qos=0)
                await asyncio.sleep(rng.uniform(1, 3))

    async def sampler():
        while time.time() < end + 60:
            daemon.sample()
            if daemon.died_by_itself():
                raise Failure(f"the daemon exited by itself with status {daemon.process.returncode}")
            await asyncio.sleep(1)

    async def step_clock(step):
        """The daemon's log says the step within 10 s (its loop reads the clock when it wakes)."""
        with open(daemon.log_path, "rb") as file:
            file.seek(0, os.SEEK_END)
            start = file.tell()
        sign = "+" if step > 0 else "-"
        deadline = time.time() + 10
        while time.time() < deadline:
            with open(daemon.log_path, "rb") as file:
                file.seek(start)
                text = file.read().decode(errors="replace")
            if f"the wall clock stepped by {sign}" in text:
                return
            await asyncio.sleep(0.1)
        raise Failure(f"a wall clock step of {step:+.1f} s was not noticed within 10 s")

    async def faults():
        nonlocal broker_up
        while time.time() < end - 5:
            await asyncio.sleep(rng.uniform(3, 10))
            fault = rng.choice(faults_wanted)
            if fault == "disk" and not tmpfs or fault == "clock" and not clock.available:
                fault = "garbage"
            counts[fault] += 1
            if fault == "broker":
                broker_up = False
                await broker.stop(hard=rng.random() < 0.5)
                await asyncio.sleep(rng.uniform(1, 4))
                await broker.start()
                broker_up = True
            elif fault == "daemon":
                await daemon.kill()
                await asyncio.sleep(rng.uniform(0.5, 3))
                if clock.available and rng.random() < 0.3:
                    clock.step(rng)  # it starts on state kept at another time
                    counts["clock while down"] += 1
                await daemon.start()
            elif fault == "clock":
                await step_clock(clock.step(rng))
            elif fault == "disk":
                filler = os.path.join(state_folder, "filler")
                subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=64k"], capture_output=True)
                await asyncio.sleep(rng.uniform(2, 6))
                os.remove(filler)
            elif fault == "reload":
                if rng.random() < 0.5:
                    write_config(name=rng.choice(["Reception desk", "Front desk", "Desk"]))
                    daemon.hang_up()
                else:
                    write_config(broken="Monitor.maxRegions = zero\n")
                    daemon.hang_up()
                    await asyncio.sleep(1)
                    write_config()
                    daemon.hang_up()
            elif fault == "garbage" and broker_up:
                for _ in range(rng.randint(5, 30)):
                    topic = "beaconwatch/alice/cmd/" + rng.choice(["mode", "alert", "reload", "x" * rng.randint(1, 9)])
                    payload = bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 64)))
                    await publish(broker.port, topic, payload)
            elif fault == "radio" and transport.sink.transport:
                transport.sink.transport.close()

    try:
        await daemon.start()
        await scanning(scanner, time.time() - 1, 30, "the daemon did not scan")
        end = time.time() + minutes * 60
        await asyncio.gather(walk(), trackers(), phone(), badge(), faults(), sampler_until(sampler(), end))
        # Everything leaves: the beacons are off; wait out the exit timeout, then stop.
        if daemon.process.returncode is not None:
            await daemon.start()
        await asyncio.sleep(10 + 6)  # the badge's and the radio's exit timeouts, and a margin
        await daemon.stop()
        await asyncio.sleep(3)  # the subscriber's last arrivals
    finally:
        if daemon.process and daemon.process.returncode is None:
            daemon.process.kill()
        subscriber.terminate()
        await subscriber.wait()
        await broker.stop(hard=False)
        await transport.close()
        if tmpfs:
            if os.path.exists(values["state"]):
                shutil.copy(values["state"], os.path.join(work, "state.sqlite"))
            subprocess.run(["umount", state_folder])
    return daemon, counts, os.path.join(work, "state.sqlite") if tmpfs else values["state"], events


async def sampler_until(task, end):
    """The sampler runs until the run's end and a minute after; the gather must not wait for it."""
    sampling = asyncio.get_running_loop().create_task(task)
    while time.time() < end:
        if sampling.done():
            sampling.result()
        await asyncio.sleep(0.5)
    sampling.cancel()


def check(work, daemon, state, events):
    figures = {}
    with open(events) as file:
        committed = [json.loads(line) for line in file if line.strip()]
    committed_events = [e for e in committed if e.get("type") in EVENT_TYPES]
    arrivals = []
    with open(os.path.join(work, "subscriber.log"), errors="surrogateescape") as file:
        for line in file:
            topic, _, payload = line.rstrip("\n").partition("\t")
            arrivals.append((topic, payload))
    # Events must arrive, and in committed order per topic: the first arrival of each is after the
    # first arrival of the one committed before it on its topic. An event whose text was committed
    # more than once (the same instant again: a clock held still after a step back) is matched,
    # occurrence by occurrence, to its next arrival on the topic.
    lines = [json.dumps(e, separators=(",", ":"), ensure_ascii=False) for e in committed_events]
    raw = {}
    with open(events) as file:
        for line in file:
            try:
                raw.setdefault(json.dumps(json.loads(line), separators=(",", ":"), ensure_ascii=False), line.strip())
            except ValueError:
                pass
    payloads = [raw.get(text, text) for text in lines]
    occurrences = collections.Counter(payloads)
    where = collections.defaultdict(list)  # payload: [(arrival index, topic)]
    for index, (topic, payload) in enumerate(arrivals):
        where[payload].append((index, topic))
    missing = [text for text, payload in zip(lines, payloads) if payload not in where]
    if missing:
        raise Failure(f"{len(missing)} committed events never reached the subscriber, the first: {missing[0][:200]}")
    last_on_topic = {}
    for text, payload in zip(lines, payloads):
        topic = where[payload][0][1]
        after = last_on_topic.get(topic, -1)
        if occurrences[payload] == 1:
            index = where[payload][0][0]
        else:
            index = next((i for i, t in where[payload] if i > after and t == topic), -1)
        if index < after:
            raise Failure(f"on {topic} an event arrived before one committed earlier: {text[:200]}")
        last_on_topic[topic] = index
    committed_payloads = set(payloads)
    event_topics = set(last_on_topic)
    strays = [p for t, p in arrivals if t in event_topics and p not in committed_payloads]
    if strays:
        raise Failure(f"{len(strays)} events arrived that were never committed, the first: {strays[0][:200]}")
    figures["committed events"] = len(committed_events)
    figures["arrivals on their topics"] = sum(1 for t, _ in arrivals if t in event_topics)
    # Enters and exits alternate per device and region, and all is left at the end.
    inside = {}
    for e in committed_events:
        if e["type"] not in ("enter", "exit"):
            continue
        key = (e.get("device", ""), e["region"])
        now_inside = e["type"] == "enter"
        if inside.get(key, False) == now_inside:
            raise Failure(f"{e['type']} of {key} twice in a row at {e['t']}")
        inside[key] = now_inside
    # A phone's regions are left by the phone's own `leave` (README: a phone's ranging holds the
    # region until its leave), which this phone never sends: only the others must end outside.
    left_inside = [key for key, value in inside.items() if value and key[0] not in PHONES]
    if left_inside:
        raise Failure(f"enters without their exit at the end: {left_inside}")
    figures["transitions"] = sum(1 for e in committed_events if e["type"] in ("enter", "exit"))
    # Rule counters equal the committed rule outputs.
    database = sqlite3.connect(state)
    counters = {(device, region, rule): count for device, region, rule, count in
                database.execute("SELECT device, region, rule, count FROM ruleCounter")}  # fmt: skip
    fired = collections.Counter(
        (e.get("device", ""), e.get("region"), e.get("rule")) for e in committed if e.get("type") == "rule")
    if {k: v for k, v in counters.items() if v} != dict(fired):
        raise Failure(f"rule counters {counters} differ from the committed rule outputs {dict(fired)}")
    figures["rule firings"] = sum(fired.values())
    # Memory and descriptors flat over each long life.
    growth, spread = [], []
    for life in daemon.lives:
        if len(life) < 30:
            continue
        third = len(life) // 3
        early = sorted(rss for _, rss, _ in life[third: 2 * third])
        late = sorted(rss for _, rss, _ in life[2 * third:])
        growth.append((late[len(late) // 2] - early[len(early) // 2]) / 1024)
        spread.append(max(d for _, _, d in life[third:]) - min(d for _, _, d in life[third:]))
    if growth and max(growth) > 5:
        raise Failure(f"memory grew {max(growth):.1f} MiB over the second half of a life")
    if spread and max(spread) > 8:
        raise Failure(f"open descriptors varied by {max(spread)} over a life")
    figures["lives of 30 s or more"] = len(growth)
    figures["largest RSS growth in a life, MiB"] = round(max(growth), 2) if growth else None
    figures["largest descriptor spread in a life"] = max(spread) if spread else None
    bad = [(how, status) for how, status in daemon.exits if how == "SIGTERM" and status != 0]
    if bad:
        raise Failure(f"the final stop ended with {bad}")
    return figures


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--minutes", type=float, default=2)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--keep", help="keep the logs, the events and the database here")
    parser.add_argument("--faults", default=",".join(FAULTS), help="which faults, comma-separated (all by default)")
    arguments = parser.parse_args()
    for tool in ("mosquitto", "mosquitto_sub", "mosquitto_pub"):
        if not shutil.which(tool):
            print(f"chaos: SKIPPED: {tool} is missing (scripts/setup installs it)", file=sys.stderr)
            return 77
    work = arguments.keep or tempfile.mkdtemp(prefix="beaconwatch-chaos-")
    os.makedirs(work, exist_ok=True)
    started = time.time()
    try:
        daemon, counts, state, events = await chaos(os.path.abspath(arguments.binary), arguments.minutes,
                                                    arguments.seed, work, arguments.faults.split(","))  # fmt: skip
        figures = check(work, daemon, state, events)
    except (Failure, BrokerDidNotListen) as failure:
        print(f"chaos: FAILED (seed {arguments.seed}): {failure} (logs in {work})", file=sys.stderr)
        return 1
    faults = ", ".join(f"{name} {count}" for name, count in sorted(counts.items()))
    print(f"chaos: passed: {arguments.minutes:g} min (seed {arguments.seed}, {time.time() - started:.0f} s); "
          f"faults: {faults}")  # fmt: skip
    print("chaos: " + ", ".join(f"{k} {v}" for k, v in figures.items()))
    if not arguments.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
