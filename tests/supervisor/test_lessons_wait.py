"""After landing: the supervisor's wait for lessons, alone and in a fleet, and whose lesson an import keeps.

A real sync server importing with the supervisor's own ``_import_lessons`` into a real
memory file; the ground's side is ``push_bundle`` over loopback. A lone vehicle stops
waiting at its first bundle; a fleet member waits all of ``lessons_wait_s`` (the ground
delivers every member's lessons, so the first one in need not be this flight's).
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import time
from pathlib import Path

import pytest

from contract.records import STRATEGIC_PLAN
from ground_station.memory_sync import push_bundle
from ground_station.settings import GroundConfig, VehicleLinkConfig
from onboard.config import AerieConfig
from onboard.supervisor import startup
from onboard.supervisor.supervisor import Supervisor
from onboard.telemetry.memory_sync import MemorySyncServer
from tests.ground_station.test_lesson_courier import make_bundle
from tests.telemetry.linkkit import vehicle_cfg, wait_until


@pytest.fixture(scope="module")
def embedder():
    from onboard.memory.embedder import MiniLMEmbedder

    return MiniLMEmbedder.load()


def _wait_with_a_delivery(tmp_path: Path, embedder, *, fleet: bool, wait_s: float) -> tuple[int, float, Supervisor]:
    """Run the post-landing wait while the ground pushes one bundle of another vehicle's flight."""
    from onboard.memory.experience_store import ExperienceStore

    cfg = AerieConfig(data_dir=str(tmp_path / "vehicle"))
    cfg = dataclasses.replace(cfg, supervisor=dataclasses.replace(cfg.supervisor, lessons_wait_s=wait_s),
                              fleet=dataclasses.replace(cfg.fleet, enabled=fleet))
    lines: list[str] = []
    sup = Supervisor(cfg, on_progress=lines.append)
    sup.embedder = embedder
    bundle = make_bundle(tmp_path / "post_flight", tmp_path / "ground_memory.sqlite", embedder, "aerie-7")
    server = MemorySyncServer(dataclasses.replace(vehicle_cfg(tmp_path, curve=False), sync_endpoint="tcp://127.0.0.1:0"),
                              data_dir=tmp_path / "vehicle", import_fn=lambda bundle: startup.import_lessons(sup, bundle)).start()
    sup.sync_server = server
    link = VehicleLinkConfig(vehicle_id="aerie-1", sync_endpoint=server.endpoint, server_public_key="")
    ground = GroundConfig(vehicles=[link], curve=False, sync_timeout_s=60.0)
    acks: list[dict] = []

    def deliver() -> None:   # once the supervisor is waiting, as the courier would
        if wait_until(lambda: any("waiting" in ln for ln in lines), 60.0):
            acks.append(push_bundle(bundle, link, ground))

    try:
        sup.store = ExperienceStore.open(Path(cfg.data_dir) / cfg.memory.path, embedder, cfg.memory)
        pusher = threading.Thread(target=deliver, daemon=True)
        pusher.start()
        t0 = time.monotonic()
        got = asyncio.run(sup._wait_for_lessons())
        took = time.monotonic() - t0
        pusher.join(60.0)
        assert acks and acks[0].added == 3
        return got, took, sup
    finally:
        server.close()
        if sup.store is not None:
            sup.store.close()


def test_a_lone_vehicle_stops_waiting_at_its_first_bundle_and_keeps_its_origin(tmp_path: Path, embedder) -> None:
    from onboard.memory.experience_store import ExperienceStore

    got, took, sup = _wait_with_a_delivery(tmp_path, embedder, fleet=False, wait_s=120.0)
    assert got == 1 and took < 100.0
    with ExperienceStore.open(Path(sup.cfg.data_dir) / sup.cfg.memory.path, embedder, sup.cfg.memory) as store:
        sources = {item.source for item in store.iter_experiences(STRATEGIC_PLAN)}
    assert sources == {"bundle:aerie-7"}     # whose flight the lesson came from, not just "the ground"


def test_a_fleet_member_waits_all_of_lessons_wait_s(tmp_path: Path, embedder) -> None:
    got, took, _ = _wait_with_a_delivery(tmp_path, embedder, fleet=True, wait_s=10.0)
    assert got == 1 and took >= 10.0     # the bundle came early in the wait; it did not end it


def test_a_stop_ends_the_wait_for_lessons(tmp_path: Path) -> None:
    """SIGTERM after landing: a fleet member's whole-length wait ends at the stop, not at lessons_wait_s."""
    cfg = AerieConfig(data_dir=str(tmp_path / "vehicle"))
    cfg = dataclasses.replace(cfg, supervisor=dataclasses.replace(cfg.supervisor, lessons_wait_s=3600.0),
                              fleet=dataclasses.replace(cfg.fleet, enabled=True))
    lines: list[str] = []
    sup = Supervisor(cfg, on_progress=lines.append)
    server = MemorySyncServer(dataclasses.replace(vehicle_cfg(tmp_path, curve=False), sync_endpoint="tcp://127.0.0.1:0"),
                              data_dir=tmp_path / "vehicle", import_fn=lambda bundle: None).start()
    sup.sync_server = server

    async def wait_then_stop() -> int:
        stop = asyncio.Event()
        waiting = asyncio.ensure_future(sup._wait_for_lessons(stop))
        while not any("waiting" in ln for ln in lines):
            await asyncio.sleep(0.01)
        stop.set()
        return await asyncio.wait_for(waiting, 60.0)  # a guard against a hang, far below the hour's wait

    try:
        assert asyncio.run(wait_then_stop()) == 0
        assert "stopped while waiting for lessons" in lines and lines[-1] == "no lessons arrived"
    finally:
        server.close()
