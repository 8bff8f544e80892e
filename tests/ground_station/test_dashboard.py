"""The dashboard's server side: items, the flight-log tail, the HTTP/SSE routes and `aerie ground` wiring."""

from __future__ import annotations

import dataclasses
import gzip
import json
import math
import socket
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from ground_station import service
from ground_station.dashboard.app import DashboardContext
from ground_station.dashboard.city_layer import city_from_map, empty_world, map_loader
from ground_station.dashboard.items import ItemMaker, json_safe, local_position
from ground_station.dashboard.log_reader import Tail, open_reader
from ground_station.dashboard.server import DashboardServer
from ground_station.flight_log import FlightLog
from ground_station.ingest import GroundStation
from ground_station.settings import GroundConfig, VehicleLinkConfig
from tests.telemetry.linkkit import log_place
from contract.envelope import decode, encode
from common.geodesy import GeoPoint
from contract.messages import Event, FlightStart, MapImage, PayloadError, State, VlmAnswerReport
from onboard.telemetry.publisher import TelemetryPublisher
from onboard.telemetry.settings import TelemetryConfig

STREAM = "5e1f00000000a11e"  # the vehicle journal's stream id these envelopes carry


def _env(seq: int, msg_type: str = "state", payload: object = None, vid: str = "u"):
    frame = encode(vid, seq, msg_type, payload if payload is not None else {"seq": seq}, t_ns=seq,
                   stream=STREAM)
    return decode(frame, max_bytes=1 << 20), frame


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, b""


def test_items_are_json_safe_and_carry_local_positions() -> None:
    assert json_safe({"a": float("nan"), "b": b"\x89PNG", "c": (1, float("inf")), 3: True}) == \
        {"a": None, "b": {"bytes": 4}, "c": [1, None], "3": True}
    assert local_position(State(north_m=3.0, east_m=-4.0), None) == [-4.0, 3.0]
    # Without a local position, lat/lon around the origin (one millidegree north ~ 111 m).
    e, n = local_position(State(lat=60.001, lon=24.0), (60.0, 24.0))
    assert e == 0.0 and math.isclose(n, 111.19, abs_tol=0.1)
    maker = ItemMaker()
    first = maker.item({"seq": 1, "t_ns": 1, "type": "state", "vehicle_id": "u", "payload": State(lat=60.0, lon=24.0).encode()})
    later = maker.item({"seq": 2, "t_ns": 2, "type": "state", "vehicle_id": "u", "payload": State(lat=60.0, lon=24.002).encode()})
    assert first["pos"] == [0.0, 0.0] and math.isclose(later["pos"][0], 111.19 * 2 * math.cos(math.radians(60)), abs_tol=0.1)
    json.dumps([first, later], allow_nan=False)


def test_tail_delivers_late_holes_once_and_in_order(tmp_path: Path, log_target: str | Path) -> None:
    path = log_target
    with FlightLog.open(path) as writer:
        writer.store([_env(1, "flight_start", {}), _env(2), _env(5)])
        writer.advance("u", STREAM, seen=5)
        reader = open_reader(path)
        assert reader is not None
        tail = Tail("u", 0)
        assert [m["seq"] for m in tail.read(reader)] == [1, 2, 5]
        assert tail.read(reader) == []
        writer.store([_env(4), _env(3), _env(6)])    # the replayed hole and a new message
        writer.advance("u", STREAM, seen=6)
        assert [m["seq"] for m in tail.read(reader)] == [3, 4, 6]
        assert tail.low == 6 and tail.delivered_above == set()
        # A hole the vehicle can no longer fill is skipped by the log's cursor, not re-read forever.
        writer.store([_env(9)])
        writer.advance("u", STREAM, seen=9, first_available=9)
        assert [m["seq"] for m in tail.read(reader)] == [9]
        assert tail.low == 9
        reader.close()
    assert open_reader(tmp_path / "absent.sqlite") is None


@pytest.fixture
def link(tmp_path: Path, log_target: str | Path):
    """A publisher and a ground station (with dashboard on a free port) on loopback, no CURVE."""
    tcfg = TelemetryConfig(pub_endpoint="tcp://127.0.0.1:0", replay_endpoint="tcp://127.0.0.1:0",
                           journal_path=str(tmp_path / "journal.sqlite"), state_rate_hz=0.0, map_min_interval_s=0.0,
                           curve=False)
    with TelemetryPublisher(tcfg, "v1") as pub:
        gcfg = dataclasses.replace(GroundConfig(), **log_place(log_target), curve=False,
                                   vehicles=[VehicleLinkConfig("v1", pub.pub_endpoint, pub.replay_endpoint)],
                                   status_interval_s=0.2, ack_interval_s=0.1, stats_interval_s=0.0,
                                   dashboard_port=0, dashboard_poll_interval_s=0.05)
        station = GroundStation(gcfg)
        thread = threading.Thread(target=station.run, kwargs={"duration_s": 60.0}, daemon=True)
        thread.start()
        assert station.started.wait(10)
        dash = DashboardServer.from_config(gcfg, tmp_path)
        dash.start()
        try:
            yield pub, dash
        finally:
            dash.stop()
            station.stop()
            thread.join(10)
            assert not thread.is_alive()


def _sse_items(url: str, want: Any, timeout: float = 15.0) -> list[dict[str, Any]]:
    """Read the live stream until ``want(items)`` holds; returns the items seen."""
    items: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    with urllib.request.urlopen(url + "api/live", timeout=timeout) as r:
        event = None
        while time.monotonic() < deadline:
            line = r.readline().decode().rstrip("\n")
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: ") and event == "items":
                items.extend(json.loads(line[6:])["items"])
                if want(items):
                    return items
    raise AssertionError(f"live stream did not deliver the expected items: {[i['type'] for i in items]}")


def _max_seq(url: str) -> int:
    flights = json.loads(_get(url + "api/flights")[1])
    if len(flights) < 2:
        return -1
    return max(i["seq"] for i in json.loads(_get(url + f"api/flights/v1/{flights[-1]['start_seq']}")[1])["items"])


def test_routes_serve_live_items_flights_replay_and_maps(link: Any) -> None:
    pub, dash = link
    url = dash.url
    status, body = _get(url)
    assert status == 200 and b"Aerie ground station" in body
    assert _get(url + "static/app.js")[0] == 200
    pub.flight_start({"mission": "t"})
    for i in range(5):
        pub.publish("state", State(north_m=float(i), east_m=2.0 * i, battery_percent=90.0, yaw_deg=float("nan")))
    pub.event("anchor_created", {"anchor_id": 0})
    map_seq = pub.publish("map", MapImage(b"\x89PNG\r\n\x1a\n-not-really", step=1))
    items = _sse_items(url, lambda its: any(i["type"] == "map" for i in its))
    states = [i for i in items if i["type"] == "state"]
    assert [s["pos"] for s in states] == [[2.0 * i, float(i)] for i in range(5)]
    assert states[0]["payload"]["yaw_deg"] is None
    assert [i["seq"] for i in items] == sorted(i["seq"] for i in items)
    assert _get(url + f"api/map/v1/{map_seq}.png") == (200, b"\x89PNG\r\n\x1a\n-not-really")
    assert _get(url + "api/map/v1/1.png")[0] == 404
    end = pub.flight_end({"reason": "landed"})
    pub.flight_start({"mission": "second"})
    second_state = pub.publish("state", State(north_m=0.0, east_m=0.0))
    # Once the second flight is in the log, a new stream starts at it (the latest flight).
    deadline = time.monotonic() + 10.0
    while _max_seq(url) < second_state:
        assert time.monotonic() < deadline, "the second flight never reached the flight log"
        time.sleep(0.05)
    items = _sse_items(url, lambda its: any(i["type"] == "state" for i in its))
    assert items[0]["type"] == "flight_start" and items[0]["payload"] == FlightStart(mission="second").body()
    status, body = _get(url + "api/flights")
    flights = json.loads(body)
    assert [(f["start_seq"], f["end_seq"], f["info"]["mission"]) for f in flights] == [(1, end, "t"),
                                                                                          (end + 1, None, "second")]
    status, body = _get(url + "api/flights/v1/1")
    assert json.loads(body)["analysis"] is None          # no agent steps in this flight
    replay = json.loads(body)["items"]
    assert [i["type"] for i in replay] == ["flight_start"] + ["state"] * 5 + ["event", "map", "flight_end"]
    assert replay[-2]["payload"]["png"] == {"bytes": 19}
    assert _get(url + "api/flights/v1/999")[0] == 404
    # The second flight never ended; a third starts: the second's replay stops before it.
    pub.flight_start({"mission": "third"})
    third = pub.publish("state", State(north_m=1.0, east_m=1.0))
    _sse_items(url, lambda its: any(i["seq"] == third for i in its))
    second = json.loads(_get(url + f"api/flights/v1/{end + 1}")[1])["items"]
    assert [i["type"] for i in second] == ["flight_start", "state"]
    assert json.loads(_get(url + "api/vehicles")[1])["v1"]["events"] == 1
    assert json.loads(_get(url + "api/world")[1]) == empty_world()


def test_vlm_answers_reach_the_vehicle_api_typed_counted_and_latest(link: Any) -> None:
    """The supervisor's ``vlm_answer`` events (built as it builds them, from `VlmAnswer.to_json`) go through a real
    publisher and ground: /api/vehicles counts the latest flight's answers and shows the latest; a detail that
    does not fit the schema is counted as refused, never shown; a new flight starts the count again."""
    from onboard.inference.vlm_asker import VlmAnswer

    pub, dash = link
    url = dash.url
    pub.flight_start({"mission": "t019"})
    said = [VlmAnswer("caption", 0, 1.25, "a street with a red kiosk"),
            VlmAnswer("confirm", 2, 0.5, '{"shows_goal": fals', used_fallback=True, errors=("not JSON",)),
            VlmAnswer("navigate", 3, 2.0, '{"action": "move", "waypoint": 7}')]
    for step, answer in enumerate(said, start=1):
        pub.event("vlm_answer", VlmAnswerReport.read({**answer.to_json(), "delivered_step": step}).body())
    pub.event("vlm_answer", {"kind": "caption", "step": -1, "seconds": 0.1})   # a vehicle's bug: refused, counted
    last = pub.event("anchor_created", {"anchor_id": 0})

    def vlm() -> Any:
        v1 = json.loads(_get(url + "api/vehicles")[1]).get("v1") or {}
        return v1.get("vlm") if (v1.get("last_message") or {}).get("seq") == last else None

    deadline = time.monotonic() + 10.0
    while (got := vlm()) is None:
        assert time.monotonic() < deadline, "the answers never reached the flight log"
        time.sleep(0.05)
    assert got == {"count": 3, "fallbacks": 1, "refused": 1,
                   "latest": {"kind": "navigate", "step": 3, "seconds": 2.0, "text": '{"action": "move", "waypoint": 7}',
                              "used_fallback": False, "delivered_step": 3}}
    # The live feed carries them as events too (the page counts them from there).
    items = _sse_items(url, lambda its: any(i["seq"] == last for i in its))
    details = [i["payload"]["detail"] for i in items if i["type"] == "event" and i["payload"]["kind"] == "vlm_answer"]
    assert [d["kind"] for d in details] == ["caption", "confirm", "navigate", "caption"]
    assert details[1]["errors"] == ["not JSON"] and details[1]["used_fallback"] is True
    pub.flight_end({"reason": "landed"})
    pub.flight_start({"mission": "second"})
    second = pub.publish("state", State(north_m=0.0, east_m=0.0))
    deadline = time.monotonic() + 10.0
    while (v1 := json.loads(_get(url + "api/vehicles")[1])["v1"])["last_message"]["seq"] != second:
        assert time.monotonic() < deadline, "the second flight never reached the flight log"
        time.sleep(0.05)
    assert v1["vlm"] is None


def test_a_vlm_answer_detail_is_read_typed_or_refused_by_field() -> None:
    answer = VlmAnswerReport.read({"kind": "search", "step": 4, "seconds": 0.75, "text": "x" * 500,
                                   "used_fallback": False, "errors": ["e" * 300], "delivered_step": 5})
    assert len(answer.text) == 200 and answer.errors == ("e" * 160,)
    assert VlmAnswerReport.from_event(Event.of("vlm_answer", answer.body())) == answer
    for detail, field in (({"step": 1, "seconds": 1.0}, "kind"), ({"kind": "caption", "seconds": 1.0}, "step"),
                          ({"kind": "caption", "step": 1, "seconds": -1.0}, "seconds"),
                          ({"kind": "caption", "step": 1, "seconds": float("nan")}, "seconds"),
                          ({"kind": "caption", "step": 1, "seconds": 1.0, "used_fallback": "no"}, "used_fallback")):
        with pytest.raises(PayloadError) as err:
            VlmAnswerReport.read(detail)
        assert err.value.field == "detail." + field
    with pytest.raises(PayloadError):
        VlmAnswerReport.from_event(Event.of("anchor_created", answer.body()))


def test_world_footprints_come_from_the_loader_once(tmp_path: Path) -> None:
    calls = []
    world = {"origin": [60.0, 24.0], "buildings": [[[0.0, 0.0], [10.0, 0.0], [10.0, 10.0]]]}

    def load() -> dict:
        calls.append(1)
        return world

    with DashboardServer(DashboardContext(db_path=tmp_path / "none.sqlite", load_world=load), port=0) as dash:
        for _ in range(2):
            assert json.loads(_get(dash.url + "api/world")[1]) == world
        assert json.loads(_get(dash.url + "api/flights")[1]) == []    # no flight log yet
    assert calls == [1]


def test_the_city_comes_from_the_onboard_map_file_and_places_every_vehicle_on_it(tmp_path: Path) -> None:
    from common.geodesy import geo_from_ned
    from onboard.map.map_file import save_map
    from tests.map.tiny_map import tiny_map

    m = tiny_map()
    path = save_map(m, tmp_path / "tiny.aeriemap")
    city = city_from_map(path)
    assert city["origin"] == [60.17, 24.94] and city["name"] == "tiny"
    assert city["streets"] == [[[0.0, 0.0], [50.0, 0.0]], [[50.0, 0.0], [50.0, 50.0]]]
    assert sorted(city["buildings"]) == sorted([[[10.0, 10.0], [30.0, 10.0], [30.0, 30.0], [10.0, 30.0]],
                                                [[70.0, 70.0], [90.0, 70.0], [90.0, 90.0], [70.0, 90.0]]])
    assert city["landmarks"] == [{"name": "Tower", "pos": [20.0, 20.0]}]
    # Bounded: a radius and caps keep what is nearest the origin.
    near = city_from_map(path, radius_m=60.0, max_streets=1)
    assert near["buildings"] == [city["buildings"][0]] and near["streets"] == [[[0.0, 0.0], [50.0, 0.0]]]
    json.dumps(city, allow_nan=False)

    # Two vehicles with homes 100 m east and 40 m north of the map's origin: their items carry the shift.
    frame = (60.17, 24.94)
    for east, north in ((100.0, 0.0), (0.0, 40.0)):
        lat, lon = geo_from_ned(GeoPoint(*frame), north, east)
        maker = ItemMaker(frame)
        it = maker.item({"seq": 1, "t_ns": 1, "type": "state", "vehicle_id": "u",
                         "payload": State(north_m=1.0, east_m=2.0, home_lat=lat, home_lon=lon).encode()})
        assert it["pos"] == [2.0, 1.0]
        assert it["shift"][0] == pytest.approx(east, abs=0.01) and it["shift"][1] == pytest.approx(north, abs=0.01)
    # No map: no shift (each vehicle in its own frame, as before).
    assert "shift" not in ItemMaker().item({"seq": 1, "t_ns": 1, "type": "state", "vehicle_id": "u",
                                            "payload": State(home_lat=60.0, home_lon=24.0).encode()})

    # Served once, from the configured file; a file that is no map leaves the page without a city.
    bad = tmp_path / "bad.aeriemap"
    bad.write_bytes(b"not a map")
    for loader, want in ((map_loader(path), city), (map_loader(bad), empty_world())):
        with DashboardServer(DashboardContext(db_path=tmp_path / "none.sqlite", load_world=loader), port=0) as dash:
            assert json.loads(_get(dash.url + "api/world")[1]) == json.loads(json.dumps(want))
            # Compressed for a browser, and not sent again to one that has it.
            req = urllib.request.Request(dash.url + "api/world", headers={"Accept-Encoding": "gzip"})
            with urllib.request.urlopen(req, timeout=10) as r:
                assert r.headers["Content-Encoding"] == "gzip"
                assert json.loads(gzip.decompress(r.read())) == json.loads(json.dumps(want))
                etag = r.headers["ETag"]
            try:
                urllib.request.urlopen(urllib.request.Request(dash.url + "api/world", headers={"If-None-Match": etag}),
                                       timeout=10)
                raise AssertionError("the unchanged world was sent again")
            except urllib.error.HTTPError as exc:
                assert exc.code == 304


def _ground_yaml(tmp_path: Path, port: int) -> Path:
    path = tmp_path / "ground.yaml"
    path.write_text(f"db_path: log.sqlite\ncurve: false\ndashboard_port: {port}\nvehicles:\n  - vehicle_id: a\n"
                    "    pub_endpoint: tcp://127.0.0.1:1\n    replay_endpoint: tcp://127.0.0.1:2\n")
    return path


def test_aerie_ground_starts_the_dashboard_and_prints_its_url(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    path = _ground_yaml(tmp_path, 0)
    assert service.main(["--config", str(path), "--duration", "0.5", "--log-level", "WARNING"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["counters"] == {"a": {}}
    assert "aerie ground: dashboard at http://127.0.0.1:" in err
    assert service.main(["dashboard", "--config", str(path), "--duration", "0.3"]) == 0
    assert "aerie ground dashboard: dashboard at http://127.0.0.1:" in capsys.readouterr().err


def test_a_taken_port_is_reported_and_ingest_still_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        path = _ground_yaml(tmp_path, taken.getsockname()[1])
        assert service.main(["--config", str(path), "--duration", "0.3", "--log-level", "WARNING"]) == 0
        out, err = capsys.readouterr()
        assert json.loads(out)["counters"] == {"a": {}} and "dashboard cannot listen" in err
        assert service.main(["dashboard", "--config", str(path), "--duration", "0.1"]) == 1
