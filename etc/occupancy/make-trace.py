#!/usr/bin/env python3
"""Writes day.jsonl: the end of a Monday on the office floor of hsyco.ini (docs/occupancy.md),
17:40 to 18:15 in Paris, as the daemon hears it. An ESPresense node in each room reports each
badge every 5 s (all three in one burst); the sensors publish as their firmware does
(docs/presence-sensors.md): the meeting room's zigbee2mqtt PIR its whole cached state, not
retained, `occupancy: false` 90 s after the last detection (zigbee2mqtt's own timer); the
office's ESPHome LD2410 `ON`/`OFF`, retained, only on change; the kitchen's ESPHome LD2450 its
`target_count`, retained, only on change. Each sensor line is at the time of the burst before
it, as `run` takes a message between two reports.

  17:40  Anna (badge) in the meeting room, moving (the PIR sees her about once a minute); Carla (no badge) at her desk in the office
         since before (the radar's retained ON); Ben (badge) and the tea trolley (a badge that
         is not a person) in the kitchen, where the radar counts 1 (retained)
  17:42  Dave (no badge) in the kitchen for two minutes: the radar counts 2, then 1
  17:46  Anna goes to the kitchen; the meeting room is vacant at 17:47:35 (her last motion at
         17:45:05, held 120 s, then 30 s), during opening hours
  17:50  garbage: a message of the PIR cut short (17:50, 17:53) and the LD2450's count of -1
         (17:51:40, 17:53:20; each followed by the count again): said once each, nothing changes
  17:51  the PIR's battery report: its whole state again, occupancy false
  17:56  Ben goes to the meeting room and sits still after a minute: the PIR says false at
         17:58:35, his badge keeps the room occupied
  18:00  Anna goes home
  18:04  Ben gets up (motion at 18:03:55) and goes back to the kitchen: the meeting room is
         vacant at 18:06:25, and the lights-off rule fires 5 minutes later, outside opening hours
  18:10  Carla leaves: the radar says OFF, the office is vacant at 18:10:35

Deterministic: run it again and the file is the same."""
import json
import random

START = 1772469600  # 2026-03-02T16:40:00Z, a Monday, 17:40 in Paris
END = 2100
TAGS = {
    "anna": "ibeacon:FDA50693-A4E2-4FB1-AFCF-C6EB07647825:7:1",
    "ben": "ibeacon:FDA50693-A4E2-4FB1-AFCF-C6EB07647825:7:2",
    "trolley": "ibeacon:FDA50693-A4E2-4FB1-AFCF-C6EB07647825:7:3",
}
# Mean RSSI at each node from a spot in each room: the office lies between the other two.
ROOMS = {
    "meeting": {"meeting": -60, "office": -76, "kitchen": -86},
    "office": {"meeting": -76, "office": -60, "kitchen": -76},
    "kitchen": {"meeting": -86, "office": -76, "kitchen": -60},
}
# Where each badge is, from when (seconds after 17:40); None: gone.
WHEREABOUTS = {
    "anna": [(0, "meeting"), (360, "kitchen"), (1200, None)],
    "ben": [(0, "kitchen"), (960, "meeting"), (1440, "kitchen")],
    "trolley": [(0, "kitchen")],
}


def pir(occupancy, battery=100):
    """A zigbee2mqtt 2.x message of an Aqara RTCGQ11LM: its whole cached state, keys sorted."""
    return {"battery": battery, "device_temperature": 24, "illuminance": 52, "linkquality": 87,
            "occupancy": occupancy, "power_outage_count": 3, "voltage": 3005}


# (seconds after 17:40, sensor, payload as published). The first two are the radars' retained
# states, there before the daemon starts.
SENSORS = [
    (0, "office-radar", "ON"),
    (0, "kitchen-radar", "1"),
    (5, "meeting-pir", pir(True)),
    (65, "meeting-pir", pir(True)),
    (125, "kitchen-radar", "2"),
    (125, "meeting-pir", pir(True)),
    (185, "meeting-pir", pir(True)),
    (245, "kitchen-radar", "1"),
    (245, "meeting-pir", pir(True)),
    (305, "meeting-pir", pir(True)),
    (365, "kitchen-radar", "2"),
    (395, "meeting-pir", pir(False)),
    (600, "meeting-pir", '{"battery":99,"device_temperature":24,"illumin'),
    (660, "meeting-pir", pir(False, battery=99)),
    (700, "kitchen-radar", "-1"),
    (705, "kitchen-radar", "2"),
    (780, "meeting-pir", '{"battery":99,"device_temperature":24,"illumin'),
    (800, "kitchen-radar", "-1"),
    (805, "kitchen-radar", "2"),
    (965, "kitchen-radar", "1"),
    (965, "meeting-pir", pir(True, battery=99)),
    (1025, "meeting-pir", pir(True, battery=99)),
    (1115, "meeting-pir", pir(False, battery=99)),
    (1205, "kitchen-radar", "0"),
    (1435, "meeting-pir", pir(True, battery=99)),
    (1445, "kitchen-radar", "1"),
    (1525, "meeting-pir", pir(False, battery=99)),
    (1805, "office-radar", "OFF"),
]


def room(tag, second):
    where = None
    for since, place in WHEREABOUTS[tag]:
        if second >= since:
            where = place
    return where


def main():
    rng = random.Random(23)
    lines = []
    sensors = SENSORS
    for second in range(0, END + 1, 5):
        t = START + second
        for tag in TAGS:
            place = room(tag, second)
            if place is None:
                continue
            # The nearest node first: a badge is in its room from its first report.
            for scanner, mean in sorted(ROOMS[place].items(), key=lambda item: -item[1]):
                rssi = round(mean + rng.uniform(-2, 2), 2)
                lines.append({"t": t, "scanner": scanner, "tag": TAGS[tag], "rssi": rssi, "power": -59})
        lines += [{"t": t, "sensor": s, "payload": p} for at, s, p in sensors if at == second]
        if second == 0:
            # The radars' retained states arrive at the daemon's subscription, before the first
            # report: `run` takes them once that report gave it a time, before the second.
            retained = [line for line in lines if "sensor" in line]
            lines = lines[:1] + retained + [line for line in lines[1:] if "sensor" not in line]
    with open("day.jsonl", "w") as out:
        for line in lines:
            out.write(json.dumps(line, separators=(", ", ": ")) + "\n")


if __name__ == "__main__":
    main()
