"""Shared set-up of supervisor flights in tests: the Helsinki world once, a rig per test, a ground station."""

from __future__ import annotations

import functools
from pathlib import Path

import yaml

from ground_station.settings import GroundConfig, VehicleLinkConfig
from onboard.config import AerieConfig
from common.typed_config import to_dict
from tests.telemetry.linkkit import GroundThread


@functools.lru_cache(maxsize=1)
def world():
    from sim.world.cache import load_world

    return load_world(None)


def ground_for(cfg: AerieConfig, tmp: Path, duration_s: float = 120.0) -> GroundThread:
    """A real ground station (ingest into its SQLite flight log) subscribed to this vehicle, no CURVE."""
    t = cfg.telemetry
    link = VehicleLinkConfig(vehicle_id=cfg.vehicle_id, pub_endpoint=t.pub_endpoint, replay_endpoint=t.replay_endpoint,
                             server_public_key="", sync_endpoint=t.sync_endpoint)
    g = GroundConfig(db_path=str(tmp / "flight_log.sqlite"), vehicles=[link], curve=False, client_secret_key="",
                     status_interval_s=0.2, ack_interval_s=0.1, replay_timeout_s=0.5, stats_interval_s=0.0,
                     dashboard_port=0, post_flight_enabled=False)
    return GroundThread(g, duration_s)


def journal_messages(cfg: AerieConfig) -> list[dict]:
    """Every message the vehicle's telemetry journal holds, in journal order."""
    import msgpack

    from onboard.telemetry.journal import Journal
    from onboard.telemetry.settings import resolve_path

    with Journal.open(resolve_path(cfg.data_dir, cfg.telemetry.journal_path)) as j:
        return [msgpack.unpackb(f, raw=False) for _, f in j.frames(0, 2 ** 62, max_count=10 ** 6, max_bytes=1 << 30)]


def write_config(cfg: AerieConfig, path: Path) -> Path:
    path.write_text(yaml.safe_dump(to_dict(cfg), sort_keys=False), encoding="utf-8")
    return path
