#!/usr/bin/env python3
"""scripts/chaos --cluster (issue 49, docs/behaviour.md §21, docs/failover.md): two daemons of one cluster,
each in a network namespace of its own (a veth to the host, where mosquitto listens), tags walking
between three rooms heard by ESPresense nodes and Theengs trackers reporting, while a seeded
random schedule breaks the pair:
  kill      the active SIGKILLed, started again 1-3 s later on its database
  cut       the active's network dropped silently (its veth down: no FIN, no RST) for 5-10 s
  standby   the standby SIGKILLed, started again 1-2 s later
  broker    mosquitto stopped and started again 1-2 s later (persistence on)
Checked at the end (exit 1 when one fails):
  - takeover: from each kill or cut of the active to the next `online` from a new active, p95
    under 5 s (Cluster.keepalive = 2);
  - split brain: two daemons (each process has a session of its own) never publish events for
    the same seconds (event time) for more than a keepalive and a second running;
  - every event either daemon committed (its --events journal) reached the subscriber;
  - per device and region, the first arrivals of enters and exits alternate;
  - per tag, each rule's counts (a notification on every entry into the Kitchen) go 1, 2, 3 …
    across takeovers, with no repeat and no gap;
  - each daemon's memory is flat over every life of 60 s or more.

Usage: cluster.py BINARY [--minutes N] [--seed S] [--keep DIR]; exit 0 passed, 1 failed, 77 when
this machine cannot make network namespaces (not root, or no `ip`).
"""

import argparse
import asyncio
import collections
import json
import os
import random
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from broker import Broker, BrokerDidNotListen  # noqa: E402
from kitchen import kitchen_rules  # noqa: E402

UUID = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
BADGE = "fda50693-a4e2-4fb1-afcf-c6eb07647825"
ROOMS = {"kitchen": 1, "hall": 2, "office": 3}
TAGS = {"anna": 1, "ben": 2, "carl": 3}
TRACKERS = ["cart-1", "cart-2"]
KEEPALIVE = 2
CONFIG = """# scripts/chaos --cluster: member {member} (Tests/chaos/cluster.py)
LocationBaseBeacon.101 = {uuid},1,1
LocationBaseBeacon.102 = {uuid},2,1
LocationBaseBeacon.103 = {uuid},3,1
LocationAreaName.{uuid} = Flat
LocationZoneName.{uuid}:1 = Kitchen
LocationZoneName.{uuid}:2 = Hall
LocationZoneName.{uuid}:3 = Office
LocationScanner.101 = kitchen
LocationScanner.102 = hall
LocationScanner.103 = office
Scanners.espresense = espresense/devices/+/+
Tag.anna = ibeacon:{badge}:7:1, Anna
Tag.ben = ibeacon:{badge}:7:2, Ben
Tag.carl = ibeacon:{badge}:7:3, Carl
Tags.exitTimeout = 8
Fleet.theengs = home/+/BTtoMQTT/#
Rules.source = rules.json
Rules.autoServerNotify = false
Monitor.userid = hq
Monitor.source = none
Monitor.exitTimeout = 8
MQTT.host = {host}
MQTT.port = {port}
MQTT.clientId = {member}
MQTT.keepalive = 5
MQTT.homeassistant = false
State.database = state.sqlite
Cluster.name = flat
Cluster.keepalive = {keepalive}
"""
RULES = kitchen_rules("cluster", UUID, 1)  # the Kitchen: counted per tag


def run(*arguments, namespace=None):
    command = (["ip", "netns", "exec", namespace] if namespace else []) + list(arguments)
    return subprocess.run(command, capture_output=True, text=True)


class Network:
    """A namespace per member, joined to the host by a veth; `cut` takes the host's end down."""

    def __init__(self, members):
        self.tag = f"bwc{os.getpid() % 100000}"
        self.members = {}
        for index, member in enumerate(members, start=1):
            namespace, host_end, inner_end = f"{self.tag}-{member}", f"{self.tag}h{index}", f"{self.tag}n{index}"
            subnet = f"10.{100 + os.getpid() % 100}.{index}"
            for step in (
                ["ip", "netns", "add", namespace],
                ["ip", "link", "add", host_end, "type", "veth", "peer", "name", inner_end],
                ["ip", "link", "set", inner_end, "netns", namespace],
                ["ip", "addr", "add", f"{subnet}.1/24", "dev", host_end],
                ["ip", "link", "set", host_end, "up"],
            ):
                if run(*step).returncode != 0:
                    self.close()
                    raise OSError(" ".join(step))
            for step in (
                ["ip", "addr", "add", f"{subnet}.2/24", "dev", inner_end],
                ["ip", "link", "set", inner_end, "up"],
                ["ip", "link", "set", "lo", "up"],
            ):
                run(*step, namespace=namespace)
            self.members[member] = (namespace, host_end, f"{subnet}.1")

    def namespace(self, member):
        return self.members[member][0]

    def host(self, member):
        return self.members[member][2]

    def cut(self, member, down=True):
        run("ip", "link", "set", self.members[member][1], "down" if down else "up")

    def close(self):
        for namespace, host_end, _ in self.members.values():
            run("ip", "link", "del", host_end)
            run("ip", "netns", "del", namespace)
        subprocess.run(["sh", "-c", f"ip netns list | grep -o '^{self.tag}-[a-z0-9-]*' | xargs -r -n1 ip netns del"],
                       capture_output=True)  # fmt: skip


class Publisher:
    """A feed's own MQTT 3.1.1 connection (QoS 0): what is published while the broker is away
    is dropped, as a scanner's report is."""

    def __init__(self, port):
        self.port, self.socket = port, None

    @staticmethod
    def length(n):
        out = bytearray()
        while True:
            byte, n = n % 128, n // 128
            out.append(byte | (0x80 if n else 0))
            if not n:
                return bytes(out)

    def publish(self, topic, payload):
        try:
            if self.socket is None:
                connection = socket.create_connection(("127.0.0.1", self.port), timeout=2)
                client = b"cluster-chaos-feed"
                body = b"\x00\x04MQTT\x04\x02\x00\x3c" + struct.pack("!H", len(client)) + client
                connection.sendall(b"\x10" + self.length(len(body)) + body)
                if connection.recv(4)[:1] != b"\x20":
                    raise OSError("no CONNACK")
                self.socket = connection
            name = topic.encode()
            body = struct.pack("!H", len(name)) + name + payload.encode()
            self.socket.sendall(b"\x30" + self.length(len(body)) + body)
        except OSError:
            if self.socket:
                self.socket.close()
            self.socket = None


class Member:
    def __init__(self, name, binary, work, network, port):
        self.name, self.binary, self.network = name, binary, network
        self.folder = os.path.join(work, name)
        os.makedirs(self.folder, exist_ok=True)
        with open(os.path.join(self.folder, "hsyco.ini"), "w") as file:
            file.write(CONFIG.format(member=name, uuid=UUID, badge=BADGE.upper(), host=network.host(name), port=port,
                                     keepalive=KEEPALIVE))  # fmt: skip
        with open(os.path.join(self.folder, "rules.json"), "w") as file:
            json.dump(RULES, file)
        self.log_path = os.path.join(self.folder, "daemon.log")
        self.process = None
        self.lives = []  # per life: [(time, rss KiB)]

    async def start(self):
        log = open(self.log_path, "a")
        self.process = await asyncio.create_subprocess_exec(
            "ip", "netns", "exec", self.network.namespace(self.name), self.binary, "run", "--config", "hsyco.ini",
            "--events", "events.jsonl", "--web-listen", "", "--log-level", "notice",
            cwd=self.folder, stdout=subprocess.DEVNULL, stderr=log)  # fmt: skip
        self.lives.append([])

    async def kill(self, sig=signal.SIGKILL):
        if self.process and self.process.returncode is None:
            self.process.send_signal(sig)
            try:
                return await asyncio.wait_for(self.process.wait(), 30)
            except asyncio.TimeoutError:
                self.process.kill()
                return "hung"
        return None

    def role(self):
        """What its log last said of its role."""
        role = None
        with open(self.log_path, errors="replace") as file:
            for line in file:
                if "cluster: active (" in line:
                    role = "active"
                elif "cluster: standby" in line or "stepping down" in line:
                    role = "standby"
        return role if self.process and self.process.returncode is None else None

    def sample(self):
        if not self.process or self.process.returncode is not None:
            return
        try:
            # The process is `ip netns exec`, which execs the daemon: the same pid.
            with open(f"/proc/{self.process.pid}/status") as file:
                rss = next(int(line.split()[1]) for line in file if line.startswith("VmRSS:"))
        except (OSError, StopIteration):
            return
        self.lives[-1].append((time.time(), rss))


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def chaos(binary, minutes, seed, work):
    rng = random.Random(seed)
    network = Network(["a", "b"])
    try:
        return await chaos_in(binary, minutes, rng, work, network)
    finally:
        network.close()


async def chaos_in(binary, minutes, rng, work, network):
    broker = Broker(work, free_port(), listen="")
    await broker.start()
    arrivals = []  # (arrival time, topic, payload)
    subscribers = []

    async def subscribe():
        while True:
            process = await asyncio.create_subprocess_exec(
                "mosquitto_sub", "-h", "127.0.0.1", "-p", str(broker.port), "-q", "1", "-c", "-i", "cluster-watch",
                "-t", "beaconwatch/#", "-F", "%t\t%p", stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)  # fmt: skip
            subscribers.append(process)
            while True:
                line = await process.stdout.readline()
                if not line:
                    break
                topic, _, payload = line.decode(errors="replace").rstrip("\n").partition("\t")
                arrivals.append((time.time(), topic, payload))
            await process.wait()
            await asyncio.sleep(0.2)

    watcher = asyncio.ensure_future(subscribe())
    members = {name: Member(name, binary, work, network, broker.port) for name in ("a", "b")}
    await members["a"].start()
    await asyncio.sleep(2)
    await members["b"].start()
    await asyncio.sleep(2)
    end = time.time() + minutes * 60
    feed = Publisher(broker.port)
    rooms = {tag: rng.choice(list(ROOMS)) for tag in TAGS}
    faults = []  # (time, kind, measured)
    counts = collections.Counter()

    async def walk():
        while time.time() < end:
            for tag, minor in TAGS.items():
                if rng.random() < 0.04:
                    rooms[tag] = None if rooms[tag] else rng.choice(list(ROOMS))
                elif rooms[tag] and rng.random() < 0.08:
                    rooms[tag] = rng.choice(list(ROOMS))
                if not rooms[tag]:
                    continue
                for node in ROOMS:
                    rssi = rng.uniform(-58, -52) if node == rooms[tag] else rng.uniform(-92, -84)
                    payload = (f'{{"mac":"4a1b2c3d4e5f","id":"iBeacon:{BADGE}-7-{minor}","rssi@1m":-59,"rssi":{rssi:.2f},'
                               f'"rxAdj":0,"rssiVar":1.20,"distance":1.10,"var":0.20,"int":2000}}')  # fmt: skip
                    feed.publish(f"espresense/devices/iBeacon:{BADGE}-7-{minor}/{node}", payload)
            for tracker in TRACKERS:
                major = rng.choice(list(ROOMS.values()))
                report = {"id": "0A:0B:0C:0D:0E:0F", "mfid": "4c00", "uuid": UUID.replace("-", "").lower(),
                          "major": major, "minor": 1, "txpower": -59, "rssi": rng.choice([-55, -70, -88])}  # fmt: skip
                feed.publish(f"home/{tracker}/BTtoMQTT/0A0B0C0D0E0F", json.dumps(report))
            for member in members.values():
                member.sample()
            await asyncio.sleep(0.5)

    walker = asyncio.ensure_future(walk())
    while time.time() < end - 15:
        await asyncio.sleep(rng.uniform(5, 9))
        active = next((m for m in members.values() if m.role() == "active"), None)
        standby = next((m for m in members.values() if m.role() == "standby"), None)
        kind = rng.choices(["kill", "cut", "standby", "broker"], weights=[5, 4, 2, 1])[0]
        if kind in ("kill", "cut") and not active:
            continue
        if kind == "standby" and not standby:
            continue
        counts[kind] += 1
        at = time.time()
        if kind == "kill":
            await active.kill()
            faults.append((at, kind))
            await asyncio.sleep(rng.uniform(1, 3))
            await active.start()
        elif kind == "cut":
            network.cut(active.name)
            faults.append((at, kind))
            await asyncio.sleep(rng.uniform(5, 10))
            network.cut(active.name, down=False)
        elif kind == "standby":
            await standby.kill()
            await asyncio.sleep(rng.uniform(1, 2))
            await standby.start()
        else:
            await broker.stop()
            await asyncio.sleep(rng.uniform(1, 2))
            await broker.start()
    await walker
    # Every tag away, and time for the exits to be told.
    await asyncio.sleep(12)
    statuses = [(m.name, await m.kill(signal.SIGTERM)) for m in members.values()]
    await asyncio.sleep(1)
    watcher.cancel()
    for process in subscribers:
        if process.returncode is None:
            process.kill()
    await broker.stop()
    # Each life's resident memory over time, for a failed memory check (kept with --keep).
    with open(os.path.join(work, "memory.json"), "w") as file:
        json.dump({m.name: m.lives for m in members.values()}, file)
    return check(work, members, arrivals, faults, counts, statuses)


def check(work, members, arrivals, faults, counts, statuses):
    figures = {"faults": dict(counts)}
    problems = []
    # Takeover: from a kill or cut of the active to the next `online`.
    onlines = [t for t, topic, payload in arrivals if topic == "beaconwatch/hq/status" and payload == "online"]
    takeovers = []
    for at, kind in faults:
        later = [t - at for t in onlines if t > at]
        if later:
            takeovers.append(later[0])
    if takeovers:
        ordered = sorted(takeovers)
        p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
        figures["takeovers"] = len(takeovers)
        figures["takeover s (median, p95, max)"] = (round(statistics.median(ordered), 2), round(p95, 2),
                                                   round(ordered[-1], 2))  # fmt: skip
        if p95 >= 5:
            problems.append(f"takeover p95 {p95:.2f} s (at most 5 s)")
    # Split brain: two daemons (each process has a session of its own) publishing events for the
    # same stretch of time: the longest run of whole seconds (event time) in which both did.
    seconds_of = collections.defaultdict(set)
    events = []
    for _, topic, payload in arrivals:
        if not (topic.endswith("/transition") or topic.endswith("/event")):
            continue
        try:
            event = json.loads(payload)
        except ValueError:
            continue
        events.append((topic, payload, event))
        session, stamp = event.get("session"), event.get("t")
        if session and stamp:
            seconds_of[session].add(int(time.mktime(time.strptime(stamp[:19], "%Y-%m-%dT%H:%M:%S"))))
    longest = 0
    sessions = list(seconds_of)
    for i, first in enumerate(sessions):
        for second in sessions[i + 1:]:
            shared = sorted(seconds_of[first] & seconds_of[second])
            run = 0
            for index, second_of in enumerate(shared):
                run = run + 1 if index and second_of == shared[index - 1] + 1 else 1
                longest = max(longest, run)
    figures["lives that published"] = len(sessions)
    figures["longest run of seconds two daemons both published events"] = longest
    # A handover puts the last second of one and the first of the other side by side: more than
    # a keepalive and a second of both is two actives.
    if longest > KEEPALIVE + 1:
        problems.append(f"two daemons published events in the same {longest} seconds running (split brain)")
    # Every committed event arrived.
    arrived = {payload for _, _, payload in arrivals}
    normalized = set()
    for payload in arrived:
        try:
            normalized.add(json.dumps(json.loads(payload), sort_keys=True))
        except ValueError:
            pass
    committed = 0
    missing = []
    for member in members.values():
        path = os.path.join(member.folder, "events.jsonl")
        if not os.path.exists(path):
            continue
        with open(path) as file:
            for line in file:
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                if event.get("type") not in ("enter", "exit", "location", "rule"):
                    continue
                committed += 1
                if line.strip() not in arrived and json.dumps(event, sort_keys=True) not in normalized:
                    missing.append(line.strip())
    figures["committed events"] = committed
    if committed == 0:
        problems.append("no event was committed: the daemons did not run (see their daemon.log)")
    if missing:
        problems.append(f"{len(missing)} committed events never arrived, the first: {missing[0][:200]}")
    # Enters and exits alternate per device and region, in first-arrival order.
    seen, inside = set(), {}
    transitions = 0
    for topic, payload, event in events:
        if not topic.endswith("/transition") or payload in seen:
            continue
        seen.add(payload)
        transitions += 1
        key = (topic, event.get("region"))
        entering = event.get("type") == "enter"
        if inside.get(key, False) == entering:
            problems.append(f"{event.get('type')} of {key} twice in a row at {event.get('t')}")
            break
        inside[key] = entering
    figures["transitions"] = transitions
    # Rule counts go on from one active to the next: per tag, rule and region, the first arrivals'
    # counts are 1, 2, 3 … with no repeat and no gap.
    counts_of = collections.defaultdict(list)
    seen_rules = set()
    for _, topic, payload in arrivals:
        if not topic.endswith("/rule") or payload in seen_rules:
            continue
        seen_rules.add(payload)
        try:
            fired = json.loads(payload)
        except ValueError:
            continue
        if fired.get("fired") is True:
            counts_of[(topic, fired.get("region"), fired.get("rule"))].append(fired.get("count"))
    for key, counts in counts_of.items():
        if counts != list(range(1, len(counts) + 1)):
            problems.append(f"rule counts on {key[0]} are {counts[:40]}: a count repeated or skipped")
    figures["rule firings"] = sum(len(c) for c in counts_of.values())
    # Memory flat over every life of 60 s or more.
    for member in members.values():
        for life in member.lives:
            if len(life) < 40 or life[-1][0] - life[0][0] < 60:
                continue
            quarter = len(life) // 4
            early = statistics.median(r for _, r in life[quarter:2 * quarter])
            late = statistics.median(r for _, r in life[-quarter:])
            if late > early * 1.25 + 2048:
                problems.append(f"{member.name}'s memory grew from {early:.0f} to {late:.0f} KiB in one life")
    figures["stops"] = statuses
    for status in statuses:
        if status[1] != 0:
            problems.append(f"{status[0]} was not running at the end, or exited {status[1]} at SIGTERM")
    return figures, problems


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--minutes", type=float, default=2)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--keep", default=None)
    options = parser.parse_args()
    if os.geteuid() != 0 or shutil.which("ip") is None or shutil.which("mosquitto") is None:
        print("chaos --cluster: SKIPPED: network namespaces need root and `ip` (iproute2), and mosquitto",
              file=sys.stderr)  # fmt: skip
        return 77
    seed = options.seed if options.seed is not None else random.randrange(1 << 31)
    work = options.keep or tempfile.mkdtemp(prefix="bw-cluster-chaos-")
    os.makedirs(work, exist_ok=True)
    print(f"chaos --cluster: seed {seed}, {options.minutes} min, in {work}")
    try:
        figures, problems = await chaos(os.path.abspath(options.binary), options.minutes, seed, work)
    except BrokerDidNotListen as error:
        print(f"chaos --cluster: FAILED: {error}", file=sys.stderr)
        return 1
    except OSError as error:
        print(f"chaos --cluster: SKIPPED: cannot make the network namespaces ({error})", file=sys.stderr)
        return 77
    for key, value in figures.items():
        print(f"chaos --cluster: {key}: {value}")
    if problems:
        for problem in problems:
            print(f"chaos --cluster: FAILED: {problem}", file=sys.stderr)
        print(f"chaos --cluster: again with --seed {seed} --keep DIR", file=sys.stderr)
        return 1
    print("chaos --cluster: passed")
    if not options.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
