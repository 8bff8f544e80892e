"""Issue 19.4: a 10 MB subscription message to the vehicle's PUB grew `aerie fly` from 290 MB to
about 1.4 GB: no vehicle socket had a size limit. Now every ZeroMQ socket is made by
`contract.bounded_socket` with its own limit; the attack drops the attacker, not the vehicle."""

from __future__ import annotations

import ast
from pathlib import Path


from ground_station.flight_log import FlightLog
from tests.faults.wirekit import rss_bytes, vehicle_child, zmtp_subscribe
from tests.telemetry.linkkit import REPO, GroundThread, wait_until
from ground_station.settings import GroundConfig, VehicleLinkConfig

PACKAGES = ("contract", "onboard", "ground_station", "sim", "firmware_bridge", "aerie")


def zmq_socket_calls(path: Path) -> list[int]:
    """Lines that make a ZeroMQ socket: any ``<x>.socket(...)`` but the stdlib's ``socket.socket``,
    and ``zmq.Socket(...)``; whatever the kind argument is (a constant or a variable)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    lines = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        owner = node.func.value
        if node.func.attr == "socket" and not (isinstance(owner, ast.Name) and owner.id == "socket"):
            lines.append(node.lineno)
        elif node.func.attr == "Socket" and isinstance(owner, ast.Name) and owner.id == "zmq":
            lines.append(node.lineno)
    return lines


def test_no_zmq_socket_bypasses_bounded_socket(tmp_path: Path) -> None:
    helper = REPO / "contract" / "bounded_socket.py"
    offenders = {}
    for pkg in PACKAGES:
        for path in (REPO / pkg).rglob("*.py") if (REPO / pkg).is_dir() else []:
            if path != helper and (lines := zmq_socket_calls(path)):
                offenders[str(path.relative_to(REPO))] = lines
    assert offenders == {}
    assert zmq_socket_calls(helper), "the checker no longer recognises a socket creation"
    # The checker itself: it sees the pattern it is meant to forbid, and not stdlib sockets.
    probe = tmp_path / "probe.py"
    probe.write_text("import socket, zmq\n"
                     "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                     "kind = zmq.PUB\n"
                     "p = ctx.socket(kind)\n"
                     "q = zmq.Socket(ctx, zmq.SUB)\n", encoding="utf-8")
    assert zmq_socket_calls(probe) == [4, 5]


def test_a_10_mb_subscription_drops_the_attacker_not_the_vehicle(tmp_path: Path) -> None:
    child, pub_ep, replay_ep, _ = vehicle_child(tmp_path, "idle")
    with child:
        child.read_until("flushed ")
        before = rss_bytes(child.proc.pid)
        # Each attacker is dropped unread (a socket timeout here would mean the vehicle kept it).
        ends = [zmtp_subscribe(pub_ep, b"x" * (10 << 20)) for _ in range(3)]
        assert child.alive()
        grown = rss_bytes(child.proc.pid) - before
        print(f"vehicle RSS {before / 2**20:.0f} MiB, grew {grown / 2**20:.1f} MiB under 3 attacks ({ends})")
        assert grown < 64 << 20
        # The vehicle still serves a real ground station, replay included.
        link = VehicleLinkConfig(vehicle_id="uav-x", pub_endpoint=pub_ep, replay_endpoint=replay_ep)
        gcfg = GroundConfig(db_path=str(tmp_path / "fl.sqlite"), vehicles=[link], curve=False,
                            dashboard_enabled=False, post_flight_enabled=False, stats_interval_s=0.0,
                            status_interval_s=0.2, replay_timeout_s=0.5)
        with GroundThread(gcfg) as ground:
            last = int(child.read_until("flushed ").split()[1])
            assert wait_until(lambda: ground.station.cursors()["uav-x"] >= last, 60)
        assert child.alive()
    with FlightLog.open(gcfg.db_path) as fl:
        assert fl.seqs("uav-x")[:last] == list(range(1, last + 1))
