#!/usr/bin/python3
"""The web view as a person sees it (docs/behaviour.md §16, issue 18), in headless Chromium.

Starts `beaconwatch run` on a trace it feeds through a FIFO (so the walk moves when this script
says), opens `/` and `/devices/alice` in Chromium through chromedriver, and checks what is on the
screen: the walker appears in the Zone it entered, moves to the next Zone after that Zone's enter,
and the device page shows its monitored set as Monitor.maxRegions slots (a tag's page has none).
Then a floor plan (a tag's dot moving across one floor), and a house of two floors fed through a
real mosquitto by four scanners publishing as Theengs gateways do: the floor picker lists both
floors with the tag counted on the one it is on, and follows it upstairs. Then "Learn this room"
(docs/behaviour.md §22): a tag's page opened with ?token= picks a room, starts a 5-s session, shows
its progress bar moving and, once it ends, how well the room is known. Then occupancy
(docs/behaviour.md §23): the building page shows each room occupied or vacant with its count of
people and why, from the devices inside and a zigbee2mqtt PIR and a count sensor fed through the
trace. Screenshots go to the folder given with --artefacts, with chromedriver's log (Chromium's own
output in it) and the daemons' and the broker's logs. Exit status 0 when every check holds, 1 when
one fails (mosquitto or mosquitto_pub missing too: the unit tests need them as well), 77 when
Chromium or Selenium is missing (the caller says so and skips).

Usage: web_view.py BEACONWATCH_BINARY --artefacts DIR
"""
import argparse
import contextlib
import json
import math
import os
import pwd
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

try:
    import urllib3
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.remote.remote_connection import RemoteConnection
except ImportError:
    print("web view tests skipped: python3-selenium is not installed (apt-get install python3-selenium)")
    sys.exit(77)

UUID = "74278BDA-B644-4520-8F0C-720EAF059935"
INI = f"""Monitor.userid = alice
Monitor.exitTimeout = 5
LocationBaseBeacon.1001 = {UUID},1,1
LocationBaseBeacon.2001 = {UUID},2,1
LocationAreaName.{UUID} = Office
LocationZoneName.{UUID}:1 = Reception
LocationZoneName.{UUID}:2 = Kitchen
LocationBeaconName.1001 = Desk
LocationBeaconName.2001 = Fridge
Monitor.rssiFilter = none
LocationScanner.1001 = reception
LocationScanner.2001 = kitchen
Tag.badge = ibeacon:FDA50693-A4E2-4FB1-AFCF-C6EB07647825:7:1, Badge
"""
# Seconds from the report that moves a tag to the page showing it: issue 35's goal, printed with
# each run's median as a measurement. The verdict is MOVE_BROKEN: a page that is pushed its
# updates shows a move in 0.1-0.2 s alone and at most 0.9 s beside two CPU hogs at a higher
# priority than the test, and one that waited on its own polling would take longer; a timed
# assertion at the goal itself failed once in 46 runs beside two hogs (a flaky test).
MOVE_LIMIT = 0.25
MOVE_BROKEN = 1.5
# Seconds any one wait may take, each ending as soon as what it waits for is there: the daemon's
# address, a page load, a call into the page (Chromium's page-load and script timeouts), every
# condition on the page. A run prints its longest wait: on a 2-core machine busy with a build,
# 0.2-2.7 s alone and beside two CPU hogs, 2.0 s beside three hogs at nice -5. Chromium's start
# is bounded by chromedriver (about 60 s) instead: 1.0-3.7 s there, 13-26 s beside two hogs at nice -19.
PATIENCE = 30
POLL = 0.02  # seconds between two reads of the page while waiting
# A report that leaves a tag's position where it was sends nothing to wait for, so each step of
# the floor walk watches the dot for this long (MOVE_BROKEN; the slowest move measured
# beside two hogs was 0.5 s); the walk's end is waited for as an event.
MOVE_WINDOW = 1.5
longest = [0.0, "nothing"]  # the longest wait of the run, and what it waited for
starts = []  # seconds each Chromium took to start


def fail(message):
    print(f"web view test failed: {message}")
    sys.exit(1)


def waited(what, since):
    """Notes a wait that began at `since` (time.monotonic()) and has just ended; returns its length."""
    took = time.monotonic() - since
    if took > longest[0]:
        longest[:] = [took, what]
    return took


class Page:
    """One Chromium window: every read is one script in the page (it replaces its parts as events
    come, so the test never holds an element a re-render removed), every wait names what it waits
    for. `step` is what the test is doing, for the message when Chromium itself fails."""

    def __init__(self, browser):
        self.browser = browser
        self.step = "starting Chromium"

    def open(self, url):
        self.step = f"loading {url}"
        started = time.monotonic()
        self.browser.get(url)
        waited(f"loading {url}", started)

    def script(self, source, *arguments):
        return self.browser.execute_script(source, *arguments)

    def texts(self, selector):
        return self.script(
            "return Array.from(document.querySelectorAll(arguments[0]), e => e.innerText.trim())", selector)

    def live(self):
        """The page follows the daemon's events (its EventSource is open)."""
        return self.texts("#live") == ["live"]

    def screenshot(self, path):
        self.step = f"saving {os.path.basename(path)}"
        self.browser.save_screenshot(path)

    def until(self, what, condition, seen=None):
        """Waits until `condition()` holds, at most PATIENCE; else fails naming `what`, and what
        was on the page instead (`seen()`, which may fail with a sharper message itself)."""
        self.step = f"waiting for {what}"
        started = time.monotonic()
        while not condition():
            if time.monotonic() - started >= PATIENCE:
                fail(f"waited {PATIENCE} s for {what}" + (f"; the page shows {seen()!r}" if seen else ""))
            time.sleep(POLL)
        self.step = f"reading the page after {what}"
        return waited(what, started)


def chromium_failure(error):
    """What a WebDriver error says about Chromium (chromedriver's words: chrome/devtools_client_impl.cc)."""
    text = str(getattr(error, "msg", None) or error)
    if "Timed out receiving message from renderer" in text:
        return (f"the page did not answer chromedriver within {PATIENCE} s"
                " (still loading from the daemon, or its renderer hung)")
    if "tab crashed" in text:
        return "Chromium's renderer crashed"
    if any(words in text for words in ("Unable to receive message from renderer", "not connected to DevTools",
                                       "browser has closed the connection", "chrome not reachable")):
        return "Chromium went away (chromedriver lost its DevTools connection: the browser process exited)"
    return "chromedriver failed"


@contextlib.contextmanager
def chromium(args, chromium_path, driver_path, name):
    """Headless Chromium through chromedriver, with chromedriver's log and Chromium's own output in
    the artefacts; yields a Page. A failure of Chromium or chromedriver fails the test, naming what
    the test was doing and where the log is."""
    log = os.path.join(args.artefacts, f"chromedriver-{name}.log")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium_path
    # chromedriver adds --disable-background-timer-throttling, --disable-backgrounding-occluded-windows,
    # --disable-hang-monitor and --disable-background-networking itself (its log's "Launching chrome");
    # --disable-renderer-backgrounding keeps the page's renderer at normal priority whatever Chromium
    # thinks of the window's visibility.
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900",
                 "--disable-gpu", "--disable-renderer-backgrounding"):
        options.add_argument(flag)
    # chromedriver bounds its own waits for Chromium (its start, about 60 s; the page, below); this
    # bounds the wait for chromedriver itself.
    RemoteConnection.set_timeout(3 * PATIENCE)
    page = Page(None)
    try:
        started = time.monotonic()
        page.browser = webdriver.Chrome(
            service=Service(driver_path, service_args=["--enable-chrome-logs"], log_path=log), options=options)
        starts.append(time.monotonic() - started)
        page.step = "setting Chromium's timeouts"
        page.browser.set_page_load_timeout(PATIENCE)  # also bounds a call into a page that does not answer
        page.browser.set_script_timeout(PATIENCE)
        yield page
    except (WebDriverException, urllib3.exceptions.HTTPError) as error:
        first = (str(getattr(error, "msg", None) or error).strip().splitlines() or [""])[0]
        # Chromium's last words (its crash or fatal error), when it left any in the log.
        said = []
        with contextlib.suppress(OSError):
            with open(log, errors="replace") as text:
                said = [line.rstrip() for line in text if re.search(r"FATAL|Check failed|Received signal|SEVERE", line)]
        fail(f"{chromium_failure(error)} while {page.step} ({name}): {first}; chromedriver's log: {log}"
             + "".join(f"\n  {line[:300]}" for line in said[-5:]))
    finally:
        if page.browser is not None:
            with contextlib.suppress(WebDriverException, urllib3.exceptions.HTTPError):
                page.browser.quit()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--artefacts", required=True)
    args = parser.parse_args()
    chromium_path = next((p for p in ("/usr/bin/chromium", "/usr/bin/chromium-browser") if os.path.exists(p)), None)
    driver_path = next((p for p in ("/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver") if os.path.exists(p)), None)
    if chromium_path is None or driver_path is None:
        print("web view tests skipped: Chromium or chromedriver is not installed (apt-get install chromium chromium-driver)")
        sys.exit(77)
    os.makedirs(args.artefacts, exist_ok=True)

    with tempfile.TemporaryDirectory(prefix="bw-browser-") as folder:
        daemon, writer, base = start_daemon(args, INI, folder, "the daemon")

        start = time.time()

        def sight(zone, seconds):
            lines = "".join(
                json.dumps({"t": start + s, "uuid": UUID, "major": zone, "minor": 1, "rssi": -60, "power": -59}) + "\n"
                for s in seconds)
            os.write(writer, lines.encode())

        with stopped_at_end(daemon, writer, "the daemon"), \
                chromium(args, chromium_path, driver_path, "building") as page:
            def chips(zone):
                return page.texts(f'.zone[data-region="{UUID}:{zone}"] li.device')

            def zones():
                return {"Reception": chips(1), "Kitchen": chips(2)}

            page.open(base)
            page.until("the building page to go live", page.live, seen=lambda: page.texts("#live"))
            if chips(1) or chips(2):
                fail("alice is in a Zone before any sighting")

            # The walker comes into the Reception: the page shows it there without a reload.
            sent = time.monotonic()
            sight(1, range(0, 3))
            page.until("alice in the Reception", lambda: chips(1) == ["alice"], seen=zones)
            shown = time.monotonic() - sent
            page.screenshot(os.path.join(args.artefacts, "web-building-reception.png"))
            if chips(2):
                fail("alice shows in the Kitchen while in the Reception")
            print(f"alice shown in the Reception {shown * 1000:.0f} ms after the sighting was written")

            # The walk goes on into the Kitchen; Reception's silence passes exitTimeout.
            sight(2, range(3, 12))
            page.until("alice in the Kitchen and no one in the Reception",
                       lambda: chips(2) == ["alice"] and chips(1) == [], seen=zones)
            transitions = " ".join(page.texts(".transitions"))
            if "alice entered zone Kitchen" not in transitions or "alice left zone Reception" not in transitions:
                fail(f"the latest transitions do not tell the walk: {transitions!r}")
            page.screenshot(os.path.join(args.artefacts, "web-building-kitchen.png"))

            # The device page: the monitored set as its 20 slots.
            page.open(base + "devices/alice")
            page.until("alice's page to go live", page.live, seen=lambda: page.texts("#live"))

            def slots():
                return (len(page.texts("ol.slots li.slot")), sorted(page.texts("ol.slots li.slot.filled .name")),
                        page.texts("ol.slots li.slot.inside .name"))
            expected = (20, ["Desk", "Fridge"], ["Fridge"])

            def wrong_slots():
                count, filled, inside = slots()
                if count != 20:
                    fail(f"{count} slots shown; Monitor.maxRegions is 20")
                if filled != ["Desk", "Fridge"]:
                    fail(f"the filled slots are {filled}; the monitored set is Desk and Fridge")
                fail(f"the slots show inside {inside}; alice is at the Fridge")
            page.until("alice's 20 slots with Desk and Fridge, inside the Fridge",
                       lambda: slots() == expected, seen=wrong_slots)
            # The Fridge's RSSI chart has something drawn (a line, or a dot for one reading).
            page.until("a line or a dot in the Fridge's RSSI chart", lambda: page.browser.find_elements(
                By.CSS_SELECTOR, 'section.beacons tr[data-beacon="2001"] svg.chart :is(polyline, circle)'))
            page.screenshot(os.path.join(args.artefacts, "web-device-alice.png"))

            # A tag heard by the scanners of both rooms (docs/behaviour.md §19): each report that moves it moves
            # its chip on the building page, within MOVE_LIMIT of the report (the median of four
            # moves, so that one stall of a loaded machine does not decide).
            def report(scanner, rssi, second):
                line = json.dumps({"t": start + second, "scanner": scanner, "tag": "badge", "rssi": rssi})
                os.write(writer, (line + "\n").encode())

            page.open(base)
            page.until("the building page to go live again", page.live, seen=lambda: page.texts("#live"))
            report("reception", -70, 12)
            page.until("the badge in the Reception", lambda: chips(1) == ["Badge"], seen=zones)
            moves = []
            for number, (scanner, rssi, zone, other) in enumerate(
                    [("kitchen", -55, 2, 1), ("reception", -30, 1, 2), ("kitchen", -19, 2, 1), ("reception", -7, 1, 2)]):
                sent = time.monotonic()
                report(scanner, rssi, 13 + number)
                page.until(f"the badge's move {number + 1} of 4 (scanner {scanner} at {rssi} dBm)",
                           lambda: "Badge" in chips(zone) and "Badge" not in chips(other), seen=zones)
                moves.append(time.monotonic() - sent)
            page.screenshot(os.path.join(args.artefacts, "web-building-tag.png"))
            moves.sort()
            median = (moves[1] + moves[2]) / 2
            print("the tag's moves shown " + ", ".join(f"{m * 1000:.0f}" for m in moves)
                  + f" ms after the reports that made them (median {median * 1000:.0f} ms)")
            print(f"  issue 35's goal of {MOVE_LIMIT * 1000:.0f} ms: {'met' if median <= MOVE_LIMIT else 'not met'} on this run")
            if median > MOVE_BROKEN:
                fail(f"a tag's move takes {median * 1000:.0f} ms to show (median); at most {MOVE_BROKEN * 1000:.0f} ms")

            # The tag's page says why its room last changed.
            page.open(base + "devices/badge")
            page.until("the badge's page to go live", page.live, seen=lambda: page.texts("#live"))
            why = page.texts(".room-why .why")
            if not why or not why[0].startswith("moved from Kitchen to Reception: scanner reception heard it"):
                fail(f"the tag's page does not say why it is in the Reception: {why!r}")
            scanners = page.texts("section.scanners-heard td[data-scanner]")
            if sorted(scanners) != ["kitchen at Fridge (2001)", "reception at Desk (1001)"]:
                fail(f"the tag's page lists the scanners {scanners!r}")
            # Scanners hear a tag: it has no phone's region cap, so no slots (issue 74; alice's
            # page above has them).
            if page.texts("section.slots-section, ol.slots, li.slot"):
                fail(f"the tag's page draws a phone's slots: {page.texts('section.slots-section h2')!r}")
            page.screenshot(os.path.join(args.artefacts, "web-device-badge.png"))
    floor_page(args, chromium_path, driver_path)
    floors_page(args, chromium_path, driver_path)
    learn_page(args, chromium_path, driver_path)
    occupancy_page(args, chromium_path, driver_path)
    print(f"the longest wait took {longest[0]:.1f} s (for {longest[1]}); each may take {PATIENCE} s;"
          " Chromium started in " + " and ".join(f"{s:.1f}" for s in starts) + " s")
    print(f"web view test passed; screenshots in {args.artefacts}")


FLOOR = "F1002000-0000-4000-8000-000000000001"
FLOOR_INI = f"""Monitor.userid = floor
LocationBaseBeacon.1 = {FLOOR},1,1
LocationBaseBeacon.2 = {FLOOR},2,1
LocationAreaName.{FLOOR} = Ground
LocationZoneName.{FLOOR}:1 = Office
LocationZoneName.{FLOOR}:2 = Lab
LocationScanner.1 = office
LocationScanner.2 = lab
LocationZoneShape.{FLOOR}:1 = 0,0; 4,0; 4,4; 0,4
LocationZoneShape.{FLOOR}:2 = 4,0; 8,0; 8,4; 4,4
LocationScannerPoint.office = 0.3,2,1
LocationScannerPoint.lab = 7.7,2,1
Tag.badge = ibeacon:FDA50693-A4E2-4FB1-AFCF-C6EB07647825:7:1, Badge
Tags.exitTimeout = 30
"""


def start_daemon(args, ini_text, folder, name, mqtt=False):
    """Runs the daemon on `ini_text` in `folder`, its web view on a free port, fed a trace through
    a FIFO (or, with `mqtt`, only what its ini's broker brings: no FIFO, its descriptor None);
    returns the process, the FIFO's descriptor and the web view's address, once the daemon has
    said it (within PATIENCE). What it says after that goes to a log in the artefacts (read as it
    comes, so that a full pipe never stops the daemon)."""
    ini = os.path.join(folder, "hsyco.ini")
    with open(ini, "w") as out:
        out.write(ini_text + f"State.database = {folder}/state.sqlite\n")
    command = [args.binary, "run", "--config", ini, "--web-listen", "127.0.0.1:0", "--log-level", "notice"]
    writer = None
    if not mqtt:
        fifo = os.path.join(folder, "trace.fifo")
        os.mkfifo(fifo)
        # Read and write: opening does not wait for the daemon; closing it ends the daemon's input.
        writer = os.open(fifo, os.O_RDWR)
        command += ["--source", f"trace:{fifo}", "--no-mqtt"]
    daemon = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    started = time.monotonic()
    deadline = started + PATIENCE
    said = []
    while time.monotonic() < deadline:
        ready, _, _ = select.select([daemon.stderr], [], [], max(0, deadline - time.monotonic()))
        if not ready:
            break
        line = daemon.stderr.readline()
        if not line:
            break
        said.append(line)
        found = re.search(r"web view at (http://\S+/)", line)
        if found:
            waited(f"{name} to say where its web view is", started)
            daemon.log = os.path.join(args.artefacts, name.replace("the ", "").replace(" ", "-") + ".log")

            def keep(log=daemon.log):
                with open(log, "w") as out:
                    out.writelines(said)
                    for rest in daemon.stderr:
                        out.write(rest)
                        out.flush()
            threading.Thread(target=keep, daemon=True).start()
            return daemon, writer, found.group(1)
    daemon.kill()
    fail(f"{name} did not say where its web view is within {PATIENCE} s; it said {''.join(said)[-500:]!r}")


@contextlib.contextmanager
def stopped_at_end(daemon, writer, name):
    """Stops the daemon (below) when the block ends, however it ends."""
    try:
        yield
    finally:
        stop_daemon(daemon, writer, name)


def stop_daemon(daemon, writer, name):
    """Ends the daemon's input (a daemon on a broker: SIGTERM, as systemd stops it) and waits (at
    most PATIENCE) for it to exit with status 0."""
    if writer is None:
        daemon.send_signal(signal.SIGTERM)
    else:
        os.close(writer)
    try:
        daemon.wait(timeout=PATIENCE)
    except subprocess.TimeoutExpired:
        daemon.kill()
        fail(f"{name} did not stop within {PATIENCE} s of the end of its input (its log: {daemon.log})")
    if daemon.returncode != 0:
        fail(f"{name} exited with status {daemon.returncode} (its log: {daemon.log})")


def floor_page(args, chromium_path, driver_path):
    """The floor page (docs/behaviour.md §20): rooms, scanners and a tag's dot with its error circle; each report
    that moves the tag's position moves its dot within MOVE_LIMIT (the median of the moves)."""
    import math
    with tempfile.TemporaryDirectory(prefix="bw-floor-") as folder:
        daemon, writer, base = start_daemon(args, FLOOR_INI, folder, "the floor daemon")
        start = time.time()

        def rssi(x, scanner_x):
            # 2.5 exponent, a 5 dB wall at x = 4 between the tag and the other room's scanner.
            distance = max(0.25, math.hypot(x - scanner_x, 0))
            wall = 5 if (x < 4) != (scanner_x < 4) else 0
            return round(-59 - 25 * math.log10(distance) - wall)

        def at(x, second):
            lines = "".join(
                json.dumps({"t": start + second, "scanner": name, "tag": "badge", "rssi": rssi(x, sx), "power": -59})
                + "\n" for name, sx in (("office", 0.3), ("lab", 7.7)))
            os.write(writer, lines.encode())

        with stopped_at_end(daemon, writer, "the floor daemon"), \
                chromium(args, chromium_path, driver_path, "floor") as page:
            def dot():
                return page.script(
                    "var g = document.querySelector('svg.floor g.tag[data-device=\"badge\"]');"
                    "return g ? g.getAttribute('data-x') : null;")

            def dot_x():
                x = dot()
                return None if x is None else float(x)

            # The tag sits in the office: its dot appears there.
            for second in range(0, 4):
                at(1.5, second)
            page.open(base + f"floors/{FLOOR}")
            page.until("the floor page to go live", page.live, seen=lambda: page.texts("#live"))
            page.until("the badge's dot in the office (x < 4)", lambda: (x := dot_x()) is not None and x < 4, seen=dot)
            rooms = page.script("return document.querySelectorAll('svg.floor g.room').length")
            scanners = page.script("return document.querySelectorAll('svg.floor g.scanner').length")
            if rooms != 2 or scanners != 2:
                fail(f"the floor page draws {rooms} rooms and {scanners} scanners; the plan has 2 and 2")
            # It walks to the lab, a metre a second: every report that moves its position moves the dot.
            moves = []
            for step, second in enumerate(range(4, 12)):
                page.step = f"watching the dot after the walk's report {step + 1} of 8"
                before = dot()
                sent = time.monotonic()
                at(min(6.5, 1.5 + step + 1), second)
                while time.monotonic() < sent + MOVE_WINDOW:
                    if dot() != before:
                        moves.append(time.monotonic() - sent)
                        break
                    time.sleep(0.01)
            page.until("the badge's dot in the lab (x > 4)", lambda: (x := dot_x()) is not None and x > 4, seen=dot)
            page.screenshot(os.path.join(args.artefacts, "web-floor.png"))
            if len(moves) < 3:
                fail(f"the dot moved after only {len(moves)} of the walk's reports")
            moves.sort()
            median = moves[len(moves) // 2]
            print("the dot's moves shown " + ", ".join(f"{m * 1000:.0f}" for m in moves)
                  + f" ms after the reports that made them (median {median * 1000:.0f} ms)")
            print(f"  issue 35's goal of {MOVE_LIMIT * 1000:.0f} ms: {'met' if median <= MOVE_LIMIT else 'not met'} on this run")
            if median > MOVE_BROKEN:
                fail(f"a dot's move takes {median * 1000:.0f} ms to show (median); at most {MOVE_BROKEN * 1000:.0f} ms")
            # The tag's page: its position and the rooms' probabilities.
            page.open(base + "devices/badge")
            page.until("the badge's page to go live", page.live, seen=lambda: page.texts("#live"))
            odds = page.script(
                "return Array.from(document.querySelectorAll('section.position tr[data-region]'), r => r.innerText)")
            if not odds or not odds[0].startswith("Lab"):
                fail(f"the tag's page does not show the Lab as most probable: {odds!r}")
            page.screenshot(os.path.join(args.artefacts, "web-device-positioned.png"))


# A house of two floors (docs/floorplans.md "Several floors, stairs and exit doors"): each 8 × 4 m
# of two rooms with a door between them at x = 4, one scanner in each room, stairs at 7,3.5.
GROUND = "F1002000-0000-4000-8000-000000000010"
FIRST = "F1002000-0000-4000-8000-000000000011"
BADGE = "FDA50693-A4E2-4FB1-AFCF-C6EB07647825"
# Each scanner: where it is, in the building's frame (z above the ground floor).
HOUSE_SCANNERS = {"kitchen": (0.3, 2, 1.5), "hall": (7, 2, 2.6), "bedroom": (0.5, 2.2, 4.5), "bath": (6.7, 1.8, 5.6)}
HOUSE_INI = f"""Monitor.userid = house
Monitor.source = none
Monitor.rssiFilter = none
LocationBaseBeacon.101 = {GROUND},1,1
LocationBaseBeacon.102 = {GROUND},2,1
LocationBaseBeacon.201 = {FIRST},1,1
LocationBaseBeacon.202 = {FIRST},2,1
LocationAreaName.{GROUND} = Ground floor
LocationAreaName.{FIRST} = First floor
LocationZoneName.{GROUND}:1 = Kitchen
LocationZoneName.{GROUND}:2 = Hall
LocationZoneName.{FIRST}:1 = Bedroom
LocationZoneName.{FIRST}:2 = Bath
Scanners.theengs = home/+/BTtoMQTT/#
LocationScanner.101 = kitchen
LocationScanner.102 = hall
LocationScanner.201 = bedroom
LocationScanner.202 = bath
Tag.badge = ibeacon:{BADGE}:7:1, Badge
Tags.exitTimeout = 30
LocationAreaLevel.{GROUND} = 0,3
LocationAreaLevel.{FIRST} = 3,6
LocationZoneShape.{GROUND}:1 = 0,0; 4,0; 4,4; 0,4
LocationZoneShape.{GROUND}:2 = 4,0; 8,0; 8,4; 4,4
LocationZoneShape.{FIRST}:1 = 0,0; 4,0; 4,4; 0,4
LocationZoneShape.{FIRST}:2 = 4,0; 8,0; 8,4; 4,4
Door.inside = 4,1.5; 4,2.5
Stairs.main = {GROUND}, 7,3.5; {FIRST}, 7,3.5
MQTT.host = 127.0.0.1
MQTT.homeassistant = false
""" + "".join(f"LocationScannerPoint.{name} = {x},{y},{z}\n" for name, (x, y, z) in HOUSE_SCANNERS.items())
# The badge's walk once told to go, (seconds, x, y, floor) at each corner, at a walker's pace: from
# the hall to the foot of the stairs, up them, and into the bath. Before, it stands at the first
# corner; after, at the last.
WALK = [(0, 5.5, 2, 0), (2, 7, 3.5, 0), (4, 7, 3.5, 0), (5, 7, 3.5, 1), (6.5, 6, 2.2, 1)]
REPORT_INTERVAL = 0.5  # seconds between two reports of one scanner, as a gateway sends them


class Broker:
    """A real mosquitto on a free loopback port, its log in the artefacts; a context manager that
    stops it."""

    def __init__(self, folder, artefacts):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        config = os.path.join(folder, "mosquitto.conf")
        with open(config, "w") as out:
            # Run as root, mosquitto would drop to the user `mosquitto`: it stays this user.
            out.write(f"listener {self.port} 127.0.0.1\nallow_anonymous true\npersistence false\n"
                      f"user {pwd.getpwuid(os.getuid()).pw_name}\nlog_dest stderr\n")
        self.log = os.path.join(artefacts, "mosquitto-floors.log")
        with open(self.log, "w") as log:
            self.process = subprocess.Popen(["mosquitto", "-c", config], stdout=log, stderr=log)

    def __enter__(self):
        started = time.monotonic()
        while True:
            if self.process.poll() is not None:
                fail(f"mosquitto exited at once with status {self.process.returncode} (its log: {self.log})")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), timeout=1):
                break
            if time.monotonic() - started >= PATIENCE:
                fail(f"mosquitto did not listen on 127.0.0.1:{self.port} within {PATIENCE} s (its log: {self.log})")
            time.sleep(POLL)
        waited("mosquitto to listen", started)
        return self

    def __exit__(self, *_):
        self.process.terminate()
        try:
            self.process.wait(timeout=PATIENCE)
        except subprocess.TimeoutExpired:
            self.process.kill()


def house_rssi(scanner, x, y, floor):
    """What `scanner` reads of the badge at x, y on `floor` (a metre above it): the estimator's
    radio until it learns another (docs/floorplans.md "Radio": -59 dBm at 1 m, exponent 2.5, 3 dB a
    wall, 10 dB a floor), as a whole dBm."""
    sx, sy, sz = HOUSE_SCANNERS[scanner]
    z = floor * 3 + 1
    distance = max(0.25, math.dist((x, y, z), (sx, sy, sz)))
    level = -59 - 25 * math.log10(distance)
    if (sz > 3) != (z > 3):
        level -= 10
    elif (x - 4) * (sx - 4) < 0:
        at = y + (sy - y) * (4 - x) / (sx - x)  # where the line to the scanner crosses the wall
        if not 1.5 <= at <= 2.5:
            level -= 3
    return max(-127, min(-1, round(level)))


class Gateways:
    """The house's four scanners, each a Theengs gateway (docs/rooms.md) publishing its reports of
    the badge on `home/<scanner>/BTtoMQTT/<address>` through a `mosquitto_pub -l` of its own, every
    REPORT_INTERVAL from a thread until stopped: the badge stands where WALK begins until `go()`,
    then walks it."""

    def __init__(self, port, artefacts):
        self.log = os.path.join(artefacts, "mosquitto_pub-floors.log")
        self.publishers = {}
        self.started_walk = None
        self.error = None
        self.stop = threading.Event()
        with open(self.log, "w") as log:
            for scanner in HOUSE_SCANNERS:
                self.publishers[scanner] = subprocess.Popen(
                    ["mosquitto_pub", "-h", "127.0.0.1", "-p", str(port), "-q", "1", "-l",
                     "-t", f"home/{scanner}/BTtoMQTT/C8FD19A2B301"],
                    stdin=subprocess.PIPE, stdout=log, stderr=log, text=True)
        self.thread = threading.Thread(target=self.run, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *_):
        self.stop.set()
        self.thread.join(timeout=PATIENCE)
        for publisher in self.publishers.values():
            with contextlib.suppress(OSError):
                publisher.stdin.close()
            try:
                publisher.wait(timeout=PATIENCE)
            except subprocess.TimeoutExpired:
                publisher.kill()

    def go(self):
        self.started_walk = time.monotonic()

    def where(self):
        """The badge's x, y and floor now."""
        if self.started_walk is None:
            return WALK[0][1:]
        t = time.monotonic() - self.started_walk
        for (t0, x0, y0, f0), (t1, x1, y1, f1) in zip(WALK, WALK[1:]):
            if t < t1:
                share = max(0, (t - t0) / (t1 - t0))
                return x0 + (x1 - x0) * share, y0 + (y1 - y0) * share, f0 if share < 1 else f1
        return WALK[-1][1:]

    def run(self):
        try:
            while not self.stop.is_set():
                x, y, floor = self.where()
                for scanner, publisher in self.publishers.items():
                    payload = {"id": "C8:FD:19:A2:B3:01", "mfid": "4c00", "uuid": BADGE.replace("-", "").lower(),
                               "major": 7, "minor": 1, "txpower": -59, "rssi": house_rssi(scanner, x, y, floor)}
                    publisher.stdin.write(json.dumps(payload) + "\n")
                    publisher.stdin.flush()
                self.stop.wait(REPORT_INTERVAL)  # a gateway's pace, not a wait for anything
        except OSError as error:
            self.error = f"a gateway's mosquitto_pub went away ({error}; its log: {self.log})"

    def said(self):
        """What went wrong with the gateways, for a failure's message."""
        return self.error or "the gateways kept publishing"


def floors_page(args, chromium_path, driver_path):
    """The floor picker (issue 61): a daemon on a real mosquitto with a house of two floors, a tag
    reported by four Theengs gateways. The ground floor's page lists both floors, lowest first,
    the tag counted on the ground floor; the tag takes the stairs, and the page (live) counts it
    upstairs; its link leads to the first floor's page, where the tag's dot is."""
    for tool in ("mosquitto", "mosquitto_pub"):
        if shutil.which(tool) is None:
            fail(f"{tool} is not installed (./scripts/setup installs mosquitto and mosquitto-clients)")
    with tempfile.TemporaryDirectory(prefix="bw-floors-") as folder, Broker(folder, args.artefacts) as broker:
        daemon, writer, base = start_daemon(
            args, HOUSE_INI + f"MQTT.port = {broker.port}\n", folder, "the house daemon", mqtt=True)
        with stopped_at_end(daemon, writer, "the house daemon"), Gateways(broker.port, args.artefacts) as gateways, \
                chromium(args, chromium_path, driver_path, "floors") as page:
            def picker():
                """Each floor the picker lists: its Area, name, tag count and whether it is the one shown."""
                return page.script(
                    "return Array.from(document.querySelectorAll('nav.floors li'), li => {"
                    "  var a = li.querySelector('a'), count = li.querySelector('.count');"
                    "  return [li.getAttribute('data-area'), a ? a.firstChild.textContent : null,"
                    "          count ? count.textContent : null, a ? a.getAttribute('aria-current') : null]; })")

            def dot():
                return page.script("return !!document.querySelector('svg.floor g.tag[data-device=\"badge\"]')")

            def seen():
                return f"picker {picker()}, the badge's dot {'drawn' if dot() else 'not drawn'}; {gateways.said()}"

            page.open(base + f"floors/{GROUND}")
            page.until("the ground floor's page to go live", page.live, seen=lambda: page.texts("#live"))
            page.until("the picker with both floors, the badge counted on the ground floor, and its dot",
                       lambda: picker() == [[GROUND, "Ground floor", "1", "page"], [FIRST, "First floor", "0", None]]
                       and dot(), seen=seen)
            # Up the stairs: the page, live, counts the badge upstairs and no longer draws it here.
            gateways.go()
            took = page.until(
                "the picker to count the badge upstairs",
                lambda: picker() == [[GROUND, "Ground floor", "0", "page"], [FIRST, "First floor", "1", None]]
                and not dot(), seen=seen)
            print(f"the badge counted upstairs {took:.1f} s after it set off"
                  f" (its walk reaches the top of the stairs at {WALK[-2][0]:.1f} s)")
            # The picker's link to the first floor (clicked in the page: a redraw cannot take it away
            # between finding it and clicking it).
            page.step = "following the picker's link to the first floor"
            if not page.script(
                    f"var a = document.querySelector('nav.floors a[href=\"/floors/{FIRST}\"]');"
                    "if (a) { a.click(); } return !!a;"):
                fail(f"the picker has no link to /floors/{FIRST}: {picker()}")
            page.until("the first floor's page, live",
                       lambda: page.script("return location.pathname") == f"/floors/{FIRST}" and page.live(),
                       seen=lambda: (page.script("return location.pathname"), page.texts("#live")))
            page.until("the first floor marked in the picker and the badge's dot drawn upstairs",
                       lambda: picker() == [[GROUND, "Ground floor", "0", None], [FIRST, "First floor", "1", "page"]]
                       and dot(), seen=seen)
            page.screenshot(os.path.join(args.artefacts, "web-floors.png"))


LEARN_TOKEN = "browser-learn-0123456789abcdef0123"


def learn_page(args, chromium_path, driver_path):
    """Learn this room (docs/behaviour.md §22, docs/web.md): the badge's page, opened once with
    ?token= (its cookie and the control's header authorise the command), picks the Kitchen and 5
    seconds and starts; the badge's reports (the two scanners, every 0.2 s on the trace's clock,
    which is the wall clock) are the session's samples. The progress bar moves while it runs;
    after it, the page says how well the Kitchen is known."""
    from selenium.webdriver.support.ui import Select
    with tempfile.TemporaryDirectory(prefix="bw-learn-") as folder:
        daemon, writer, base = start_daemon(args, INI + f"Web.token = {LEARN_TOKEN}\n", folder, "the learn daemon")
        start = time.time()
        done = threading.Event()

        def reports():
            t = time.time() - start
            return "".join(
                json.dumps({"t": start + t, "scanner": scanner, "tag": "badge", "rssi": rssi}) + "\n"
                for scanner, rssi in (("kitchen", -45), ("reception", -75)))

        def feed():
            while not done.is_set():
                with contextlib.suppress(OSError):
                    os.write(writer, reports().encode())
                done.wait(0.2)  # the scanners' pace, not a wait for anything

        os.write(writer, reports().encode())
        feeder = threading.Thread(target=feed, daemon=True)
        with stopped_at_end(daemon, writer, "the learn daemon"), \
                chromium(args, chromium_path, driver_path, "learn") as page:
            feeder.start()
            try:
                page.open(base + f"devices/badge?token={LEARN_TOKEN}")
                page.until("the badge's page to go live", page.live, seen=lambda: page.texts("#live"))
                if not page.browser.find_elements(By.ID, "learn-form"):
                    fail(f"the badge's page has no Learn this room control: {page.texts('.learn-control')!r}")
                page.step = "picking the Kitchen and 5 seconds, and starting"
                Select(page.browser.find_element(By.ID, "learn-room")).select_by_visible_text("Kitchen")
                seconds = page.browser.find_element(By.ID, "learn-seconds")
                seconds.clear()
                seconds.send_keys("5")
                page.browser.find_element(By.ID, "learn-start").click()
                page.until("the daemon's answer under the control",
                           lambda: (page.texts("#learn-message") or [""])[0].startswith("training"),
                           seen=lambda: page.texts("#learn-message"))

                def progress():
                    return page.script("var p = document.querySelector('progress.learning');"
                                       "return p ? [p.value, p.max] : null;")

                page.until("the session's progress bar", lambda: progress() is not None,
                           seen=lambda: page.texts("section.training"))
                seen = []
                page.step = "watching the progress bar until the session ends"
                started = time.monotonic()
                while (value := progress()) is not None:
                    if not seen or seen[-1] != value[0]:
                        seen.append(value[0])
                        if len(seen) == 2:
                            page.screenshot(os.path.join(args.artefacts, "web-learn-progress.png"))
                    if time.monotonic() - started >= PATIENCE:
                        fail(f"the 5-s session still runs after {PATIENCE} s; its bar showed {seen}")
                    time.sleep(POLL)
                waited("the session's end", started)
                if len(seen) < 2 or value is not None or seen != sorted(seen):
                    fail(f"the progress bar did not move forward while the session ran: {seen}")
                print("the progress bar showed " + ", ".join(f"{v:.1f}" for v in seen) + " of 5 s")
                # The selection stayed as the user made it through the live redraws.
                if Select(page.browser.find_element(By.ID, "learn-room")).first_selected_option.text != "Kitchen":
                    fail("the room picked was lost while the page redrew itself")

                def kitchen():
                    return page.texts(f'table.learned-rooms tr[data-region="{UUID}:2"] td')

                page.until("the Kitchen's row in the trained rooms, with its samples",
                           lambda: len(kitchen()) == 6 and int(kitchen()[1]) > 0, seen=kitchen)
                row = kitchen()
                if row[0] != "Kitchen" or row[2] != "2" or "by badge" not in row[3]:
                    fail(f"the Kitchen's row says {row!r}")
                if "too few samples" not in row[4] and not row[4].endswith("%"):
                    fail(f"the Kitchen's row gives no accuracy: {row!r}")
                if "No session running." not in " ".join(page.texts("section.training")):
                    fail(f"the page still shows a session: {page.texts('section.training')!r}")
                page.screenshot(os.path.join(args.artefacts, "web-learn.png"))
            finally:
                done.set()
                feeder.join(timeout=PATIENCE)


OCCUPANCY_INI = INI + """Sensor.kitchen-pir = zigbee2mqtt/kitchen/pir, motion, Kitchen
Sensor.kitchen-counter = kitchen-counter/sensor/targets/state, count, Kitchen
Sensor.reception-radar = reception-radar/binary_sensor/presence/state, presence, Reception
Occupancy.vacantAfter = 30
"""


def occupancy_page(args, chromium_path, driver_path):
    """Occupancy on the building page (docs/behaviour.md §23, docs/web.md): alice's own radio in the
    Reception, the Kitchen's PIR (zigbee2mqtt JSON) and its target counter (ESPHome's plain number)
    fed through the trace. Each room shows occupied with its count and why, live; when alice leaves
    and the radar says nobody, the Reception shows vacant 30 s (of the trace's clock) later."""
    with tempfile.TemporaryDirectory(prefix="bw-occupancy-") as folder:
        daemon, writer, base = start_daemon(args, OCCUPANCY_INI, folder, "the occupancy daemon")
        start = time.time()

        def line(second, **record):
            os.write(writer, (json.dumps({"t": start + second, **record}) + "\n").encode())

        def room(zone):
            """What the page shows of Zone `zone`'s occupancy: occupied, count, the state line, why."""
            return page.script(
                f"var d = document.querySelector('.zone[data-region=\"{UUID}:{zone}\"] .occupancy');"
                "if (!d) { return null; }"
                "var why = d.querySelector('.why');"
                "return [d.getAttribute('data-occupied'), d.getAttribute('data-count'),"
                "        d.querySelector('.state').innerText.trim(), why ? why.innerText.trim() : null];")

        def rooms():
            return {"Reception": room(1), "Kitchen": room(2)}

        with stopped_at_end(daemon, writer, "the occupancy daemon"), \
                chromium(args, chromium_path, driver_path, "occupancy") as page:
            page.open(base)
            page.until("the building page to go live", page.live, seen=lambda: page.texts("#live"))
            for second in range(0, 3):
                line(second, uuid=UUID, major=1, minor=1, rssi=-60, power=-59)
            line(3, sensor="reception-radar", payload="OFF")
            line(4, sensor="kitchen-pir", payload={"battery": 97, "occupancy": True, "linkquality": 120})
            line(5, sensor="kitchen-counter", payload="2")
            page.until("the Reception occupied by alice and the Kitchen by two people",
                       lambda: room(1) == ["true", "1", "occupied · 1 person", "Reception is occupied: alice"]
                       and room(2) == ["true", "2", "occupied · 2 people",
                                       "Kitchen is occupied: kitchen-counter counts 2, and kitchen-pir says present"],
                       seen=rooms)
            badges = [page.texts(f'.zone[data-region="{UUID}:{zone}"] h3 .count') for zone in (1, 2)]
            if badges != [["1"], ["2"]]:
                fail(f"the rooms' count badges say {badges!r}; the Reception has 1 person, the Kitchen 2")
            # Each sensor's state, then its liveness (issue 73): the ESPHome counter's status topic,
            # the zigbee2mqtt PIR's availability (its silence until that has spoken).
            states = page.script(
                f"return Array.from(document.querySelectorAll('.zone[data-region=\"{UUID}:2\"] ul.sensors li'))"
                ".map(function (li) { return li.getAttribute('data-sensor') + ': ' + li.getAttribute('data-state'); });")
            if states != ["kitchen-counter: counts 2", "kitchen-pir: present"]:
                fail(f"the Kitchen lists its sensors as {states!r}")
            liveness = page.texts(f'.zone[data-region="{UUID}:2"] ul.sensors li .liveness')
            if liveness != ["offline when kitchen-counter/status says offline (ESPHome's, by its state topic)",
                            "offline when zigbee2mqtt/kitchen/pir/availability says offline (zigbee2mqtt's, by its "
                            "state topic); until it says anything, offline after 900 s without a message"]:
                fail(f"the Kitchen's sensors give their liveness as {liveness!r}")
            # The Area's badge: its rooms' people together (1 in the Reception, 2 in the Kitchen).
            area = page.texts(f'section.area[data-region="{UUID}"] h2 .count')
            if area != ["3"]:
                fail(f"the Office's badge says {area!r}; its rooms hold 1 and 2 people, 3 in all")
            page.screenshot(os.path.join(args.artefacts, "web-occupancy.png"))
            # alice goes (her beacon silent past exitTimeout); the radar still says nobody: the
            # Reception is vacant 30 s after her exit; the Kitchen's counter still counts two.
            # (ESPHome publishes a sensor's state again every minute or so: the trace's clock moves on.)
            line(60, sensor="kitchen-counter", payload="2")
            line(120, sensor="kitchen-counter", payload="2")
            page.until("the Reception vacant and the Kitchen still counting two",
                       lambda: room(1) == ["false", "0", "vacant · 0 people", None]
                       and (room(2) or [None, None])[:2] == ["true", "2"], seen=rooms)
            classes = page.script(f"return document.querySelector('.zone[data-region=\"{UUID}:1\"]').className")
            if classes != "zone":
                fail(f"the vacant Reception's card has the classes {classes!r}")
            page.screenshot(os.path.join(args.artefacts, "web-occupancy-vacant.png"))


if __name__ == "__main__":
    main()
