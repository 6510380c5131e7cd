/// The web view's only assets, served by the daemon itself (the machine may have no internet).
package enum Assets {
    /// `/assets/live.js`: follows `/api/v1/events` and fetches the page's main again (coalesced)
    /// when an output arrives, and every few seconds for the RSSI charts (every half second while
    /// a training session's progress bar is shown). Without it the page is still whole, only not
    /// live. On a tag's page it also sends the "Learn this room" control's commands, with the
    /// header that lets the page's cookie authorise them (docs/web.md).
    package static let liveJS = #"""
        (function () {
          "use strict";
          var main = document.getElementById("main");
          var live = document.getElementById("live");
          var device = document.body.getAttribute("data-device");
          var events = "/api/v1/events" + (device ? "?device=" + encodeURIComponent(device) : "");
          var timer = null, busy = false, again = false, fast = null;
          function refresh() {
            timer = null;
            if (busy) { again = true; return; }
            busy = true;
            fetch(location.pathname + "?fragment=main", { credentials: "same-origin", cache: "no-store" })
              .then(function (r) { return r.ok ? r.text() : null; })
              .then(function (text) {
                if (text !== null) {
                  main.innerHTML = text;
                  document.body.setAttribute("data-updated", String(Date.now()));
                }
              })
              .catch(function () {})
              .then(function () {
                busy = false;
                if (again) { again = false; schedule(); }
                if (fast === null && main.querySelector("progress.learning")) {
                  fast = setTimeout(function () { fast = null; schedule(); }, 500);
                }
              });
          }
          function schedule() { if (timer === null) { timer = setTimeout(refresh, 40); } }
          var form = document.getElementById("learn-form");
          if (form && window.fetch) {
            var message = document.getElementById("learn-message");
            var send = function (body) {
              message.textContent = "sending\u2026";
              message.className = "";
              fetch("/api/v1/devices/" + encodeURIComponent(form.getAttribute("data-device")) + "/learn", {
                method: "POST", credentials: "same-origin", cache: "no-store", body: JSON.stringify(body),
                headers: { "Content-Type": "application/json", "X-Beaconwatch-Command": "learn" }
              })
                .then(function (r) { return r.json().then(function (j) { return { ok: r.ok, json: j }; }); })
                .then(function (a) {
                  message.textContent = a.ok ? a.json.message : a.json.error;
                  message.className = a.ok ? "ok" : "error";
                  schedule();
                })
                .catch(function () { message.textContent = "the daemon did not answer"; message.className = "error"; });
            };
            form.addEventListener("submit", function (event) {
              event.preventDefault();
              send({ room: form.elements.room.value, seconds: Number(form.elements.seconds.value) });
            });
            document.getElementById("learn-stop").addEventListener("click", function () { send({ stop: true }); });
          }
          if (!window.EventSource) { return; }
          var source = new EventSource(events);
          source.onopen = function () { live.textContent = "live"; live.className = "live on"; };
          source.onerror = function () { live.textContent = "reconnecting"; live.className = "live off"; };
          source.onmessage = function () {
            document.body.setAttribute("data-events", String(Number(document.body.getAttribute("data-events") || 0) + 1));
            schedule();
          };
          setInterval(schedule, 2000);
        })();
        """#

    /// `/assets/style.css`.
    package static let styleCSS = #"""
        :root { --ink: #1d2430; --muted: #667085; --line: #d0d5dd; --bg: #f6f7f9; --card: #fff;
          --accent: #2563eb; --inside: #dcfce7; --inside-ink: #166534; }
        * { box-sizing: border-box; }
        body { margin: 0; font: 15px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); background: var(--bg); }
        header { display: flex; align-items: baseline; gap: 1rem; padding: .6rem 1.2rem; background: var(--ink); color: #fff; }
        header h1 { font-size: 1.1rem; margin: 0; font-weight: 600; }
        header a.home { color: #fff; font-weight: 700; text-decoration: none; }
        .live { margin-left: auto; font-size: .8rem; padding: .1rem .5rem; border-radius: 1rem; background: #475467; }
        .live.on { background: #16a34a; } .live.off { background: #b42318; }
        main { padding: 1rem 1.2rem; max-width: 1200px; }
        .now { color: var(--muted); margin: 0 0 1rem; }
        h2 { font-size: 1.05rem; margin: 0 0 .5rem; } h3 { font-size: .95rem; margin: 0 0 .3rem; }
        .count { display: inline-block; min-width: 1.6em; margin-left: .4rem; padding: 0 .4rem; border-radius: 1rem;
          background: var(--line); font-size: .8rem; text-align: center; }
        section { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: .8rem 1rem; margin-bottom: 1rem; }
        .zones { display: grid; grid-template-columns: repeat(auto-fill, minmax(220px, 1fr)); gap: .6rem; margin-top: .5rem; }
        .zones > .zone { border: 1px solid var(--line); border-radius: 6px; padding: .5rem .6rem; }
        .zones > .zone.occupied { background: var(--inside); border-color: #86efac; }
        .zones > .zone.occupied .count { background: #86efac; }
        ul.devices { list-style: none; padding: 0; margin: .2rem 0; display: flex; flex-wrap: wrap; gap: .3rem; min-height: 1.6rem; }
        li.device a { display: inline-block; padding: .1rem .5rem; border-radius: 1rem; background: var(--accent); color: #fff;
          text-decoration: none; font-size: .85rem; }
        ol.leaderboard { margin: .3rem 0; padding-left: 1.2rem; font-size: .85rem; }
        ol.leaderboard .dwell { color: var(--muted); margin-left: .4rem; }
        p.beacons { color: var(--muted); font-size: .78rem; margin: .3rem 0 0; }
        .occupancy p { margin: .1rem 0; font-size: .85rem; } .occupancy.vacant .state { color: var(--muted); }
        .occupancy.occupied .state strong { color: var(--inside-ink); } .occupancy .why { color: var(--ink); font-size: .8rem; }
        ul.sensors { list-style: none; padding: 0; margin: .1rem 0; display: flex; flex-wrap: wrap; gap: .3rem; font-size: .75rem; }
        ul.sensors li { padding: 0 .4rem; border: 1px solid var(--line); border-radius: 1rem; color: var(--muted); }
        ul.sensors li[data-state="offline"] { border-style: dashed; }
        ul.sensors .liveness { display: block; font-size: .65rem; opacity: .8; }
        table { border-collapse: collapse; width: 100%; font-size: .9rem; }
        th, td { text-align: left; padding: .25rem .5rem; border-bottom: 1px solid var(--line); vertical-align: middle; }
        .transitions ol { list-style: none; padding: 0; margin: 0; font-size: .9rem; }
        .transitions li { padding: .15rem 0; } .transitions li.enter .where { color: var(--inside-ink); font-weight: 600; }
        .transitions time { color: var(--muted); font-variant-numeric: tabular-nums; }
        ol.slots { list-style: none; padding: 0; margin: 0; display: grid; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr)); gap: .4rem; }
        .slot { border: 1px solid var(--line); border-radius: 6px; padding: .3rem .5rem; min-height: 3rem; font-size: .85rem; }
        .slot .kind { display: block; font-size: .7rem; text-transform: uppercase; color: var(--muted); }
        .slot.empty { border-style: dashed; background: transparent; }
        .slot.filled.beacon { background: #eff6ff; } .slot.filled.zone { background: #fefce8; } .slot.filled.area { background: #fdf2f8; }
        .slot.inside { outline: 2px solid #16a34a; }
        tr.immediate td.class { color: #166534; font-weight: 700; } tr.near td.class { color: #15803d; }
        tr.far td.class { color: #a16207; } tr.off td.class { color: var(--muted); }
        svg.chart .frame { fill: #f8fafc; stroke: var(--line); } svg.chart .rssi { fill: none; stroke: var(--accent); stroke-width: 1.5; }
        svg.chart .rssi-dot { fill: var(--accent); }
        .none { color: var(--muted); }
        svg.floor { width: 100%; max-height: 70vh; background: var(--card); border: 1px solid var(--line); }
        svg.floor .room polygon { fill: #eef2ff; stroke: #475467; stroke-width: 0.05; }
        svg.floor .room text { font-size: 0.35px; fill: var(--muted); }
        svg.floor .door { stroke: var(--card); stroke-width: 0.12; }
        svg.floor .scanner rect { fill: #16a34a; }
        svg.floor .scanner.offline rect { fill: #dc2626; }
        svg.floor .tag .error { fill: var(--accent); fill-opacity: 0.15; stroke: var(--accent); stroke-width: 0.02; }
        svg.floor .tag .dot { fill: var(--accent); }
        svg.floor .tag .name { font-size: 0.3px; fill: var(--ink); }
        svg.floor .stairs rect { fill: #fef3c7; stroke: #92400e; stroke-width: 0.04; }
        svg.floor .stairs line { stroke: #92400e; stroke-width: 0.03; }
        svg.floor .stairs text { font-size: 0.25px; fill: #92400e; }
        a.floor-link { font-size: 0.8rem; margin-left: 0.6rem; font-weight: normal; }
        nav.floors ol { list-style: none; display: flex; flex-wrap: wrap; gap: .4rem; padding: 0; margin: 0 0 .8rem; }
        nav.floors a { display: inline-block; padding: .2rem .7rem; border: 1px solid var(--line); border-radius: 1rem;
          background: var(--card); color: var(--ink); text-decoration: none; }
        nav.floors a[aria-current="page"] { background: var(--ink); border-color: var(--ink); color: #fff; font-weight: 600; }
        nav.floors a[aria-current="page"] .count { background: #475467; }
        .controls { padding: 1rem 1.2rem 0; max-width: 1200px; }
        .controls section { margin-bottom: 0; }
        #learn-form { display: flex; flex-wrap: wrap; gap: .6rem; align-items: center; }
        #learn-form input { width: 5rem; }
        #learn-message.ok { color: var(--inside-ink); } #learn-message.error { color: #b42318; }
        .learn-control .hint { color: var(--muted); font-size: .85rem; margin: 0 0 .5rem; }
        progress.learning { width: 100%; height: 1rem; accent-color: var(--accent); }
        table.learned-rooms tr.too-few td.accuracy { color: #a16207; }
        """#
}
