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

import asyncio
import dataclasses
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

from onboard.perception.camera_model import CameraIntrinsics, CameraPose
from onboard.perception.camera_sightings import (CameraReader, CameraView, SightingFusion, ViewRead,
                                                 look_around_headings, names_to_read)
from onboard.perception.text_range import FootprintRanger
from sim.world.perception import LandmarkSighting, PoiSighting
from sim.world.sign_view import in_brief
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

    reads: dict[tuple[int, float, float, float], "ViewTaken"] = field(default_factory=dict)
    hits: int = 0
    misses: int = 0
    read_ms: list[float] = field(default_factory=list)  # reader time (detect + recognise) of each view read
    render_ms: list[float] = field(default_factory=list)

    def to_json(self) -> dict:
        p50 = lambda xs: round(float(np.percentile(xs, 50)), 1) if xs else None  # noqa: E731
        return {"views_read": self.misses, "memo_hits": self.hits, "read_ms_per_view_p50": p50(self.read_ms),
                "read_ms_per_view_mean": round(float(np.mean(self.read_ms)), 1) if self.read_ms else None,
                "render_ms_per_view_p50": p50(self.render_ms)}


@dataclass(frozen=True)
class ViewTaken:
    """One view of a look-around: the lines read, what they cost, where they are placed from, the judge's truth."""

    reads: list
    cost_ms: float  # what it cost now (0: a memo hit)
    cost_once_ms: float  # what it cost when read
    place: tuple[float, float, float, float, float]  # east, north, up, heading, pitch the frame was taken from
    signs: tuple[tuple[str, float, float], ...]  # the judge's: (name, visible share, lettering px) per sign in frame
    ok: bool = True  # False: no frame came


class CameraBench:
    """What every episode of a run shares: the camera, the reader, the memo, the settings.

    `frames`: "stream" (the default of `aerie bench nav`): every view is a frame of the simulator's video
    stream, taken back through the vehicle's frame source and placed from its pose at capture
    (`stream_camera.StreamedCamera`); "render": the renderer's image handed to the reader directly (tests
    that need no stream, and the figures before 2026-11-28).
    """

    def __init__(self, world: World, reader, cfg, *, use_map: bool = False, frames: str = "render") -> None:
        from sim.world.render import Camera, ViewRenderer

        if frames not in ("stream", "render"):
            raise ValueError(f"camera frames come from 'stream' or 'render', not {frames!r}")
        self.world, self.reader, self.cfg, self.frames = world, reader, cfg, frames  # cfg: SupervisorConfig
        cam = Camera.from_config(cfg)
        self.renderer = ViewRenderer(world, cam) if frames == "render" else None
        self.streamed = None
        if frames == "stream":
            from sim.benchmark.stream_camera import StreamedCamera

            self.streamed = StreamedCamera(world, cfg)
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
        self._reading = ThreadPoolExecutor(1, thread_name_prefix="bench-reader")  # one frame read at a time
        from sim.world.render import _world_signs

        self.signed = {sg.name for sg in _world_signs(world)[0]}  # the judge's: names hung on some facade

    def close(self) -> None:
        self._reading.shutdown(wait=True)
        if self.streamed is not None:
            self.streamed.close()

    def figures(self) -> dict:
        """The run's camera figures: the memo's, and the stream's when frames came from it."""
        out = {**self.memo.to_json(), "frames": self.frames}
        if self.streamed is not None:
            out["stream"] = self.streamed.figures()
        return out

    def episode(self, description: str, judge_goal: str = "") -> "CameraEpisode":
        """A fresh fusion for one task: signs are matched against the gazetteer and the goal's names as
        the vehicle takes them (`names_to_read`): the runs of words the description names the goal by,
        and, once the agent has read the instruction (`CameraEpisode.read_back`), the goal it understood.
        `judge_goal`: the task's true goal, for the failure breakdown only (no reader sees it)."""
        from onboard.agent.goal_description import parse_goal_description

        goal = parse_goal_description(description, self.gazetteer)
        ep = CameraEpisode(self, None, None, [], judge_goal=judge_goal, description=description,
                           names_goal=goal.names_goal)
        ep.read_back(None)
        return ep

    def _key(self, node: int, heading: float, altitude: float, pitch: float) -> tuple[int, float, float, float]:
        return (int(node), round(float(heading), 1), round(float(altitude), 1), round(float(pitch), 1))

    def _hit(self, key) -> ViewTaken | None:
        hit = self.memo.reads.get(key)
        if hit is None:
            return None
        self.memo.hits += 1
        return dataclasses.replace(hit, cost_ms=0.0)

    async def point(self, node: int, heading: float, altitude: float, pitch: float) -> "asyncio.Future[ViewTaken]":
        """Point the camera and take its frame; the returned future is the frame read.

        The frame is read on the bench's one reading thread while the camera is pointed to the next view
        (a look-around reads one frame as the gimbal slews to the next): the stream's latency and the
        gimbal's settling overlap the reading instead of adding to it.
        """
        loop = asyncio.get_running_loop()
        done: asyncio.Future[ViewTaken] = loop.create_future()
        if self.streamed is None:
            done.set_result(self._rendered(node, heading, altitude, pitch))
            return done
        key = self._key(node, heading, altitude, pitch)
        hit = self._hit(key)
        if hit is not None:
            done.set_result(hit)
            return done
        xy = self.world.graph.xy[node]
        asked = (float(xy[0]), float(xy[1]), float(altitude), float(heading), float(pitch))
        t0 = time.perf_counter()
        got = await self.streamed.view(*asked)
        waited_ms = (time.perf_counter() - t0) * 1e3
        shot = got.shot
        self.memo.misses += 1
        self.memo.render_ms.append(waited_ms)  # pointing to frame in hand: the stream's wait
        if shot.rgb is None or shot.pose is None:
            v = ViewTaken([], waited_ms, waited_ms, asked, (), ok=False)
            self.memo.reads[key] = v
            done.set_result(v)
            return done
        p = shot.pose
        place = (p.east, p.north, p.up, p.camera_heading_deg(), shot.pitch_deg)
        pose = CameraPose(north=p.north, east=p.east, down=-p.up, yaw_deg=place[3], pitch_deg=place[4])

        def read() -> ViewTaken:
            t1 = time.perf_counter()
            reads = self.reader.read(shot.rgb, self.intr, pose, self.ranger)
            read_ms = (time.perf_counter() - t1) * 1e3
            self.memo.read_ms.append(self.reader.timings_ms.get("total", read_ms))
            v = ViewTaken(reads, waited_ms + read_ms, waited_ms + read_ms, place, got.signs)
            self.memo.reads[key] = v
            return v

        return loop.run_in_executor(self._reading, read)

    def _rendered(self, node: int, heading: float, altitude: float, pitch: float) -> ViewTaken:
        key = self._key(node, heading, altitude, pitch)
        hit = self._hit(key)
        if hit is not None:
            return hit
        t0 = time.perf_counter()
        # the truth stays here: the judge's only
        bgr, truth = self.renderer.render_view(node, heading, altitude, None if pitch == self.pitch else pitch)
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
        v = ViewTaken(reads, cost, cost, (float(xy[0]), float(xy[1]), float(altitude), float(heading), float(pitch)),
                      in_brief(truth))
        self.memo.reads[key] = v
        return v


# A goal's sign counts as in a frame when at least this share of its panel is in it and unhidden.
IN_FRAME_SHARE = 0.5


@dataclass
class CameraEpisode:
    """One episode's camera perception: its names, its fusion, its per-step costs, and the judge's tally."""

    bench: CameraBench
    reader: CameraReader
    fusion: SightingFusion
    goal_names: list[str]
    step_ms: list[float] = field(default_factory=list)  # perception time per step (memo hits cost nothing)
    step_ms_unmemoised: list[float] = field(default_factory=list)  # what it would have cost without the memo
    look_around_s: float = 0.0
    judge_goal: str = ""  # the task's goal: the failure breakdown's only
    description: str = ""
    names_goal: Any = None  # GoalDescription.names_goal of the description
    goal_in_frame_views: int = 0
    goal_best_letter_px: float = 0.0
    no_frame_views: int = 0

    async def observe(self, step: int, node: int, altitude: float | None
                      ) -> tuple[list[LandmarkSighting], list[PoiSighting]]:
        """The look-around at `node` (from `altitude` after a look-up or look-low; None: cruise): the step's
        sightings."""
        b = self.bench
        alt = b.world.cruise_alt if altitude is None else float(altitude)
        views = b.cfg.camera_reading.views
        spent = full = 0.0
        t0 = time.perf_counter()
        pending = [await b.point(node, hd, alt, pitch) for hd in look_around_headings(0.0, views)
                   for pitch in (b.low_pitches if alt < b.world.cruise_alt else b.pitches)]
        k = 0
        for taken in pending:  # fused in the order taken
            v = await taken
            spent += v.cost_ms
            full += v.cost_once_ms
            east, north, up, heading, pitched = v.place
            view = CameraView(None, heading, east, north, up, pitched, k)
            self.fusion.add(step, view, self.reader.place(v.reads, view) if v.ok
                            else ViewRead(k, heading, (), ok=False))
            self._judge(v)
            k += 1
        xy = b.world.graph.xy[node]
        lms, pois = self.fusion.sightings(step, float(xy[0]), float(xy[1]))
        elapsed = (time.perf_counter() - t0) * 1e3  # taking and reading the views not in the memo, fusion
        self.step_ms.append(elapsed)
        self.step_ms_unmemoised.append(full + max(0.0, elapsed - spent))
        self.look_around_s += look_around_seconds(k)
        if alt > b.world.cruise_alt:  # from above (a look-up) names are not read: landmarks only
            pois = ()
        return ([LandmarkSighting(s.name, s.bearing, s.distance) for s in lms],
                [PoiSighting(p.name, "read", p.bearing, p.distance) for p in pois])

    def read_back(self, reading: Any) -> None:
        """Match signs against what the vehicle understood of its instruction (`reading`: the agent's, None
        for an agent that reads none), as `aerie fly`'s look-around does (`look_around.look_around_for`)."""
        from onboard.agent.understood import understand

        b = self.bench
        understood = understand(reading).goal_name if reading is not None else None
        self.goal_names = names_to_read(self.description, self.names_goal, understood)
        self.reader = CameraReader(b.reader, b.intr, b.gazetteer, self.goal_names, b.ranger, b.settings)
        self.fusion = SightingFusion(b.gazetteer, self.goal_names, b.settings, self.names_goal)

    def _judge(self, v: ViewTaken) -> None:
        self.no_frame_views += not v.ok
        for name, share, px in v.signs:
            if name == self.judge_goal and share >= IN_FRAME_SHARE:
                self.goal_in_frame_views += 1
                self.goal_best_letter_px = max(self.goal_best_letter_px, px)

    def record(self) -> dict:
        """The episode's perception figures for its record, and how far its goal's sign got."""
        groups = self.fusion.goal_evidence()
        return {"perception_ms_per_step": round(float(np.mean(self.step_ms or [0.0])), 1),
                "perception_ms_per_step_unmemoised": round(float(np.mean(self.step_ms_unmemoised or [0.0])), 1),
                "look_around_s": round(self.look_around_s, 1), "goal_names": self.goal_names,
                "goal_groups": groups,
                "goal_sign": {"goal": self.judge_goal, "has_sign": self.judge_goal in self.bench.signed,
                              "in_frame_views": self.goal_in_frame_views,
                              "best_letter_px": self.goal_best_letter_px,
                              "read": bool(groups), "fused": any(g["confirmed"] for g in groups),
                              "no_frame_views": self.no_frame_views}}
