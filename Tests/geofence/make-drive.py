#!/usr/bin/env python3
"""Writes the geofence drive used by the tests (docs/behaviour.md §17): a straight drive through Paris from
300 m south of geofence 52 ("DEMO PRESENTATION 2", 100 m) through its centre, on through the
centre of geofence 35 (20 m), to 300 m beyond it, a fix every 15 m, one a second, as

  drive.nmea   GGA + RMC sentences for gpsfake (what a GPS receiver would send gpsd),
  drive.trace  the same fixes as trace position lines {"t", "lat", "lng", "acc"}.

Each trace position is read back from the NMEA text, so both carry the same degrees. The trace
starts at T0 (2026-09-15T08:00:00Z, a Tuesday, after both geofences' "end"), or at --start.

  make-drive.py OUTDIR [--start SECONDS]
"""
import math
import sys
import time

R = 6371008.8
G52 = (48.86821546, 2.3231598)
G35 = (48.87621805, 2.32686415)


def offset(point, bearing_from, metres_before):
    """The point `metres_before` metres back from `point` along the direction of `bearing_from`."""
    lat, lng = point
    dlat, dlng = bearing_from
    norm = math.hypot(dlat, dlng * math.cos(math.radians(lat)))
    k = metres_before / R / norm * 180 / math.pi
    return (lat - dlat * k, lng - dlng * k)


def nmea_degrees(value, width):
    sign = value < 0
    value = abs(value)
    whole = int(value)
    minutes = (value - whole) * 60
    text = f"{whole:0{width}d}{minutes:09.6f}"
    return text, sign


def checksum(body):
    c = 0
    for ch in body:
        c ^= ord(ch)
    return f"{c:02X}"


def main():
    out = sys.argv[1]
    start = 1789459200.0
    if "--start" in sys.argv:
        start = float(sys.argv[sys.argv.index("--start") + 1])
    direction = (G35[0] - G52[0], G35[1] - G52[1])
    begin = offset(G52, direction, 300)
    end = offset(G35, direction, -300)
    # Metres along the line from begin to end (flat over 1.5 km: only the sampling uses it).
    total = math.hypot((end[0] - begin[0]) * math.pi / 180 * R,
                       (end[1] - begin[1]) * math.pi / 180 * R * math.cos(math.radians(begin[0])))
    steps = int(total // 15)
    nmea = []
    trace = []
    for i in range(steps + 1):
        f = i * 15 / total
        lat = begin[0] + (end[0] - begin[0]) * f
        lng = begin[1] + (end[1] - begin[1]) * f
        latText, south = nmea_degrees(lat, 2)
        lngText, west = nmea_degrees(lng, 3)
        # Back from the text: the degrees gpsd will read.
        lat = (int(latText[:2]) + float(latText[2:]) / 60) * (-1 if south else 1)
        lng = (int(lngText[:3]) + float(lngText[3:]) / 60) * (-1 if west else 1)
        t = start + i
        clock = time.strftime("%H%M%S", time.gmtime(t)) + ".00"
        date = time.strftime("%d%m%y", time.gmtime(t))
        ns = "S" if south else "N"
        ew = "W" if west else "E"
        gga = f"GPGGA,{clock},{latText},{ns},{lngText},{ew},1,09,0.8,35.0,M,47.0,M,,"
        rmc = f"GPRMC,{clock},A,{latText},{ns},{lngText},{ew},29.2,14.0,{date},,,A"
        for body in (gga, rmc):
            nmea.append(f"${body}*{checksum(body)}")
        trace.append('{"t":%.1f,"lat":%.9f,"lng":%.9f,"acc":10}' % (t, lat, lng))
    with open(f"{out}/drive.nmea", "w") as f:
        f.write("\r\n".join(nmea) + "\r\n")
    with open(f"{out}/drive.trace", "w") as f:
        f.write("\n".join(trace) + "\n")


main()
