"""Fault 19.17 (dashboard side): out-of-range ids, a vehicle's state shown as of when it was true,
and live viewers that are bounded and freed.

Real parts: a real SQLite flight log, the dashboard served by uvicorn on a real loopback socket,
and real HTTP clients (raw TCP sockets) that connect to the live stream and hang up.
"""

from __future__ import annotations

import http.client
import json
import socket
from pathlib import Path

import pytest

from contract.envelope import decode, encode
from contract.messages import Event, FlightEnd, FlightStart, MapImage, State
from ground_station.dashboard.app import DashboardContext
from ground_station.dashboard.server import DashboardServer
from ground_station.flight_log import FlightLog
from tests.telemetry.linkkit import wait_until

STREAM = "00000000000000aa"   # the one journal stream these hand-made envelopes come from


def _store(db: Path, *frames: bytes) -> None:
    """Store as the ingest does: the envelopes, then the vehicle's cursor."""
    with FlightLog.open(db) as fl:
        envs = [decode(f, max_bytes=1 << 22) for f in frames]
        fl.store(list(zip(envs, frames)))
        fl.advance("u", STREAM, seen=max(e.seq for e in envs))


def _get(dash: DashboardServer, path: str) -> tuple[int, bytes]:
    host, port = dash.url.split("//", 1)[1].strip("/").rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        conn.request("GET", path)
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


@pytest.fixture()
def db(tmp_path: Path) -> Path:
    path = tmp_path / "fl.sqlite"
    _store(path, encode("u", 1, "flight_start", FlightStart(mission="m").encode(), t_ns=1, stream=STREAM),
           encode("u", 2, "map", MapImage(b"\x89PNG\r\n\x1a\n-not-really", step=1).encode(), t_ns=2, stream=STREAM))
    return path


def test_out_of_range_or_malformed_ids_are_not_found_never_a_server_error(db: Path) -> None:
    with DashboardServer(DashboardContext(db_path=db), port=0) as dash:
        assert _get(dash, "/api/map/u/2.png") == (200, b"\x89PNG\r\n\x1a\n-not-really")
        for path in (f"/api/map/u/{2 ** 64}.png", f"/api/map/u/{2 ** 63}.png", f"/api/map/u/{10 ** 40}.png",
                     f"/api/map/u/{2 ** 63 - 1}.png", "/api/map/u/-1.png", "/api/map/u/abc.png", "/api/map/u/1.5.png",
                     "/api/map/u/1.png", "/api/map/nobody/2.png", f"/api/flights/u/{2 ** 64}",
                     f"/api/flights/u/{2 ** 63}", "/api/flights/u/x", "/api/flights/u/-3"):
            status, _ = _get(dash, path)
            assert status in (400, 404), (path, status)
        assert _get(dash, "/api/flights/u/1")[0] == 200   # and the server still serves


def test_vehicle_state_is_shown_as_of_its_last_message_with_its_age(db: Path) -> None:
    _store(db, encode("u", 3, "state", State(armed=True, in_air=True, flight_mode="HOLD", battery_percent=80.0,
                                              lat=60.0, lon=24.0, rel_alt_m=float("nan")).encode(), t_ns=3, stream=STREAM))
    _store(db, encode("u", 4, "event", Event.of("landed", {"reason": "mission done"}).encode(), t_ns=4, stream=STREAM),
           encode("u", 5, "flight_end", FlightEnd(reason="landed").encode(), t_ns=5, stream=STREAM))
    with DashboardServer(DashboardContext(db_path=db), port=0) as dash:
        status, body = _get(dash, "/api/vehicles")
        assert status == 200
        v = json.loads(body)["u"]
    # The last state said armed and in the air; it is given as what it was, with when, and what came after it.
    assert v["state"]["seq"] == 3 and v["state"]["payload"]["armed"] is True
    assert v["state"]["payload"]["rel_alt_m"] is None                  # NaN is not JSON
    assert v["last_message"]["seq"] == 5 and v["last_message"]["type"] == "flight_end"
    assert 0 <= v["last_message"]["age_s"] <= v["state"]["age_s"]
    assert v["messages"] == 5 and v["events"] == 1


def _open_live(port: int) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.sendall(b"GET /api/live HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
    return s


def _read_until(s: socket.socket, marker: bytes) -> bytes:
    data = b""
    while marker not in data:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def test_live_viewers_are_bounded_and_freed_when_they_hang_up(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A flight worth sending: every new viewer gets it whole as its first batch.
    _store(db, *[encode("u", seq, "state", {**State(armed=True, lat=60.0 + seq * 1e-6, lon=24.0).encode(),
                                            "pad": "x" * 400}, t_ns=seq, stream=STREAM) for seq in range(3, 3003)])
    limit, rounds = 10, 10
    ctx = DashboardContext(db_path=db, poll_interval_s=0.05, max_live_clients=limit)
    with DashboardServer(ctx, port=0) as dash:
        port = int(dash.url.rsplit(":", 1)[1].strip("/"))
        rss_before = _rss_mb()
        for _ in range(rounds):
            viewers = [_open_live(port) for _ in range(limit)]
            for s in viewers:
                head = _read_until(s, b'"seq":3002')       # the whole flight so far reached this viewer
                assert head.startswith(b"HTTP/1.1 200") and b'"seq":3002' in head
            assert wait_until(lambda: ctx.live_clients == limit, 60.0), ctx.live_clients
            one_too_many = _open_live(port)
            assert _read_until(one_too_many, b"\r\n\r\n").startswith(b"HTTP/1.1 503")
            one_too_many.close()
            for s in viewers:
                s.close()
            assert wait_until(lambda: ctx.live_clients == 0, 60.0), ctx.live_clients
        rss_after = _rss_mb()
        # Every slot came back: a new viewer is served again.
        s = _open_live(port)
        assert _read_until(s, b"retry:").startswith(b"HTTP/1.1 200")
        s.close()
        assert wait_until(lambda: ctx.live_clients == 0, 60.0)
    with capsys.disabled():   # a figure for the report, not a pass/fail bound
        print(f"\n[19.17] {limit * rounds} live viewers connected and hung up: test process RSS "
              f"{rss_before:.0f} MB -> {rss_after:.0f} MB")
