"""The dashboard in headless Chromium during a flight: the trajectory grows, events appear, replay works.

The flight is the scripted one of :mod:`ground_station.dashboard.demo`, published by a
real :class:`TelemetryPublisher` and ingested by a real :class:`GroundStation` on
loopback (not the simulated vehicle: positions come from the script). A screenshot
is saved under the test's tmp dir, and copied to ``$AERIE_DASHBOARD_SCREENSHOT`` if set
(that is how ``docs/dashboard.png`` is made).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import threading
import time
from pathlib import Path
from typing import Any, Callable

import pytest

from ground_station.dashboard.demo import GOAL, scripted_flight
from ground_station.dashboard.server import DashboardServer
from ground_station.ingest import GroundStation
from ground_station.settings import GroundConfig, VehicleLinkConfig
from onboard.telemetry.publisher import TelemetryPublisher
from onboard.telemetry.settings import TelemetryConfig

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(),
                                reason="needs /usr/bin/chromium (apt-get install -y chromium chromium-driver)")

STEPS = 160
PERIOD_S = 0.05


def _wait(pred: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = pred()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def browser(tmp_path: Path):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = str(CHROMIUM)
    for arg in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", "--window-size=1400,900", f"--user-data-dir={tmp_path / 'chromium'}"):
        opts.add_argument(arg)
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=opts)
    try:
        driver.set_page_load_timeout(30)
        yield driver
    finally:
        driver.quit()


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
        flight = threading.Thread(target=scripted_flight, args=(pub,),
                                  kwargs={"steps": STEPS, "period_s": PERIOD_S, "stop": stop}, daemon=True)
        try:
            with DashboardServer.from_config(gcfg, tmp_path) as dash:
                browser.get(dash.url)
                _wait(lambda: browser.find_element(By.ID, "link").text == "live", 15, "the live feed")
                flight.start()

                def points() -> int:
                    return int(browser.find_element(By.ID, "trajectory").get_attribute("data-points") or 0)

                first = _wait(lambda: points() >= 5 and points(), 20, "a trajectory on the map")
                _wait(lambda: points() > first + 10, 20, "the trajectory to grow")
                _wait(lambda: "anchor_created" in browser.find_element(By.ID, "events").text, 10, "an event")
                _wait(lambda: "pattern_stuck" in browser.find_element(By.ID, "events").text, 20,
                      "the mid-flight event")
                agent = browser.find_element(By.ID, "agent-table").text
                assert GOAL in agent and ("forward" in agent or "turn_left" in agent)
                assert "kiosk" in browser.find_element(By.ID, "detections").text
                assert "battery" in browser.find_element(By.ID, "battery-text").text
                assert "OFFBOARD" in browser.find_element(By.ID, "vehicle-table").text
                assert browser.find_elements(By.CSS_SELECTOR, "#anchors circle")
                shot = tmp_path / "dashboard.png"
                browser.save_screenshot(str(shot))
                assert shot.stat().st_size > 10_000
                if os.environ.get("AERIE_DASHBOARD_SCREENSHOT"):
                    shutil.copyfile(shot, os.environ["AERIE_DASHBOARD_SCREENSHOT"])

                flight.join(30)
                assert not flight.is_alive()
                _wait(lambda: "mission_end" in browser.find_element(By.ID, "events").text, 15, "the end of the flight")
                live_points = points()
                assert live_points == STEPS

                # Replay the flight from the flight log: the whole path, then the start of it.
                source = Select(browser.find_element(By.ID, "source"))
                _wait(lambda: len(source.options) > 1 and "(open)" not in source.options[1].text, 15,
                      "the flight in the flight list")
                source.select_by_index(1)
                _wait(lambda: browser.find_element(By.TAG_NAME, "body").get_attribute("data-source") != "live"
                      and points() == STEPS, 15, "the replayed flight")
                assert browser.find_element(By.ID, "replay").is_displayed()
                browser.execute_script("const s = document.getElementById('scrub'); s.value = 100;"
                                       "s.dispatchEvent(new Event('input'));")
                _wait(lambda: 0 < points() < STEPS // 4, 10, "the replay scrubbed to its start")
        finally:
            stop.set()
            if flight.is_alive():
                flight.join(30)
            station.stop()
            ground.join(10)
    assert not ground.is_alive()
