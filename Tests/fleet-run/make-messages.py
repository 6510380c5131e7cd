#!/usr/bin/env python3
"""Writes messages.jsonl: an hour of a fleet as a daemon's broker delivers it (issue 34's
before/after check, scripts/same-output): OwnTracks phones walking the office of hsyco.ini
(ranging messages, transitions, positions, waypoints answers, lwt), Theengs gateways carried
around (iBeacon reports), forward nodes (trace lines), commands for the daemon's own radio, and
garbage. Deterministic (a fixed seed): run it again and the file is the same.
Each line: {"t": arrival seconds, "topic": ..., "payload": the message's text}."""
import json
import random

UUID = "ACFD165E-C0C0-11E3-9BBE-1A514932AC01"
BEACONS = [(1, 17082), (1, 17081), (2, 17091), (3, 17101)]
START = 1_700_000_000.0
rng = random.Random(34)
out = []


def emit(t, topic, payload):
    text = payload if isinstance(payload, str) else json.dumps(payload, separators=(",", ":"))
    out.append((round(t, 3), len(out), topic, text))


# Phones: each walks beacon to beacon, ranging every 2 s while near one, with a transition by rid
# now and then, positions, an answer to the daemon's waypoints request, and a lwt once.
for n, (user, device) in enumerate([("alice", "iphone"), ("bob", "iphone"), ("carol", "ipad")]):
    base = f"owntracks/{user}/{device}"
    t = START + 3 * n + 0.25
    emit(t, base, {"_type": "location", "lat": 45.4642, "lon": 9.19, "acc": 12, "tst": int(t)})
    emit(t + 0.5, base + "/waypoints", {"_type": "waypoints", "waypoints": [
        {"_type": "waypoint", "desc": "Home", "lat": 45.0, "lon": 9.0, "rad": 100, "tst": 1600000000 + n},
    ]})
    for stop in range(40):
        major, minor = BEACONS[rng.randrange(len(BEACONS))]
        for _ in range(rng.randrange(3, 12)):
            t += 2 + rng.random()
            emit(t, base + "/beacon", {"_type": "beacon", "tid": user[:2], "tst": int(t), "uuid": UUID,
                                       "major": major, "minor": minor, "prox": rng.choice([1, 2, 3]),
                                       "rssi": -50 - rng.randrange(40), "acc": round(rng.random() * 5, 2)})
        t += rng.choice([3, 5, 15, 40])
        if stop % 7 == 3:
            emit(t, base + "/event", {"_type": "transition", "event": rng.choice(["enter", "leave"]),
                                      "desc": f"bw{minor}:{UUID}:{major}:{minor}", "tst": int(t),
                                      "lat": 45.46, "lon": 9.19, "acc": 10, "wtst": 1700000000,
                                      "t": "b", "tid": user[:2]})
        if stop % 9 == 5:
            emit(t + 0.1, base, {"_type": "location", "lat": 45.4642 + rng.random() / 1000, "lon": 9.19,
                                 "acc": 12, "tst": int(t)})
        if stop == 20:
            emit(t + 1, base, {"_type": "lwt", "tst": int(t)})
            t += 120

# Theengs gateways carried around: iBeacon reports of the office's beacons every second or so.
for gateway in ["cart-7", "cart-9"]:
    t = START + 1.5
    for _ in range(900):
        t += 0.5 + rng.random() * 2
        major, minor = BEACONS[rng.randrange(len(BEACONS))]
        mac = "C0:FF:EE:00:%02X:%02X" % (major, minor % 256)
        emit(t, f"home/{gateway}/BTtoMQTT/{mac.replace(':', '')}",
             {"id": mac, "mfid": "4c00", "uuid": UUID, "major": major, "minor": minor, "txpower": -59,
              "rssi": -45 - rng.randrange(50)})

# Forward nodes: trace lines in batches.
for node in ["node-1"]:
    t = START + 2.0
    for _ in range(400):
        t += 3 + rng.random() * 4
        lines = []
        for k in range(rng.randrange(1, 5)):
            major, minor = BEACONS[rng.randrange(len(BEACONS))]
            lines.append(json.dumps({"t": round(t + k * 0.01, 2), "uuid": UUID, "major": major, "minor": minor,
                                     "rssi": -50 - rng.randrange(40), "power": -59}, separators=(",", ":")))
        emit(t + 0.05, f"beaconwatch/{node}/sightings", "\n".join(lines) + "\n")

# Commands for the daemon's own radio, and garbage on every source.
emit(START + 600, "beaconwatch/alice/cmd/mode", "background")
emit(START + 1200, "beaconwatch/alice/cmd/mode", "foreground")
emit(START + 700, "owntracks/alice/iphone/beacon", "not json")
emit(START + 701, "home/cart-7/BTtoMQTT/AABB", '{"id": 7}')
emit(START + 702, "beaconwatch/node-1/sightings", '{"t": "yesterday"}\n')

out.sort()
with open("messages.jsonl", "w") as f:
    for t, _, topic, text in out:
        f.write(json.dumps({"t": t, "topic": topic, "payload": text}, separators=(",", ":")) + "\n")
