"""The dashboard in headless Chromium shows the VLM's answers on the followed vehicle's panel.

The flight log holds what the supervisor sends (``vlm_answer`` events with `VlmAnswer.to_json` as their
typed detail, :class:`contract.messages.VlmAnswerReport`); the page counts them and says the latest.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from contract.envelope import decode, encode
from contract.messages import Event, FlightStart, State, VlmAnswerReport
from ground_station.dashboard.server import DashboardServer
from ground_station.flight_log import FlightLog
from ground_station.settings import GroundConfig
from onboard.inference.vlm_asker import VlmAnswer
from tests.ground_station.test_browser_dashboard import CHROMIUM, STREAM, _wait, chromium

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(),
                                reason="needs /usr/bin/chromium (apt-get install -y chromium chromium-driver)")


def _answer(seq: int, answer: VlmAnswer, delivered: int) -> bytes:
    detail = VlmAnswerReport.read({**answer.to_json(), "delivered_step": delivered}).body()
    return encode("u", seq, "event", Event.of("vlm_answer", detail).encode(), t_ns=seq * 1_000_000_000, stream=STREAM)


def test_the_vehicle_panel_shows_the_latest_vlm_answer_and_the_count(tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    frames = [encode("u", 1, "flight_start", FlightStart(mission="t019").encode(), t_ns=1_000_000_000, stream=STREAM),
              encode("u", 2, "state", State(armed=True, in_air=True, flight_mode="OFFBOARD", lat=60.0, lon=24.0).encode(),
                     t_ns=2_000_000_000, stream=STREAM),
              _answer(3, VlmAnswer("caption", 0, 1.4, "a street with a red kiosk"), 1),
              _answer(4, VlmAnswer("confirm", 1, 0.5, "{", used_fallback=True, errors=("not JSON",)), 2),
              _answer(5, VlmAnswer("search", 2, 3.5, '{"action": "move", "waypoint": 12}'), 3)]
    with FlightLog.open(tmp_path / "fl.sqlite") as fl:
        fl.store([(decode(f, max_bytes=1 << 20), f) for f in frames])
        fl.advance("u", STREAM, seen=len(frames))
    gcfg = GroundConfig(db_path="fl.sqlite", curve=False, vehicles=[], dashboard_port=0, dashboard_poll_interval_s=0.1)
    with DashboardServer.from_config(gcfg, tmp_path) as dash, chromium(tmp_path, "1600,1000") as browser:
        browser.get(dash.url)
        table = _wait(lambda: "VLM latest" in (t := browser.find_element(By.ID, "vehicle-table").text) and t, 15,
                      "the VLM rows of the vehicle panel")
        assert "VLM answers 3 (1 fell back)" in table
        assert 'search · step 2 · 3.5 s: {"action": "move", "waypoint": 12}' in table
        events = browser.find_element(By.ID, "events").text
        assert "confirm · step 1 · 0.5 s · fallback: {" in events and "caption · step 0 · 1.4 s: a street" in events
        errors = [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
        assert not errors, f"the page logged errors: {errors}"
