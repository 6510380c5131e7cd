#!/usr/bin/env python3
"""Writes train-and-walk.jsonl: Anna's phone trains the kitchen, the bathroom (no scanner) and the
office for 30 s each through trace `learn` lines (each a second after she walks in: a tag is trained
once heard), then Ben's badge, 4 dB quieter, walks kitchen, hall, bathroom, office and leaves.
Three scanners each hear a tag about once a second, with 3 dB of noise; a reading under -85 dBm is
lost half the time. Deterministic (seeded): run it again and the file is the same (docs/rooms.md)."""
import json
import random

TAGS = {
    "anna": "ibeacon:FDA50693-A4E2-4FB1-AFCF-C6EB07647825:7:1",
    "ben": "ibeacon:FDA50693-A4E2-4FB1-AFCF-C6EB07647825:7:2",
}
# Mean RSSI at each scanner from a spot in each room: the bathroom is between the kitchen and
# the hall, behind a wall from both.
ROOMS = {
    "Kitchen": {"kitchen": -60, "hall": -76, "office": -88},
    "Hall": {"kitchen": -74, "hall": -58, "office": -74},
    "Bathroom": {"kitchen": -71, "hall": -67, "office": -88},
    "Office": {"kitchen": -88, "hall": -75, "office": -60},
}
START = 1700000000.0


def main():
    rng = random.Random(22)
    lines = []

    def stay(tag, room, t, seconds, quieter=0.0):
        for second in range(int(seconds)):
            for index, (scanner, mean) in enumerate(sorted(ROOMS[room].items())):
                rssi = mean - quieter + rng.gauss(0, 3)
                if rssi < -85 and rng.random() < 0.5:
                    continue
                at = t + second + 0.1 + index * 0.3
                lines.append((at, {"t": round(at, 3), "scanner": scanner, "tag": TAGS[tag],
                                   "rssi": round(rssi, 1), "power": -59}))
        return t + seconds

    t = START
    for room in ["Kitchen", "Bathroom", "Office"]:
        # A second after she walks in: a tag is trained once a scanner has heard it.
        lines.append((t + 1, {"t": t + 1, "learn": {"device": "anna", "room": room, "seconds": 30}}))
        t = stay("anna", room, t, 30) + 2
    t += 20  # Anna leaves; the flat is empty for a while
    for room, seconds in [("Kitchen", 20), ("Hall", 20), ("Bathroom", 30), ("Office", 20)]:
        t = stay("ben", room, t, seconds, quieter=4)
    lines.sort(key=lambda entry: entry[0])
    with open("train-and-walk.jsonl", "w") as out:
        for _, line in lines:
            out.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    main()
