#!/usr/bin/env python3
"""Writes walk.jsonl: Anna's badge walking through the house of house.ini (docs/floorplans.md,
"Several floors, stairs and exit doors"), as its four scanners hear it, for `beaconwatch replay`
on a machine without radio.

    0 s  in the kitchen, still
   40 s  through the inside door into the hall
   80 s  up the stairs (5 s) to the bath upstairs
  120 s  into the bedroom
  180 s  back to the stairs, down, through the hall and the kitchen to the front door (an exit)
  205 s  out of it: the badge is heard no more

The badge advertises every second; each scanner hears it at the level of the log-distance model
the daemon starts from (-59 dBm at 1 m, exponent 2.5, 3 dB a wall, 10 dB the floor between the
storeys), with 2 dB of noise, 10 % of the advertisements lost and nothing under -95 dBm.
Deterministic: run it again and the file is the same."""
import json
import math
import random

START = 1700000000  # 2023-11-14T22:13:20Z
TAG = "ibeacon:FDA50693-A4E2-4FB1-AFCF-C6EB07647825:7:1"
# Scanners: id, x, y, z (the building's heights: the ground floor 0-3 m, the first floor 3-6 m).
SCANNERS = [("kitchen", 0.3, 2, 1.5, 0), ("hall", 7, 2, 2.6, 0), ("bedroom", 1.3, 2.2, 4.5, 1), ("bath", 6.7, 1.8, 5, 1)]
# Rooms by storey: name, x0, x1 (all span y 0-4); a badge is carried 1 m above its floor.
ROOMS = {0: [("Kitchen", 0, 4), ("Hall", 4, 8)], 1: [("Bedroom", 1, 4), ("Bath", 4, 8)]}
# Where she is: (seconds, x, y, storey); she walks in a straight line from one to the next.
# Between two points of different storeys she is on the stairs (7, 3.5).
PATH = [
    (0, 2, 2, 0), (40, 2, 2, 0), (44, 4, 2, 0), (48, 6, 2, 0), (80, 6, 2, 0), (83, 7, 3.5, 0),
    (88, 7, 3.5, 1), (92, 6, 2, 1), (120, 6, 2, 1), (124, 4, 2, 1), (127, 2.5, 2, 1), (180, 2.5, 2, 1),
    (183, 4, 2, 1), (187, 7, 3.5, 1), (192, 7, 3.5, 0), (195, 6, 2, 0), (198, 4, 2, 0), (202, 0.3, 2, 0), (205, 0.3, 2, 0),
]
END = 205


def place(t):
    for (t0, x0, y0, s0), (t1, x1, y1, s1) in zip(PATH, PATH[1:]):
        if t0 <= t < t1:
            share = (t - t0) / (t1 - t0)
            return x0 + (x1 - x0) * share, y0 + (y1 - y0) * share, s0 + (s1 - s0) * share
    return None


def walls(x0, x1, storey):
    """The room walls crossed between x0 and x1 on a storey (the rooms are side by side)."""
    edges = sorted({edge for _, a, b in ROOMS[storey] for edge in (a, b)})
    low, high = min(x0, x1), max(x0, x1)
    return sum(1 for edge in edges if low < edge < high)


def main():
    rng = random.Random(72)
    lines = []
    t = rng.uniform(0, 1)
    while t < END:
        where = place(t)
        if where is not None:
            x, y, storey = where
            z = storey * 3 + 1
            for index, (scanner, sx, sy, sz, floor) in enumerate(SCANNERS):
                distance = max(0.5, math.dist((x, y, z), (sx, sy, sz)))
                level = -59 - 25 * math.log10(distance)
                level -= 10 * abs(round(storey) - floor)
                level -= 3 * walls(x, sx, round(storey))
                level += rng.gauss(0, 2)
                if rng.random() < 0.1 or level < -95:
                    continue
                lines.append({"t": round(START + t + index * 0.02, 3), "scanner": scanner, "tag": TAG,
                              "rssi": round(level), "power": -59})
        t += 1 + rng.uniform(0, 0.01)
    with open("walk.jsonl", "w") as out:
        for line in lines:
            out.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    main()
