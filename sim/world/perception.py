"""Oracle perception: what the drone's camera would tell the agent at a node.

Ground truth comes from the world (line-of-sight landmark visibility and POIs
close by); a `NoiseModel` degrades it so that the benchmark can be run with a
perfect oracle, with PReP-like perception, and with poor perception.

Calibration of the `prep` preset (PReP, arXiv 2408.04168, appendix D.1 and
table 2): the fine-tuned LLaVA recognised landmarks with recall 0.9695 and
precision 0.9868, and its distance estimates were "rough"; navigating with it
cost about 4 SR points against GPS ground truth. So: miss rate 3 %, one
spurious landmark in about 4 % of observations (1.3 % of ~3-6 detections per
view), and bearing/distance noise chosen so that the `memory` reference agent
loses about as much as PReP did. Measured on the public 100 tasks x 3 seeds
(300 episodes each): perfect SR 77.0 % / SPL 48.2 %; bearing 10 deg and
distance 25 % give 72.7 % / 45.6 % (-4.3 SR, -2.6 SPL, PReP: -4 and -2.5);
15 deg / 35 % gave -6.3 SR and 20 deg / 40 % gave -7.7 SR, so 10 / 25 % stays.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from onboard.map.compass import bearing_deg
from sim.world.world import World

POI_RANGE_M = 60.0  # POI names are readable (signs, shop fronts) this close


@dataclass(frozen=True)
class NoiseModel:
    """How perception errs: per-sighting noise and per-observation errors."""

    bearing_sigma_deg: float = 0.0  # Gaussian error on each landmark bearing
    distance_rel_sigma: float = 0.0  # multiplicative error: d * (1 + N(0, s)), clipped at 10 %
    miss_rate: float = 0.0  # probability a visible landmark or nearby POI is not reported
    false_positive_rate: float = 0.0  # probability an observation has one spurious landmark
    poi_range_m: float = POI_RANGE_M


PRESETS: dict[str, NoiseModel] = {
    "perfect": NoiseModel(),
    "prep": NoiseModel(bearing_sigma_deg=10.0, distance_rel_sigma=0.25, miss_rate=0.03, false_positive_rate=0.04),
    "poor": NoiseModel(bearing_sigma_deg=30.0, distance_rel_sigma=0.6, miss_rate=0.3, false_positive_rate=0.25),
}


def preset(name: str) -> NoiseModel:
    try:
        return PRESETS[name]
    except KeyError:
        raise ValueError(f"unknown perception preset {name!r}; choose one of {sorted(PRESETS)}") from None


@dataclass(frozen=True)
class LandmarkSighting:
    """A recognised landmark: its name, bearing (deg from north) and distance (m) from the drone."""

    name: str
    bearing: float
    distance: float


@dataclass(frozen=True)
class PoiSighting:
    """A POI close enough to read its name."""

    name: str
    kind: str
    bearing: float
    distance: float


class OraclePerception:
    """Ground-truth perception with configurable noise; one instance per episode (own RNG)."""

    def __init__(self, world: World, noise: NoiseModel | str = "perfect", seed: int = 0):
        self.world = world
        self.noise = preset(noise) if isinstance(noise, str) else noise
        self.rng = np.random.default_rng(seed)
        self._poi_xy = np.array([p.xy for p in world.city.pois])

    def landmarks_at(self, node: int, altitude: float | None = None) -> list[LandmarkSighting]:
        """Landmarks recognised at `node` with the camera at `altitude` (m above ground; None: cruise).

        At the cruise altitude the world's precomputed visibility; at another one the same line-of-sight
        rule from that height (`World.visible_from`, cached per node and altitude). Bearings and distances
        stay horizontal (from the node's ground position to the landmark's centroid) at any altitude, and
        the noise model is the same.
        """
        w, nz, rng = self.world, self.noise, self.rng
        here = w.graph.xy[node]
        visible = w.visible_from(node, altitude)
        out = []
        for j in visible:
            if nz.miss_rate and rng.random() < nz.miss_rate:
                continue
            lm = w.landmarks[j]
            d = lm.centroid - here
            dist = float(np.hypot(*d))
            brg = bearing_deg(d[0], d[1])
            if nz.bearing_sigma_deg:
                brg = (brg + rng.normal(0.0, nz.bearing_sigma_deg)) % 360.0
            if nz.distance_rel_sigma:
                dist *= max(0.1, 1.0 + rng.normal(0.0, nz.distance_rel_sigma))
            out.append(LandmarkSighting(lm.name, round(brg, 1), round(dist, 1)))
        if nz.false_positive_rate and rng.random() < nz.false_positive_rate:
            unseen = [lm for j, lm in enumerate(w.landmarks) if j not in visible]
            if unseen:
                lm = unseen[int(rng.integers(len(unseen)))]
                out.append(LandmarkSighting(lm.name, round(float(rng.uniform(0, 360)), 1),
                                            round(float(rng.uniform(50, w.view_range)), 1)))
        rng.shuffle(out)
        return out

    def pois_at(self, node: int) -> list[PoiSighting]:
        here = self.world.graph.xy[node]
        d = np.hypot(self._poi_xy[:, 0] - here[0], self._poi_xy[:, 1] - here[1])
        out = []
        for i in np.flatnonzero(d <= self.noise.poi_range_m):
            if self.noise.miss_rate and self.rng.random() < self.noise.miss_rate:
                continue
            p = self.world.city.pois[i]
            v = p.xy - here
            out.append(PoiSighting(p.name, p.kind, round(bearing_deg(v[0], v[1]), 1), round(float(d[i]), 1)))
        return sorted(out, key=lambda s: s.distance)


def relative_xy(bearing: float, distance: float) -> np.ndarray:
    """(east, north) offset of a sighting from the drone."""
    r = math.radians(bearing)
    return np.array([distance * math.sin(r), distance * math.cos(r)])
