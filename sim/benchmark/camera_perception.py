"""`aerie bench nav --perception camera`: the agent's sightings from rendered frames read by the text reader.

At every waypoint the drone looks around (`CameraReadingConfig.views` frames,
equal yaw steps from north, so a waypoint's views are the same whatever the
way in), each frame drawn by the world's renderer from the waypoint at the
camera's altitude, read by PP-OCRv5 and placed by `CameraReader`
(onboard/perception/camera_sightings.py); `SightingFusion` turns the reads of
the episode into the step's sightings. Nothing of the oracle reaches the agent:
the oracle only judges success (`episode.is_success`).

With ``camera_reading.pitches_deg`` the gimbal takes a frame at each of those
pitches at every heading (a second ring below the first, for the signs at
street level close by).

Rendering and reading a view costs about half a second on this CPU, and a
waypoint is often visited in many episodes: reads are kept per (node, heading,
altitude, pitch) for the whole run (`ViewMemo`), so a repeated view costs nothing.
Each step's perception time (what it cost, and what it would have cost without
the memo) goes into the episode record. The turns cost flight time:
`look_around_seconds` (a full circle at PX4's automatic yaw rate and a pause
per view).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import cv2
import numpy as np

from onboard.perception.camera_model import CameraIntrinsics, CameraPose
from onboard.perception.camera_sightings import (CameraReader, CameraView, SightingFusion, goal_names,
                                                 look_around_headings)
from onboard.perception.text_range import FootprintRanger
from sim.world.perception import LandmarkSighting, PoiSighting
from sim.world.world import World

# PX4's MPC_YAWRAUTO_MAX default (deg/s) and a pause per view for the frame to settle.
YAW_RATE_DEG_S = 45.0
SETTLE_S_PER_VIEW = 0.5


def look_around_seconds(views: int) -> float:
    """Flight time of one look-around: a full circle in yaw and a pause per view (per frame: a gimbal
    that takes two pitches at a heading pauses twice)."""
    return 360.0 / YAW_RATE_DEG_S + views * SETTLE_S_PER_VIEW


@dataclass
class ViewMemo:
    """Lines read per (node, heading, altitude, pitch) for a whole run, with what rendering and reading them cost.

    The raw reads are kept, not the named sightings: which names matter differs per episode.
    """

    reads: dict[tuple[int, float, float, float], tuple[list, float]] = field(default_factory=dict)
    hits: int = 0
    misses: int = 0
    read_ms: list[float] = field(default_factory=list)  # reader time (detect + recognise) of each view read
    render_ms: list[float] = field(default_factory=list)

    def to_json(self) -> dict:
        p50 = lambda xs: round(float(np.percentile(xs, 50)), 1) if xs else None  # noqa: E731
        return {"views_read": self.misses, "memo_hits": self.hits, "read_ms_per_view_p50": p50(self.read_ms),
                "read_ms_per_view_mean": round(float(np.mean(self.read_ms)), 1) if self.read_ms else None,
                "render_ms_per_view_p50": p50(self.render_ms)}


class CameraBench:
    """What every episode of a run shares: the renderer, the reader, the memo, the settings."""

    def __init__(self, world: World, reader, cfg, *, use_map: bool = False) -> None:
        from sim.world.render import Camera, ViewRenderer

        self.world, self.reader, self.cfg = world, reader, cfg  # cfg: SupervisorConfig
        self.renderer = ViewRenderer(world, Camera.from_config(cfg))
        cam = self.renderer.cam
        self.intr = CameraIntrinsics.from_hfov(cam.width, cam.height, cam.fov_deg)
        self.pitch = cam.pitch_deg
        self.pitches = tuple(cfg.camera_reading.pitches_deg or (cam.pitch_deg,))  # the gimbal's, at each heading
        self.low_pitches = tuple(cfg.camera_reading.pitches_at(low=True) or (cam.pitch_deg,))  # a look-low's
        self.gazetteer = [lm.name for lm in world.landmarks]
        # With the onboard map: its building footprints range what is read (the map the drone carries).
        self.ranger = FootprintRanger([b.footprint for b in world.city.buildings],
                                      [b.height for b in world.city.buildings]) if use_map else None
        self.memo = ViewMemo()
        self.settings = cfg.camera_reading.fusion()

    def episode(self, description: str, goal_name: str = "") -> "CameraEpisode":
        """A fresh fusion for one task: signs are matched against the task's goal name (the name its words
        give; without one, the runs of words the description names the goal by) and the gazetteer."""
        from onboard.agent.goal_description import parse_goal_description

        goal = parse_goal_description(description, self.gazetteer)
        names = [goal_name] if goal_name else goal_names(description, goal.names_goal)
        reader = CameraReader(self.reader, self.intr, self.gazetteer, names, self.ranger, self.settings)
        return CameraEpisode(self, reader, SightingFusion(self.gazetteer, names, self.settings, goal.names_goal), names)

    def lines(self, node: int, heading: float, altitude: float, pitch: float | None = None) -> tuple[list, float, float]:
        """(lines read in the view, ms it cost now: 0 for a memo hit, ms it cost when read)."""
        pitch = self.pitch if pitch is None else pitch
        key = (int(node), round(float(heading), 1), round(float(altitude), 1), round(float(pitch), 1))
        hit = self.memo.reads.get(key)
        if hit is not None:
            self.memo.hits += 1
            return hit[0], 0.0, hit[1]
        t0 = time.perf_counter()
        # the truth stays here: the judge's only
        bgr, _truth = self.renderer.render_view(node, heading, altitude, None if pitch == self.pitch else pitch)
        t1 = time.perf_counter()
        xy = self.world.graph.xy[node]
        pose = CameraPose(north=float(xy[1]), east=float(xy[0]), down=-float(altitude), yaw_deg=float(heading),
                          pitch_deg=float(pitch))
        # with the map, its walls seen aslant are read upright too, as in flight (CameraReader.read_view)
        reads = self.reader.read(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB), self.intr, pose, self.ranger)
        t2 = time.perf_counter()
        self.memo.misses += 1
        self.memo.render_ms.append((t1 - t0) * 1e3)
        self.memo.read_ms.append(self.reader.timings_ms.get("total", (t2 - t1) * 1e3))
        cost = (t2 - t0) * 1e3
        self.memo.reads[key] = (reads, cost)
        return reads, cost, cost


@dataclass
class CameraEpisode:
    """One episode's camera perception: its names, its fusion, its per-step costs."""

    bench: CameraBench
    reader: CameraReader
    fusion: SightingFusion
    goal_names: list[str]
    step_ms: list[float] = field(default_factory=list)  # perception time per step (memo hits cost nothing)
    step_ms_unmemoised: list[float] = field(default_factory=list)  # what it would have cost without the memo
    look_around_s: float = 0.0

    def observe(self, step: int, node: int, altitude: float | None) -> tuple[list[LandmarkSighting], list[PoiSighting]]:
        """The look-around at `node` (from `altitude` after a look-up or look-low; None: cruise): the step's
        sightings."""
        b = self.bench
        alt = b.world.cruise_alt if altitude is None else float(altitude)
        views = b.cfg.camera_reading.views
        xy = b.world.graph.xy[node]
        spent = full = 0.0
        t0 = time.perf_counter()
        k = 0
        for hd in look_around_headings(0.0, views):
            for pitch in (b.low_pitches if alt < b.world.cruise_alt else b.pitches):
                lines, cost, cost_once = b.lines(node, hd, alt, pitch)
                spent += cost
                full += cost_once
                view = CameraView(None, hd, float(xy[0]), float(xy[1]), alt, pitch, k)
                self.fusion.add(step, view, self.reader.place(lines, view))
                k += 1
        lms, pois = self.fusion.sightings(step, float(xy[0]), float(xy[1]))
        elapsed = (time.perf_counter() - t0) * 1e3  # rendering and reading the views not in the memo, fusion
        self.step_ms.append(elapsed)
        self.step_ms_unmemoised.append(full + max(0.0, elapsed - spent))
        self.look_around_s += look_around_seconds(k)
        if alt > b.world.cruise_alt:  # from above (a look-up) names are not read: landmarks only
            pois = ()
        return ([LandmarkSighting(s.name, s.bearing, s.distance) for s in lms],
                [PoiSighting(p.name, "read", p.bearing, p.distance) for p in pois])

    def record(self) -> dict:
        """The episode's perception figures for its record."""
        return {"perception_ms_per_step": round(float(np.mean(self.step_ms or [0.0])), 1),
                "perception_ms_per_step_unmemoised": round(float(np.mean(self.step_ms_unmemoised or [0.0])), 1),
                "look_around_s": round(self.look_around_s, 1), "goal_names": self.goal_names,
                "goal_groups": self.fusion.goal_evidence()}
