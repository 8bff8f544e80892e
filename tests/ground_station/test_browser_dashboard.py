"""The dashboard in headless Chromium during a flight: the trajectory grows, events appear, replay works.

Two flights, each published by a real :class:`TelemetryPublisher` and ingested by a
real :class:`GroundStation` on loopback:

* the scripted one of :mod:`sim.dashboard_demo` (states, agent steps with an
  anchor graph, detections, events; positions from the script), then replayed from the
  flight log; its screenshot is copied to ``$AERIE_DASHBOARD_SCREENSHOT`` if set (that is
  how ``docs/dashboard.png`` is made);
* the simulated vehicle flying ``aerie flight-check`` through the bridge: SimVehicleProcess
  (MAVLink) -> FlightBridge (MAVSDK) -> ``State.from_state(bridge.state)`` and bridge events
  (about a minute, most of it the flight itself).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import re
import shutil
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from sim.dashboard_demo import GOAL, home_waypoints, scripted_flight
from ground_station.dashboard.server import DashboardServer
from ground_station.ingest import GroundStation
from ground_station.settings import GroundConfig, VehicleLinkConfig
from contract.messages import State, bridge_event_listener
from onboard.telemetry.publisher import TelemetryPublisher
from onboard.telemetry.settings import TelemetryConfig

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(),
                                reason="needs /usr/bin/chromium (apt-get install -y chromium chromium-driver)")

STEPS = 160
PERIOD_S = 0.05
HOLD_AT = 40



STREAM = "00000000000000aa"   # the one journal stream these hand-made envelopes come from

def _wait(pred: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = pred()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


@contextlib.contextmanager
def chromium(tmp_path: Path, window: str) -> Iterator[Any]:
    """Headless Chromium driven by chromedriver, its window ``window`` ("W,H") pixels."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = str(CHROMIUM)
    for arg in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", f"--window-size={window}", f"--user-data-dir={tmp_path / 'chromium'}"):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "SEVERE"})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=opts)
    try:
        driver.set_page_load_timeout(30)
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def browser(tmp_path: Path):
    with chromium(tmp_path, "1600,1000") as driver:
        yield driver


def test_dashboard_shows_a_live_flight_and_replays_it(tmp_path: Path, browser: Any) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    tcfg = TelemetryConfig(pub_endpoint="tcp://127.0.0.1:0", replay_endpoint="tcp://127.0.0.1:0",
                           journal_path=str(tmp_path / "journal.sqlite"), state_rate_hz=0.0, map_min_interval_s=0.0,
                           curve=False)
    stop = threading.Event()
    with TelemetryPublisher(tcfg, "aerie-1") as pub:
        gcfg = dataclasses.replace(GroundConfig(), db_path=str(tmp_path / "fl.sqlite"), curve=False,
                                   vehicles=[VehicleLinkConfig("aerie-1", pub.pub_endpoint, pub.replay_endpoint)],
                                   status_interval_s=0.2, ack_interval_s=0.1, stats_interval_s=0.0,
                                   dashboard_port=0, dashboard_poll_interval_s=0.1)
        station = GroundStation(gcfg)
        ground = threading.Thread(target=station.run, kwargs={"duration_s": 120.0}, daemon=True)
        ground.start()
        assert station.started.wait(10)
        seen_start = threading.Event()

        def hold(i: int) -> None:
            if i == HOLD_AT:    # wait until the browser has drawn the start: growth is then observable
                seen_start.wait(30)

        flight = threading.Thread(target=scripted_flight, args=(pub,), daemon=True,
                                  kwargs={"steps": STEPS, "period_s": PERIOD_S, "stop": stop, "before_step": hold})
        try:
            with DashboardServer.from_config(gcfg, tmp_path) as dash:
                browser.get(dash.url)
                _wait(lambda: browser.find_element(By.ID, "link").text == "live", 15, "the live feed")
                flight.start()

                def points() -> int:
                    return int(browser.find_element(By.ID, "trajectory").get_attribute("data-points") or 0)

                first = _wait(lambda: points() >= 5 and points(), 30, "a trajectory on the map")
                assert first <= HOLD_AT
                seen_start.set()
                _wait(lambda: points() > first + 10, 30, "the trajectory to grow")
                _wait(lambda: "anchor_created" in browser.find_element(By.ID, "events").text, 20, "an event")
                _wait(lambda: "pattern_stuck" in browser.find_element(By.ID, "events").text, 30,
                      "the mid-flight event")
                agent = browser.find_element(By.ID, "agent-table").text
                assert GOAL in agent and ("forward" in agent or "turn_left" in agent)
                assert "kiosk" in browser.find_element(By.ID, "detections").text
                # What the vehicle understood, at the top of the plan panel; the instruction is not its goal name.
                from sim.dashboard_demo import INSTRUCTION, UNDERSTOOD

                assert browser.find_element(By.ID, "plan-understood").text == UNDERSTOOD
                summary = browser.find_element(By.ID, "plan-summary").text
                assert summary.startswith("For the instruction") and not summary.startswith("To reach")
                assert INSTRUCTION not in summary
                assert "battery" in browser.find_element(By.ID, "battery-text").text
                assert "OFFBOARD" in browser.find_element(By.ID, "vehicle-table").text
                assert browser.find_elements(By.CSS_SELECTOR, "#anchors circle")
                _wait(lambda: browser.execute_script("return document.getElementById('map-snapshot').naturalWidth"),
                      10, "the semantic map snapshot (a PNG served from the flight log)")
                shot = tmp_path / "dashboard.png"
                browser.save_screenshot(str(shot))
                assert shot.stat().st_size > 10_000
                if os.environ.get("AERIE_DASHBOARD_SCREENSHOT"):
                    shutil.copyfile(shot, os.environ["AERIE_DASHBOARD_SCREENSHOT"])

                flight.join(30)
                assert not flight.is_alive()
                _wait(lambda: "mission_end" in browser.find_element(By.ID, "events").text, 30, "the end of the flight")
                _wait(lambda: points() == STEPS, 10, f"all {STEPS} states on the map (has {points()})")

                # Replay the flight from the flight log: the whole path, then the start of it.
                # The list is rebuilt when flights change: read and pick in one script, no stale elements.
                flight_option = "const o = document.getElementById('source').options; " \
                                "return o.length > 1 && !o[1].text.includes('(open)') ? o[1].value : null;"
                value = _wait(lambda: browser.execute_script(flight_option), 15, "the ended flight in the flight list")
                assert value == "aerie-1/1"
                Select(browser.find_element(By.ID, "source")).select_by_value(value)
                _wait(lambda: browser.find_element(By.TAG_NAME, "body").get_attribute("data-source") != "live"
                      and points() == STEPS, 15, "the replayed flight")
                assert browser.find_element(By.ID, "replay").is_displayed()
                # The deterministic post-flight analysis of the replayed flight, its key step on the map.
                analysis = browser.find_element(By.ID, "analysis-table").text
                assert "key step" in analysis and "failure" in analysis, analysis
                assert "key step" in browser.find_element(By.ID, "key-step").text
                browser.save_screenshot(str(tmp_path / "dashboard-replay.png"))
                browser.execute_script("const s = document.getElementById('scrub'); s.value = 100;"
                                       "s.dispatchEvent(new Event('input'));")
                _wait(lambda: 0 < points() < STEPS // 4, 10, "the replay scrubbed to its start")
                errors = [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
                assert not errors, f"the page logged errors: {errors}"
                assert "flight #1" in browser.find_element(By.ID, "flight-info").text
        finally:
            stop.set()
            seen_start.set()
            if flight.is_alive():
                flight.join(30)
            station.stop()
            ground.join(10)
    assert not ground.is_alive()


# As in tests/firmware_bridge: faster climbs and descents keep the flight short.
FAST = {"MPC_TKO_SPEED": 4.0, "MPC_LAND_SPEED": 3.0, "MPC_Z_V_AUTO_DN": 3.0, "COM_LOW_BAT_ACT": 0}


def _points(driver: Any) -> list[tuple[float, float]]:
    text = driver.find_element("id", "trajectory").get_attribute("points") or ""
    return [tuple(map(float, p.split(","))) for p in text.split()]  # type: ignore[misc]


async def _until(pred: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = await asyncio.to_thread(pred)
        if value:
            return value
        await asyncio.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


async def test_dashboard_follows_the_simulated_vehicle(tmp_path: Path, browser: Any) -> None:
    from firmware_bridge.bridge import FlightBridge
    from sim.flight_check import run_flight_check, say_as_events
    from firmware_bridge.settings import BridgeConfig, LinkConfig, StreamerConfig
    from sim.vehicle import SimVehicleProcess

    tcfg = TelemetryConfig(pub_endpoint="tcp://127.0.0.1:0", replay_endpoint="tcp://127.0.0.1:0",
                           journal_path=str(tmp_path / "journal.sqlite"), state_rate_hz=0.0, map_min_interval_s=0.0,
                           curve=False)
    sim = SimVehicleProcess(seed=7, params=FAST, prearm_delay_s=0.5)
    sim.start()
    try:
        with TelemetryPublisher(tcfg, "aerie-1") as pub:
            gcfg = dataclasses.replace(GroundConfig(), db_path=str(tmp_path / "fl.sqlite"), curve=False,
                                       vehicles=[VehicleLinkConfig("aerie-1", pub.pub_endpoint, pub.replay_endpoint)],
                                       status_interval_s=0.2, ack_interval_s=0.1, stats_interval_s=0.0,
                                       dashboard_port=0, dashboard_poll_interval_s=0.1)
            station = GroundStation(gcfg)
            ground = threading.Thread(target=station.run, kwargs={"duration_s": 240.0}, daemon=True)
            ground.start()
            assert station.started.wait(10)
            bcfg = BridgeConfig(link=LinkConfig(url=sim.mavsdk_url, connect_timeout_s=10, health_timeout_s=20),
                                streamer=StreamerConfig(rate_hz=20.0, intent_timeout_s=1.0))
            try:
                with DashboardServer.from_config(gcfg, tmp_path) as dash:
                    await asyncio.to_thread(browser.get, dash.url)
                    await _until(lambda: browser.find_element("id", "link").text == "live", 15, "the live feed")
                    async with await FlightBridge.connect(bcfg) as bridge:
                        bridge.events.add_listener(bridge_event_listener(pub.publish))
                        pub.flight_start({"mission": "flight-check"})

                        async def feed() -> None:
                            while True:
                                pub.publish("state", State.from_state(bridge.state))
                                await asyncio.sleep(0.2)

                        feeder = asyncio.create_task(feed())
                        try:
                            check = asyncio.create_task(run_flight_check(
                                bridge, altitude_m=6.0, square_m=8.0, say=say_as_events(pub)))
                            await _until(lambda: "arm+takeoff" in browser.find_element("id", "events").text, 60,
                                         "the takeoff event")
                            await _until(lambda: "OFFBOARD" in browser.find_element("id", "vehicle-table").text, 30,
                                         "offboard mode on the dashboard")
                            before = len(await asyncio.to_thread(_points, browser))
                            await _until(lambda: len(_points(browser)) > before + 10, 20, "the trajectory to grow")
                            await check
                            await asyncio.sleep(0.5)
                        finally:
                            feeder.cancel()
                    pub.flight_end({"reason": "landed"})
                    await _until(lambda: "land+disarm" in browser.find_element("id", "events").text, 20,
                                 "the landing event")
                    path = await asyncio.to_thread(_points, browser)
                    # The square (8 m) and the goto 30 m north are in the drawn path (east, north).
                    assert max(n for _, n in path) > 25 and max(e for e, _ in path) > 6
                    await asyncio.to_thread(browser.save_screenshot, str(tmp_path / "dashboard-sim.png"))
                    assert (tmp_path / "dashboard-sim.png").stat().st_size > 10_000
                    errors = [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
                    assert not errors, f"the page logged errors: {errors}"
            finally:
                station.stop()
                ground.join(10)
    finally:
        sim.stop()


def test_the_page_shows_how_old_the_state_is_and_events_in_words(tmp_path: Path, browser: Any) -> None:
    """The last state said armed and in the air, then the flight ended: the page says when that state
    was true instead of showing it as now, and events read as words. Served beyond loopback, so the
    browser logs in with the token link and its page and live stream then ride on the cookie."""
    from selenium.webdriver.common.by import By

    from contract.access_token import generate_token
    from contract.envelope import decode, encode
    from ground_station.flight_log import FlightLog

    from contract.messages import Event, FlightEnd, FlightStart

    frames = [encode("u", 1, "flight_start", FlightStart(mission="m").encode(), t_ns=1_000_000_000, stream=STREAM),
              encode("u", 2, "state", State(armed=True, in_air=True, flight_mode="HOLD", lat=60.0, lon=24.0).encode(),
                     t_ns=2_000_000_000, stream=STREAM),
              encode("u", 3, "event", Event.of("lessons_refused", {"reason": "experience #0 id does not "
                                                                   "match its content"}).encode(), t_ns=3_000_000_000, stream=STREAM),
              encode("u", 4, "event", Event.of("lessons_imported", {"added": 2, "already_present": 1}).encode(),
                     t_ns=3_500_000_000, stream=STREAM),
              encode("u", 5, "flight_end", FlightEnd(reason="landed").encode(), t_ns=4_000_000_000, stream=STREAM)]
    with FlightLog.open(tmp_path / "fl.sqlite") as fl:
        fl.store([(decode(f, max_bytes=1 << 20), f) for f in frames])
        fl.advance("u", STREAM, seen=5)
    token, _ = generate_token(tmp_path / "keys")
    gcfg = GroundConfig(db_path="fl.sqlite", curve=False, vehicles=[], dashboard_host="0.0.0.0", dashboard_port=0,
                        dashboard_token_hash="keys/dashboard.token_sha256", dashboard_poll_interval_s=0.1)
    with DashboardServer.from_config(gcfg, tmp_path) as dash:
        port = int(dash.url.rsplit(":", 1)[1].strip("/"))
        browser.get(f"http://127.0.0.1:{port}/")
        assert "401" in browser.find_element(By.TAG_NAME, "body").text
        browser.get(f"http://127.0.0.1:{port}/?token={token}")
        assert "token=" not in browser.current_url
        _wait(lambda: browser.find_element(By.ID, "link").text == "live", 15, "the live feed (with the cookie)")
        table = _wait(lambda: "state as of" in (t := browser.find_element(By.ID, "vehicle-table").text) and t, 15,
                      "the state's age")
        assert "the flight ended after it" in table and "HOLD" in table
        assert "stale" in browser.find_element(By.ID, "vehicle-table").get_attribute("class")
        events = browser.find_element(By.ID, "events").text
        assert "lessons refused: experience #0 id does not match its content" in events
        assert "lessons imported: 2 new, 1 already known" in events
        errors = [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"
                  and "401" not in e.get("message", "")]
        assert not errors, f"the page logged errors: {errors}"


# Where the two vehicles of the fleet test take off: two corridor waypoints of the Helsinki map.
FLEET = (("aerie-1", 0.0), ("aerie-2", 140.0))   # vehicle id, how far the script is turned (deg)
FLEET_STEPS = 120

# Everything the fleet test reads from the page in one script (no stale elements between reads).
_PAGE = r"""
const r = (el) => { const b = el.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };
const q = (s) => [...document.querySelectorAll(s)];
return {
  view: [window.innerWidth, window.innerHeight],
  scroll: [document.documentElement.scrollWidth, document.documentElement.scrollHeight],
  side: r(document.querySelector('.side')), panels: q('.side .panel').map(r), map: r(document.getElementById('map')),
  markers: q('#vehicle-marker g[data-vehicle]').map((g) => g.dataset.vehicle).sort(),
  marker_at: Object.fromEntries(q('#vehicle-marker g[data-vehicle]').map((g) =>
    [g.dataset.vehicle, g.querySelector('path').getAttribute('transform').match(/translate\(([^ ]+) ([^)]+)\)/).slice(1).map(Number)])),
  trails: Object.fromEntries([...q('#trails polyline'), document.getElementById('trajectory')]
                             .map((p) => [p.dataset.vehicle, p.getAttribute('points')])),
  followed: document.body.dataset.vehicle,
  targets: q('#estimates .target').length,
  // each search region: its vehicle, its title, its fill, and whether it lies beneath (before) every target marker
  regions: q('#estimates .search-region').map((el) => [el.dataset.vehicle, el.querySelector('title').textContent,
    el.getAttribute('fill'), q('#estimates > *').indexOf(el) < Math.min(...q('#estimates > *').map((x, i) =>
      x.classList.contains('target') ? i : Infinity))]),
  target_colour: Object.fromEntries(q('#estimates .target').map((g) => [g.dataset.vehicle, g.querySelector('circle').getAttribute('stroke')])),
  agent: document.getElementById('agent-table').innerText,
  streets: Number(document.getElementById('streets').dataset.count),
  buildings: Number(document.getElementById('buildings').dataset.count),
  fleet: q('#fleet tbody tr').map((tr) => tr.innerText),
  plan: q('#plan li').map((li) => li.innerText),
};
"""


def _cells(row: str) -> list[str]:
    return [c.strip() for c in row.split("\t")]


def _trail(points: str | None) -> list[tuple[float, float]]:
    return [tuple(map(float, p.split(","))) for p in (points or "").split()]  # type: ignore[misc]


def test_one_ground_station_shows_two_vehicles_on_the_city_at_1366x768(tmp_path: Path) -> None:
    """Two vehicles streaming through real telemetry links to one ground station, whose dashboard
    draws the Helsinki onboard map (streets, buildings) beneath both tracks, each vehicle where its
    home is on that map; the page fits a 1366×768 laptop screen; clicking a vehicle follows it.
    The screenshot is copied to ``$AERIE_DASHBOARD_FLEET_SCREENSHOT`` if set (docs/dashboard_fleet.png)."""
    pytest.importorskip("pyrosm")
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    from onboard.map.build import build_map
    from onboard.map.map_file import save_map

    m = build_map()
    save_map(m, tmp_path / "helsinki.aeriemap")
    # Two corridor waypoints near the middle of the map, a few hundred metres apart: the two homes.
    waypoints = dict(zip((vid for vid, _ in FLEET), home_waypoints(m, len(FLEET))))
    homes = {vid: (float(m.graph.latlon[k][0]), float(m.graph.latlon[k][1])) for vid, k in waypoints.items()}
    home_xy = {vid: m.graph.xy[k] for vid, k in waypoints.items()}

    stop = threading.Event()
    with contextlib.ExitStack() as stack:
        pubs = {}
        for vid, _ in FLEET:
            tcfg = TelemetryConfig(pub_endpoint="tcp://127.0.0.1:0", replay_endpoint="tcp://127.0.0.1:0",
                                   journal_path=str(tmp_path / f"journal-{vid}.sqlite"), state_rate_hz=0.0,
                                   map_min_interval_s=0.0, curve=False)
            pubs[vid] = stack.enter_context(TelemetryPublisher(tcfg, vid))
        gcfg = dataclasses.replace(GroundConfig(), db_path=str(tmp_path / "fl.sqlite"), curve=False,
                                   vehicles=[VehicleLinkConfig(vid, p.pub_endpoint, p.replay_endpoint)
                                             for vid, p in pubs.items()],
                                   status_interval_s=0.2, ack_interval_s=0.1, stats_interval_s=0.0,
                                   dashboard_port=0, dashboard_poll_interval_s=0.1, dashboard_map="helsinki.aeriemap")
        station = GroundStation(gcfg)
        ground = threading.Thread(target=station.run, kwargs={"duration_s": 180.0}, daemon=True)
        ground.start()
        assert station.started.wait(10)
        # Both flights stop half-way until the page has drawn them: what is asserted is mid-flight.
        drawn = threading.Event()
        flights = [threading.Thread(target=scripted_flight, args=(pubs[vid],), daemon=True,
                                    kwargs={"steps": FLEET_STEPS, "period_s": PERIOD_S, "stop": stop,
                                            "home": homes[vid], "turn_deg": turn,
                                            "before_step": lambda i: drawn.wait(60) if i == FLEET_STEPS // 2 else None})
                   for vid, turn in FLEET]
        try:
            with DashboardServer.from_config(gcfg, tmp_path) as dash, chromium(tmp_path, "1366,768") as browser:
                browser.get(dash.url)
                _wait(lambda: browser.find_element(By.ID, "link").text == "live", 15, "the live feed")
                for f in flights:
                    f.start()

                def page() -> dict[str, Any]:
                    return browser.execute_script(_PAGE)

                def both_drawn() -> dict[str, Any] | None:
                    p = page()
                    ok = (p["markers"] == ["aerie-1", "aerie-2"] and len(p["fleet"]) == 2 and p["targets"] == 2
                          and len(p["regions"]) == 2
                          and all(len(_trail(p["trails"].get(vid))) >= 20 for vid, _ in FLEET) and p["plan"]
                          and all(_cells(row)[3].endswith(" s") for row in p["fleet"]))   # link age known
                    return p if ok else None

                p = _wait(both_drawn, 60, "both vehicles with trails, target estimates, search regions and the plan")
                drawn.set()
                # Each vehicle's search region, in its colour, beneath the target markers, said in words.
                assert sorted(r[0] for r in p["regions"]) == ["aerie-1", "aerie-2"], p["regions"]
                for vid, title, fill, beneath in p["regions"]:
                    assert re.fullmatch(rf"{vid}: search region, [0-9.]+ ha not yet looked at", title), title
                    assert fill == p["target_colour"][vid] and beneath, (vid, fill, p["target_colour"], beneath)
                assert re.search(r"search region\t[0-9.]+ ha not yet looked at", p["agent"]), p["agent"]
                # The city beneath: the map's streets and buildings, fetched once from the server.
                assert p["streets"] > 300 and p["buildings"] > 300, p
                # Each vehicle is drawn where its home is on the map: its trail starts at that waypoint.
                for vid, _ in FLEET:
                    e0, n0 = _trail(p["trails"][vid])[0]
                    assert abs(e0 - home_xy[vid][0]) < 1.0 and abs(n0 - home_xy[vid][1]) < 1.0, (vid, e0, n0)
                # The vehicle list: mode, battery, link age and the current step of each.
                for row in p["fleet"]:
                    vid, mode, battery, link, step = _cells(row)
                    assert mode == "OFFBOARD" and battery.endswith(" %") and float(link[:-2]) < 5.0, row
                    assert step.split(":")[1].split()[0] in ("navigate", "search"), row
                # The plan in words, a numbered list of sentences.
                assert len(p["plan"]) == 3 and "Search the square" in " ".join(p["plan"]), p["plan"]
                # It fits 1366×768: no scrolling, the side panel and each of its panels inside the viewport.
                vw, vh = p["view"]
                assert vw >= 1300 and vh >= 600, p["view"]
                assert p["scroll"][0] <= vw and p["scroll"][1] <= vh, (p["scroll"], p["view"])
                for left, top, right, bottom in [p["side"], p["map"]]:
                    assert 0 <= left < right <= vw and 0 <= top < bottom <= vh, (p["side"], p["map"], p["view"])
                assert p["map"][2] - p["map"][0] > 600 and p["map"][3] - p["map"][1] > 350, p["map"]
                shot = tmp_path / "dashboard_fleet.png"
                browser.save_screenshot(str(shot))
                assert shot.stat().st_size > 10_000
                if os.environ.get("AERIE_DASHBOARD_FLEET_SCREENSHOT"):
                    shutil.copyfile(shot, os.environ["AERIE_DASHBOARD_FLEET_SCREENSHOT"])

                # Click the other vehicle in the list: the page follows it, its detail panels show it.
                other = "aerie-2" if p["followed"] == "aerie-1" else "aerie-1"
                browser.find_element(By.CSS_SELECTOR, f'#fleet tr[data-vehicle="{other}"]').click()
                _wait(lambda: page()["followed"] == other
                      and browser.find_element(By.ID, "trajectory").get_attribute("data-vehicle") == other
                      and other in browser.find_element(By.ID, "flight-info").text, 10, f"the page to follow {other}")
                # Following keeps it in the middle of the map (the SVG is 800×600).
                _wait(lambda: all(abs(a - b) < 2 for a, b in zip(page()["marker_at"][other], (400, 300))), 10,
                      f"{other} in the middle of the map")
                # Items the page cannot read are skipped, and the page goes on drawing both vehicles.
                browser.execute_script(
                    "addLiveItems('aerie-1', [null, 7, {seq: 'x'}, {seq: 1e9, type: 'state', payload: 7, pos: 'no'},"
                    " {seq: 1e9 + 1, type: 'agent_step', payload: {target_estimate: [1], landmarks: 3,"
                    " search_region: {outline: [[1, 'x'], 5, null], unseen_m2: 'lots'}}},"
                    " {seq: 1e9 + 2, type: 'plan', payload: {steps: [null, 4, {goal: 5}]}}]);"
                    "addLiveItems(null, 'garbage');")
                drawn.set()
                for f in flights:
                    f.join(60)
                    assert not f.is_alive()
                _wait(lambda: page()["markers"] == ["aerie-1", "aerie-2"]
                      and "mission_end" in browser.find_element(By.ID, "events").text, 30, "both flights to end")
                # Both vehicles have gone quiet: the list marks their links stale (after 5 s without a message).
                _wait(lambda: all(_cells(row)[3].endswith("stale") for row in page()["fleet"]), 60, "both links stale")
                # Replay one flight from the log: that vehicle alone, still where it flew on the map.
                flight = _wait(lambda: browser.execute_script(
                    "const o = [...document.getElementById('source').options].find((o) => o.value.startsWith('aerie-2/')"
                    " && !o.text.includes('(open)')); return o ? o.value : null;"), 15, "aerie-2's flight in the list")
                Select(browser.find_element(By.ID, "source")).select_by_value(flight)
                replay = _wait(lambda: (p := page())["markers"] == ["aerie-2"] and p["followed"] == "aerie-2"
                               and len(_trail(p["trails"]["aerie-2"])) == FLEET_STEPS and p, 15, "the replayed flight")
                assert [r[0] for r in replay["regions"]] == ["aerie-2"], replay["regions"]   # its region, replayed
                e0, n0 = _trail(replay["trails"]["aerie-2"])[0]
                assert abs(e0 - home_xy["aerie-2"][0]) < 1.0 and abs(n0 - home_xy["aerie-2"][1]) < 1.0
                # The replay bar and the post-flight analysis fit too.
                assert replay["scroll"][0] <= vw and replay["scroll"][1] <= vh, replay
                assert 0 <= replay["side"][0] < replay["side"][2] <= vw and replay["side"][3] <= vh, replay
                assert browser.find_element(By.ID, "replay").is_displayed()
                errors = [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
                assert not errors, f"the page logged errors: {errors}"
        finally:
            stop.set()
            drawn.set()
            for f in flights:
                if f.is_alive():
                    f.join(30)
            station.stop()
            ground.join(10)
    assert not ground.is_alive()
