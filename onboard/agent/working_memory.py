# Over 400 lines: one class, the working memory: fusing fixes, the map's priors, what was looked at and the estimate all read and change the same fixes, and apart each would reach into the others' state.
"""PReP working memory: where the target is, in the agent's own frame, fused from sightings.

The agent does not know where landmarks are; it knows what it sees (bearing
and distance to a named landmark from where it is) and its own odometry (the
moves it flew). So each sighting fixes the landmark at own position +
sighting vector, in the take-off frame. Fixes of one landmark are fused
robustly (median, gate at a few MADs, then the median of the inliers): one
spurious detection or one bad range does not move the landmark. The goal follows from
the description's relations (offset: landmark + offset; ray: the closest
point of two rays, or a default reach on one; between: the midpoint).

Because landmarks are fixed in the world, their fused positions *are* the
memory of past estimates: when no landmark is visible the target is still
known, and its bearing from the drone follows from dead reckoning alone;
when a landmark reappears its new fixes re-evaluate the estimate.

Past flights can seed two priors (see `onboard.agent.experience_prior`):
remembered landmark positions, used for a landmark only until it is seen
live, and a goal position, where a very similar past task read the goal's
name. Both are kept in the past flight's frame and placed in this one by the
landmarks both flights saw, again whenever live fixes change (no common
landmark: not usable yet). The goal prior is the target until the goal's
name is read, until the live estimate (from live fixes only, every relation
usable) lands further than `prior_conflict_m` from it, or until the drone
reaches it without reading the name; a dropped prior never comes back.

An onboard map (see `onboard.agent.map_knowledge`) seeds landmark positions
before take-off, each with the map's uncertainty as its spread, so the goal's
region is known before any sighting. Live sightings still win: once a
landmark has `map_overrule_min_fixes` live fixes whose robust position lies
further from the map's than the gate (`map_overrule_m`, or more where the
fixes scatter: `map_overrule_spreads` standard errors of their median, from
their own robust spread, so noisy distant fixes do not overrule a good map
while exact ones overrule it at once), the map entry is dropped (a
building that moved, or a map that was wrong); a map landmark the drone
passed within `map_absent_within_m` of without ever seeing it is dropped too
(a building that is gone). While a map entry stands it is used instead of the
live fixes: a map is good to metres, one camera range estimate to tens of
metres. A map entry whose name names the goal is never used: the goal is
found by reading its name (`set_map`).

In a fleet the other vehicles' findings come in too (`share`): their landmark
positions, used for a landmark until this vehicle fixes it itself (no map
entry is overruled by them: a map is better than another vehicle's range
estimates); a sign of the goal they read, used as a remembered goal (the
prior above: the target until this vehicle reads the name, dropped the same
ways); and the places they looked from, which hold no sign of the goal.

The memory also keeps where the goal is *not*: every place the drone looked
from, and how far it has read names so far (its reading range, as measured).
Ground within that range of a place looked from holds no goal (its name would
have been read), so the search can look where it has not looked yet
(`unseen_region`, and `geometric_planner.lookouts`).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from onboard.agent.experience_prior import RememberedFrame, frame_shift
from onboard.agent.geometry import offset
from onboard.agent.goal_description import GoalDescription
from onboard.agent.goal_region import COMPASS_HALF_SECTOR_DEG, DISTANCE_BAND_SHARE, REGION_STEP_M, candidate_points
from onboard.vocab.observation import LandmarkSighting, SharedFindings


# Two readings of one name this close (m, a grid cell) are one sign (for what the fleet is told).
SIGN_CELL_M = 20.0


@dataclass(frozen=True)
class TargetEstimate:
    """The fused target position and how it was obtained."""

    xy: np.ndarray
    landmarks: tuple[str, ...]  # landmarks whose fixes it rests on
    complete: bool  # every relation of the description could be used
    spread_m: float  # robust spread of the landmark fixes it rests on (0 with one fix)


@dataclass(frozen=True)
class MapDrop:
    """A map landmark the memory stopped using: the step and why (overruled by live fixes, or absent)."""

    step: int
    why: str


@dataclass
class LandmarkFixes:
    """Positions of one landmark implied by each sighting, with the range each was taken at."""

    points: list[np.ndarray] = field(default_factory=list)
    ranges: list[float] = field(default_factory=list)


def robust_position(points: list[np.ndarray], outlier_mads: float = 3.0,
                    floor_m: float = 60.0) -> tuple[np.ndarray, float]:
    """Median of the fixes that agree with their median (gate: a few MADs), and the MAD spread.

    Fixes are not weighted by the range they were taken at: the range is itself
    the noisy measurement, so favouring short ranges favours under-estimates
    (under the `prep` preset one badly short fix pulled a range-weighted
    position far off while the median stayed close). The median of inliers
    scored best of the three fusions tried (docs/BENCHMARKS.md, "Why the defaults").
    """
    # Plain Python: a few dozen 2-D points, fused for every landmark in view each step;
    # numpy's per-call overhead made this the agent's hottest spot.
    xs = [float(p[0]) for p in points]
    ys = [float(p[1]) for p in points]
    mx, my = statistics.median(xs), statistics.median(ys)
    dev = [math.hypot(x - mx, y - my) for x, y in zip(xs, ys)]
    mad = statistics.median(dev)
    gate = max(floor_m, outlier_mads * 1.4826 * mad)
    kept = [(x, y) for x, y, d in zip(xs, ys, dev) if d <= gate]
    return np.array([statistics.median(k[0] for k in kept), statistics.median(k[1] for k in kept)]), mad


def _fuse_arcs(offsets: list[tuple[np.ndarray, float, np.ndarray]], rays: list[tuple[np.ndarray, np.ndarray]],
               ray_reach_m: float) -> np.ndarray | None:
    """The point that best fits several relations, each weighted by how its words err.

    "400 m east of X" is good to a few per cent along the ray but only to the
    compass sector (+-22.5 degrees) across it, so each offset point is
    uncertain mostly *across* its ray (and a ray without a distance only across
    it, taken at `ray_reach_m`); landmark spreads add in every direction. The
    weighted least-squares point lies where the arcs cross, where a plain mean
    of the offset points would sit between them. None when the weights are
    degenerate.
    """
    half = math.radians(COMPASS_HALF_SECTOR_DEG)
    a, b = np.zeros((2, 2)), np.zeros(2)
    terms = [(lm + off, off / max(np.hypot(*off), 1e-9), float(np.hypot(*off)), spread, DISTANCE_BAND_SHARE)
             for lm, spread, off in offsets]
    terms += [(p, v, ray_reach_m, 0.0, None) for p, v in rays]
    for p, u, d, spread, band in terms:
        nrm = np.array([u[1], -u[0]])
        across = (d * math.tan(half)) ** 2 / 3.0 + spread ** 2  # uniform over the sector
        cov = np.outer(nrm, nrm) * across
        if band is not None:  # uniform over the distance band
            cov = cov + np.outer(u, u) * ((band * d) ** 2 / 3.0 + spread ** 2)
            w = np.linalg.inv(cov + np.eye(2) * 1e-6)
        else:  # no distance: no information along the ray
            w = np.outer(nrm, nrm) / across
        a, b = a + w, b + w @ p
    if abs(np.linalg.det(a)) < 1e-12:
        return None
    return np.linalg.solve(a, b)


class WorkingMemory:
    """Landmark map and target estimate for one flight (own frame: take-off = origin, x east, y north)."""

    def __init__(self, goal: GoalDescription, *, keep: int = 40, outlier_mads: float = 3.0,
                 outlier_floor_m: float = 60.0, ray_default_m: float = 150.0, ray_max_m: float | None = None) -> None:
        self.goal = goal
        self.keep = keep
        self.outlier_mads = outlier_mads
        self.outlier_floor_m = outlier_floor_m
        self.ray_default_m = ray_default_m
        # how far out a lone ray's point lies now: `ray_default_m`, pushed out by `extend_ray` up to `ray_max_m`
        self.ray_reach_m = ray_default_m
        self.ray_max_m = ray_default_m if ray_max_m is None else max(ray_default_m, ray_max_m)
        self.fixes: dict[str, LandmarkFixes] = {}
        self.goal_fix: np.ndarray | None = None  # the goal itself, once its name was read
        self.history: list[tuple[int, np.ndarray]] = []  # (step, estimate) whenever it changed
        self.frames: list[RememberedFrame] = []  # past flights' positions (their frames)
        self.prior_conflict_m = float("inf")
        self.prior_dropped = ""  # why the prior was dropped ("" while it stands or if there was none)
        self._shifts: dict[int, np.ndarray | None] = {}  # cache: frame index -> shift into the own frame
        self._fused: dict[str, tuple[np.ndarray, float]] = {}  # cache of `landmark`, per landmark
        self._estimate: tuple[TargetEstimate | None] | None = None  # cache of `estimate`
        self.looked_from: list[np.ndarray] = []  # every position perception ran at
        self.read_range_m = 0.0  # the farthest a name has been read on this flight
        self._region: np.ndarray | None = None  # cache of the described region's candidate points
        # the onboard map (`set_map`): standing entries, and why the others were dropped
        self.map_landmarks: dict[str, np.ndarray] = {}
        self.map_uncertainty_m = 0.0
        self.map_dropped: dict[str, MapDrop] = {}
        self.map_refused: tuple[str, ...] = ()  # map entries never used: their name names the goal
        self.map_overrule_m = float("inf")
        self.map_overrule_spreads = 0.0
        self.map_overrule_min_fixes = 1
        self.map_absent_within_m = 0.0
        # the fleet's findings (`share`): landmarks, a sign of the goal, places looked from (own frame)
        self.peer_landmarks: dict[str, tuple[np.ndarray, float]] = {}
        self.peer_goal: np.ndarray | None = None
        self.peer_looked_from: list[np.ndarray] = []
        self.signs_read: dict[tuple[str, int, int], np.ndarray] = {}  # (name, cell): where the sign stood
        self._shared: SharedFindings | None = None

    def set_map(self, landmarks: Mapping[str, np.ndarray], uncertainty_m: float, *, overrule_m: float,
                overrule_min_fixes: int, absent_within_m: float, overrule_spreads: float = 0.0) -> None:
        """Seed landmark positions from the onboard map (own frame); live fixes overrule them (see module doc).

        An entry whose name names the goal (`GoalDescription.names_goal`) is refused
        and listed in `map_refused`: the goal is found by reading its name, never
        looked up in a map (in the benchmark the goal is not in the map at all).
        """
        self.map_refused = tuple(n for n in landmarks if self.goal.names_goal(n))
        self.map_landmarks = {n: np.asarray(p, dtype=float) for n, p in landmarks.items() if n not in self.map_refused}
        self.map_uncertainty_m = float(uncertainty_m)
        self.map_overrule_m = float(overrule_m)
        self.map_overrule_spreads = float(overrule_spreads)
        self.map_overrule_min_fixes = max(1, int(overrule_min_fixes))
        self.map_absent_within_m = float(absent_within_m)
        self.map_dropped = {}
        self._changed()

    def _changed(self) -> None:
        self._fused.clear()
        self._estimate = None
        self._region = None
        self._shifts = {}

    def _drop_map(self, name: str, step: int, why: str) -> None:
        del self.map_landmarks[name]
        self.map_dropped[name] = MapDrop(step, why)
        self._changed()

    def _check_map(self, step: int, name: str) -> None:
        """Live fixes of a map landmark that put it further than the gate from the map: the map entry goes."""
        f = self.fixes[name]
        if name not in self.map_landmarks or len(f.points) < self.map_overrule_min_fixes:
            return
        live, mad = self.landmark(name, live_only=True)
        off = float(np.hypot(*(live - self.map_landmarks[name])))
        # standard error of the median of n fixes with robust spread `mad` (1.4826 MAD = sigma; 1.25 sigma / sqrt n)
        sem = 1.25 * 1.4826 * mad / math.sqrt(len(f.points))
        gate = max(self.map_overrule_m, self.map_overrule_spreads * sem)
        if off > gate:
            self._drop_map(name, step, f"overruled: {len(f.points)} live fixes put it {off:.0f} m from the map "
                                       f"position (gate {gate:.0f} m)")

    def passed(self, step: int, position: np.ndarray) -> None:
        """The drone looked from `position` at cruise: a map landmark this close that was never seen is gone."""
        for name, p in list(self.map_landmarks.items()):
            if name not in self.fixes:
                d = float(np.hypot(*(p - position)))
                if d <= self.map_absent_within_m:
                    self._drop_map(name, step, f"absent: never seen, though the drone passed {d:.0f} m from "
                                               f"the map position")

    def placed(self, name: str) -> bool:
        """Whether the memory has a position for this landmark: live fixes, a standing map entry or the fleet's."""
        return name in self.fixes or name in self.map_landmarks or name in self.peer_landmarks

    def share(self, found: SharedFindings, spread_floor_m: float) -> bool:
        """Take the fleet's findings (all of them so far, own frame); True when anything changed.

        A landmark's spread is at least `spread_floor_m`: its position went through
        another vehicle's odometry and home as well as its sightings. Of several
        signs of the goal, the one nearest the description's estimate is taken.
        """
        if found == self._shared:
            return False
        self._shared = found
        self.peer_landmarks = {x.name: (np.array(x.xy, dtype=float), max(float(x.spread_m), spread_floor_m))
                               for x in found.landmarks if not self.goal.names_goal(x.name)}
        self.peer_looked_from = [np.array(p, dtype=float) for p in found.looked_from]
        goal_signs = [np.array(xy, dtype=float) for name, xy in found.signs if self.goal.names_goal(name)]
        self._changed()  # the estimate below must see the new landmarks; the goal sign changes no cache
        est = self.estimate() if goal_signs else None
        self.peer_goal = (None if not goal_signs else goal_signs[0] if est is None
                          else min(goal_signs, key=lambda p: float(np.hypot(*(p - est.xy)))))
        return True

    def observe(self, step: int, position: np.ndarray, landmarks: tuple[LandmarkSighting, ...]) -> None:
        """Add one observation's sightings taken at `position`."""
        for s in landmarks:
            f = self.fixes.setdefault(s.name, LandmarkFixes())
            f.points.append(position + offset(s.bearing, s.distance))
            f.ranges.append(max(s.distance, 1.0))
            del f.points[:-self.keep], f.ranges[:-self.keep]
            self._fused.pop(s.name, None)
            self._estimate = None
            self._region = None
            self._shifts = {}
        for name in dict.fromkeys(s.name for s in landmarks):
            self._check_map(step, name)
        prior = self.prior if landmarks else None
        if prior is not None:
            live = self._compute_estimate(live_only=True)
            if live is not None and live.complete and np.hypot(*(live.xy - prior)) > self.prior_conflict_m:
                self.drop_prior(f"live landmark fixes put the goal {np.hypot(*(live.xy - prior)):.0f} m "
                                f"from the remembered position")
        est = self.estimate()
        if est is not None and (not self.history or np.hypot(*(self.history[-1][1] - est.xy)) > 1.0):
            self.history.append((step, est.xy))

    def looked(self, position: np.ndarray, name_distances: list[float]) -> None:
        """Perception ran at `position` and read names at these distances (the goal's was not among them)."""
        self.looked_from.append(np.array(position, dtype=float))
        if name_distances:
            self.read_range_m = max(self.read_range_m, max(name_distances))

    def read_signs(self, position: np.ndarray, pois: tuple) -> None:
        """Signs read from `position` (`PoiSighting`s), placed where they stood: what the fleet is told."""
        for p in pois:
            xy = position + offset(p.bearing, p.distance)
            self.signs_read[(p.name, round(float(xy[0]) / SIGN_CELL_M), round(float(xy[1]) / SIGN_CELL_M))] = xy

    def read_range(self, floor_m: float) -> float:
        """How far names are read: the farthest one read on this flight, at least `floor_m`."""
        return max(self.read_range_m, floor_m)

    def unseen_region(self, floor_m: float) -> np.ndarray | None:
        """Points of the described region (see `goal_region`) no place looked from was within reading range of.

        None: no region can be said (no estimate yet, or a "between" relation); an empty array:
        all of it was looked at (the goal is elsewhere: a landmark fix or the words were off).
        """
        est = self.estimate()
        if est is None:
            return None
        if self._region is None:
            known = {n: lp for n in self.goal.landmarks if (lp := self.landmark(n)) is not None}
            self._region = candidate_points(self.goal, known, est.xy, self.ray_reach_m)
        pts = self._region
        if not len(pts):
            return None
        return self._not_looked_at(pts, floor_m)

    def unseen_around(self, centre: np.ndarray, radius_m: float, floor_m: float) -> np.ndarray:
        """Grid points within `radius_m` of `centre` no place looked from was within reading range of.

        The search's region where the description gives none (a "between" relation).
        """
        n = int(math.ceil(radius_m / REGION_STEP_M))
        ax = np.arange(-n, n + 1) * REGION_STEP_M
        gx, gy = np.meshgrid(ax, ax)
        pts = np.column_stack([gx.ravel(), gy.ravel()])
        pts = pts[np.hypot(pts[:, 0], pts[:, 1]) <= radius_m] + centre
        return self._not_looked_at(pts, floor_m)

    def extend_ray(self, floor_m: float, unseen_share: float) -> bool:
        """Push a lone ray's point one `ray_default_m` further out (up to `ray_max_m`); whether it moved.

        "West of X" gives a direction, not a distance: the estimate starts
        `ray_default_m` out and its region is the ground around that point. Once
        no more than `unseen_share` of it is left unlooked at (the last of it lies
        in the middle of blocks, a long way round by the streets) without the
        goal's name read, the goal is likelier further along the ray (ordinary dev
        d015: 480 m west of its landmark; the search swept the 150 m point's
        region for 28 steps). Only for an estimate that rests on one ray alone (no
        distance, no second ray to cross); never past `ray_max_m`.
        """
        if self.ray_reach_m >= self.ray_max_m or self.goal_fix is not None:
            return False
        known = {n for n in self.goal.landmarks if self.landmark(n) is not None}
        usable = [r for r in self.goal.relations if all(n in known for n in r.landmarks)]
        if len(usable) != 1 or usable[0].kind != "ray":
            return False
        unseen = self.unseen_region(floor_m)
        region = self._region
        if unseen is None or region is None or not len(region) or len(unseen) > unseen_share * len(region):
            return False
        self.ray_reach_m = min(self.ray_max_m, self.ray_reach_m + self.ray_default_m)
        self._estimate = None
        self._region = None
        return True

    def _not_looked_at(self, pts: np.ndarray, floor_m: float) -> np.ndarray:
        if (self.looked_from or self.peer_looked_from) and len(pts):
            looked = np.array(self.looked_from + self.peer_looked_from)
            near = np.min(np.hypot(pts[:, None, 0] - looked[None, :, 0], pts[:, None, 1] - looked[None, :, 1]), axis=1)
            pts = pts[near > self.read_range(floor_m)]
        return pts

    def see_goal(self, position: np.ndarray, bearing: float, distance: float) -> None:
        """The goal's name was read: its position is known directly (overrides the description)."""
        self.goal_fix = position + offset(bearing, distance)

    def set_priors(self, frames: list[RememberedFrame], conflict_m: float) -> None:
        """Seed the memory from past flights; live sightings override both kinds of prior."""
        self.frames = list(frames)
        self.prior_conflict_m = conflict_m
        self._shifts = {}
        self._estimate = None
        self._region = None

    def _shift(self, i: int) -> np.ndarray | None:
        if i not in self._shifts:
            live = {n: lp[0] for n in self.fixes if (lp := self.landmark(n, live_only=True)) is not None}
            self._shifts[i] = frame_shift(self.frames[i].landmarks, live)
        return self._shifts[i]

    @property
    def prior(self) -> np.ndarray | None:
        """The remembered goal in the own frame (a fleet-mate's sign first, then past flights); None without
        one, before it can be placed, or once dropped."""
        if self.prior_dropped:
            return None
        if self.peer_goal is not None:
            return self.peer_goal
        for i, f in enumerate(self.frames):
            if f.goal_xy is not None:
                shift = self._shift(i)
                return None if shift is None else f.goal_xy + shift
        return None

    def drop_prior(self, why: str) -> None:
        if self.prior is not None:
            self.prior_dropped = why

    def reached_prior_in_vain(self, position: np.ndarray, radius_m: float) -> None:
        """At the remembered goal position without having read the name: the memory was wrong here."""
        prior = self.prior
        if prior is not None and self.goal_fix is None and np.hypot(*(position - prior)) <= radius_m:
            self.drop_prior("reached the remembered goal position without reading the name")

    def _remembered(self, name: str) -> np.ndarray | None:
        for i, f in enumerate(self.frames):
            if name in f.landmarks and (shift := self._shift(i)) is not None:
                return f.landmarks[name] + shift
        return None

    def landmark(self, name: str, live_only: bool = False) -> tuple[np.ndarray, float] | None:
        """The landmark's position and spread: a standing map entry, else its live fixes, else a remembered one."""
        if not live_only and name in self.map_landmarks:
            return self.map_landmarks[name], self.map_uncertainty_m
        if name in self._fused:
            return self._fused[name]
        f = self.fixes.get(name)
        if not f or not f.points:
            if live_only:
                return None
            if name in self.peer_landmarks:
                return self.peer_landmarks[name]
            xy = None if not self.frames else self._remembered(name)
            return None if xy is None else (xy, 0.0)
        self._fused[name] = robust_position(f.points, self.outlier_mads, self.outlier_floor_m)
        return self._fused[name]

    def landmark_map(self) -> dict[str, np.ndarray]:
        """Every landmark seen so far at its fused position (for prompts, logs and exploration)."""
        return {n: p for n in self.fixes if (lp := self.landmark(n)) is not None for p in [lp[0]]}

    def estimate(self) -> TargetEstimate | None:
        """The target from the relations whose landmarks have been seen; None if none has."""
        if self._estimate is None:
            self._estimate = (self._compute_estimate(),)
        return self._estimate[0]

    def _compute_estimate(self, live_only: bool = False) -> TargetEstimate | None:
        known = {n: lp for n in self.goal.landmarks if (lp := self.landmark(n, live_only)) is not None}
        points: list[np.ndarray] = []
        rays: list[tuple[np.ndarray, np.ndarray]] = []
        offsets: list[tuple[np.ndarray, float, np.ndarray]] = []  # (landmark, spread, relation's offset)
        used: list[str] = []
        usable = 0
        for r in self.goal.relations:
            if not all(n in known for n in r.landmarks):
                # "between" with one end known: that end is still the best lead
                if r.kind == "between":
                    points += [known[n][0] for n in r.landmarks if n in known]
                    used += [n for n in r.landmarks if n in known]
                continue
            usable += 1
            used += list(r.landmarks)
            if r.kind == "between":
                points.append((known[r.landmarks[0]][0] + known[r.landmarks[1]][0]) / 2.0)
            elif r.kind == "offset":
                offsets.append((known[r.landmarks[0]][0], known[r.landmarks[0]][1], r.offset()))
            else:
                rays.append((known[r.landmarks[0]][0], r.unit()))
        fused = _fuse_arcs(offsets, rays, self.ray_default_m) if len(offsets) + len(rays) >= 2 and offsets else None
        if fused is not None:
            points.append(fused)
        else:
            points += [lm + off for lm, _, off in offsets]
            if len(rays) >= 2:
                a, b = np.zeros((2, 2)), np.zeros(2)
                for p, v in rays:
                    n = np.eye(2) - np.outer(v, v)  # projector onto the ray's normal
                    a, b = a + n, b + n @ p
                if abs(np.linalg.det(a)) > 1e-6:
                    points.append(np.linalg.solve(a, b))
                else:  # parallel rays: each one's default reach
                    points += [p + v * self.ray_default_m for p, v in rays]
            elif rays:
                p, v = rays[0]
                points.append(p + v * self.ray_reach_m)
        if not points:
            return None
        spread = max((known[n][1] for n in used if n in known), default=0.0)
        return TargetEstimate(np.mean(points, axis=0), tuple(dict.fromkeys(used)),
                              usable == len(self.goal.relations), spread)

    def target(self) -> np.ndarray | None:
        """Where to go: the goal itself once read, else a standing prior, else the description's estimate."""
        if self.goal_fix is not None:
            return self.goal_fix
        prior = self.prior
        if prior is not None:
            return prior
        est = self.estimate()
        return None if est is None else est.xy
