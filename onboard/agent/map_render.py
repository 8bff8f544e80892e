"""The agent's two maps at one step, drawn from its state as PNG images (`semantic_images/` of a results folder).

* **landmark map** (the navigate expert's live map): every landmark recognised so
  far at its fused position (landmarks the task description names in orange,
  others in purple; labels where they do not overlap) with the single fixes
  behind it as small dots, the target
  estimate with its robust spread, where the goal's name was read, the flown
  trajectory and the drone with the heading of its chosen move.
* **semantic map** (the search expert's map): the area already searched (the
  arrival radius around every waypoint flown), the known street links, waypoints
  flown (darker the more often visited) and the frontier (seen, not flown), the
  Place-Anchor memory's anchors (rings, where dead reckoning puts them) coloured by
  their place's scene type, the target
  estimate with the search radius around it, the trajectory and the drone.

Both are north-up in the agent's own frame (metres east/north of take-off),
`SIZE` x `SIZE` pixels: a square map area framed to what there is to show,
above a legend strip with the title, a north arrow and a scale bar. Nothing
but the background is drawn in the map area until the agent has something to
show. The state is only read, never changed.

    landmark, semantic = render_maps(agent.state, "t019")     # BGR uint8 arrays
    write_maps(agent.state, results_folder, "t019")           # -> (landmark PNG, semantic PNG) bytes

File names (ARCHITECTURE.md "Results on disk"): ``semantic_images/landmark_<id>_step_XXXX.png``
and ``semantic_images/semantic_<id>_step_XXXX.png``, where ``<id>`` is the
episode id (the mission name or benchmark task id) and ``XXXX`` the step of
the newest FrameLog, as in ``rgb_images/rgb_timestep_XXXX.png``.
"""

from __future__ import annotations

import functools
import math
import re
import zlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from contract.results import map_image_paths
from onboard.agent.agent_state import AgentState
from onboard.vocab.text_fold import ascii_text

SIZE = 480                 # image width and height, pixels
LEGEND_H = 64              # legend strip under the map area
MAP_H = SIZE - LEGEND_H    # the map area is SIZE x MAP_H
MIN_SPAN_M = 200.0         # the map area shows at least this many metres across
MARGIN = 1.15              # framing: the content's extent plus 15 %

# Colours (BGR).
BACKGROUND = (245, 245, 245)
LEGEND_BG = (225, 225, 225)
TEXT = (40, 40, 40)
TRAJECTORY = (200, 120, 30)
DRONE = (30, 30, 30)
LANDMARK_GOAL = (0, 140, 255)       # landmarks the task description names
LANDMARK_OTHER = (150, 80, 140)
FIX = (205, 185, 215)
TARGET = (40, 40, 215)
SEARCHED = (215, 238, 205)
LINK = (195, 195, 195)
VISITED = (70, 170, 70)
REVISITED = (20, 100, 20)          # flown to more than once
FRONTIER = (30, 170, 240)
# Scene types of places (anchor rings), kept clear of the other markers' colours.
PLACE_PALETTE = ((180, 119, 31), (189, 103, 148), (75, 86, 140), (194, 119, 227), (128, 128, 0), (90, 90, 90))

_FONT = cv2.FONT_HERSHEY_SIMPLEX


@functools.lru_cache(maxsize=1024)
def scene_class(place_type: str) -> str:
    """A place's scene type without its instance number ("waypoint 412" -> "waypoint")."""
    return re.sub(r"\s+", " ", re.sub(r"[\d#]+", " ", place_type)).strip() or place_type


def place_colour(place_type: str) -> tuple[int, int, int]:
    return PLACE_PALETTE[zlib.crc32(scene_class(place_type).encode()) % len(PLACE_PALETTE)]


@dataclass(frozen=True)
class View:
    """North-up projection of the own frame (metres) onto the map area (pixels)."""

    cx_m: float
    cy_m: float
    px_per_m: float

    @classmethod
    def framing(cls, points: list[np.ndarray]) -> "View":
        if points:
            a = np.array(points, dtype=float)
            lo, hi = a.min(axis=0), a.max(axis=0)
        else:
            lo = hi = np.zeros(2)
        span = max(float(hi[0] - lo[0]), float(hi[1] - lo[1]) * SIZE / MAP_H, MIN_SPAN_M) * MARGIN
        return cls(float(lo[0] + hi[0]) / 2.0, float(lo[1] + hi[1]) / 2.0, SIZE / span)

    def px(self, xy) -> tuple[int, int]:
        """Pixel (column, row) of a point east/north of take-off."""
        return (int(round(SIZE / 2 + (float(xy[0]) - self.cx_m) * self.px_per_m)),
                int(round(MAP_H / 2 - (float(xy[1]) - self.cy_m) * self.px_per_m)))

    def polyline(self, points) -> np.ndarray:
        a = np.asarray(points, dtype=float).reshape(-1, 2)
        cols = SIZE / 2 + (a[:, 0] - self.cx_m) * self.px_per_m
        rows = MAP_H / 2 - (a[:, 1] - self.cy_m) * self.px_per_m
        return np.round(np.stack([cols, rows], axis=1)).astype(np.int32)


def _scale_bar_m(view: View) -> float:
    """The longest round length that fits in about a quarter of the width."""
    fit = SIZE * 0.25 / view.px_per_m
    best = 1.0
    for base in (1.0, 2.0, 5.0):
        for exp in range(0, 6):
            length = base * 10 ** exp
            if length <= fit:
                best = max(best, length)
    return best


@functools.lru_cache(maxsize=16)
def _legend_strip(items: tuple[tuple[str, tuple[int, int, int], str], ...]) -> np.ndarray:
    """The legend strip's fixed part: entries (label, colour, shape) and the north arrow."""
    strip = np.empty((LEGEND_H, SIZE, 3), dtype=np.uint8)
    strip[:] = LEGEND_BG
    cv2.line(strip, (0, 0), (SIZE - 1, 0), TEXT, 1)
    x, y = 6, 34
    for label, colour, shape in items:
        w = cv2.getTextSize(label, _FONT, 0.36, 1)[0][0] + 22
        if x + w > SIZE - 100:
            x, y = 6, y + 18
        c = (x + 6, y - 4)
        if shape == "line":
            cv2.line(strip, (x, y - 4), (x + 12, y - 4), colour, 2)
        elif shape == "ring":
            cv2.circle(strip, c, 5, colour, 1)
        elif shape == "square":
            cv2.rectangle(strip, (c[0] - 4, c[1] - 4), (c[0] + 4, c[1] + 4), colour, -1)
        elif shape == "cross":
            _cross(strip, c, colour, 5)
        elif shape == "arrow":
            _arrow(strip, c, 0.0, colour, 6)
        else:
            cv2.circle(strip, c, 4, colour, -1)
        cv2.putText(strip, label, (x + 16, y), _FONT, 0.36, TEXT, 1, cv2.LINE_AA)
        x += w
    nx = SIZE - 88
    cv2.arrowedLine(strip, (nx, 30), (nx, 10), TEXT, 1, cv2.LINE_AA, tipLength=0.35)
    cv2.putText(strip, "N", (nx - 4, 44), _FONT, 0.38, TEXT, 1, cv2.LINE_AA)
    return strip


def _legend(img: np.ndarray, view: View, title: str, items: list[tuple[str, tuple[int, int, int], str]]) -> None:
    """The legend strip under the map area: title, entries, north arrow, scale bar."""
    img[MAP_H:] = _legend_strip(tuple(items))
    cv2.putText(img, ascii_text(title)[:56], (6, MAP_H + 15), _FONT, 0.42, TEXT, 1, cv2.LINE_AA)
    length = _scale_bar_m(view)
    bar = int(round(length * view.px_per_m))
    x1 = SIZE - 8
    x0 = x1 - bar
    yb = MAP_H + 52
    cv2.line(img, (x0, yb), (x1, yb), TEXT, 2)
    for xe in (x0, x1):
        cv2.line(img, (xe, yb - 4), (xe, yb + 2), TEXT, 1)
    label = f"{length:.0f} m"
    tw = cv2.getTextSize(label, _FONT, 0.36, 1)[0][0]
    cv2.putText(img, label, (x1 - tw, yb - 7), _FONT, 0.36, TEXT, 1, cv2.LINE_AA)


def _cross(img: np.ndarray, c: tuple[int, int], colour, r: int) -> None:
    cv2.line(img, (c[0] - r, c[1] - r), (c[0] + r, c[1] + r), colour, 2)
    cv2.line(img, (c[0] - r, c[1] + r), (c[0] + r, c[1] - r), colour, 2)


def _arrow(img: np.ndarray, c: tuple[int, int], bearing_deg: float, colour, r: int) -> None:
    """A filled triangle at `c` pointing along a compass bearing (north-up image)."""
    b = math.radians(bearing_deg)
    fwd = np.array([math.sin(b), -math.cos(b)])
    side = np.array([-fwd[1], fwd[0]])
    cc = np.array(c, dtype=float)
    tri = np.array([cc + fwd * r * 1.4, cc - fwd * r + side * r * 0.8, cc - fwd * r - side * r * 0.8])
    cv2.fillConvexPoly(img, np.round(tri).astype(np.int32), colour)


_BLANK = np.empty((SIZE, SIZE, 3), dtype=np.uint8)
_BLANK[:MAP_H] = BACKGROUND
_BLANK[MAP_H:] = LEGEND_BG


def _blank() -> np.ndarray:
    return _BLANK.copy()


def _stamp(img: np.ndarray, pix: np.ndarray, colour, r: int = 1) -> None:
    """(2r+1)-pixel squares at many pixels at once (hundreds of fixes: one cv2 call each is too slow)."""
    if not len(pix):
        return
    d = np.arange(-r, r + 1)
    cols = (pix[:, 0, None, None] + d[None, None, :]).reshape(-1)
    rows = (pix[:, 1, None, None] + d[None, :, None]).reshape(-1)
    cols, rows = np.broadcast_arrays(cols.reshape(len(pix), 1, -1), rows.reshape(len(pix), -1, 1))
    cols, rows = cols.reshape(-1), rows.reshape(-1)
    keep = (cols >= 0) & (cols < SIZE) & (rows >= 0) & (rows < MAP_H)
    img[rows[keep], cols[keep]] = colour


def _trajectory(state: AgentState) -> list[np.ndarray]:
    return [np.array(fr.pose[:2], dtype=float) for fr in state.dynamic.trajectory_history]


def _draw_drone(img: np.ndarray, view: View, state: AgentState) -> None:
    """The drone where it decided its last move, pointing along that move."""
    if state.dynamic.trajectory_history:
        fr = state.dynamic.trajectory_history[-1]
        _arrow(img, view.px(fr.pose[:2]), fr.pose[3], DRONE, 7)


def _step_title(kind: str, state: AgentState, episode_id: str) -> str:
    hist = state.dynamic.trajectory_history
    strategy = hist[-1].strategy if hist else ""
    return "  ".join(p for p in (kind, episode_id, f"step {current_step(state)}", strategy) if p)


def render_landmark_map(state: AgentState, episode_id: str = "") -> tuple[np.ndarray, View]:
    """The navigate expert's live landmark map; returns the image (BGR) and its projection."""
    s = state.static
    mem = s.memory
    traj = _trajectory(state)
    landmarks = mem.landmark_map()
    est = mem.estimate()
    target = mem.target()
    framed = traj + list(landmarks.values()) + [p for p in (target, mem.goal_fix) if p is not None]
    if est is not None:
        framed.append(est.xy)
    view = View.framing(framed)
    img = _blank()
    if est is not None and est.spread_m > 0:
        cv2.circle(img, view.px(est.xy), max(2, int(round(est.spread_m * view.px_per_m))), TARGET, 1, cv2.LINE_AA)
    goal_names = set(s.goal.landmarks)
    fixes = [p for name in landmarks if (f := mem.fixes.get(name)) is not None for p in f.points]
    if fixes:
        _stamp(img, view.polyline(fixes), FIX)
    if len(traj) >= 2:
        cv2.polylines(img, [view.polyline(traj)], False, TRAJECTORY, 2)
    if target is not None:
        _cross(img, view.px(target), TARGET, 7)
    if est is not None and target is not None and np.hypot(*(est.xy - target)) > 1.0:
        _cross(img, view.px(est.xy), TARGET, 4)  # the description's estimate when the goal was read / a prior stands
    if mem.goal_fix is not None:
        cv2.circle(img, view.px(mem.goal_fix), 6, TARGET, -1)
    # Markers first, then labels: the described landmarks' always, the others' most-seen first
    # where they do not overlap a label already placed.
    order = sorted(landmarks, key=lambda n: (n not in goal_names, -len(mem.fixes[n].points) if n in mem.fixes else 0))
    for name in order:
        c = view.px(landmarks[name])
        colour = LANDMARK_GOAL if name in goal_names else LANDMARK_OTHER
        cv2.rectangle(img, (c[0] - 5, c[1] - 5), (c[0] + 5, c[1] + 5), colour, -1)
    taken = np.zeros((MAP_H, SIZE), dtype=bool)
    for name in order:
        c = view.px(landmarks[name])
        label = ascii_text(name)[:24]
        tw = cv2.getTextSize(label, _FONT, 0.36, 1)[0][0]
        lx = c[0] + 8 if c[0] + 8 + tw < SIZE else c[0] - 8 - tw  # keep labels inside the image
        box = (slice(max(0, c[1] - 16), max(0, c[1] - 2)), slice(max(0, lx), max(0, lx + tw)))
        if name not in goal_names and taken[box].any():
            continue
        taken[box] = True
        cv2.putText(img, label, (lx, c[1] - 6), _FONT, 0.36, TEXT, 1, cv2.LINE_AA)
    _draw_drone(img, view, state)
    _legend(img, view, _step_title("landmark map", state, episode_id),
            [("named landmark", LANDMARK_GOAL, "square"), ("landmark", LANDMARK_OTHER, "square"),
             ("fix", FIX, "dot"), ("target", TARGET, "cross"), ("spread", TARGET, "ring"),
             ("goal read", TARGET, "dot"), ("flown", TRAJECTORY, "line"), ("drone", DRONE, "arrow")])
    return img, view


def _anchor_points(state: AgentState) -> list[tuple[np.ndarray, str]]:
    """Anchors in the own frame (metres east/north), each with its place's scene type ("" without a place)."""
    graph = state.static.anchors
    if graph is None:
        return []
    mpu = graph.metres_per_unit
    # The anchor graph dead-reckons x forward-at-yaw-0 (north), y left (west); see step_report.
    return [(np.array([-a.pose.y * mpu, a.pose.x * mpu]),
             graph.places[a.place_id].place_type if a.place_id in graph.places else "")
            for a in graph.anchors.values()]


def _visits(state: AgentState) -> dict[int, int]:
    """Times each waypoint was flown to, from the Place-Anchor memory (or the trail without it)."""
    if state.static.anchors is not None:
        from onboard.agent.place_memory import visit_counts

        return visit_counts(state.static.anchors)
    return dict(Counter(state.dynamic.trail))


def render_semantic_map(state: AgentState, episode_id: str = "") -> tuple[np.ndarray, View]:
    """The search expert's semantic map; returns the image (BGR) and its projection."""
    s = state.static
    streets = s.street_map
    traj = _trajectory(state)
    target = s.memory.target()
    anchors = _anchor_points(state) if traj else []
    framed = traj + list(streets.xy.values()) + ([target] if target is not None else [])
    view = View.framing(framed)
    img = _blank()
    if traj:
        r = max(1, int(round(s.config.arrive_within_m * view.px_per_m)))
        for n in streets.flown:
            cv2.circle(img, view.px(streets.xy[n]), r, SEARCHED, -1)
    ends = [(streets.xy[a], streets.xy[b])
            for a, nbrs in streets.links.items() for b in nbrs if a < b and a in streets.xy and b in streets.xy]
    if ends:
        cv2.polylines(img, list(view.polyline(np.array(ends)).reshape(-1, 2, 2)), False, LINK, 1)
    if target is not None:
        c = view.px(target)
        cv2.circle(img, c, max(2, int(round(s.config.search_radius_m * view.px_per_m))), TARGET, 1, cv2.LINE_AA)
    if len(traj) >= 2:
        cv2.polylines(img, [view.polyline(traj)], False, TRAJECTORY, 2)
    for n in streets.frontier():
        cv2.circle(img, view.px(streets.xy[n]), 3, FRONTIER, -1)
    visits = _visits(state)
    for n in streets.flown:
        cv2.circle(img, view.px(streets.xy[n]), 4, REVISITED if visits.get(n, 1) > 1 else VISITED, -1)
    classes: dict[str, tuple[int, int, int]] = {}
    for xy, place_type in anchors:
        if place_type:
            colour = classes.setdefault(scene_class(place_type), place_colour(place_type))
            cv2.circle(img, view.px(xy), 7, colour, 1)
    if target is not None:
        _cross(img, view.px(target), TARGET, 7)
    _draw_drone(img, view, state)
    items = [("searched", SEARCHED, "dot"), ("flown wp", VISITED, "dot"), ("revisited", REVISITED, "dot"),
             ("frontier", FRONTIER, "dot")]
    items += [(f"anchor: {ascii_text(c)[:12]}", colour, "ring") for c, colour in list(classes.items())[:2]]
    items += [("target", TARGET, "cross"), ("search radius", TARGET, "ring"), ("flown", TRAJECTORY, "line"),
              ("drone", DRONE, "arrow")]
    _legend(img, view, _step_title("semantic map", state, episode_id), items)
    return img, view


def render_maps(state: AgentState, episode_id: str = "") -> tuple[np.ndarray, np.ndarray]:
    """Both maps of the current step (BGR images): landmark map, semantic map."""
    return render_landmark_map(state, episode_id)[0], render_semantic_map(state, episode_id)[0]


def encode_png(img: np.ndarray) -> bytes:
    # No row filter, fastest zlib level: a third of the default's time for flat map images, same size.
    ok, buf = cv2.imencode(".png", img, [cv2.IMWRITE_PNG_COMPRESSION, 1, cv2.IMWRITE_PNG_FILTER,
                                         cv2.IMWRITE_PNG_FILTER_NONE])
    if not ok:
        raise RuntimeError("PNG encoding failed")
    return buf.tobytes()


def current_step(state: AgentState) -> int:
    """The step the maps show: the newest FrameLog's (the step just decided)."""
    hist = state.dynamic.trajectory_history
    return hist[-1].timestep if hist else state.dynamic.timestep


def write_maps(state: AgentState, folder: str | Path, episode_id: str) -> tuple[bytes, bytes]:
    """Render both maps of the current step into ``folder/semantic_images/``; returns their PNG bytes."""
    landmark, semantic = (encode_png(img) for img in render_maps(state, episode_id))
    landmark_path, semantic_path = map_image_paths(folder, episode_id, current_step(state))
    landmark_path.write_bytes(landmark)
    semantic_path.write_bytes(semantic)
    return landmark, semantic
