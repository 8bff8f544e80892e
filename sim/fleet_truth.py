"""The fleet's separation judged from the simulators' TRUE positions, which no supervisor sees.

Why its own module: the bench's verdict on separation must not share the
supervisors' view of each other (reports over the channel, carried forward by
their velocities); it samples every simulator's truth and judges it with the
rule's own definition of "too near" (``firmware_bridge.separation.too_near``:
horizontally nearer than ``fleet.min_separation_m`` and vertically nearer than
``fleet.downwash_vertical_m``, whatever their altitude bands).

Judged: every pair with at least one of the two off the ground (two parked
vehicles never meet; a vehicle low over a parked one does). Kept: the least 3D
distance, the *stacked* encounters (a run of samples in which one pair stays
too near: one in the other's downwash, or in one band and too close across),
and the old band figure under an honest name, the least horizontal distance
of two vehicles within one altitude band (``fleet.altitude_band_m``), which
could not see a vehicle one band above another (36.17).
"""

from __future__ import annotations

import itertools
import math
import threading
from dataclasses import dataclass, field
from typing import Any

from common.geodesy import GeoPoint, ned_from_geo
from firmware_bridge.separation import too_near
from firmware_bridge.settings import FleetConfig

# How often the simulators' true positions are sampled, Hz.
TRUTH_RATE_HZ = 10.0
# The JSON lists this many stacked encounters at most (the count is always whole).
STACKED_LISTED_MAX = 50


def _finite_or_none(v: float) -> float | None:
    return round(v, 2) if math.isfinite(v) else None


@dataclass
class SeparationWatch:
    """Ground truth sampled from every simulator, judged pair by pair (see the module)."""

    vehicles: list[Any]
    origin: GeoPoint
    fleet: FleetConfig
    rate_hz: float = TRUTH_RATE_HZ
    min_3d_m: float = math.inf
    min_3d_at: dict[str, Any] = field(default_factory=dict)
    min_in_band_m: float = math.inf
    min_in_band_at: dict[str, Any] = field(default_factory=dict)
    min_any_band_m: float = math.inf
    stacked_events: int = 0
    stacked_samples: int = 0
    stacked: list[dict[str, Any]] = field(default_factory=list)
    samples: int = 0
    failed: int = 0
    _open: dict[tuple[int, int], dict[str, Any]] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> "SeparationWatch":
        self._thread = threading.Thread(target=self._run, name="truth-sampler", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5.0)

    def _run(self) -> None:
        period = 1.0 / self.rate_hz
        while not self._stop.wait(period):
            try:
                truths = [v.truth() for v in self.vehicles]
            except Exception:  # noqa: BLE001 - a vehicle busy or gone for one sample; the next one counts
                self.failed += 1
                continue
            self.observe(truths)

    def observe(self, truths: list[dict]) -> None:
        """One sample of every vehicle's truth (``lat``, ``lon``, ``alt_amsl``, ``on_ground``), in member order."""
        self.samples += 1
        at = [(*ned_from_geo(self.origin, t["lat"], t["lon"]), float(t["alt_amsl"]), bool(t["on_ground"]))
              for t in truths]
        for (i, a), (j, b) in itertools.combinations(enumerate(at), 2):
            pair = (i + 1, j + 1)
            if a[3] and b[3]:
                self._open.pop(pair, None)
                continue
            h, v = math.hypot(a[0] - b[0], a[1] - b[1]), abs(a[2] - b[2])
            where = {"members": list(pair), "horizontal_m": round(h, 2), "vertical_m": round(v, 2),
                     "alt_amsl_m": [round(a[2], 1), round(b[2], 1)], "on_ground": [a[3], b[3]],
                     "sample": self.samples}
            d3 = math.hypot(h, v)
            if d3 < self.min_3d_m:
                self.min_3d_m, self.min_3d_at = d3, where
            self.min_any_band_m = min(self.min_any_band_m, h)
            if v < self.fleet.altitude_band_m and h < self.min_in_band_m:
                self.min_in_band_m, self.min_in_band_at = h, where
            self._stacking(pair, too_near(h, v, self.fleet), where)

    def _stacking(self, pair: tuple[int, int], inside: bool, where: dict[str, Any]) -> None:
        event = self._open.get(pair)
        if not inside:
            self._open.pop(pair, None)
            return
        self.stacked_samples += 1
        if event is None:  # a new encounter
            self.stacked_events += 1
            event = {**where, "first_sample": where["sample"], "samples": 0}
            self._open[pair] = event
            if len(self.stacked) < STACKED_LISTED_MAX:
                self.stacked.append(event)
        event["samples"] += 1
        event["last_sample"] = where["sample"]
        if where["horizontal_m"] < event["horizontal_m"]:  # keep the closest moment of the encounter
            event.update({k: where[k] for k in ("horizontal_m", "vertical_m", "alt_amsl_m", "on_ground", "sample")})

    def report(self) -> dict[str, Any]:
        """The figures for the bench's JSON (see ``sim/fleet_bench.py``)."""
        f = self.fleet
        return {
            "min_distance_3d_m": _finite_or_none(self.min_3d_m), "min_distance_3d_at": self.min_3d_at,
            "stacked_events": self.stacked_events, "stacked_samples": self.stacked_samples,
            "stacked": self.stacked,
            "min_horizontal_in_band_m": _finite_or_none(self.min_in_band_m),
            "min_horizontal_in_band_at": self.min_in_band_at,
            "min_horizontal_any_band_m": _finite_or_none(self.min_any_band_m),
            "separation_limit_m": f.min_separation_m, "downwash_vertical_m": f.downwash_vertical_m,
            "altitude_band_m": f.altitude_band_m,
            "truth_samples": self.samples, "truth_sample_failures": self.failed, "truth_rate_hz": self.rate_hz,
        }
