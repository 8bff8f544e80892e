"""The dashboard beyond loopback (issue 18.5): a real uvicorn server on a real non-loopback address
refuses every route without the token made by `aerie keys`, and serves them with it.
"""

from __future__ import annotations

import contextlib
import http.client
import io
import re
import socket
from pathlib import Path

import pytest
import yaml

from contract.access_token import TOKEN_HASH_FILE, AccessTokenError, load_token_hash
from contract.envelope import decode, encode
from contract.messages import FlightStart, MapImage, State
from ground_station import service
from ground_station.dashboard.auth import COOKIE, is_loopback
from ground_station.dashboard.server import DashboardAuthError, DashboardServer
from ground_station.flight_log import FlightLog
from ground_station.settings import GroundConfig
from onboard.telemetry import keys



STREAM = "00000000000000aa"   # the one journal stream these hand-made envelopes come from

def _non_loopback_address() -> tuple[str, str]:
    """(address to bind, address to connect to): this machine's outbound IPv4 address if it has
    one, else 0.0.0.0 (every interface, not loopback) reached through 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))   # a UDP connect sends nothing; it only picks the route
            addr = s.getsockname()[0]
        except OSError:
            addr = ""
    if addr and not is_loopback(addr):
        return addr, addr
    return "0.0.0.0", "127.0.0.1"


def _keys(tmp_path: Path) -> str:
    """Run `aerie keys generate` and take the token from what it prints (the only time it is shown)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert keys.main(["generate", str(tmp_path / "keys")]) == 0
    m = re.search(r"dashboard token \(shown only now[^)]*\): (\S+)", out.getvalue())
    assert m, out.getvalue()
    assert m.group(1) not in (tmp_path / "keys" / TOKEN_HASH_FILE).read_text()   # only its hash is kept
    return m.group(1)


def _request(host: str, port: int, path: str, headers: dict[str, str] | None = None,
             stream: bool = False) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection(host, port, timeout=30)
    try:
        conn.request("GET", path, headers=headers or {})
        r = conn.getresponse()
        body = r.read(6) if stream and r.status == 200 else r.read()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, body
    finally:
        conn.close()


def test_loopback_is_told_from_every_other_address() -> None:
    for host in ("127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost"):
        assert is_loopback(host), host
    for host in ("0.0.0.0", "", "::", "192.0.2.2", "10.0.0.1", "no-such-host.invalid"):
        assert not is_loopback(host), host
    bind, _ = _non_loopback_address()
    assert not is_loopback(bind)


def test_a_dashboard_beyond_loopback_without_a_token_refuses_to_start(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    bind, _ = _non_loopback_address()
    cfg = GroundConfig(db_path=str(tmp_path / "fl.sqlite"), dashboard_host=bind, dashboard_port=0,
                       dashboard_token_hash="keys/missing.token_sha256", curve=False, vehicles=[])
    with pytest.raises(DashboardAuthError, match="not a loopback address.*needs its token"):
        DashboardServer.from_config(cfg, tmp_path)
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "missing.token_sha256").write_text("not a digest\n")
    with pytest.raises(AccessTokenError):
        load_token_hash(tmp_path / "keys" / "missing.token_sha256")
    with pytest.raises(DashboardAuthError, match="not a SHA-256 digest"):
        DashboardServer.from_config(cfg, tmp_path)
    # The commands refuse at once with that message, before ingest or the dashboard start.
    path = tmp_path / "ground.yaml"
    path.write_text(yaml.safe_dump({"db_path": "fl.sqlite", "dashboard_host": bind, "dashboard_port": 0,
                                    "dashboard_token_hash": "keys/missing.token_sha256", "curve": False,
                                    "vehicles": [], "post_flight_enabled": False}))
    assert service.main(["--config", str(path), "--duration", "30"]) == 1
    assert service.main(["dashboard", "--config", str(path), "--duration", "30"]) == 1
    err = capsys.readouterr().err
    assert err.count("is not a loopback address, so the dashboard needs its token") == 2


def test_beyond_loopback_every_route_needs_the_token(tmp_path: Path) -> None:
    token = _keys(tmp_path)
    with FlightLog.open(tmp_path / "fl.sqlite") as fl:
        frames = [encode("u", 1, "flight_start", FlightStart(mission="m").encode(), t_ns=1, stream=STREAM),
                  encode("u", 2, "state", State(armed=True, lat=60.0, lon=24.0).encode(), t_ns=2, stream=STREAM),
                  encode("u", 3, "map", MapImage(b"\x89PNG\r\n\x1a\n-not-really", step=1).encode(), t_ns=3, stream=STREAM)]
        fl.store([(decode(f, max_bytes=1 << 20), f) for f in frames])
    bind, connect = _non_loopback_address()
    cfg = GroundConfig(db_path="fl.sqlite", dashboard_host=bind, dashboard_port=0,
                       dashboard_token_hash=f"keys/{TOKEN_HASH_FILE}", curve=False, vehicles=[])
    routes = ["/", "/static/app.js", "/favicon.ico", "/api/vehicles", "/api/flights", "/api/flights/u/1",
              "/api/map/u/3.png", "/api/world", "/api/live"]
    with DashboardServer.from_config(cfg, tmp_path) as dash:
        port = int(dash.url.rsplit(":", 1)[1].strip("/"))
        for path in routes:
            assert _request(connect, port, path)[0] == 401, path
            assert _request(connect, port, path, {"Authorization": "Bearer " + token[:-1] + "x"})[0] == 401, path
            assert _request(connect, port, path, {"Cookie": f"{COOKIE}=wrong"})[0] == 401, path
            status, _, body = _request(connect, port, path, {"Authorization": f"Bearer {token}"}, stream=True)
            assert status in (200, 204), (path, status)
        assert _request(connect, port, "/api/map/u/3.png", {"Authorization": f"Bearer {token}"})[2] == \
            b"\x89PNG\r\n\x1a\n-not-really"
        # The login link sets the cookie and sends the browser to the same page without the token.
        assert _request(connect, port, "/?token=wrong")[0] == 401
        status, headers, _ = _request(connect, port, f"/?token={token}&x=1")
        assert status == 303 and headers["location"] == "/?x=1"
        cookie = headers["set-cookie"]
        assert cookie.startswith(f"{COOKIE}={token};") and "HttpOnly" in cookie and "SameSite=strict" in cookie
        for path in routes:
            status, _, body = _request(connect, port, path, {"Cookie": f"{COOKIE}={token}"}, stream=True)
            assert status in (200, 204), (path, status)
            if path == "/api/live":
                assert body == b"retry:"
