"""Test kit: a vehicle publisher and a ground station wired together on loopback, with real keys."""

from __future__ import annotations

import dataclasses
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

import yaml

from ground_station.ingest import GroundStation
from ground_station.log_db import is_url
from ground_station.settings import GroundConfig, VehicleLinkConfig
from contract.curve_keys import generate_link_keys
from onboard.telemetry.publisher import TelemetryPublisher
from onboard.telemetry.settings import TelemetryConfig
from common.typed_config import to_dict

REPO = Path(__file__).resolve().parents[2]


def wait_until(pred: Callable[[], bool], timeout: float, interval: float = 0.02) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(interval)
    return pred()


def make_keys(tmp: Path) -> dict[str, Path]:
    return generate_link_keys(tmp / "keys")


def vehicle_cfg(tmp: Path, *, curve: bool, keys: dict[str, Path] | None = None, **over: Any) -> TelemetryConfig:
    base = TelemetryConfig(pub_endpoint="tcp://127.0.0.1:0", replay_endpoint="tcp://127.0.0.1:0",
                           journal_path=str(tmp / "journal.sqlite"), state_rate_hz=0.0, map_min_interval_s=0.0,
                           curve=curve)
    if keys:
        base = dataclasses.replace(base, server_secret_key=str(keys["vehicle_secret"]),
                                   authorized_keys_dir=str(keys["authorized_dir"]))
    return dataclasses.replace(base, **over)


def ground_cfg(tmp: Path, pubs: list[TelemetryPublisher], *, curve: bool, keys: dict[str, Path] | None = None,
               **over: Any) -> GroundConfig:
    vehicles = [VehicleLinkConfig(vehicle_id=p.vehicle_id, pub_endpoint=p.pub_endpoint,
                                  replay_endpoint=p.replay_endpoint,
                                  server_public_key=str(keys["vehicle_public"]) if keys else "")
                for p in pubs]
    cfg = GroundConfig(db_path=str(tmp / "flight_log.sqlite"), vehicles=vehicles, curve=curve,
                       client_secret_key=str(keys["ground_secret"]) if keys else "", status_interval_s=0.2,
                       ack_interval_s=0.1, replay_timeout_s=0.5, stats_interval_s=0.0,
                       dashboard_port=0, post_flight_enabled=False)  # no fixed port clashes between parallel runs
    return dataclasses.replace(cfg, **over)


def log_place(target: str | Path) -> dict[str, str]:
    """The ground config keys that put its flight log at ``target`` (a file, or a postgresql:// URL)."""
    return {"database": str(target)} if is_url(target) else {"db_path": str(target)}


def write_ground_yaml(path: Path, cfg: GroundConfig) -> Path:
    path.write_text(yaml.safe_dump(to_dict(cfg), sort_keys=False), encoding="utf-8")
    return path


class GroundThread:
    """A :class:`GroundStation` running in a thread of the test process."""

    def __init__(self, cfg: GroundConfig, duration_s: float = 120.0) -> None:
        self.station = GroundStation(cfg)
        self.duration_s = duration_s  # a bound, so a forgotten ground never outlives its test by much
        self.result: dict[str, Any] | None = None
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        try:
            self.result = self.station.run(duration_s=self.duration_s)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            self.error = exc

    def __enter__(self) -> "GroundThread":
        self._thread.start()
        assert self.station.started.wait(10.0), "ground station did not start"
        return self

    def __exit__(self, *exc: object) -> None:
        self.station.stop()
        self._thread.join(10.0)
        assert not self._thread.is_alive()
        if self.error is not None and exc[0] is None:
            raise self.error


def fly(pub: TelemetryPublisher, n_states: int, *, rate_hz: float = 0.0, events_every: int = 50) -> int:
    """A small flight: flight_start, states (with events between), flight_end; returns the last seq."""
    pub.flight_start({"mission": "test"})
    period = 1.0 / rate_hz if rate_hz else 0.0
    next_t = time.monotonic()
    for i in range(n_states):
        pub.publish("state", {"i": i, "lat": 60.17 + i * 1e-6, "lon": 24.94, "rel_alt_m": 10.0, "armed": True})
        if events_every and i % events_every == 0:
            pub.event("anchor_created", {"anchor": i})
        if period:
            next_t += period
            delay = next_t - time.monotonic()
            if delay > 0:
                time.sleep(delay)
    seq = pub.flight_end({"reason": "landed"})
    assert seq is not None
    return seq


def python() -> str:
    return sys.executable
