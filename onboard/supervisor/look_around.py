"""Camera perception in flight: turn through the views at a waypoint, read each frame, fuse, hand the agent that.

With ``supervisor.perception: camera`` the agent's landmarks and POIs come
from here only. At each waypoint the camera is pointed through
``camera_reading.views`` equal headings, starting with the one nearest the
vehicle's heading, and at each a frame is taken per gimbal pitch
(``camera_reading.pitches_deg``; default the mounting pitch alone)
(`FlightExecutor.point_camera`): the vehicle's gimbal slews to each where the
autopilot announces one (MAVSDK's gimbal plugin), and the vehicle turns in place
otherwise (offboard, the envelope below it; the turns are flight time). The
reported pitch goes with the frame request to the world feed, the camera stand-in. For each it asks the world feed for a frame only
(`WorldLink.frame`: rendered from the position and heading the autopilot
*reports*, no sightings with it), reads it (`CameraReader`) and adds the reads
to the flight's `SightingFusion`, placed from the reported position. Each frame
is kept as ``rgb_images/rgb_timestep_SSSS_viewK.png`` and the step's reads as
``reading_timestep_SSSS.json`` (``..._up...`` / ``..._low...`` for a look-around from a look-up's / look-low's
altitude).

A frame that does not decode or has the wrong size is a ``bad_frame`` event and
an empty view, never a crash: the look-around goes on with the other views.

With ``supervisor.camera`` set (a device, file, stream URL or GStreamer pipeline)
the frames come from that camera instead (`camera_frames.StreamFrames`): at each
pointing the first frame captured after the camera settled, placed from the pose
the vehicle and its gimbal had when it was taken; the world feed serves
perception nothing. A camera whose pitch nothing reports (no gimbal) takes one
frame per heading, at its mounting pitch.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Literal

import numpy as np

from onboard.vocab.observation import LandmarkSighting, PoiSighting
from onboard.map.compass import angle_diff
from onboard.perception.camera_model import CameraIntrinsics
from onboard.perception.camera_sightings import (CameraReader, CameraView, SightingFusion, ViewRead,
                                                 look_around_headings, sighting_json)

# Where a look-around is flown: at the cruise altitude, or from a look-up's or a look-low's.
Where = Literal["cruise", "up", "low"]


def ordered_headings(views: int, yaw_deg: float) -> list[float]:
    """The look-around's headings (equal steps from north), from the one nearest `yaw_deg` on, clockwise."""
    hs = look_around_headings(0.0, views)
    if not math.isfinite(yaw_deg):
        return hs
    first = min(range(len(hs)), key=lambda k: angle_diff(hs[k], yaw_deg))
    return hs[first:] + hs[:first]


def frame_rgb(png: bytes | None, width: int, height: int) -> tuple[np.ndarray | None, str | None]:
    """(RGB frame, None) or (None, why it is unusable): undecodable, or not the configured size."""
    import cv2

    if not png:
        return None, "no frame"
    img = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR)
    if img is None or img.ndim != 3:
        return None, "undecodable frame"
    if img.shape[:2] != (height, width):
        return None, f"frame is {img.shape[1]}x{img.shape[0]}, the camera is {width}x{height}"
    return cv2.cvtColor(img, cv2.COLOR_BGR2RGB), None


@dataclass
class LookAround:
    """One flight's camera perception: the reader, the fusion, where frames and reads are kept."""

    executor: Any  # FlightExecutor
    bridge: Any  # FlightBridge
    world: Any  # WorldLink
    reader: CameraReader
    fusion: SightingFusion
    cfg: Any  # SupervisorConfig
    folder: Path
    event: Callable[[str, Any], None]
    frames: Any = None  # StreamFrames: frames from supervisor.camera; None: from the world feed
    seconds: list[float] = field(default_factory=list)  # per look-around: turning, frames and reading
    read_ms: list[float] = field(default_factory=list)  # per view read
    bad_frames: int = 0
    spotter: Any = None  # KindSpotter: the detector on each frame when the goal is a kind (kind_spotter.py)

    @property
    def intr(self) -> CameraIntrinsics:
        return self.reader.intr

    async def run(self, step: int, where: Where = "cruise") -> tuple[tuple[LandmarkSighting, ...], tuple[PoiSighting, ...]]:
        """Turn through the views here, read them, and return the step's fused sightings.

        `where`: at cruise, or from a look-up's or a look-low's altitude. A look-low takes its own gimbal
        pitches (`camera_reading.low_pitches_deg`: shop fronts from 12 m are below the horizon), and the
        frames of a look-up or look-low are named apart ("_up" / "_low") so none overwrites the cruise ones.
        """
        tag = "" if where == "cruise" else f"_{where}"
        from firmware_bridge.maneuvers import position_from_home

        t0 = time.monotonic()
        views = self.cfg.camera_reading.views
        log: list[dict] = []
        # (heading, gimbal pitch) of every frame: the camera points to a heading, then takes each pitch there
        pitches = self.cfg.camera_reading.pitches_at(where == "low") or (None,)
        if self.frames is not None and not self.frames.has_gimbal:
            pitches = (None,)  # a camera nothing points: one frame per heading, at its mounting pitch
        shots = [(hd, j, p) for hd in ordered_headings(views, self.bridge.state.yaw_deg) for j, p in enumerate(pitches)]
        for k, (hd, j, pitch) in enumerate(shots):
            pointing = await self.executor.point_camera(hd, pitch, self.cfg.camera_reading.turn_tolerance_deg)
            turned = pointing.pointed
            if pointing.pitch_deg is not None:
                pitch = pointing.pitch_deg  # the gimbal's reported pitch
            name = f"rgb_timestep_{step:04d}{tag}_view{k}.png"
            if self.frames is None:
                rgb, why, view, taken = await self._world_frame(k, hd, pitch, name, pointing.yaw_deg)
            else:
                rgb, why, view, taken = await self._camera_frame(k, hd, name)
            if why is not None:
                self.bad_frames += 1
                self.event("bad_frame", {"step": step, "view": k, "reason": why})
            s, yaw = self.bridge.state, view.heading_deg
            read: ViewRead = await asyncio.to_thread(self.reader.read_view, view)
            if read.ok:
                self.read_ms.append(read.timings_ms.get("total", float("nan")))
            self.fusion.add(step, view, read)
            found = await self.spotter.spot(view) if self.spotter is not None else None
            if found is not None:
                self.fusion.add_detected(step, view, found)
            log.append({"view": k, "heading_deg": round(hd, 1), "reported_yaw_deg": round(yaw, 1),
                        "pitch_deg": round(view.pitch_deg, 1), "turned": turned, "pointed_by": pointing.by,
                        "vehicle_yaw_deg": round(s.yaw_deg, 1) if math.isfinite(s.yaw_deg) else None,
                        "frame": None if why else name, "bad_frame": why, **taken,
                        "timings_ms": {a: round(b, 1) for a, b in read.timings_ms.items()},
                        "reads": [sighting_json(x) for x in read.sightings],
                        **({"detections": [sighting_json(x) for x in found.sightings]} if found else {})})
        here = position_from_home(self.bridge)
        lms, pois = self.fusion.sightings(step, here.east_m, here.north_m)
        self.seconds.append(time.monotonic() - t0)
        out = {"step": step, "east": round(here.east_m, 1), "north": round(here.north_m, 1),
               "seconds": round(self.seconds[-1], 2), "views": log,
               "landmarks": [[x.name, x.bearing, x.distance] for x in lms],
               "pois": [[x.name, x.bearing, x.distance] for x in pois], "goal_groups": self.fusion.goal_evidence()}
        (self.folder / f"reading_timestep_{step:04d}{tag}.json").write_text(json.dumps(out, indent=1, ensure_ascii=False))
        return lms, pois

    async def _world_frame(self, k: int, hd: float, pitch: float | None, name: str, pointed_yaw: float
                           ) -> tuple[np.ndarray | None, str | None, CameraView, dict]:
        """A frame asked of the world feed, rendered from the position and camera heading the autopilot reports."""
        from firmware_bridge.maneuvers import position_from_home

        s = self.bridge.state
        here = position_from_home(self.bridge)
        yaw = pointed_yaw if math.isfinite(pointed_yaw) else hd  # reported: what the camera saw along
        obs = await asyncio.to_thread(self.world.frame, s.lat, s.lon, yaw, max(1.0, s.rel_alt_m), pitch)
        rgb, why = frame_rgb(obs.image_png, self.cfg.camera_width, self.cfg.camera_height)
        if self.cfg.save_images and obs.image_png:
            path = self.folder / "rgb_images" / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(obs.image_png)
        view = CameraView(rgb, yaw, here.east_m, here.north_m, -here.down_m,
                          self.cfg.camera_pitch_deg if pitch is None else pitch, k)
        return rgb, why, view, {}

    async def _camera_frame(self, k: int, hd: float, name: str
                            ) -> tuple[np.ndarray | None, str | None, CameraView, dict]:
        """The camera's first frame captured after it was pointed, placed from the pose it was taken at."""
        shot = await self.frames.shot(self.frames.clock(), first=k == 0)
        if self.cfg.save_images and shot.bgr is not None:
            import cv2

            path = self.folder / "rgb_images" / name
            path.parent.mkdir(parents=True, exist_ok=True)
            await asyncio.to_thread(cv2.imwrite, str(path), shot.bgr)
        p = shot.pose
        if p is None:  # no frame, or no telemetry for it: an empty view along the heading asked for
            view = CameraView(None, hd, math.nan, math.nan, math.nan, self.cfg.camera_pitch_deg, k)
        else:
            view = CameraView(shot.rgb, p.camera_heading_deg(), p.east, p.north, p.up, shot.pitch_deg, k)
        taken = {"source": "camera", "frame_seq": shot.seq,
                 "capture_t": None if not math.isfinite(shot.capture_t) else round(shot.capture_t, 3)}
        return shot.rgb, shot.why, view, taken


def look_around_for(supervisor: Any, executor: Any, gazetteer: list[str], folder: Path) -> "LookAround":
    """This mission's camera perception: names from its instruction, ranges from the map's footprints if any."""
    from onboard.agent.goal_description import parse_goal_description
    from onboard.agent.understood import understand
    from onboard.perception.camera_sightings import CameraReader, SightingFusion, names_to_read
    from onboard.perception.text_range import FootprintRanger
    
    goal = parse_goal_description(supervisor.mission.instruction, gazetteer, supervisor._aliases)
    reading = getattr(supervisor.agent, "reading", None)
    understood = understand(reading).goal_name if reading is not None else None  # what the vehicle said back
    names = names_to_read(supervisor.mission.instruction, goal.names_goal, understood, supervisor.mission.goal_name)
    settings = supervisor.sup.camera_reading.fusion()
    from onboard.supervisor.camera_frames import camera_intrinsics, shared_frames, streams_frames

    intr = camera_intrinsics(supervisor.sup)
    ranger = None
    if supervisor.map is not None and supervisor.map.buildings:
        ranger = FootprintRanger(map_footprints(supervisor), [b.height for b in supervisor.map.buildings])
    reader = CameraReader(supervisor.text_reader, intr, gazetteer, names, ranger, settings)
    frames = shared_frames(supervisor) if streams_frames(supervisor.sup) else None  # opened once, kept over missions
    from onboard.supervisor.kind_spotter import kind_spotter_for

    spotter = kind_spotter_for(supervisor.mission.instruction, goal.names_goal, supervisor.detector, intr)
    supervisor.event("camera_perception", {"goal_names": names, "views": supervisor.sup.camera_reading.views,
                                           "goal_kind": spotter.kind.phrase if spotter is not None else None,
                                           "map_ranges": ranger is not None,
                                           "frames": supervisor.sup.camera if frames is not None else "world feed",
                                           "calibration": supervisor.sup.camera_calibration or None})
    return LookAround(executor, supervisor.bridge, supervisor._world, reader,
                      SightingFusion(gazetteer, names, settings, goal.names_goal), supervisor.sup, folder,
                      supervisor.event, frames, spotter=spotter)


def map_footprints(supervisor: Any) -> list:
    """The map's building footprints in metres (east, north) of home, the frame of the reported position."""
    import numpy as np

    s = supervisor.bridge.state
    home = np.asarray(supervisor.map.to_local(s.home_lat, s.home_lon), dtype=float)
    return [np.asarray(b.footprint, dtype=float) - home for b in supervisor.map.buildings]
